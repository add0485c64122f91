use std::time::Instant;
use windtunnel::numerics::matmul::{Accum, matmul_nn, matmul_tn};
fn best(f: &mut dyn FnMut(), flops: f64) -> f64 {
    let reps = (4e8 / flops).max(1.0) as usize;
    (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                f()
            }
            flops * reps as f64 / t.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max)
}
fn main() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        let mut line = String::new();
        for &(m, k, n) in &[(1920usize, 128usize, 512usize), (1920, 512, 128), (1920, 128, 384), (640, 128, 40)] {
            let a = vec![0.5f64; m * k];
            let b = vec![0.25f64; k * n];
            let mut o = vec![0.0f64; m * n];
            line += &format!(
                " nn{m}x{k}x{n}:{:.0}",
                best(&mut || matmul_nn(&mut o, &a, &b, None, m, k, n, Accum::Set), 2.0 * (m * k * n) as f64)
            );
        }
        for &(m, k, n) in &[(128usize, 1920usize, 512usize), (512, 1920, 128), (128, 1920, 384)] {
            let a = vec![0.5f64; k * m];
            let b = vec![0.25f64; k * n];
            let mut o = vec![0.0f64; m * n];
            line += &format!(
                " tn{m}x{k}x{n}:{:.0}",
                best(&mut || matmul_tn(&mut o, &a, &b, m, k, n, Accum::Add), 2.0 * (m * k * n) as f64)
            );
        }
        println!("{line}");
    });
}
