//! TransformerLens LayerNorm: `x − mean`, then *divide* by `scale = sqrt(mean(x²) + eps)`
//! (biased variance, eps inside the root), then `· w + b`.

use crate::numerics::Scalar;
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
    let cs = S::from_f64(c as f64);
    let n = out.len() / c;
    assert_eq!(x.len(), n * c);
    out.par_chunks_mut(ROWS_PER_TASK * c)
        .zip(cache.xn[..n * c].par_chunks_mut(ROWS_PER_TASK * c))
        .zip(cache.scale[..n].par_chunks_mut(ROWS_PER_TASK))
        .zip(x.par_chunks(ROWS_PER_TASK * c))
        .for_each(|(((out, xn), scale), x)| {
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
                    sq += *d * *d;
                }
                *s = (sq / cs + eps).sqrt();
                let orow = &mut out[r * c..(r + 1) * c];
                for i in 0..c {
                    xnr[i] /= *s;
                    orow[i] = xnr[i] * w[i] + b[i];
                }
            }
        });
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
    let cs = S::from_f64(c as f64);
    let n = dx.len() / c;
    assert_eq!(dout.len(), n * c);
    dx.par_chunks_mut(ROWS_PER_TASK * c)
        .zip(dout.par_chunks(ROWS_PER_TASK * c))
        .zip(cache.xn[..n * c].par_chunks(ROWS_PER_TASK * c))
        .zip(cache.scale[..n].par_chunks(ROWS_PER_TASK))
        .for_each(|(((dx, dout), xn), scale)| {
            let mut g = vec![S::zero(); c];
            for (r, &s) in scale.iter().enumerate() {
                let (dxr, dor, xnr) = (&mut dx[r * c..(r + 1) * c], &dout[r * c..(r + 1) * c], &xn[r * c..(r + 1) * c]);
                let mut m1 = S::zero();
                let mut m2 = S::zero();
                for i in 0..c {
                    g[i] = dor[i] * w[i];
                    m1 += g[i];
                    m2 += g[i] * xnr[i];
                }
                m1 /= cs;
                m2 /= cs;
                for i in 0..c {
                    dxr[i] += (g[i] - m1 - xnr[i] * m2) / s;
                }
            }
        });
    let mut aw = vec![S::zero(); c];
    let mut ab = vec![S::zero(); c];
    for (dor, xnr) in dout.chunks_exact(c).zip(cache.xn.chunks_exact(c)) {
        for i in 0..c {
            aw[i] += dor[i] * xnr[i];
            ab[i] += dor[i];
        }
    }
    for i in 0..c {
        dw[i] += aw[i];
        db[i] += ab[i];
    }
}
