//! Each layer operation's backward against f64 central differences, on its own small random
//! shapes: a broken op is named by its own test, not only by the whole-model gradcheck.
//! The objective is `L = Σ w ⊙ forward(inputs)` with fixed random weights `w`, so the backward
//! is called with `dout = w` and must return `∂L/∂input` for every input element.

use windtunnel::model::ActFn;
use windtunnel::model::activation::{act_backward, act_forward};
use windtunnel::model::attention::{AttnShape, attention_backward, attention_forward};
use windtunnel::model::embed::{embed_backward, embed_forward};
use windtunnel::model::layer_norm::{LnCache, layernorm_backward, layernorm_forward};
use windtunnel::model::linear::{Linear, linear_backward, linear_forward};
use windtunnel::model::loss::{crossentropy_backward, crossentropy_forward};

/// Deterministic test values in [-1, 1) (xorshift64*; test data only).
struct Values(u64);

impl Values {
    fn take(&mut self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            })
            .collect()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Compare `analytic[i]` with the central difference of `objective` in every element of every
/// input; the message names the op, the input and the element.
fn check(op: &str, inputs: &[Vec<f64>], names: &[&str], analytic: &[Vec<f64>], objective: impl Fn(&[Vec<f64>]) -> f64) {
    const H: f64 = 1e-6;
    for (i, (x, g)) in inputs.iter().zip(analytic).enumerate() {
        assert_eq!(x.len(), g.len(), "{op}: gradient of {} has the wrong length", names[i]);
        for j in 0..x.len() {
            let at = |d: f64| {
                let mut moved = inputs.to_vec();
                moved[i][j] += d;
                objective(&moved)
            };
            let numeric = (at(H) - at(-H)) / (2.0 * H);
            let tol = 1e-6 * (1.0 + g[j].abs());
            assert!(
                (numeric - g[j]).abs() <= tol,
                "{op}: ∂L/∂{}[{j}] is {} by the backward, {numeric} by central differences",
                names[i],
                g[j]
            );
        }
    }
}

#[test]
fn linear_backward_matches_finite_differences() {
    let (n, d_in, d_out) = (3, 4, 5);
    let mut v = Values(1);
    let inputs = vec![v.take(n * d_in), v.take(d_in * d_out), v.take(d_out)];
    let w = v.take(n * d_out);
    let forward = |x: &[Vec<f64>]| {
        let mut out = vec![0.0; n * d_out];
        linear_forward(&mut out, &x[0], Linear { w: &x[1], b: &x[2], d_in, d_out }, n);
        dot(&out, &w)
    };
    let (mut dx, mut dw, mut db, mut w_t) =
        (vec![0.0; n * d_in], vec![0.0; d_in * d_out], vec![0.0; d_out], vec![0.0; d_in * d_out]);
    let l = Linear { w: &inputs[1], b: &inputs[2], d_in, d_out };
    linear_backward(&mut dx, &mut dw, &mut db, &w, &inputs[0], l, n, &mut w_t);
    check("linear", &inputs, &["x", "W", "b"], &[dx, dw, db], forward);
}

#[test]
fn layernorm_backward_matches_finite_differences() {
    let (n, c, eps) = (3, 6, 1e-5);
    let mut v = Values(2);
    let inputs = vec![v.take(n * c), v.take(c), v.take(c)];
    let w = v.take(n * c);
    let run = |x: &[Vec<f64>], cache: &mut LnCache<f64>| {
        let mut out = vec![0.0; n * c];
        layernorm_forward(&mut out, cache, &x[0], &x[1], &x[2], c, eps);
        out
    };
    let mut cache = LnCache::new(n, c);
    run(&inputs, &mut cache);
    let (mut dx, mut dw, mut db) = (vec![0.0; n * c], vec![0.0; c], vec![0.0; c]);
    layernorm_backward(&mut dx, &mut dw, &mut db, &w, &cache, &inputs[1], c);
    check("layer norm", &inputs, &["x", "w", "b"], &[dx, dw, db], |x| dot(&run(x, &mut LnCache::new(n, c)), &w));
}

#[test]
fn attention_backward_matches_finite_differences() {
    let sh = AttnShape { b: 2, t: 4, h: 2, dh: 3 };
    let (rows, hd) = (sh.b * sh.t, sh.h * sh.dh);
    let qs: Vec<usize> = (0..sh.t).collect();
    let mut v = Values(3);
    let inputs = vec![v.take(rows * 3 * hd)];
    let w = v.take(rows * hd);
    let run = |x: &[Vec<f64>]| {
        let (mut z, mut scores, mut pattern) =
            (vec![0.0; rows * hd], vec![0.0; sh.b * sh.h * sh.t * sh.t], vec![0.0; sh.b * sh.h * sh.t * sh.t]);
        attention_forward(&mut z, &mut scores, &mut pattern, &x[0], sh, &qs);
        (z, pattern)
    };
    let (_, pattern) = run(&inputs);
    let mut dqkv = vec![0.0; rows * 3 * hd];
    attention_backward(&mut dqkv, &w, &pattern, &inputs[0], sh, &qs);
    check("attention", &inputs, &["qkv"], &[dqkv], |x| dot(&run(x).0, &w));
}

#[test]
fn gelu_and_relu_backward_match_finite_differences() {
    let mut v = Values(4);
    // Away from ReLU's kink at 0, where the central difference is not its derivative.
    let inputs =
        vec![v.take(24).into_iter().map(|x| 3.0 * x + if x.abs() < 0.01 { 0.1 } else { 0.0 }).collect::<Vec<_>>()];
    let w = v.take(24);
    for act in [ActFn::Gelu, ActFn::Relu] {
        let run = |x: &[Vec<f64>]| {
            let (mut out, mut erf) = (vec![0.0; 24], vec![0.0; 24]);
            act_forward(act, &mut out, &mut erf, &x[0]);
            (out, erf)
        };
        let (_, erf) = run(&inputs);
        let mut dx = vec![0.0; 24];
        act_backward(act, &mut dx, &w, &inputs[0], &erf);
        check(act.name(), &inputs, &["x"], &[dx], |x| dot(&run(x).0, &w));
    }
}

#[test]
fn cross_entropy_backward_matches_finite_differences() {
    let (n, vocab) = (5, 7);
    let mut v = Values(5);
    let inputs = vec![v.take(n * vocab).into_iter().map(|x| 4.0 * x).collect::<Vec<_>>()];
    // Two rows not scored (−100), as the prompt positions of a sequence.
    let targets = [3, -100, 0, 6, -100];
    let mean = |x: &[Vec<f64>]| {
        let mut losses = vec![0.0; n];
        crossentropy_forward(&mut losses, &x[0], &targets, vocab)
    };
    let (_, count) = mean(&inputs);
    assert_eq!(count, 3);
    let mut dlogits = vec![0.0; n * vocab];
    crossentropy_backward(&mut dlogits, &inputs[0], &targets, vocab, count);
    check("cross-entropy", &inputs, &["logits"], &[dlogits], |x| mean(x).0);
}

#[test]
fn embedding_backward_matches_finite_differences() {
    let (vocab, n_ctx, c, b, t) = (6, 5, 3, 2, 4);
    let tokens: Vec<u32> = vec![1, 4, 4, 0, 5, 2, 1, 3];
    let mut v = Values(6);
    let inputs = vec![v.take(vocab * c), v.take(n_ctx * c)];
    let w = v.take(b * t * c);
    let run = |x: &[Vec<f64>]| {
        let mut out = vec![0.0; b * t * c];
        embed_forward(&mut out, &tokens, t, &x[0], &x[1], t, c);
        dot(&out, &w)
    };
    let (mut dw_e, mut dw_pos) = (vec![0.0; vocab * c], vec![0.0; n_ctx * c]);
    embed_backward(&mut dw_e, &mut dw_pos, &w, &tokens, t, t, c);
    check("embedding", &inputs, &["W_E", "W_pos"], &[dw_e, dw_pos], run);
}
