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
    let tp = t.next_multiple_of(KEYS);
    let mut kt = vec![S::zero(); dh * tp];
    for h in 0..nh {
        transpose_head(&mut kt, qkv, t, tp, dh, |n| sh.k(b * t + n, h));
        for (qi, &i) in qs.iter().enumerate() {
            let row = (h * nq + qi) * t;
            let q = &qkv[sh.q(b * t + i, h)..][..dh];
            dots::<S, F>(&mut scores[row..=row + i], q, &kt, tp);
            let mut m = S::neg_infinity();
            for s in &mut scores[row..=row + i] {
                *s /= scale;
                m = m.max_by_value(*s);
            }
            let mut sum = S::zero();
            for (j0, p) in (0..).step_by(KEYS).zip(pattern[row..=row + i].chunks_mut(KEYS)) {
                let e = exp_shifted(&scores[row + j0..][..p.len()], m);
                for (pj, &e) in p.iter_mut().zip(&e) {
                    *pj = e;
                    sum += e;
                }
            }
            for j in 0..=i {
                pattern[row + j] /= sum;
            }
            scores[row + i + 1..row + t].fill(S::neg_infinity());
            pattern[row + i + 1..row + t].fill(S::zero());
            let zi = &mut z[qi * hd + h * dh..][..dh];
            zi.fill(S::zero());
            let terms = (0..=i).map(|j| (pattern[row + j], &qkv[sh.v(b * t + j, h)..][..dh]));
            add_scaled::<S, F>(zi, terms);
        }
    }
}

/// Keys per block in [`dots`]: a fixed width, so a block's sums stay in vector registers.
const KEYS: usize = 16;

/// `out_j = Σ_d x_d·y_dj` for `j < out.len()`, each a fused chain in ascending d (the same
/// operations as one dot product per j); `yt` is (dh, tp), `tp` a multiple of [`KEYS`] ≥ the
/// keys. Blocks of [`KEYS`] outputs run in registers across independent outputs (keys past
/// `out.len()` are computed from the zero padding and dropped); a slice of running sums would be
/// stored and reloaded at every `d`, and short rows would not vectorise at all.
#[inline(always)]
fn dots<S: Scalar, F: Fma>(out: &mut [S], x: &[S], yt: &[S], tp: usize) {
    for (j0, o) in (0..).step_by(KEYS).zip(out.chunks_mut(KEYS)) {
        let mut acc = [S::zero(); KEYS];
        for (d, &xd) in x.iter().enumerate() {
            let y: &[S; KEYS] = yt[d * tp + j0..][..KEYS].try_into().unwrap();
            for w in 0..KEYS {
                acc[w] = S::fma::<F>(xd, y[w], acc[w]);
            }
        }
        o.copy_from_slice(&acc[..o.len()]);
    }
}

/// `exp(x_j − m)` for up to [`KEYS`] values, at a fixed width so the exponentials vectorise
/// (each lane the same operations as one scalar call); lanes past `x.len()` are dropped.
#[inline(always)]
fn exp_shifted<S: Scalar>(x: &[S], m: S) -> [S; KEYS] {
    let mut e = [m; KEYS];
    e[..x.len()].copy_from_slice(x);
    for v in &mut e {
        *v = (*v - m).exp();
    }
    e
}

/// `yt[d·tp + n] = qkv[at(n) + d]` for every position n < t: one head's keys or values, (dh, tp);
/// the padding columns `t..tp` are left as they are (zero).
#[inline(always)]
fn transpose_head<S: Scalar>(yt: &mut [S], qkv: &[S], t: usize, tp: usize, dh: usize, at: impl Fn(usize) -> usize) {
    for n in 0..t {
        for (d, &v) in qkv[at(n)..][..dh].iter().enumerate() {
            yt[d * tp + n] = v;
        }
    }
}

/// `y_d = fma(alpha_n, x_n,d, y_d)` for the terms `(alpha_n, x_n)` in order: each output's own
/// fused chain. At the common head widths the running sums are a fixed-size array, which stays
/// in registers across the terms (a slice is stored and reloaded at every term, and the chain
/// then waits on memory); other widths take the slice form, with the same operations.
#[inline(always)]
fn add_scaled<'a, S: Scalar + 'a, F: Fma>(y: &mut [S], terms: impl Iterator<Item = (S, &'a [S])>) {
    match y.len() {
        16 => add_scaled_fixed::<S, F, 16>(y.try_into().unwrap(), terms),
        32 => add_scaled_fixed::<S, F, 32>(y.try_into().unwrap(), terms),
        64 => add_scaled_fixed::<S, F, 64>(y.try_into().unwrap(), terms),
        _ => {
            for (alpha, x) in terms {
                for (o, &v) in y.iter_mut().zip(x) {
                    *o = S::fma::<F>(alpha, v, *o);
                }
            }
        }
    }
}

#[inline(always)]
fn add_scaled_fixed<'a, S: Scalar + 'a, F: Fma, const D: usize>(
    y: &mut [S; D],
    terms: impl Iterator<Item = (S, &'a [S])>,
) {
    let mut acc = *y;
    for (alpha, x) in terms {
        let x: &[S; D] = x.try_into().unwrap();
        for d in 0..D {
            acc[d] = S::fma::<F>(alpha, x[d], acc[d]);
        }
    }
    *y = acc;
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
    let tp = t.next_multiple_of(KEYS);
    let mut vt = vec![S::zero(); dh * tp];
    for h in 0..nh {
        // dp_ij = dz_i · v_j, then the softmax backward ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik).
        transpose_head(&mut vt, qkv, t, tp, dh, |n| sh.v(b * t + n, h));
        for (qi, &i) in qs.iter().enumerate() {
            let row = (h * nq + qi) * t;
            let dzi = &dz[qi * hd + h * dh..][..dh];
            dots::<S, F>(&mut dscore[qi * t..=qi * t + i], dzi, &vt, tp);
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
            let terms = (0..=i).map(|j| (dscore[qi * t + j], &qkv[sh.k(b * t + j, h)..][..dh]));
            add_scaled::<S, F>(&mut dqkv[dq0..dq0 + dh], terms);
        }
        // dk_j = Σ_{i≥j} ds_ij q_i, dv_j = Σ_{i≥j} p_ij dz_i.
        for j in 0..t {
            let later = || qs.iter().enumerate().filter(move |&(_, &i)| i >= j);
            let dk0 = local(sh.k(b * t + j, h));
            let terms = later().map(|(qi, &i)| (dscore[qi * t + j], &qkv[sh.q(b * t + i, h)..][..dh]));
            add_scaled::<S, F>(&mut dqkv[dk0..dk0 + dh], terms);
            let dv0 = local(sh.v(b * t + j, h));
            let terms = later().map(|(qi, _)| (pattern[(h * nq + qi) * t + j], &dz[qi * hd + h * dh..][..dh]));
            add_scaled::<S, F>(&mut dqkv[dv0..dv0 + dh], terms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::fused::Software;
    use crate::rng::{Purpose, Stream};

    /// Test values, uniform in [−1.5, 1.5).
    fn noise(index: u64) -> impl FnMut() -> f32 {
        let mut rng = Stream::new(7, Purpose::Direction, index);
        move || (rng.uniform() as f32 - 0.5) * 3.0
    }

    /// The fixed-width sums (head widths 16, 32, 64) give the slice form's bits.
    #[test]
    fn fixed_width_sums_equal_the_slice_form() {
        let mut next = noise(1);
        for d in [16, 32, 64] {
            let xs: Vec<Vec<f32>> = (0..13).map(|_| (0..d).map(|_| next()).collect()).collect();
            let alphas: Vec<f32> = (0..13).map(|_| next()).collect();
            let start: Vec<f32> = (0..d).map(|_| next()).collect();
            let mut fixed = start.clone();
            add_scaled::<f32, Software>(&mut fixed, alphas.iter().copied().zip(xs.iter().map(|x| &x[..])));
            let mut slice = start.clone();
            for (&a, x) in alphas.iter().zip(&xs) {
                for (o, &v) in slice.iter_mut().zip(x) {
                    *o = Software::f32(a, v, *o);
                }
            }
            assert_eq!(
                fixed.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                slice.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "d = {d}"
            );
            assert_ne!(fixed, start, "the sums moved");
        }
    }

    /// The blocked dot products give each output's own chain, `d` ascending, for row lengths
    /// below, at and past the block width (and the padding never leaks into an output).
    #[test]
    fn blocked_dots_equal_one_chain_per_key() {
        let mut next = noise(2);
        for (t, dh) in [(1usize, 4usize), (15, 32), (16, 32), (17, 8), (40, 16)] {
            let tp = t.next_multiple_of(KEYS);
            let x: Vec<f32> = (0..dh).map(|_| next()).collect();
            let mut yt = vec![f32::NAN; dh * tp];
            for d in 0..dh {
                for j in 0..t {
                    yt[d * tp + j] = next();
                }
                yt[d * tp + t..(d + 1) * tp].fill(0.0);
            }
            for len in [1, t.div_ceil(2), t] {
                let mut got = vec![f32::NAN; len];
                dots::<f32, Software>(&mut got, &x, &yt, tp);
                let want: Vec<u32> = (0..len)
                    .map(|j| (0..dh).fold(0.0f32, |acc, d| Software::f32(x[d], yt[d * tp + j], acc)).to_bits())
                    .collect();
                assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "t {t} dh {dh} len {len}");
            }
        }
    }
}
