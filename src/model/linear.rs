//! A linear layer `y = x·W + b` (TL's `[d_in, d_out]` storage), forward and backward as one call
//! each (llm.c's `matmul_forward` / `matmul_backward`).

use crate::numerics::Scalar;
use crate::numerics::matmul::{Accum, matmul_nn, matmul_tn, sum_rows_into, transpose};

/// A linear layer's parameters and shape.
#[derive(Clone, Copy)]
pub struct Linear<'a, S> {
    /// (d_in, d_out)
    pub w: &'a [S],
    /// (d_out)
    pub b: &'a [S],
    pub d_in: usize,
    pub d_out: usize,
}

/// out (n, d_out) = inp (n, d_in) · W + b.
pub fn linear_forward<S: Scalar>(out: &mut [S], inp: &[S], l: Linear<'_, S>, n: usize) {
    matmul_nn(out, inp, l.w, Some(l.b), n, l.d_in, l.d_out, Accum::Set);
}

/// dW += inpᵀ·dout (rows ascending), db += Σ_rows dout, and dinp (n, d_in) = dout·Wᵀ
/// (overwritten). `w_t` is scratch for Wᵀ (at least d_in·d_out).
#[allow(clippy::too_many_arguments)]
pub fn linear_backward<S: Scalar>(
    dinp: &mut [S],
    dw: &mut [S],
    db: &mut [S],
    dout: &[S],
    inp: &[S],
    l: Linear<'_, S>,
    n: usize,
    w_t: &mut [S],
) {
    let (d_in, d_out) = (l.d_in, l.d_out);
    matmul_tn(dw, &inp[..n * d_in], &dout[..n * d_out], d_in, n, d_out, Accum::Add);
    sum_rows_into(db, &dout[..n * d_out], n, d_out);
    transpose(&mut w_t[..d_in * d_out], l.w, d_in, d_out);
    matmul_nn(&mut dinp[..n * d_in], &dout[..n * d_out], &w_t[..d_in * d_out], None, n, d_out, d_in, Accum::Set);
}
