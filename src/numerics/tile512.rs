//! The matrix kernel's register tile in explicit 512-bit vectors, for the AVX-512 level: the same
//! `acc[r][c] = fma(a[r,p], b[p,c], acc[r][c])`, `p` ascending, as `gemm::tile`, with two vectors
//! per tile row (f32: 32 columns, f64: 16). LLVM's auto-vectoriser keeps to 256-bit vectors even
//! where AVX-512 is enabled, so the generic loop needs 32 registers of accumulators for such a
//! tile and spills them to the stack at every step (18× slower, measured on Zen 4).

use super::fused::zmm;
use std::arch::x86_64::{
    _mm512_loadu_pd, _mm512_loadu_ps, _mm512_set1_pd, _mm512_set1_ps, _mm512_storeu_pd, _mm512_storeu_ps,
};

macro_rules! tile512 {
    ($name:ident, $t:ty, $lanes:literal, $load:ident, $splat:ident, $store:ident, $fma:path) => {
        /// Accumulate the packed `ap` (`R` values per `p`) × `bp` (`2·lanes` per `p`) into `acc`
        /// (`R` rows of `2·lanes`, holding zeros or the sums carried from the previous block).
        ///
        /// # Safety
        /// The CPU must support AVX-512F.
        #[inline]
        #[target_feature(enable = "avx512f")]
        pub unsafe fn $name<const R: usize>(acc: &mut [$t], ap: &[$t], bp: &[$t]) {
            const W: usize = 2 * $lanes;
            assert!(acc.len() == R * W && ap.len() / R == bp.len() / W);
            let ptr = acc.as_mut_ptr();
            // SAFETY (all loads and stores): `acc` holds R rows of W values, `y` W values.
            let mut v: [[_; 2]; R] =
                std::array::from_fn(|r| unsafe { [$load(ptr.add(r * W)), $load(ptr.add(r * W + $lanes))] });
            for (x, y) in ap.chunks_exact(R).zip(bp.chunks_exact(W)) {
                let (b0, b1) = unsafe { ($load(y.as_ptr()), $load(y.as_ptr().add($lanes))) };
                for (vr, &xr) in v.iter_mut().zip(x) {
                    let a = $splat(xr);
                    vr[0] = $fma(a, b0, vr[0]);
                    vr[1] = $fma(a, b1, vr[1]);
                }
            }
            for (r, vr) in v.iter().enumerate() {
                unsafe {
                    $store(ptr.add(r * W), vr[0]);
                    $store(ptr.add(r * W + $lanes), vr[1]);
                }
            }
        }
    };
}

tile512!(f32_tile, f32, 16, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps, zmm::f32x16);
tile512!(f64_tile, f64, 8, _mm512_loadu_pd, _mm512_set1_pd, _mm512_storeu_pd, zmm::f64x8);
