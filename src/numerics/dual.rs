//! Dual numbers `v + t·ε` (ε² = 0) over f64, the scalar that turns the model's hand-written
//! backward into an exact Hessian-vector product: seed the parameters with tangent `u`, run
//! forward and backward, and the tangent of every gradient entry is `(H·u)_i` (forward-over-
//! reverse differentiation, no finite differences).
//!
//! Each operation uses the textbook derivative with plain `+ − × ÷` in a fixed order, so the
//! tangent is as deterministic as the value; the value part is exactly the f64 computation.

use super::fused::Fma;
use super::matmul::Product;
use super::scalar::{Dtype, Scalar};
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dual {
    /// Primal value.
    pub v: f64,
    /// Tangent (directional derivative).
    pub t: f64,
}

impl Dual {
    pub fn new(v: f64, t: f64) -> Self {
        Dual { v, t }
    }
}

impl PartialOrd for Dual {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.v.partial_cmp(&other.v)
    }
}

impl Add for Dual {
    type Output = Dual;
    #[inline(always)]
    fn add(self, o: Dual) -> Dual {
        Dual { v: self.v + o.v, t: self.t + o.t }
    }
}
impl Sub for Dual {
    type Output = Dual;
    #[inline(always)]
    fn sub(self, o: Dual) -> Dual {
        Dual { v: self.v - o.v, t: self.t - o.t }
    }
}
impl Mul for Dual {
    type Output = Dual;
    /// (a + a'ε)(b + b'ε) = ab + (a'b + ab')ε.
    #[inline(always)]
    fn mul(self, o: Dual) -> Dual {
        Dual { v: self.v * o.v, t: self.t * o.v + self.v * o.t }
    }
}
impl Div for Dual {
    type Output = Dual;
    /// a/b + (a'b − ab')/b² ε, as (a' − (a/b)·b')/b.
    #[inline(always)]
    fn div(self, o: Dual) -> Dual {
        let q = self.v / o.v;
        Dual { v: q, t: (self.t - q * o.t) / o.v }
    }
}
impl Neg for Dual {
    type Output = Dual;
    #[inline(always)]
    fn neg(self) -> Dual {
        Dual { v: -self.v, t: -self.t }
    }
}
impl AddAssign for Dual {
    #[inline(always)]
    fn add_assign(&mut self, o: Dual) {
        *self = *self + o;
    }
}
impl SubAssign for Dual {
    #[inline(always)]
    fn sub_assign(&mut self, o: Dual) {
        *self = *self - o;
    }
}
impl MulAssign for Dual {
    #[inline(always)]
    fn mul_assign(&mut self, o: Dual) {
        *self = *self * o;
    }
}
impl DivAssign for Dual {
    #[inline(always)]
    fn div_assign(&mut self, o: Dual) {
        *self = *self / o;
    }
}

impl Scalar for Dual {
    const DTYPE: Dtype = Dtype::F64;
    const NAME: &'static str = "dual64";
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        Dual { v: x, t: 0.0 }
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self.v
    }
    #[inline(always)]
    fn neg_infinity() -> Self {
        Dual { v: f64::NEG_INFINITY, t: 0.0 }
    }
    /// The value is the f64 model's `fma(a, b, c)`; the tangent `a'b + ab' + c'` is fused the
    /// same way, `fma(a, b', fma(a', b, c'))`.
    #[inline(always)]
    fn fma<F: Fma>(a: Self, b: Self, c: Self) -> Self {
        Dual { v: F::f64(a.v, b.v, c.v), t: F::f64(a.v, b.t, F::f64(a.t, b.v, c.t)) }
    }
    #[inline]
    fn matmul(p: Product<'_, Self>) {
        products::run(p)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        let e = super::math::exp(self.v);
        Dual { v: e, t: e * self.t }
    }
    #[inline(always)]
    fn ln(self) -> Self {
        Dual { v: super::math::log(self.v), t: self.t / self.v }
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        let r = super::math::sqrt(self.v);
        Dual { v: r, t: self.t / (2.0 * r) }
    }
    /// erf' = (2/√π)·exp(−x²).
    #[inline(always)]
    fn erf(self) -> Self {
        let d = std::f64::consts::FRAC_2_SQRT_PI * super::math::exp(-self.v * self.v);
        Dual { v: super::math::erf(self.v), t: d * self.t }
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self.v.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(v: f64) -> Dual {
        Dual::new(v, 1.0)
    }

    #[test]
    fn derivatives_of_the_primitives() {
        let x = 0.7;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-14 * b.abs().max(1.0);
        assert!(close((d(x) * d(x)).t, 2.0 * x));
        assert!(close((Dual::from_f64(1.0) / d(x)).t, -1.0 / (x * x)));
        assert!(close(d(x).exp().t, crate::numerics::math::exp(x)));
        assert!(close(d(x).ln().t, 1.0 / x));
        assert!(close(d(x).sqrt().t, 0.5 / crate::numerics::math::sqrt(x)));
        let erf_d = std::f64::consts::FRAC_2_SQRT_PI * crate::numerics::math::exp(-x * x);
        assert!(close(d(x).erf().t, erf_d));
        assert_eq!((d(x) * d(x)).v, x * x, "the value part is the plain f64 computation");
    }
}

/// Dual matrix products as three f64 products on split (value, tangent) arrays — the product is
/// bilinear, so `(Av + At ε)(Bv + Bt ε) = Av·Bv + (At·Bv + Av·Bt) ε` — run by the fast f64
/// kernels. The value is bit-identical to the f64 model's product (same kernel, same order); the
/// tangent is `(Σ_p At·Bv) + (Σ_p Av·Bt)`, each sum in p order, then added (documented order).
pub(crate) mod products {
    use super::Dual;
    use crate::numerics::Scalar;
    use crate::numerics::matmul::{Accum, Product};
    use std::cell::RefCell;

    /// Split operands and partial products, reused between calls (fresh multi-megabyte buffers
    /// cost more in page faults than the products themselves).
    #[derive(Default)]
    struct Buffers {
        av: Vec<f64>,
        at: Vec<f64>,
        bv: Vec<f64>,
        bt: Vec<f64>,
        v: Vec<f64>,
        t1: Vec<f64>,
        t2: Vec<f64>,
        bias: Vec<f64>,
    }

    thread_local! {
        static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
    }

    fn split(x: &[Dual], v: &mut Vec<f64>, t: &mut Vec<f64>) {
        v.clear();
        t.clear();
        v.extend(x.iter().map(|d| d.v));
        t.extend(x.iter().map(|d| d.t));
    }

    fn sized(v: &mut Vec<f64>, n: usize) {
        v.clear();
        v.resize(n, 0.0);
    }

    fn combine(out: &mut [Dual], b: &Buffers, bias: Option<&[Dual]>, n: usize, accum: Accum) {
        for (i, o) in out.iter_mut().enumerate() {
            let t = b.t1[i] + b.t2[i];
            *o = match (accum, bias) {
                // The value already includes the bias (added by the f64 kernel).
                (Accum::Set, Some(bb)) => Dual { v: b.v[i], t: t + bb[i % n].t },
                (Accum::Set, None) => Dual { v: b.v[i], t },
                (Accum::Add, _) => Dual { v: o.v + b.v[i], t: o.t + t },
            };
        }
    }

    /// `p` as three f64 products on split operands, then recombined.
    pub fn run(p: Product<'_, Dual>) {
        let Product { out, a, a_trans, b, bias, m, k, n, accum } = p;
        BUFFERS.with(|cell| {
            let mut guard = cell.borrow_mut();
            let bf = &mut *guard;
            split(a, &mut bf.av, &mut bf.at);
            split(b, &mut bf.bv, &mut bf.bt);
            bf.bias.clear();
            if let Some(bb) = bias {
                bf.bias.extend(bb.iter().map(|d| d.v));
            }
            for x in [&mut bf.v, &mut bf.t1, &mut bf.t2] {
                sized(x, m * n);
            }
            let bias_v = bias.map(|_| bf.bias.as_slice());
            let f64_product = |out: &mut [f64], a: &[f64], b: &[f64], bias: Option<&[f64]>| {
                f64::matmul(Product { out, a, a_trans, b, bias, m, k, n, accum: Accum::Set })
            };
            f64_product(&mut bf.v, &bf.av, &bf.bv, bias_v);
            f64_product(&mut bf.t1, &bf.at, &bf.bv, None);
            f64_product(&mut bf.t2, &bf.av, &bf.bt, None);
            combine(out, bf, bias, n, accum);
        })
    }
}
