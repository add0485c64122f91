//! The matrix kernel's register tile in explicit vectors, for the AVX-512 level: the same
//! `acc[r][c] = fma(a[r,p], b[p,c], acc[r][c])`, `p` ascending, as `gemm::tile`, with `V` vectors
//! across each tile row. Left to itself at this level, LLVM vectorises the generic loop with
//! gathers and scatters of the accumulators at every step, or keeps to 256-bit vectors and
//! spills them (15–40× slower, measured on Zen 4).

use super::fused::zmm;
use std::arch::x86_64::{
    _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps, _mm512_loadu_pd, _mm512_loadu_ps, _mm512_set1_pd,
    _mm512_set1_ps, _mm512_storeu_pd, _mm512_storeu_ps,
};

macro_rules! tile_vec {
    ($name:ident, $t:ty, $lanes:literal, $load:ident, $splat:ident, $store:ident, $fma:path) => {
        /// Accumulate the packed `ap` (`R` values per `p`) × `bp` (`V·lanes` per `p`) into `acc`
        /// (`R` rows of `V·lanes`, holding zeros or the sums carried from the previous block).
        ///
        /// # Safety
        /// The CPU must support AVX-512F and AVX-512VL.
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        pub unsafe fn $name<const R: usize, const V: usize>(acc: &mut [$t], ap: &[$t], bp: &[$t]) {
            let w = V * $lanes;
            assert!(acc.len() == R * w && ap.len() / R == bp.len() / w);
            let ptr = acc.as_mut_ptr();
            // SAFETY (all loads and stores): `acc` holds R rows of `w` values, `y` holds `w`.
            let mut v: [[_; V]; R] =
                std::array::from_fn(|r| std::array::from_fn(|j| unsafe { $load(ptr.add(r * w + j * $lanes)) }));
            for (x, y) in ap.chunks_exact(R).zip(bp.chunks_exact(w)) {
                let b: [_; V] = std::array::from_fn(|j| unsafe { $load(y.as_ptr().add(j * $lanes)) });
                for (vr, &xr) in v.iter_mut().zip(x) {
                    let a = $splat(xr);
                    for (acc, &bj) in vr.iter_mut().zip(&b) {
                        *acc = $fma(a, bj, *acc);
                    }
                }
            }
            for (r, vr) in v.iter().enumerate() {
                for (j, &x) in vr.iter().enumerate() {
                    unsafe { $store(ptr.add(r * w + j * $lanes), x) };
                }
            }
        }
    };
}

tile_vec!(f32x8_tile, f32, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps, zmm::f32x8);
tile_vec!(f32x16_tile, f32, 16, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps, zmm::f32x16);
tile_vec!(f64x8_tile, f64, 8, _mm512_loadu_pd, _mm512_set1_pd, _mm512_storeu_pd, zmm::f64x8);
