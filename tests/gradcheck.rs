//! Hand-written backward against f64 finite differences (issue: max relative error ≤ 1e-6).

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use windtunnel::check::gradcheck::{self, TOLERANCE, rel_err};
use windtunnel::model::{ActFn, Model, ModelConfig};
use windtunnel::rng::{Purpose, Stream};
use windtunnel::task::Batch;

#[test]
fn tiny_model_every_coordinate_of_every_tensor() {
    let model = gradcheck::perturbed_model(&ModelConfig::tiny(), 3);
    let report = gradcheck::per_coordinate(&model, &gradcheck::check_batch(4));
    assert_eq!(report.rows.len(), model.layout.total);
    let worst = report.rows.iter().max_by(|a, b| a.rel_err.total_cmp(&b.rel_err)).unwrap();
    assert!(report.passed(TOLERANCE), "worst {} rel_err {:.3e}", worst.name, worst.rel_err);
}

#[test]
fn canonical_model_random_direction_per_tensor() {
    let model = gradcheck::perturbed_model(&ModelConfig::canonical(), 1);
    let report = gradcheck::directional(&model, &gradcheck::check_batch(8), 1);
    assert_eq!(report.rows.len(), 70);
    for r in &report.rows {
        assert!(
            r.rel_err <= TOLERANCE,
            "{}: analytic {:e} numeric {:e} rel {:.3e}",
            r.name,
            r.analytic,
            r.numeric,
            r.rel_err
        );
    }
}

#[test]
fn b_k_gradient_is_numerically_zero_and_others_are_not() {
    // Softmax is shift-invariant per query, so dL/db_K = 0 exactly in real arithmetic.
    let model = gradcheck::perturbed_model(&ModelConfig::tiny(), 5);
    let g = gradcheck::analytic_grad(&model, &gradcheck::check_batch(4));
    for (i, e) in model.layout.entries.iter().enumerate() {
        let max = model.layout.view(&g, i).iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if e.name.ends_with("attn.b_K") {
            assert!(max < 1e-15, "{} max |g| = {max:e}", e.name);
        } else if !e.name.starts_with("pos_embed") {
            assert!(max > 1e-6, "{} has a suspiciously zero gradient", e.name);
        }
    }
}

/// One random small case: model shape and the seed of its parameters, batch and direction.
#[derive(Clone, Copy, Debug)]
struct Case {
    seed: u64,
    layers: usize,
    d_head: usize,
    heads: usize,
    d_mlp: usize,
    t: usize,
    bsz: usize,
}

/// A random small model and a random batch (tokens and scored positions), all from one seed.
fn random_case(c: Case, relu: bool) -> (Model<f64>, Batch) {
    let cfg = ModelConfig {
        n_layers: c.layers,
        d_model: 8,
        n_heads: c.heads,
        d_head: c.d_head,
        d_mlp: c.d_mlp,
        n_ctx: c.t,
        act_fn: if relu { ActFn::Relu } else { ActFn::Gelu },
        ..ModelConfig::canonical()
    };
    let model = gradcheck::perturbed_model(&cfg, c.seed);
    let mut rng = Stream::new(c.seed, Purpose::Fixture, 7);
    let tokens: Vec<u32> = (0..c.bsz * c.t).map(|_| rng.below(40) as u32).collect();
    let mut labels: Vec<i32> = tokens.iter().map(|&x| if rng.below(3) == 0 { -100 } else { x as i32 }).collect();
    labels[1] = tokens[1] as i32; // at least one scored position
    (model, Batch::from_raw(c.bsz, c.t, tokens, labels))
}

/// The directional check for one random case; `Err` names both derivatives.
fn check_random_case(c: Case) -> Result<f64, String> {
    let (model, batch) = random_case(c, false);
    let g = gradcheck::analytic_grad(&model, &batch);
    let mut rng = Stream::new(c.seed, Purpose::Direction, 99);
    let mut dir: Vec<(usize, f64)> = (0..g.len()).map(|i| (i, rng.normal())).collect();
    let norm = dir.iter().map(|d| d.1 * d.1).sum::<f64>().sqrt();
    for d in dir.iter_mut() {
        d.1 /= norm;
    }
    let analytic: f64 = dir.iter().map(|&(i, v)| g[i] * v).sum();
    let numeric = gradcheck::numeric_directional(&model, &batch, &dir, gradcheck::STEP_SMALL_RANDOM);
    let err = rel_err(analytic, numeric);
    if err <= TOLERANCE { Ok(err) } else { Err(format!("analytic {analytic:e} numeric {numeric:e} rel {err:.3e}")) }
}

/// Cases proptest once failed on: 803682 failed CI at h = 2e-3 (rel 2.3e-6, O(h⁴) truncation:
/// 1.5e-7 at 1e-3, 9e-9 at 5e-4, 5.7e-10 at 2.5e-4 — the analytic gradient was right); 56854 is
/// the case tests/gradcheck.proptest-regressions kept from the first version of this test.
#[test]
fn cases_that_once_failed_pass_at_the_small_model_step() {
    let cases = [
        Case { seed: 803_682, layers: 2, d_head: 2, heads: 2, d_mlp: 8, t: 2, bsz: 1 },
        Case { seed: 56_854, layers: 1, d_head: 4, heads: 2, d_mlp: 11, t: 3, bsz: 3 },
    ];
    for c in cases {
        let err = check_random_case(c).unwrap();
        assert!(err < 1e-7, "{c:?}: rel {err:.3e}");
    }
}

proptest! {
    // A fixed seed: the same cases on every run, so CI never fails on a draw (the step's margin
    // is measured over 40,000 cases, see gradcheck::STEP_SMALL_RANDOM).
    #![proptest_config(ProptestConfig {
        cases: 256, failure_persistence: None, rng_seed: RngSeed::Fixed(35), ..ProptestConfig::default()
    })]

    /// Directional derivative along one random unit direction over all parameters.
    #[test]
    fn random_small_configs_match_finite_differences(
        seed in 0u64..1_000_000, layers in 1usize..=2, d_head in 1usize..=4, heads in 1usize..=3,
        d_mlp in 1usize..=12, t in 2usize..=7, bsz in 1usize..=3,
    ) {
        check_random_case(Case { seed, layers, d_head, heads, d_mlp, t, bsz }).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn relu_activation_matches_finite_differences() {
    let (model, batch) = random_case(Case { seed: 17, layers: 2, d_head: 4, heads: 2, d_mlp: 8, t: 6, bsz: 2 }, true);
    // A finite difference that crosses a ReLU kink is meaningless; at h = 1e-3 this case crosses
    // none (measured: 1.2e-7), while smaller steps drown b_K's exact zero in rounding noise.
    let report = gradcheck::directional_with_step(&model, &batch, 3, 1e-3);
    assert!(report.passed(TOLERANCE), "max {:e}", report.max_rel_err());
}
