//! The one door to fused multiply-add (arithmetic v2): `a·b + c` rounded once, as IEEE 754's
//! `fusedMultiplyAdd`. Because it is correctly rounded, the CPU's FMA instruction and `libm`'s
//! software `fmaf`/`fma` give the same bits for the same inputs, so a product accumulated as
//! `acc = fma(a, b, acc)` in a fixed order is identical at every SIMD level and on every CPU.
//!
//! Kernels are generic over an [`Fma`] implementation and are compiled once per SIMD level:
//! [`Hardware`] inside the copies compiled with `fma` enabled (`simd::fused!`), [`Software`] at
//! the scalar level. Nothing else in the crate may call `mul_add` (clippy.toml,
//! tests/contract_lint.rs).

/// How one SIMD level computes `a·b + c` with a single rounding.
pub trait Fma: Copy + Send + Sync + 'static {
    const NAME: &'static str;
    /// The matrix tile in explicit vectors ([`zmm`]) or left to the auto-vectoriser, which keeps
    /// to 256 bits even where AVX-512 is enabled (spilling a wide tile to the stack) and at every
    /// level reads `a` only from packed panels.
    const TILE: VectorTile = VectorTile::Auto;
    fn f32(a: f32, b: f32, c: f32) -> f32;
    fn f64(a: f64, b: f64, c: f64) -> f64;
}

/// The CPU's FMA instruction. Select it only in code compiled with `fma` enabled: elsewhere LLVM
/// lowers it to a C-library call (still correctly rounded, but slow and outside this crate).
#[derive(Clone, Copy, Debug)]
pub struct Hardware;

/// Which explicit vectors the matrix tile runs on ([`Fma::TILE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorTile {
    Auto,
    Ymm,
    Zmm,
}

/// The CPU's FMA instruction, and the matrix tile in explicit 256-bit vectors: select it only
/// in code compiled with AVX2 and FMA enabled.
#[derive(Clone, Copy, Debug)]
pub struct Hardware256;

/// The CPU's FMA instruction, and the matrix tile in explicit 512-bit vectors: select it only
/// in code compiled with AVX-512F enabled.
#[derive(Clone, Copy, Debug)]
pub struct Hardware512;

/// `libm`'s correctly rounded software FMA: the scalar level, on any CPU.
#[derive(Clone, Copy, Debug)]
pub struct Software;

#[allow(clippy::disallowed_methods)] // the one audited use of FMA
impl Fma for Hardware {
    const NAME: &'static str = "hardware";
    #[inline(always)]
    fn f32(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

macro_rules! hardware_tile {
    ($name:ident, $tile:ident) => {
        impl Fma for $name {
            const NAME: &'static str = "hardware";
            const TILE: VectorTile = VectorTile::$tile;
            #[inline(always)]
            fn f32(a: f32, b: f32, c: f32) -> f32 {
                Hardware::f32(a, b, c)
            }
            #[inline(always)]
            fn f64(a: f64, b: f64, c: f64) -> f64 {
                Hardware::f64(a, b, c)
            }
        }
    };
}
hardware_tile!(Hardware256, Ymm);
hardware_tile!(Hardware512, Zmm);

/// The CPU's FMA on 256- and 512-bit vectors: lane by lane `a·b + c` rounded once, the same operation as
/// [`Hardware`] on each lane.
#[cfg(target_arch = "x86_64")]
pub mod zmm {
    use std::arch::x86_64::{
        __m256, __m256d, __m512, __m512d, _mm256_fmadd_pd, _mm256_fmadd_ps, _mm512_fmadd_pd, _mm512_fmadd_ps,
    };

    /// Safe to call from code compiled with FMA (a `#[target_feature]` caller).
    ///
    /// # Safety
    /// The CPU must support FMA.
    #[inline]
    #[target_feature(enable = "avx,fma")]
    pub fn f32x8(a: __m256, b: __m256, c: __m256) -> __m256 {
        _mm256_fmadd_ps(a, b, c)
    }

    /// Safe to call from code compiled with FMA (a `#[target_feature]` caller).
    ///
    /// # Safety
    /// The CPU must support FMA.
    #[inline]
    #[target_feature(enable = "avx,fma")]
    pub fn f64x4(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
        _mm256_fmadd_pd(a, b, c)
    }

    /// Safe to call from code compiled with AVX-512F (a `#[target_feature]` caller).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn f32x16(a: __m512, b: __m512, c: __m512) -> __m512 {
        _mm512_fmadd_ps(a, b, c)
    }

    /// Safe to call from code compiled with AVX-512F (a `#[target_feature]` caller).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn f64x8(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
        _mm512_fmadd_pd(a, b, c)
    }
}

impl Fma for Software {
    const NAME: &'static str = "libm";
    #[inline(always)]
    fn f32(a: f32, b: f32, c: f32) -> f32 {
        libm::fmaf(a, b, c)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64, c: f64) -> f64 {
        libm::fma(a, b, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Purpose, Stream};

    /// Inputs where a double rounding would show: products that nearly cancel `c`, halfway
    /// cases, subnormal results, huge and tiny exponents, signed zeros.
    fn hard_f64(s: &mut Stream) -> (f64, f64, f64) {
        let a = s.normal() * libm::exp2(s.below(80) as f64 - 40.0);
        let b = s.normal() * libm::exp2(s.below(80) as f64 - 40.0);
        let c = match s.below(4) {
            0 => -(a * b),
            1 => -(a * b) * (1.0 + f64::EPSILON * s.normal()),
            2 => s.normal() * 1e-300,
            _ => s.normal() * libm::exp2(s.below(100) as f64 - 50.0),
        };
        (a, b, c)
    }

    /// The software FMA equals the exact result rounded once. The reference is `mul_add`, which
    /// in this (non-`fma`) test build is the C library's correctly rounded `fmaf`/`fma`: an
    /// implementation independent of the libm crate.
    #[test]
    fn software_fma_is_correctly_rounded() {
        let mut s = Stream::new(1, Purpose::Fixture, 7);
        for _ in 0..200_000 {
            let (a, b, c) = hard_f64(&mut s);
            let (a32, b32, c32) = (a as f32, b as f32, c as f32);
            let want32 = Hardware::f32(a32, b32, c32);
            let want64 = Hardware::f64(a, b, c);
            assert_eq!(Software::f32(a32, b32, c32).to_bits(), want32.to_bits(), "fmaf({a32:e}, {b32:e}, {c32:e})");
            assert_eq!(Software::f64(a, b, c).to_bits(), want64.to_bits(), "fma({a:e}, {b:e}, {c:e})");
        }
        // One rounding, not two: (1 + 2⁻²³)(1 − 2⁻²³) − 1 = −2⁻⁴⁶ exactly (a mul+add gives 0).
        let e = f32::EPSILON;
        assert_eq!(Software::f32(1.0 + e, 1.0 - e, -1.0), -(e * e));
        assert_eq!(Hardware::f32(1.0 + e, 1.0 - e, -1.0), -(e * e));
        assert_eq!((1.0 + e) * (1.0 - e) - 1.0, 0.0);
    }
}
