//! Benches: the canonical forward+backward at batch 128 (f32, f64), the AdamW update, the matmul
//! kernels at the model's shapes and one large square product (the kernel's own peak, the "% of
//! peak" reference in docs/PERFORMANCE.md). `cargo bench --bench train_step [-- FILTER]`.
//! A small harness of our own (the median of 20 samples, each ≥ 50 ms of iterations) instead of
//! criterion: its dependencies changed the features of the library's own dependencies, so
//! `cargo build` and `cargo test` compiled the library twice.

mod harness;
use harness::Harness;
use std::hint::black_box;
use windtunnel::model::{Model, ModelConfig};
use windtunnel::numerics::matmul::{Accum, matmul_nn, matmul_tn};
use windtunnel::optim::{AdamW, AdamWParams};
use windtunnel::task::{Batch, DataConfig, generate, train_split};

fn batch(n: usize) -> Batch {
    let t = train_split(&generate(&DataConfig::default()).unwrap());
    Batch::gather(&t, &(0..n).collect::<Vec<_>>())
}

fn fwd_bwd<S: windtunnel::numerics::Scalar>(c: &mut Harness, name: &str) {
    let model = Model::<S>::init(&ModelConfig::canonical(), 42);
    let b = batch(128);
    let mut ws = model.workspace(128, b.seq_len);
    let mut g = model.new_grads();
    c.bench_function(name, |bench| bench.iter(|| black_box(model.loss_and_grad(&mut ws, &b, &mut g))));
}

fn kernels(c: &mut Harness) {
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
    let s = 1024;
    let (x, y) = (vec![0.5f32; s * s], vec![0.25f32; s * s]);
    let mut z = vec![0.0f32; s * s];
    c.bench_function("matmul_nn 1024x1024x1024 f32 (peak)", |b| {
        b.iter(|| matmul_nn(&mut z, black_box(&x), &y, None, s, s, s, Accum::Set))
    });
    let (x, y) = (vec![0.5f64; s * s], vec![0.25f64; s * s]);
    let mut z = vec![0.0f64; s * s];
    c.bench_function("matmul_nn 1024x1024x1024 f64 (peak)", |b| {
        b.iter(|| matmul_nn(&mut z, black_box(&x), &y, None, s, s, s, Accum::Set))
    });
}

fn adamw(c: &mut Harness) {
    let n = ModelConfig::canonical().n_params();
    let hp = AdamWParams { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01 };
    let (mut p, g) = (vec![0.1f32; n], vec![0.01f32; n]);
    let mut opt = AdamW::<f32>::new(hp, n);
    c.bench_function("adamw step 807720 f32", |b| b.iter(|| opt.step(black_box(&mut p), &g, 1e-3)));
}

/// The MLP activation and a LayerNorm at batch 128's shapes (2048 rows; 512 and 128 wide), with
/// pre-activations spread like a trained model's (about ¾ of |x·α| below 0.84375).
fn elementwise(c: &mut Harness) {
    use windtunnel::model::ActFn;
    use windtunnel::model::activation::{act_backward, act_forward};
    use windtunnel::model::layer_norm::{LnCache, layernorm_backward, layernorm_forward};
    let spread = |n: usize| (0..n).map(|i| ((i * 7919 % 1000) as f32 / 1000.0 - 0.5) * 3.0).collect::<Vec<f32>>();
    let (x, dy) = (spread(2048 * 512), spread(2048 * 512));
    let (mut out, mut erf, mut dx) = (vec![0.0f32; x.len()], vec![0.0f32; x.len()], vec![0.0f32; x.len()]);
    c.bench_function("gelu forward 2048x512 f32", |b| {
        b.iter(|| act_forward(ActFn::Gelu, &mut out, &mut erf, black_box(&x)))
    });
    c.bench_function("gelu backward 2048x512 f32", |b| {
        b.iter(|| act_backward(ActFn::Gelu, &mut dx, black_box(&dy), &x, &erf))
    });
    let (n, ch) = (2048, 128);
    let (x, dy) = (spread(n * ch), spread(n * ch));
    let (w, bias) = (vec![1.0f32; ch], vec![0.0f32; ch]);
    let (mut out, mut cache, mut dx) = (vec![0.0f32; n * ch], LnCache::new(n, ch), vec![0.0f32; n * ch]);
    let (mut dw, mut db) = (vec![0.0f32; ch], vec![0.0f32; ch]);
    c.bench_function("layernorm forward+backward 2048x128 f32", |b| {
        b.iter(|| {
            layernorm_forward(&mut out, &mut cache, black_box(&x), &w, &bias, ch, 1e-5);
            layernorm_backward(&mut dx, &mut dw, &mut db, black_box(&dy), &cache, &w, ch);
        })
    });
}

fn all(c: &mut Harness) {
    fwd_bwd::<f32>(c, "canonical fwd+bwd batch 128 f32");
    fwd_bwd::<f64>(c, "canonical fwd+bwd batch 128 f64");
    kernels(c);
    elementwise(c);
    adamw(c);
}

fn main() {
    all(&mut Harness::from_args());
}
