//! The deterministic numerics core: the scalar trait, the one math module, matrix kernels and
//! reductions. Nothing outside this module decides a summation order of its own except by calling
//! the sequential helpers here.

pub mod dual;
pub mod math;
pub mod matmul;
pub mod scalar;
pub mod simd;
pub mod vmath;

pub use scalar::{Dtype, Scalar};

/// Sum in index order, starting from zero. The one definition of "the sum of a slice".
#[inline]
pub fn sum_seq<S: Scalar>(xs: &[S]) -> S {
    let mut acc = S::zero();
    for &x in xs {
        acc += x;
    }
    acc
}

/// Σ xᵢ² in index order, accumulated in f64 (for norms reported as metrics).
pub fn sum_sq_f64<S: Scalar>(xs: &[S]) -> f64 {
    let mut acc = 0.0f64;
    for &x in xs {
        let v = x.value();
        acc += v * v;
    }
    acc
}
