//! Exact Hessian-vector products (forward-over-reverse with dual numbers) against finite
//! differences of gradients, the full Hessian of a tiny model, and Lanczos against a dense
//! eigendecomposition.

use windtunnel::check::gradcheck::{analytic_grad, check_batch, perturbed_model};
use windtunnel::hessian::vec::{norm, random_unit};
use windtunnel::hessian::{Hvp, lanczos, power_iteration};
use windtunnel::model::{Model, ModelConfig};
use windtunnel::task::Batch;

/// (g(θ + h u) − g(θ − h u)) / 2h
fn fd_hvp(model: &Model<f64>, batch: &Batch, u: &[f64], h: f64) -> Vec<f64> {
    let shifted = |s: f64| {
        let mut m = model.clone();
        for (p, &d) in m.params.iter_mut().zip(u) {
            *p += s * h * d;
        }
        analytic_grad(&m, batch)
    };
    let (gp, gm) = (shifted(1.0), shifted(-1.0));
    gp.iter().zip(&gm).map(|(a, b)| (a - b) / (2.0 * h)).collect()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    norm(&d) / norm(b)
}

#[test]
fn exact_hvp_matches_central_differences_on_the_canonical_model() {
    let model = perturbed_model(&ModelConfig::canonical(), 2);
    let batch = check_batch(8);
    let mut hvp = Hvp::new(&model, batch.clone());
    let u = random_unit(model.layout.total, 9, 0);
    let mut hu = vec![0.0; u.len()];
    hvp.apply(&u, &mut hu);
    let fd = fd_hvp(&model, &batch, &u, 1e-4);
    let e = rel(&hu, &fd);
    assert!(e < 1e-6, "relative error {e:e}");
    // The value part is the plain f64 gradient, bit for bit.
    assert_eq!(hvp.grad, analytic_grad(&model, &batch));
}

#[test]
fn tiny_model_full_hessian_is_symmetric_matches_fd_and_its_spectrum_matches_lanczos() {
    let cfg =
        ModelConfig { n_layers: 1, d_model: 8, n_heads: 2, d_head: 4, d_mlp: 8, n_ctx: 16, ..ModelConfig::canonical() };
    let model = perturbed_model(&cfg, 4);
    let batch = check_batch(3);
    let n = model.layout.total;
    let mut hvp = Hvp::new(&model, batch.clone());
    let mut h = nalgebra::DMatrix::<f64>::zeros(n, n);
    let mut col = vec![0.0; n];
    let mut e = vec![0.0; n];
    for j in 0..n {
        e.iter_mut().for_each(|x| *x = 0.0);
        e[j] = 1.0;
        hvp.apply(&e, &mut col);
        for i in 0..n {
            h[(i, j)] = col[i];
        }
    }
    let asym = (&h - h.transpose()).abs().max();
    assert!(asym < 1e-10 * h.abs().max(), "asymmetry {asym:e}");
    // A few columns against finite differences of gradients.
    for j in [0, 200, n / 3, n / 2, n - 1] {
        e.iter_mut().for_each(|x| *x = 0.0);
        e[j] = 1.0;
        let fd = fd_hvp(&model, &batch, &e, 1e-4);
        let exact: Vec<f64> = (0..n).map(|i| h[(i, j)]).collect();
        if norm(&fd) == 0.0 {
            // e.g. W_E of a token that never occurs: the column is exactly zero both ways.
            assert!(exact.iter().all(|&x| x == 0.0), "column {j} should be zero");
        } else {
            assert!(rel(&exact, &fd) < 1e-6, "column {j}: {:e}", rel(&exact, &fd));
        }
    }
    let dense = nalgebra::SymmetricEigen::new(h.clone());
    let (lo, hi) = dense.eigenvalues.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let lz = lanczos(&mut hvp, n, 5);
    let (l_lo, l_hi) = (lz.ritz[0].value, lz.ritz.last().unwrap().value);
    assert!((l_lo - lo).abs() < 1e-8 * hi.abs(), "λ_min: Lanczos {l_lo} vs dense {lo}");
    assert!((l_hi - hi).abs() < 1e-8 * hi.abs(), "λ_max: Lanczos {l_hi} vs dense {hi}");
    assert!(lo < 0.0, "a random point of a non-convex loss has negative curvature");
    // 30 Lanczos steps already pin the extremes.
    let lz30 = lanczos(&mut hvp, 30, 5);
    assert!((lz30.ritz.last().unwrap().value - hi).abs() < 1e-6 * hi.abs());
    // Plain power iteration (the paper's "λ_max") converges to the eigenvalue of largest
    // *magnitude*, which at this point is the negative one.
    let biggest = if lo.abs() > hi.abs() { lo } else { hi };
    let p = power_iteration(&mut hvp, 0.0, 0, 400);
    assert!((p.lambda - biggest).abs() < 1e-3 * biggest.abs(), "power {} vs {biggest}", p.lambda);
    assert!(hvp.dim() == n);
}

/// The probes' numbers are part of the contract: an HVP and a short Lanczos run give the same bits
/// in a 1-thread and a 3-thread pool (dot products are summed in fixed chunks, never across threads).
#[test]
fn hvp_and_lanczos_are_bit_identical_at_1_and_3_threads() {
    let model = perturbed_model(&ModelConfig::canonical(), 3);
    let batch = check_batch(8);
    let u = random_unit(model.layout.total, 11, 0);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut hvp = Hvp::new(&model, batch.clone());
            let mut hu = vec![0.0; u.len()];
            hvp.apply(&u, &mut hu);
            let l = lanczos(&mut hvp, 4, 5);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
            (bits(&hu), bits(&l.v_min), l.ritz.iter().map(|r| r.value.to_bits()).collect::<Vec<u64>>())
        })
    };
    assert_eq!(run(1), run(3));
}
