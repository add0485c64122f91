//! Causal multi-head attention core (TL `AbstractAttention`), between the packed QKV projection
//! and `W_O`: scores `q·k / sqrt(d_head)` (a division, as TL), causal mask, softmax, `z = p·v`.
//!
//! Layout: `qkv` is (B·T, 3·H·dh) with the Q heads, then the K heads, then the V heads, each head
//! `dh` wide, so `q[b,t,h,:]` sits at `qkv[(b·T+t)·3HD + h·dh ..]`. `z` is (B·T, H·dh), which is
//! TL's `hook_z` `[batch, pos, head, d_head]` flattened. Scores and pattern are (B, H, T, T).
//!
//! Masked entries are never computed: they are exactly `-inf` in `scores` and `0` in `pattern`.
//! Work is split by batch element, which owns all of its outputs. Every sum of products (q·k,
//! Σ p·v and the backward's sums) is an FMA chain in the documented order (arithmetic v2); the
//! softmax itself is unfused.

use crate::fused;
use crate::numerics::Scalar;
use crate::numerics::fused::Fma;
use rayon::prelude::*;

#[derive(Clone, Copy, Debug)]
pub struct AttnShape {
    pub b: usize,
    pub t: usize,
    pub h: usize,
    pub dh: usize,
}

impl AttnShape {
    fn hd(&self) -> usize {
        self.h * self.dh
    }
    fn q(&self, n: usize, h: usize) -> usize {
        n * 3 * self.hd() + h * self.dh
    }
    fn k(&self, n: usize, h: usize) -> usize {
        self.q(n, h) + self.hd()
    }
    fn v(&self, n: usize, h: usize) -> usize {
        self.q(n, h) + 2 * self.hd()
    }
}

/// `scale = sqrt(d_head)` rounded to S, as TL's Python float meets an S tensor.
fn attn_scale<S: Scalar>(dh: usize) -> S {
    S::from_f64(crate::numerics::math::sqrt(dh as f64))
}

/// Attention for the query positions `qs` (ascending; `0..T` for every position) against all
/// causal keys. z is (B·nq, H·dh) with row `b·nq + qi` for query `qs[qi]`; scores and pattern are
/// (B, H, nq, T); qkv is (B·T, 3·H·dh).
pub fn attention_forward<S: Scalar>(
    z: &mut [S],
    scores: &mut [S],
    pattern: &mut [S],
    qkv: &[S],
    sh: AttnShape,
    qs: &[usize],
) {
    let AttnShape { t, h: nh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    let scale: S = attn_scale(sh.dh);
    crate::numerics::flops::add(4 * pairs(sh, qs));
    z.par_chunks_mut(nq * hd)
        .zip(scores.par_chunks_mut(nh * nq * t))
        .zip(pattern.par_chunks_mut(nh * nq * t))
        .enumerate()
        .for_each(|(b, ((z, scores), pattern))| {
            let one = Example { b, qkv, sh, qs, scale };
            fused!(F => forward_example::<S, F>(&one, z, scores, pattern))
        });
}

/// (query, causal key, head dimension) triples: one FMA each for q·k and for p·v.
fn pairs(sh: AttnShape, qs: &[usize]) -> usize {
    sh.b * sh.h * sh.dh * qs.iter().map(|&i| i + 1).sum::<usize>()
}

/// One batch element's view of the attention inputs.
struct Example<'a, S> {
    b: usize,
    qkv: &'a [S],
    sh: AttnShape,
    qs: &'a [usize],
    scale: S,
}

/// Attention of one batch element: z (nq, H·dh), scores and pattern (H, nq, T).
#[inline(always)]
fn forward_example<S: Scalar, F: Fma>(e: &Example<'_, S>, z: &mut [S], scores: &mut [S], pattern: &mut [S]) {
    let Example { b, qkv, sh, qs, scale } = *e;
    let AttnShape { t, h: nh, dh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    let mut kt = vec![S::zero(); dh * t];
    for h in 0..nh {
        transpose_head(&mut kt, qkv, t, dh, |n| sh.k(b * t + n, h));
        for (qi, &i) in qs.iter().enumerate() {
            let row = (h * nq + qi) * t;
            let q = &qkv[sh.q(b * t + i, h)..][..dh];
            dots::<S, F>(&mut scores[row..=row + i], q, &kt, t);
            let mut m = S::neg_infinity();
            for s in &mut scores[row..=row + i] {
                *s /= scale;
                m = m.max_by_value(*s);
            }
            let mut sum = S::zero();
            for j in 0..=i {
                let e = (scores[row + j] - m).exp();
                pattern[row + j] = e;
                sum += e;
            }
            for j in 0..=i {
                pattern[row + j] /= sum;
            }
            scores[row + i + 1..row + t].fill(S::neg_infinity());
            pattern[row + i + 1..row + t].fill(S::zero());
            let zi = &mut z[qi * hd + h * dh..][..dh];
            zi.fill(S::zero());
            for j in 0..=i {
                axpy::<S, F>(zi, pattern[row + j], &qkv[sh.v(b * t + j, h)..][..dh]);
            }
        }
    }
}

/// `out_j = Σ_d x_d·y_dj` for `j < out.len()`, each a fused chain in ascending d (the same
/// operations as one dot product per j); `yt` is (dh, t), so the j loop vectorises across
/// independent outputs instead of waiting on one chain's latency.
#[inline(always)]
fn dots<S: Scalar, F: Fma>(out: &mut [S], x: &[S], yt: &[S], t: usize) {
    out.fill(S::zero());
    for (d, &xd) in x.iter().enumerate() {
        for (o, &y) in out.iter_mut().zip(&yt[d * t..]) {
            *o = S::fma::<F>(xd, y, *o);
        }
    }
}

/// `yt[d·t + n] = qkv[at(n) + d]` for every position n: one head's keys or values, (dh, t).
#[inline(always)]
fn transpose_head<S: Scalar>(yt: &mut [S], qkv: &[S], t: usize, dh: usize, at: impl Fn(usize) -> usize) {
    for n in 0..t {
        for (d, &v) in qkv[at(n)..][..dh].iter().enumerate() {
            yt[d * t + n] = v;
        }
    }
}

/// `y_d = fma(alpha, x_d, y_d)` (one step of a sum over the caller's index).
#[inline(always)]
fn axpy<S: Scalar, F: Fma>(y: &mut [S], alpha: S, x: &[S]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o = S::fma::<F>(alpha, v, *o);
    }
}

/// dqkv (B·T, 3·H·dh) = attention'(dz) for the query positions `qs`; overwritten (Q rows of
/// other positions are zero). dz is (B·nq, H·dh), pattern (B, H, nq, T). Sums run in ascending
/// key order for dq and ascending query order for dk and dv.
pub fn attention_backward<S: Scalar>(dqkv: &mut [S], dz: &[S], pattern: &[S], qkv: &[S], sh: AttnShape, qs: &[usize]) {
    let AttnShape { t, h: nh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    let scale: S = attn_scale(sh.dh);
    crate::numerics::flops::add(8 * pairs(sh, qs));
    dqkv.par_chunks_mut(t * 3 * hd).enumerate().for_each(|(b, dqkv)| {
        let one = Example { b, qkv, sh, qs, scale };
        let pattern = &pattern[b * nh * nq * t..(b + 1) * nh * nq * t];
        let dz = &dz[b * nq * hd..(b + 1) * nq * hd];
        fused!(F => backward_example::<S, F>(&one, dqkv, dz, pattern))
    });
}

/// The backward of one batch element: dqkv (T, 3·H·dh) from dz (nq, H·dh), pattern (H, nq, T).
#[inline(always)]
fn backward_example<S: Scalar, F: Fma>(e: &Example<'_, S>, dqkv: &mut [S], dz: &[S], pattern: &[S]) {
    let Example { b, qkv, sh, qs, scale } = *e;
    let AttnShape { t, h: nh, dh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    dqkv.fill(S::zero());
    let local = |n: usize| n - b * t * 3 * hd;
    let mut dscore = vec![S::zero(); nq * t];
    let mut vt = vec![S::zero(); dh * t];
    for h in 0..nh {
        // dp_ij = dz_i · v_j, then the softmax backward ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik).
        transpose_head(&mut vt, qkv, t, dh, |n| sh.v(b * t + n, h));
        for (qi, &i) in qs.iter().enumerate() {
            let row = (h * nq + qi) * t;
            let dzi = &dz[qi * hd + h * dh..][..dh];
            dots::<S, F>(&mut dscore[qi * t..=qi * t + i], dzi, &vt, t);
            let mut dot_pd = S::zero();
            for j in 0..=i {
                dot_pd = S::fma::<F>(pattern[row + j], dscore[qi * t + j], dot_pd);
            }
            for j in 0..=i {
                let p = pattern[row + j];
                dscore[qi * t + j] = p * (dscore[qi * t + j] - dot_pd) / scale;
            }
        }
        // dq_i = Σ_j ds_ij k_j.
        for (qi, &i) in qs.iter().enumerate() {
            let dq0 = local(sh.q(b * t + i, h));
            for j in 0..=i {
                axpy::<S, F>(&mut dqkv[dq0..dq0 + dh], dscore[qi * t + j], &qkv[sh.k(b * t + j, h)..][..dh]);
            }
        }
        // dk_j = Σ_{i≥j} ds_ij q_i, dv_j = Σ_{i≥j} p_ij dz_i.
        for j in 0..t {
            let dk0 = local(sh.k(b * t + j, h));
            let dv0 = local(sh.v(b * t + j, h));
            for (qi, &i) in qs.iter().enumerate() {
                if i < j {
                    continue;
                }
                let ds = dscore[qi * t + j];
                let p = pattern[(h * nq + qi) * t + j];
                axpy::<S, F>(&mut dqkv[dk0..dk0 + dh], ds, &qkv[sh.q(b * t + i, h)..][..dh]);
                axpy::<S, F>(&mut dqkv[dv0..dv0 + dh], p, &dz[qi * hd + h * dh..][..dh]);
            }
        }
    }
}
