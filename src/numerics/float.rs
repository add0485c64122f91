//! `f32` and `f64` as [`Scalar`]s: the training and checking types (the dual numbers are
//! `dual.rs`).

use super::fused::Fma;
use super::product::Product;
use super::scalar::{Dtype, Scalar};
#[cfg(target_arch = "x86_64")]
use super::{fused::VectorTile, gemm::APanel};

impl Scalar for f32 {
    #[inline]
    fn matmul(p: Product<'_, Self>) {
        super::gemm::run(p)
    }
    const DTYPE: Dtype = Dtype::F32;
    const NAME: &'static str = Dtype::F32.name();
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn neg_infinity() -> Self {
        f32::NEG_INFINITY
    }
    #[inline(always)]
    fn fma<F: Fma>(a: Self, b: Self, c: Self) -> Self {
        F::f32(a, b, c)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn vector_tile<F: Fma, const R: usize, const C: usize>(
        acc: &mut [[Self; C]; R],
        a: APanel<'_, Self>,
        bp: &[Self],
    ) -> bool {
        use super::register_tile::{f32x8_tile, f32x8_tile_avx2, f32x16_tile};
        let acc = acc.as_flattened_mut();
        let unit = a.rs == 1;
        // SAFETY: the caller guarantees the CPU has `F::TILE`'s vectors.
        unsafe {
            match (F::TILE, C, unit) {
                (VectorTile::Zmm, 8, true) => f32x8_tile::<R, 1, true>(acc, a, bp),
                (VectorTile::Zmm, 8, false) => f32x8_tile::<R, 1, false>(acc, a, bp),
                (VectorTile::Zmm, 16, true) => f32x16_tile::<R, 1, true>(acc, a, bp),
                (VectorTile::Zmm, 16, false) => f32x16_tile::<R, 1, false>(acc, a, bp),
                (VectorTile::Zmm, 32, true) => f32x16_tile::<R, 2, true>(acc, a, bp),
                (VectorTile::Zmm, 32, false) => f32x16_tile::<R, 2, false>(acc, a, bp),
                (VectorTile::Ymm, 8, true) => f32x8_tile_avx2::<R, 1, true>(acc, a, bp),
                (VectorTile::Ymm, 8, false) => f32x8_tile_avx2::<R, 1, false>(acc, a, bp),
                (VectorTile::Ymm, 16, true) => f32x8_tile_avx2::<R, 2, true>(acc, a, bp),
                (VectorTile::Ymm, 16, false) => f32x8_tile_avx2::<R, 2, false>(acc, a, bp),
                (VectorTile::Ymm, 32, true) => f32x8_tile_avx2::<R, 4, true>(acc, a, bp),
                (VectorTile::Ymm, 32, false) => f32x8_tile_avx2::<R, 4, false>(acc, a, bp),
                _ => return false,
            }
        }
        true
    }
    /// `libm::expf`, in its bit-identical branch-free form (vectorises in loops).
    #[inline(always)]
    fn exp(self) -> Self {
        super::vmath::expf(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        super::math::logf(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        super::math::sqrtf(self)
    }
    /// `libm::erff`, in its bit-identical branch-free form (vectorises in loops).
    #[inline(always)]
    fn erf(self) -> Self {
        super::vmath::erff(self)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline(always)]
    fn erf_in_place(v: &mut [Self]) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<super::vmath::ErfScratch> = Default::default();
        }
        // Take the buffers out so the work itself inlines into the caller's SIMD copy.
        let mut scratch = SCRATCH.with(|s| s.take());
        super::vmath::erff_in_place(v, &mut scratch);
        SCRATCH.with(|s| s.replace(scratch));
    }
}

impl Scalar for f64 {
    #[inline]
    fn matmul(p: Product<'_, Self>) {
        super::gemm::run(p)
    }
    const DTYPE: Dtype = Dtype::F64;
    const NAME: &'static str = Dtype::F64.name();
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
    #[inline(always)]
    fn neg_infinity() -> Self {
        f64::NEG_INFINITY
    }
    #[inline(always)]
    fn fma<F: Fma>(a: Self, b: Self, c: Self) -> Self {
        F::f64(a, b, c)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn vector_tile<F: Fma, const R: usize, const C: usize>(
        acc: &mut [[Self; C]; R],
        a: APanel<'_, Self>,
        bp: &[Self],
    ) -> bool {
        use super::register_tile::{f64x4_tile_avx2, f64x8_tile};
        let acc = acc.as_flattened_mut();
        let unit = a.rs == 1;
        // SAFETY: the caller guarantees the CPU has `F::TILE`'s vectors.
        unsafe {
            match (F::TILE, C, unit) {
                (VectorTile::Zmm, 8, true) => f64x8_tile::<R, 1, true>(acc, a, bp),
                (VectorTile::Zmm, 8, false) => f64x8_tile::<R, 1, false>(acc, a, bp),
                (VectorTile::Zmm, 16, true) => f64x8_tile::<R, 2, true>(acc, a, bp),
                (VectorTile::Zmm, 16, false) => f64x8_tile::<R, 2, false>(acc, a, bp),
                (VectorTile::Zmm, 32, true) => f64x8_tile::<R, 4, true>(acc, a, bp),
                (VectorTile::Zmm, 32, false) => f64x8_tile::<R, 4, false>(acc, a, bp),
                (VectorTile::Ymm, 8, true) => f64x4_tile_avx2::<R, 2, true>(acc, a, bp),
                (VectorTile::Ymm, 8, false) => f64x4_tile_avx2::<R, 2, false>(acc, a, bp),
                (VectorTile::Ymm, 16, true) => f64x4_tile_avx2::<R, 4, true>(acc, a, bp),
                (VectorTile::Ymm, 16, false) => f64x4_tile_avx2::<R, 4, false>(acc, a, bp),
                (VectorTile::Ymm, 32, true) => f64x4_tile_avx2::<R, 8, true>(acc, a, bp),
                (VectorTile::Ymm, 32, false) => f64x4_tile_avx2::<R, 8, false>(acc, a, bp),
                _ => return false,
            }
        }
        true
    }
    #[inline(always)]
    fn exp(self) -> Self {
        super::math::exp(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        super::math::log(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        super::math::sqrt(self)
    }
    #[inline(always)]
    fn erf(self) -> Self {
        super::math::erf(self)
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self.to_bits()
    }
}
