//! The residual stream's data movement: elementwise adds and the row gathers/scatters of the
//! last block, which runs only at the output positions.

use crate::numerics::{Scalar, simd};
use rayon::prelude::*;

/// Elements per task for elementwise residual additions (fixed).
const ADD_CHUNK: usize = 8192;

/// out = x + y elementwise.
pub(crate) fn add<S: Scalar>(out: &mut [S], x: &[S], y: &[S]) {
    out.par_chunks_mut(ADD_CHUNK).zip(x.par_chunks(ADD_CHUNK)).zip(y.par_chunks(ADD_CHUNK)).for_each(|((o, x), y)| {
        simd::dispatch(
            #[inline(always)]
            || {
                let (x, y) = (&x[..o.len()], &y[..o.len()]);
                for i in 0..o.len() {
                    o[i] = x[i] + y[i];
                }
            },
        )
    });
}

/// dst (B·|qs|, C) = rows `b·t + q` of src (B·t, C), q ∈ qs.
pub(crate) fn gather_rows<S: Scalar>(dst: &mut [S], src: &[S], qs: &[usize], t: usize, c: usize) {
    for (r, d) in dst.chunks_exact_mut(c).enumerate() {
        let (bi, j) = (r / qs.len(), r % qs.len());
        let s = (bi * t + qs[j]) * c;
        d.copy_from_slice(&src[s..s + c]);
    }
}

/// dst (B·t, C) = zero except rows `b·t + q` = src rows (B·|qs|, C).
pub(crate) fn scatter_rows<S: Scalar>(dst: &mut [S], src: &[S], qs: &[usize], t: usize, c: usize) {
    dst.fill(S::zero());
    for (r, s) in src.chunks_exact(c).enumerate() {
        let (bi, j) = (r / qs.len(), r % qs.len());
        let d = (bi * t + qs[j]) * c;
        dst[d..d + c].copy_from_slice(s);
    }
}
