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

/// Rows whose sums run side by side: each row's sums are serial chains (their order is the
/// contract), so one row alone waits on the adder's latency. `GROUP` rows, transposed into
/// columns, advance their chains together, one vector lane per row.
const GROUP: usize = 32;

/// LayerNorm of `scale.len()` rows of width `w.len()`, in groups of [`GROUP`] rows.
#[inline(always)]
fn forward_rows<S: Scalar, F: Fma>(out: &mut [S], xn: &mut [S], scale: &mut [S], x: &[S], w: &[S], b: &[S], eps: S) {
    let c = w.len();
    let mut cols = vec![[S::zero(); GROUP]; c];
    let full = scale.len() / GROUP * GROUP;
    for r0 in (0..full).step_by(GROUP) {
        let rows = r0 * c..(r0 + GROUP) * c;
        let (o, n, x) = (&mut out[rows.clone()], &mut xn[rows.clone()], &x[rows]);
        forward_group::<S, F, GROUP>(o, n, &mut scale[r0..r0 + GROUP], x, w, b, eps, &mut cols);
    }
    let mut one = if full < scale.len() { vec![[S::zero(); 1]; c] } else { Vec::new() };
    for r in full..scale.len() {
        let row = r * c..(r + 1) * c;
        let (o, n, x) = (&mut out[row.clone()], &mut xn[row.clone()], &x[row]);
        forward_group::<S, F, 1>(o, n, &mut scale[r..r + 1], x, w, b, eps, &mut one);
    }
}

/// `cols[i][g] = rows[g·c + i]`: `G` rows of width `c = cols.len()` as columns.
#[inline(always)]
fn transpose_rows<S: Scalar, const G: usize>(cols: &mut [[S; G]], rows: &[S]) {
    for (g, row) in rows.chunks_exact(cols.len()).take(G).enumerate() {
        for (col, &v) in cols.iter_mut().zip(row) {
            col[g] = v;
        }
    }
}

/// `G` rows of LayerNorm: each row's mean, Σ xc² (fused, index order) and scale, the rows' sums
/// side by side in `cols` (scratch, C columns); then `xn = (x − mean) / scale` and the affine step.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn forward_group<S: Scalar, F: Fma, const G: usize>(
    out: &mut [S],
    xn: &mut [S],
    scale: &mut [S],
    x: &[S],
    w: &[S],
    b: &[S],
    eps: S,
    cols: &mut [[S; G]],
) {
    let c = w.len();
    let cs = S::from_f64(c as f64);
    transpose_rows::<S, G>(cols, x);
    let mut sum = [S::zero(); G];
    for col in cols.iter() {
        for g in 0..G {
            sum[g] += col[g];
        }
    }
    let mean: [S; G] = std::array::from_fn(|g| sum[g] / cs);
    let mut sq = [S::zero(); G];
    for col in cols.iter() {
        for g in 0..G {
            let d = col[g] - mean[g];
            sq[g] = S::fma::<F>(d, d, sq[g]);
        }
    }
    for g in 0..G {
        let s = (sq[g] / cs + eps).sqrt();
        scale[g] = s;
        let (xr, xnr, orow) = (&x[g * c..][..c], &mut xn[g * c..][..c], &mut out[g * c..][..c]);
        for i in 0..c {
            xnr[i] = (xr[i] - mean[g]) / s;
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

/// dx of `scale.len()` rows of width `w.len()`, in groups of [`GROUP`] rows.
#[inline(always)]
fn backward_rows<S: Scalar, F: Fma>(dx: &mut [S], dout: &[S], xn: &[S], scale: &[S], w: &[S]) {
    let c = w.len();
    let mut g = vec![S::zero(); GROUP * c];
    let mut cols = vec![[[S::zero(); GROUP]; 2]; c];
    let full = scale.len() / GROUP * GROUP;
    for r0 in (0..full).step_by(GROUP) {
        let rows = r0 * c..(r0 + GROUP) * c;
        let (dx, dout, xn) = (&mut dx[rows.clone()], &dout[rows.clone()], &xn[rows]);
        backward_group::<S, F, GROUP>(dx, dout, xn, &scale[r0..r0 + GROUP], w, &mut g, &mut cols);
    }
    let mut one = if full < scale.len() { vec![[[S::zero(); 1]; 2]; c] } else { Vec::new() };
    for r in full..scale.len() {
        let row = r * c..(r + 1) * c;
        let (dx, dout, xn) = (&mut dx[row.clone()], &dout[row.clone()], &xn[row]);
        backward_group::<S, F, 1>(dx, dout, xn, &scale[r..r + 1], w, &mut g, &mut one);
    }
}

/// `G` rows of dx: `g = dout·w`, its mean and the fused Σ g·xn (index order; the rows' chains
/// side by side over `cols`, scratch of C columns of (g, xn)), then
/// `dx += (g − m1 − xn·m2) / scale`. `g` is scratch of at least G·C.
#[inline(always)]
fn backward_group<S: Scalar, F: Fma, const G: usize>(
    dx: &mut [S],
    dout: &[S],
    xn: &[S],
    scale: &[S],
    w: &[S],
    g: &mut [S],
    cols: &mut [[[S; G]; 2]],
) {
    let c = w.len();
    let cs = S::from_f64(c as f64);
    for (gr, dor) in g.chunks_exact_mut(c).zip(dout.chunks_exact(c)).take(G) {
        for i in 0..c {
            gr[i] = dor[i] * w[i];
        }
    }
    for (r, (gr, xnr)) in g.chunks_exact(c).zip(xn.chunks_exact(c)).take(G).enumerate() {
        for ((col, &gi), &xi) in cols.iter_mut().zip(gr).zip(xnr) {
            (col[0][r], col[1][r]) = (gi, xi);
        }
    }
    let mut m1 = [S::zero(); G];
    let mut m2 = [S::zero(); G];
    for [gc, xc] in cols.iter() {
        for r in 0..G {
            m1[r] += gc[r];
            m2[r] = S::fma::<F>(gc[r], xc[r], m2[r]);
        }
    }
    for r in 0..G {
        let (m1, m2, s) = (m1[r] / cs, m2[r] / cs, scale[r]);
        let (dxr, gr, xnr) = (&mut dx[r * c..][..c], &g[r * c..][..c], &xn[r * c..][..c]);
        for i in 0..c {
            dxr[i] += (gr[i] - m1 - xnr[i] * m2) / s;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::fused::Software;
    use crate::rng::{Purpose, Stream};

    /// `n` test values, uniform in [−2, 2).
    fn values(n: usize, index: u64) -> Vec<f32> {
        let mut rng = Stream::new(7, Purpose::Direction, index);
        (0..n).map(|_| (rng.uniform() as f32 - 0.5) * 4.0).collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Rows in groups (full groups and the rows left over) give each row's own chains: the
    /// forward and dx equal the one-row-at-a-time formulas of the module doc, bit for bit.
    #[test]
    fn grouped_rows_equal_one_row_at_a_time() {
        let (c, eps) = (12, 1e-5f32);
        for n in [1, 7, 8, 9, 17, 31, 32, 33, 70] {
            let (x, w, b, dout) = (values(n * c, 100 + n as u64), values(c, 7), values(c, 9), values(n * c, 11));
            let (mut out, mut cache) = (vec![0.0; n * c], LnCache::<f32>::new(n, c));
            layernorm_forward(&mut out, &mut cache, &x, &w, &b, c, eps as f64);
            let mut dx = values(n * c, 13);
            let dx0 = dx.clone();
            backward_rows::<f32, Software>(&mut dx, &dout, &cache.xn, &cache.scale, &w);
            for r in 0..n {
                let xr = &x[r * c..(r + 1) * c];
                let mean = xr.iter().fold(0.0f32, |s, &v| s + v) / c as f32;
                let sq = xr.iter().fold(0.0f32, |s, &v| Software::f32(v - mean, v - mean, s));
                let s = crate::numerics::math::sqrtf(sq / c as f32 + eps);
                let xn: Vec<f32> = xr.iter().map(|&v| (v - mean) / s).collect();
                let want: Vec<f32> = (0..c).map(|i| xn[i] * w[i] + b[i]).collect();
                assert_eq!(bits(&out[r * c..(r + 1) * c]), bits(&want), "forward, n {n} row {r}");
                assert_eq!(cache.scale[r].to_bits(), s.to_bits(), "scale, n {n} row {r}");
                let g: Vec<f32> = (0..c).map(|i| dout[r * c + i] * w[i]).collect();
                let m1 = g.iter().fold(0.0f32, |a, &v| a + v) / c as f32;
                let m2 = (0..c).fold(0.0f32, |a, i| Software::f32(g[i], xn[i], a)) / c as f32;
                let want: Vec<f32> = (0..c).map(|i| dx0[r * c + i] + (g[i] - m1 - xn[i] * m2) / s).collect();
                assert_eq!(bits(&dx[r * c..(r + 1) * c]), bits(&want), "dx, n {n} row {r}");
            }
        }
    }
}
