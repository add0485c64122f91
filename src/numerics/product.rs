//! One matrix product as data: what [`crate::numerics::Scalar::matmul`] runs (the blocked kernel
//! of `gemm.rs` for f32/f64; the dual numbers split it into three f64 products).

/// What to do with the existing contents of the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accum {
    /// `out = acc (+ bias)`.
    Set,
    /// `out = out + acc` (gradient accumulation, llm.c style).
    Add,
}

/// One product `out[m,n] (=|+=) op(a)·b[k,n] (+ bias[n])`, `op(a)` = `a[m,k]` or `a[k,m]ᵀ`.
/// [`Scalar::matmul`] runs it (the dual numbers split it into three f64 products).
pub struct Product<'a, S> {
    pub out: &'a mut [S],
    pub a: &'a [S],
    /// `a` is stored `[k, m]` (the weight-gradient layout).
    pub a_trans: bool,
    pub b: &'a [S],
    pub bias: Option<&'a [S]>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub accum: Accum,
}
