//! Criterion benches: the canonical forward+backward at batch 128 (f32, f64) and the matmul
//! kernels at the model's shapes. `cargo bench --bench train_step`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use windtunnel::model::{Model, ModelConfig};
use windtunnel::numerics::matmul::{Accum, matmul_nn, matmul_tn};
use windtunnel::task::{Batch, DataConfig, generate, train_split};

fn batch(n: usize) -> Batch {
    let t = train_split(&generate(&DataConfig::default()).unwrap());
    Batch::gather(&t, &(0..n).collect::<Vec<_>>())
}

fn fwd_bwd<S: windtunnel::numerics::Scalar>(c: &mut Criterion, name: &str) {
    let model = Model::<S>::init(&ModelConfig::canonical(), 42);
    let b = batch(128);
    let mut ws = model.workspace(128, b.seq_len);
    let mut g = model.new_grads();
    c.bench_function(name, |bench| bench.iter(|| black_box(model.loss_and_grad(&mut ws, &b, &mut g))));
}

fn kernels(c: &mut Criterion) {
    let (m, k, n) = (2048, 128, 512);
    let a = vec![0.5f32; m * k];
    let w = vec![0.25f32; k * n];
    let mut out = vec![0.0f32; m * n];
    c.bench_function("matmul_nn 2048x128x512 f32", |b| {
        b.iter(|| matmul_nn(&mut out, black_box(&a), &w, None, m, k, n, Accum::Set))
    });
    let dy = vec![0.25f32; m * n];
    let mut dw = vec![0.0f32; k * n];
    c.bench_function("matmul_tn 128x2048x512 f32 (dW)", |b| {
        b.iter(|| matmul_tn(&mut dw, black_box(&a), &dy, k, m, n, Accum::Add))
    });
}

fn all(c: &mut Criterion) {
    fwd_bwd::<f32>(c, "canonical fwd+bwd batch 128 f32");
    fwd_bwd::<f64>(c, "canonical fwd+bwd batch 128 f64");
    kernels(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = all
}
criterion_main!(benches);
