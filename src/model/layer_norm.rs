//! TransformerLens LayerNorm: `x − mean`, then *divide* by `scale = sqrt(mean(x²) + eps)`
//! (biased variance, eps inside the root), then `· w + b`. The sums of products (Σ xc², Σ g·xn
//! and the weight gradient) are FMA chains in row/index order (arithmetic v2); the elementwise
//! formulas are unfused, as written.

use crate::fused;
use crate::numerics::Scalar;
use crate::numerics::fused::Fma;
use rayon::prelude::*;

/// Rows per parallel task; fixed, so the partition depends on the shape only.
const ROWS_PER_TASK: usize = 64;

/// What backward needs: per-row scale (TL `hook_scale`) and the normalised input
/// (TL `hook_normalized`, before the affine step in TL 3.x).
#[derive(Clone, Debug, Default)]
pub struct LnCache<S> {
    /// (N)
    pub scale: Vec<S>,
    /// (N, C)
    pub xn: Vec<S>,
}

impl<S: Scalar> LnCache<S> {
    pub fn new(n: usize, c: usize) -> Self {
        LnCache { scale: vec![S::zero(); n], xn: vec![S::zero(); n * c] }
    }
}

/// out is (N, C), x is (N, C), w and b are (C).
pub fn layernorm_forward<S: Scalar>(
    out: &mut [S],
    cache: &mut LnCache<S>,
    x: &[S],
    w: &[S],
    b: &[S],
    c: usize,
    eps: f64,
) {
    let eps = S::from_f64(eps);
    let n = out.len() / c;
    assert_eq!(x.len(), n * c);
    out.par_chunks_mut(ROWS_PER_TASK * c)
        .zip(cache.xn[..n * c].par_chunks_mut(ROWS_PER_TASK * c))
        .zip(cache.scale[..n].par_chunks_mut(ROWS_PER_TASK))
        .zip(x.par_chunks(ROWS_PER_TASK * c))
        .for_each(|(((out, xn), scale), x)| fused!(F => forward_rows::<S, F>(out, xn, scale, x, w, b, eps)));
}

/// LayerNorm of `scale.len()` rows of width `w.len()`.
#[inline(always)]
fn forward_rows<S: Scalar, F: Fma>(out: &mut [S], xn: &mut [S], scale: &mut [S], x: &[S], w: &[S], b: &[S], eps: S) {
    let c = w.len();
    let cs = S::from_f64(c as f64);
    for (r, s) in scale.iter_mut().enumerate() {
        let xr = &x[r * c..(r + 1) * c];
        let xnr = &mut xn[r * c..(r + 1) * c];
        let mut sum = S::zero();
        for &v in xr {
            sum += v;
        }
        let mean = sum / cs;
        let mut sq = S::zero();
        for (d, &v) in xnr.iter_mut().zip(xr) {
            *d = v - mean;
            sq = S::fma::<F>(*d, *d, sq);
        }
        *s = (sq / cs + eps).sqrt();
        let orow = &mut out[r * c..(r + 1) * c];
        for i in 0..c {
            xnr[i] /= *s;
            orow[i] = xnr[i] * w[i] + b[i];
        }
    }
}

/// dx += LN'(dout); dw += Σ_n dout·xn; db += Σ_n dout (rows in ascending order).
/// dx, dout are (N, C); dw, db, w are (C).
pub fn layernorm_backward<S: Scalar>(
    dx: &mut [S],
    dw: &mut [S],
    db: &mut [S],
    dout: &[S],
    cache: &LnCache<S>,
    w: &[S],
    c: usize,
) {
    let n = dx.len() / c;
    assert_eq!(dout.len(), n * c);
    dx.par_chunks_mut(ROWS_PER_TASK * c)
        .zip(dout.par_chunks(ROWS_PER_TASK * c))
        .zip(cache.xn[..n * c].par_chunks(ROWS_PER_TASK * c))
        .zip(cache.scale[..n].par_chunks(ROWS_PER_TASK))
        .for_each(|(((dx, dout), xn), scale)| fused!(F => backward_rows::<S, F>(dx, dout, xn, scale, w)));
    fused!(F => weight_grads::<S, F>(dw, db, dout, &cache.xn[..n * c]));
}

/// dx of `scale.len()` rows of width `w.len()`.
#[inline(always)]
fn backward_rows<S: Scalar, F: Fma>(dx: &mut [S], dout: &[S], xn: &[S], scale: &[S], w: &[S]) {
    let c = w.len();
    let cs = S::from_f64(c as f64);
    let mut g = vec![S::zero(); c];
    for (r, &s) in scale.iter().enumerate() {
        let (dxr, dor, xnr) = (&mut dx[r * c..(r + 1) * c], &dout[r * c..(r + 1) * c], &xn[r * c..(r + 1) * c]);
        let mut m1 = S::zero();
        let mut m2 = S::zero();
        for i in 0..c {
            g[i] = dor[i] * w[i];
            m1 += g[i];
            m2 = S::fma::<F>(g[i], xnr[i], m2);
        }
        m1 /= cs;
        m2 /= cs;
        for i in 0..c {
            dxr[i] += (g[i] - m1 - xnr[i] * m2) / s;
        }
    }
}

/// dw += Σ_n dout·xn (fused), db += Σ_n dout, rows ascending.
#[inline(always)]
fn weight_grads<S: Scalar, F: Fma>(dw: &mut [S], db: &mut [S], dout: &[S], xn: &[S]) {
    let c = dw.len();
    let mut aw = vec![S::zero(); c];
    let mut ab = vec![S::zero(); c];
    for (dor, xnr) in dout.chunks_exact(c).zip(xn.chunks_exact(c)) {
        for i in 0..c {
            aw[i] = S::fma::<F>(dor[i], xnr[i], aw[i]);
            ab[i] += dor[i];
        }
    }
    for i in 0..c {
        dw[i] += aw[i];
        db[i] += ab[i];
    }
}
