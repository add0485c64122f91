//! The deterministic numerics core: the scalar trait, the one math module, matrix kernels and
//! reductions, and the one fused multiply-add ([`fused`], arithmetic v2). Nothing outside this module decides a summation order of its own except by calling
//! the sequential helpers here.

pub mod dual;
pub mod float;
pub mod flops;
pub mod fused;
pub mod gemm;
pub mod math;
pub mod matmul;
pub mod product;
pub mod product_times;
#[cfg(target_arch = "x86_64")]
mod register_tile;
pub mod scalar;
pub mod simd;
mod tiling;
pub mod vmath;

pub use scalar::{Dtype, Scalar};

/// The arithmetic version: which operations and orders produce every float (docs/determinism.md).
/// 1: products as a separately rounded multiply then add. 2: products accumulated by fused
/// multiply-add. Recorded in every run manifest, export and golden file; runs of different
/// versions are never resumed into each other and are flagged when reported together.
pub const ARITHMETIC: u32 = 2;

/// What the matrix kernels run on this machine: SIMD level, FMA and tiling per dtype.
pub fn kernel_summary() -> String {
    let level = simd::level();
    format!(
        "{} ({}), tiles f32 {} / f64 {}, {}",
        level.name(),
        level.fma_name(),
        gemm::tiling(level, 4).name(),
        gemm::tiling(level, 8).name(),
        simd::uarch().name()
    )
}

/// Sum in index order, starting from zero. The one definition of "the sum of a slice".
#[inline]
pub fn sum_seq<S: Scalar>(xs: &[S]) -> S {
    let mut acc = S::zero();
    for &x in xs {
        acc += x;
    }
    acc
}

/// Σ xᵢ² in index order, accumulated in f64 by FMA (for norms reported as metrics).
pub fn sum_sq_f64<S: Scalar>(xs: &[S]) -> f64 {
    crate::fused!(F => sum_sq_with::<S, F>(xs))
}

#[inline(always)]
fn sum_sq_with<S: Scalar, F: fused::Fma>(xs: &[S]) -> f64 {
    let mut acc = 0.0f64;
    for &x in xs {
        let v = x.value();
        acc = F::f64(v, v, acc);
    }
    acc
}
