//! The matrix kernel's register tile in explicit vectors, for the AVX2 and AVX-512 levels: the
//! same `acc[r][c] = fma(a[r,p], b[p,c], acc[r][c])`, `p` ascending, as `gemm::tile`, with `V`
//! vectors across each tile row. Left to itself at AVX-512, LLVM vectorises the generic loop with
//! gathers and scatters of the accumulators at every step, or keeps to 256-bit vectors and spills
//! them (15–40× slower, measured on Zen 4); at AVX2 it needs `a` packed, where these tiles
//! broadcast each `a[r, p]` from wherever it is.

use super::fused::zmm;
use super::gemm::APanel;
use std::arch::x86_64::{
    _mm256_loadu_pd, _mm256_loadu_ps, _mm256_set1_pd, _mm256_set1_ps, _mm256_storeu_pd, _mm256_storeu_ps,
    _mm512_loadu_pd, _mm512_loadu_ps, _mm512_set1_pd, _mm512_set1_ps, _mm512_storeu_pd, _mm512_storeu_ps,
};

macro_rules! tile_vec {
    ($name:ident, $feat:literal, $t:ty, $lanes:literal, $load:ident, $splat:ident, $store:ident, $fma:path) => {
        /// Accumulate `a` (`R` rows; with `UNIT`, `a.rs` is 1 and row `r` is an address offset) ×
        /// `bp` (`V·lanes` per `p`) into `acc` (`R` rows of `V·lanes`, holding zeros or the sums
        /// carried from the previous block). Each `a[r, p]` is broadcast straight from memory, so a
        /// packed panel and `a` in place cost the same.
        ///
        /// # Safety
        /// The CPU must support the features `$feat`.
        #[inline]
        #[target_feature(enable = $feat)]
        pub unsafe fn $name<const R: usize, const V: usize, const UNIT: bool>(
            acc: &mut [$t],
            a: APanel<'_, $t>,
            bp: &[$t],
        ) {
            let w = V * $lanes;
            let steps = bp.len() / w;
            assert!(acc.len() == R * w && bp.len() == steps * w && (!UNIT || a.rs == 1));
            assert!(steps == 0 || (R - 1) * a.rs + (steps - 1) * a.ps < a.data.len());
            let ptr = acc.as_mut_ptr();
            // SAFETY (all loads and stores): `acc` holds R rows of `w` values, `bp` `steps` of `w`,
            // and every `a` offset read, `r·rs + p·ps`, is below `a.data.len()` (asserted above).
            let mut v: [[_; V]; R] =
                std::array::from_fn(|r| std::array::from_fn(|j| unsafe { $load(ptr.add(r * w + j * $lanes)) }));
            let base = a.data.as_ptr();
            let rows: [*const $t; R] = std::array::from_fn(|r| unsafe { base.add(r * a.rs) });
            for p in 0..steps {
                let y = unsafe { bp.as_ptr().add(p * w) };
                let b: [_; V] = std::array::from_fn(|j| unsafe { $load(y.add(j * $lanes)) });
                let off = p * a.ps;
                for (r, vr) in v.iter_mut().enumerate() {
                    let x = unsafe { if UNIT { *base.add(off + r) } else { *rows[r].add(off) } };
                    let x = $splat(x);
                    for (acc, &bj) in vr.iter_mut().zip(&b) {
                        *acc = $fma(x, bj, *acc);
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

tile_vec!(
    f32x8_tile,
    "avx512f,avx512vl,avx2,fma",
    f32,
    8,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_storeu_ps,
    zmm::f32x8
);
tile_vec!(
    f32x16_tile,
    "avx512f,avx512vl,avx2,fma",
    f32,
    16,
    _mm512_loadu_ps,
    _mm512_set1_ps,
    _mm512_storeu_ps,
    zmm::f32x16
);
tile_vec!(
    f64x8_tile,
    "avx512f,avx512vl,avx2,fma",
    f64,
    8,
    _mm512_loadu_pd,
    _mm512_set1_pd,
    _mm512_storeu_pd,
    zmm::f64x8
);
tile_vec!(f32x8_tile_avx2, "avx2,fma", f32, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps, zmm::f32x8);
tile_vec!(f64x4_tile_avx2, "avx2,fma", f64, 4, _mm256_loadu_pd, _mm256_set1_pd, _mm256_storeu_pd, zmm::f64x4);
