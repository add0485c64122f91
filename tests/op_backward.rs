//! Each operation's backward against central finite differences of its own forward, in f64 on
//! small random shapes: a broken op is named by its own test, not only by the whole-model
//! gradcheck. For an op `out = f(inputs)` the scalar is `L = Σ r·out` with a fixed random `r`,
//! so the backward is called with `dout = r` and every input coordinate is perturbed by ±h.

use windtunnel::model::ActFn;
use windtunnel::model::activation::{act_backward, act_forward};
use windtunnel::model::attention::{AttnShape, attention_backward, attention_forward};
use windtunnel::model::embed::{embed_backward, embed_forward};
use windtunnel::model::layer_norm::{LnCache, layernorm_backward, layernorm_forward};
use windtunnel::model::linear::{Linear, linear_backward, linear_forward};
use windtunnel::model::loss::{crossentropy_backward, crossentropy_forward};

/// Values in [-1, 1) from a fixed 64-bit LCG (the test's own stream; no RNG crate needed).
fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// ∂L/∂x by central differences, one coordinate at a time.
fn numeric(x: &[f64], loss: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let h = 1e-6;
    let mut x = x.to_vec();
    (0..x.len())
        .map(|i| {
            let keep = x[i];
            x[i] = keep + h;
            let up = loss(&x);
            x[i] = keep - h;
            let down = loss(&x);
            x[i] = keep;
            (up - down) / (2.0 * h)
        })
        .collect()
}

/// The analytic gradient matches the numeric one: max |Δ| ≤ 1e-6 · max(1, max |numeric|).
fn assert_close(op: &str, input: &str, analytic: &[f64], numeric: &[f64]) {
    assert_eq!(analytic.len(), numeric.len(), "{op}: d{input} has the wrong length");
    let scale = numeric.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let (i, err) = analytic
        .iter()
        .zip(numeric)
        .map(|(a, n)| (a - n).abs())
        .enumerate()
        .fold((0, 0.0), |best, (i, e)| if e > best.1 { (i, e) } else { best });
    assert!(
        err <= 1e-6 * scale,
        "{op}: d{input}[{i}] analytic {} vs finite difference {} (max |Δ| {err:.2e}, scale {scale:.2e})",
        analytic[i],
        numeric[i]
    );
}

#[test]
fn linear_backward_matches_finite_differences() {
    let (n, d_in, d_out) = (5, 4, 3);
    let (x, w, b, r) = (random(n * d_in, 1), random(d_in * d_out, 2), random(d_out, 3), random(n * d_out, 4));
    let forward = |x: &[f64], w: &[f64], b: &[f64]| {
        let mut out = vec![0.0; n * d_out];
        linear_forward(&mut out, x, Linear { w, b, d_in, d_out }, n);
        dot(&out, &r)
    };
    let (mut dx, mut dw, mut db, mut w_t) =
        (vec![0.0; n * d_in], vec![0.0; d_in * d_out], vec![0.0; d_out], vec![0.0; 12]);
    linear_backward(&mut dx, &mut dw, &mut db, &r, &x, Linear { w: &w, b: &b, d_in, d_out }, n, &mut w_t);
    assert_close("linear", "x", &dx, &numeric(&x, |x| forward(x, &w, &b)));
    assert_close("linear", "W", &dw, &numeric(&w, |w| forward(&x, w, &b)));
    assert_close("linear", "b", &db, &numeric(&b, |b| forward(&x, &w, b)));
}

#[test]
fn layer_norm_backward_matches_finite_differences() {
    let (n, c, eps) = (4, 6, 1e-5);
    let (x, w, b, r) = (random(n * c, 5), random(c, 6), random(c, 7), random(n * c, 8));
    let forward = |x: &[f64], w: &[f64], b: &[f64]| {
        let (mut out, mut cache) = (vec![0.0; n * c], LnCache::new(n, c));
        layernorm_forward(&mut out, &mut cache, x, w, b, c, eps);
        dot(&out, &r)
    };
    let (mut out, mut cache) = (vec![0.0; n * c], LnCache::new(n, c));
    layernorm_forward(&mut out, &mut cache, &x, &w, &b, c, eps);
    let (mut dx, mut dw, mut db) = (vec![0.0; n * c], vec![0.0; c], vec![0.0; c]);
    layernorm_backward(&mut dx, &mut dw, &mut db, &r, &cache, &w, c);
    assert_close("layer norm", "x", &dx, &numeric(&x, |x| forward(x, &w, &b)));
    assert_close("layer norm", "w", &dw, &numeric(&w, |w| forward(&x, w, &b)));
    assert_close("layer norm", "b", &db, &numeric(&b, |b| forward(&x, &w, b)));
}

#[test]
fn gelu_and_relu_backward_match_finite_differences() {
    // Away from 0, where ReLU has no derivative.
    let x: Vec<f64> = random(24, 9).iter().map(|v| v * 3.0 + v.signum() * 0.01).collect();
    let r = random(24, 10);
    for act in [ActFn::Gelu, ActFn::Relu] {
        let forward = |x: &[f64]| {
            let (mut out, mut erf) = (vec![0.0; x.len()], vec![0.0; x.len()]);
            act_forward(act, &mut out, &mut erf, x);
            dot(&out, &r)
        };
        let (mut out, mut erf, mut dx) = (vec![0.0; 24], vec![0.0; 24], vec![0.0; 24]);
        act_forward(act, &mut out, &mut erf, &x);
        act_backward(act, &mut dx, &r, &x, &erf);
        assert_close(&format!("{act:?}"), "x", &dx, &numeric(&x, forward));
    }
}

#[test]
fn attention_backward_matches_finite_differences() {
    let sh = AttnShape { b: 2, t: 4, h: 2, dh: 3 };
    let (rows, hd) = (sh.b * sh.t, sh.h * sh.dh);
    let qs: Vec<usize> = (0..sh.t).collect();
    let (qkv, r) = (random(rows * 3 * hd, 11), random(rows * hd, 12));
    let run = |qkv: &[f64]| {
        let (mut z, mut scores, mut pattern) =
            (vec![0.0; rows * hd], vec![0.0; sh.b * sh.h * sh.t * sh.t], vec![0.0; sh.b * sh.h * sh.t * sh.t]);
        attention_forward(&mut z, &mut scores, &mut pattern, qkv, sh, &qs);
        (dot(&z, &r), pattern)
    };
    let (_, pattern) = run(&qkv);
    let mut dqkv = vec![0.0; qkv.len()];
    attention_backward(&mut dqkv, &r, &pattern, &qkv, sh, &qs);
    assert_close("attention", "qkv", &dqkv, &numeric(&qkv, |q| run(q).0));
}

#[test]
fn cross_entropy_backward_matches_finite_differences() {
    let (n, v) = (5, 7);
    let logits: Vec<f64> = random(n * v, 13).iter().map(|x| 3.0 * x).collect();
    let targets = [2, -100, 0, 6, 3]; // one ignored row (the tokenizer's IGNORE)
    let count = targets.iter().filter(|&&y| y != -100).count();
    let mean = |l: &[f64]| {
        let mut losses = vec![0.0; n];
        crossentropy_forward(&mut losses, l, &targets, v).0
    };
    let mut dlogits = vec![0.0; n * v];
    crossentropy_backward(&mut dlogits, &logits, &targets, v, count);
    assert_close("cross-entropy", "logits", &dlogits, &numeric(&logits, mean));
}

#[test]
fn embedding_backward_matches_finite_differences() {
    let (b, t_full, t, c, vocab, n_ctx) = (2, 5, 4, 3, 6, 5);
    let tokens: Vec<u32> = vec![1, 4, 4, 0, 5, 2, 2, 3, 1, 0]; // repeats: their gradients add
    let (w_e, w_pos, r) = (random(vocab * c, 14), random(n_ctx * c, 15), random(b * t * c, 16));
    let forward = |w_e: &[f64], w_pos: &[f64]| {
        let mut x = vec![0.0; b * t * c];
        embed_forward(&mut x, &tokens, t_full, w_e, w_pos, t, c);
        dot(&x, &r)
    };
    let (mut dw_e, mut dw_pos) = (vec![0.0; vocab * c], vec![0.0; n_ctx * c]);
    embed_backward(&mut dw_e, &mut dw_pos, &r, &tokens, t_full, t, c);
    assert_close("embedding", "W_E", &dw_e, &numeric(&w_e, |w| forward(w, &w_pos)));
    assert_close("embedding", "W_pos", &dw_pos, &numeric(&w_pos, |w| forward(&w_e, w)));
}
