//! Causal multi-head attention core (TL `AbstractAttention`), between the packed QKV projection
//! and `W_O`: scores `q·k / sqrt(d_head)` (a division, as TL), causal mask, softmax, `z = p·v`.
//!
//! Layout: `qkv` is (B·T, 3·H·dh) with the Q heads, then the K heads, then the V heads, each head
//! `dh` wide, so `q[b,t,h,:]` sits at `qkv[(b·T+t)·3HD + h·dh ..]`. `z` is (B·T, H·dh), which is
//! TL's `hook_z` `[batch, pos, head, d_head]` flattened. Scores and pattern are (B, H, T, T).
//!
//! Masked entries are never computed: they are exactly `-inf` in `scores` and `0` in `pattern`,
//! and skipping them leaves every sum bit-identical (adding an exact zero changes nothing).
//! Work is split by batch element, which owns all of its outputs.

use crate::numerics::Scalar;
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
    let AttnShape { t, h: nh, dh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    let scale: S = attn_scale(dh);
    z.par_chunks_mut(nq * hd)
        .zip(scores.par_chunks_mut(nh * nq * t))
        .zip(pattern.par_chunks_mut(nh * nq * t))
        .enumerate()
        .for_each(|(b, ((z, scores), pattern))| {
            for h in 0..nh {
                for (qi, &i) in qs.iter().enumerate() {
                    let row = (h * nq + qi) * t;
                    let qo = sh.q(b * t + i, h);
                    let mut m = S::neg_infinity();
                    for j in 0..=i {
                        let ko = sh.k(b * t + j, h);
                        let mut dot = S::zero();
                        for d in 0..dh {
                            dot += qkv[qo + d] * qkv[ko + d];
                        }
                        let s = dot / scale;
                        scores[row + j] = s;
                        m = m.max_by_value(s);
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
                    for j in i + 1..t {
                        scores[row + j] = S::neg_infinity();
                        pattern[row + j] = S::zero();
                    }
                    let zi = &mut z[qi * hd + h * dh..qi * hd + (h + 1) * dh];
                    zi.fill(S::zero());
                    for j in 0..=i {
                        let p = pattern[row + j];
                        let vo = sh.v(b * t + j, h);
                        for d in 0..dh {
                            zi[d] += p * qkv[vo + d];
                        }
                    }
                }
            }
        });
}

/// dqkv (B·T, 3·H·dh) = attention'(dz) for the query positions `qs`; overwritten (Q rows of
/// other positions are zero). dz is (B·nq, H·dh), pattern (B, H, nq, T). Sums run in ascending
/// key order for dq and ascending query order for dk and dv.
pub fn attention_backward<S: Scalar>(dqkv: &mut [S], dz: &[S], pattern: &[S], qkv: &[S], sh: AttnShape, qs: &[usize]) {
    let AttnShape { t, h: nh, dh, .. } = sh;
    let (hd, nq) = (sh.hd(), qs.len());
    let scale: S = attn_scale(dh);
    dqkv.par_chunks_mut(t * 3 * hd).enumerate().for_each(|(b, dqkv)| {
        dqkv.fill(S::zero());
        let local = |n: usize| n - b * t * 3 * hd;
        let pattern = &pattern[b * nh * nq * t..(b + 1) * nh * nq * t];
        let dz = &dz[b * nq * hd..(b + 1) * nq * hd];
        let mut dscore = vec![S::zero(); nq * t];
        for h in 0..nh {
            // dp_ij = dz_i · v_j, then the softmax backward ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik).
            for (qi, &i) in qs.iter().enumerate() {
                let row = (h * nq + qi) * t;
                let dzi = &dz[qi * hd + h * dh..qi * hd + (h + 1) * dh];
                let mut dot_pd = S::zero();
                for j in 0..=i {
                    let vo = sh.v(b * t + j, h);
                    let mut dp = S::zero();
                    for d in 0..dh {
                        dp += dzi[d] * qkv[vo + d];
                    }
                    dscore[qi * t + j] = dp;
                    dot_pd += pattern[row + j] * dp;
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
                    let ds = dscore[qi * t + j];
                    let kj = sh.k(b * t + j, h);
                    for d in 0..dh {
                        dqkv[dq0 + d] += ds * qkv[kj + d];
                    }
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
                    let qo = sh.q(b * t + i, h);
                    let dzi = qi * hd + h * dh;
                    for d in 0..dh {
                        dqkv[dk0 + d] += ds * qkv[qo + d];
                        dqkv[dv0 + d] += p * dz[dzi + d];
                    }
                }
            }
        }
    });
}
