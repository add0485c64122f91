//! The scalar type the model is generic over: `f32` for training, `f64` for checks, and (for exact
//! Hessian-vector products) a dual number. Plain `+ - * /` (Rust never contracts them into an
//! FMA), the functions of [`crate::numerics::math`], and one fused multiply-add, [`Scalar::fma`],
//! generic over the SIMD level's [`Fma`] (arithmetic v2, docs/determinism.md).

use super::fused::Fma;
use super::product::Product;
use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// Storage dtype of a scalar type, as written to safetensors files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F64,
}

impl Dtype {
    /// Every dtype, in the order the command line lists them.
    pub const ALL: [Dtype; 2] = [Dtype::F32, Dtype::F64];

    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The one dispatch from a [`Dtype`] value to the scalar type: `with_scalar!(dtype, S => f::<S>(…))`
/// runs the body with `S` = `f32` or `f64`.
#[macro_export]
macro_rules! with_scalar {
    ($dtype:expr, $s:ident => $body:expr) => {
        match $dtype {
            $crate::numerics::Dtype::F32 => {
                type $s = f32;
                $body
            }
            $crate::numerics::Dtype::F64 => {
                type $s = f64;
                $body
            }
        }
    };
}

/// `f32` or `f64`: on the command line, in manifests and in safetensors metadata alike.
impl std::str::FromStr for Dtype {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" | "float32" => Ok(Dtype::F32),
            "f64" | "float64" => Ok(Dtype::F64),
            d => Err(format!("{d:?} is not a dtype (allowed f32, f64)")),
        }
    }
}

pub trait Scalar:
    Copy
    + Clone
    + Send
    + Sync
    + Debug
    + Default
    + PartialEq
    + PartialOrd
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// Dtype of the primal value when stored.
    const DTYPE: Dtype;
    /// Human-readable name: the stored dtype's for `f32` and `f64`, `dual64` for the dual.
    const NAME: &'static str;

    /// Round an f64 to this type (round-to-nearest for f32; the tangent of a dual is 0).
    fn from_f64(x: f64) -> Self;
    /// Primal value widened to f64 (exact for f32 and f64).
    fn value(self) -> f64;

    #[inline(always)]
    fn zero() -> Self {
        Self::from_f64(0.0)
    }
    #[inline(always)]
    fn one() -> Self {
        Self::from_f64(1.0)
    }
    fn neg_infinity() -> Self;

    /// `a·b + c` with one rounding, by the level's FMA (the one fused operation of the crate).
    fn fma<F: Fma>(a: Self, b: Self, c: Self) -> Self;

    /// The matrix kernel's register tile in `F`'s explicit vectors for this type at width `C`
    /// (numerics/register_tile.rs), applied to `acc`; `false` (nothing done) where there is none.
    ///
    /// # Safety
    /// The CPU must support `F::TILE`'s vectors: AVX2 and FMA for `Ymm`, AVX-512F and VL for `Zmm`.
    #[inline(always)]
    unsafe fn vector_tile<F: Fma, const R: usize, const C: usize>(
        _acc: &mut [[Self; C]; R],
        _a: super::gemm::APanel<'_, Self>,
        _bp: &[Self],
    ) -> bool {
        false
    }

    /// Run a matrix product: the blocked kernel for f32/f64 (`float.rs`); the dual numbers split
    /// it into f64 products.
    fn matmul(p: Product<'_, Self>);

    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn erf(self) -> Self;

    /// `v[i] = v[i].erf()` for a slice, bit-identical to the elementwise form (implementations may
    /// reorganise the work, never the arithmetic of an element).
    #[inline(always)]
    fn erf_in_place(v: &mut [Self]) {
        for x in v {
            *x = x.erf();
        }
    }

    /// The larger of two values, compared by primal value; `self` wins ties (like a running max
    /// that only moves on a strict increase).
    #[inline(always)]
    fn max_by_value(self, other: Self) -> Self {
        if other.value() > self.value() { other } else { self }
    }
    fn is_finite(self) -> bool {
        self.value().is_finite()
    }
    /// Raw bits of the primal value (for golden hashes).
    fn bits(self) -> u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of<S: Scalar>() -> &'static str {
        S::NAME
    }

    #[test]
    fn one_spelling_per_dtype_and_one_dispatch_to_its_scalar_type() {
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
            assert_eq!(crate::with_scalar!(d, S => name_of::<S>()), d.name());
            assert_eq!(crate::with_scalar!(d, S => S::DTYPE), d);
        }
        assert_eq!("float64".parse::<Dtype>(), Ok(Dtype::F64));
        assert!("f16".parse::<Dtype>().unwrap_err().contains("allowed f32, f64"));
    }
}
