//! MLP activation functions, with PyTorch's operation order.
//!
//! Exact GELU (`F.gelu`, ATen `GeluKernel`): forward `x·0.5·(1 + erf(x·α))`, backward
//! `dy·(cdf + x·pdf)` with `cdf = 0.5·(1 + erf(x·α))`, `pdf = β·exp(−0.5·x·x)`,
//! α = 1/√2 and β = (2/√π)·(1/√2)·0.5, both computed in f64 and rounded once to S.

use super::config::ActFn;
use crate::numerics::{Scalar, simd};
use rayon::prelude::*;

/// Elements per parallel task (fixed).
const CHUNK: usize = 8192;

const SQRT1_2: f64 = std::f64::consts::FRAC_1_SQRT_2;
const TWO_OVER_SQRTPI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// out = act(inp), elementwise. Both (N, F).
pub fn act_forward<S: Scalar>(act: ActFn, out: &mut [S], inp: &[S]) {
    let alpha = S::from_f64(SQRT1_2);
    let half = S::from_f64(0.5);
    out.par_chunks_mut(CHUNK).zip(inp.par_chunks(CHUNK)).for_each(|(o, x)| {
        simd::dispatch(
            #[inline(always)]
            || match act {
                ActFn::Gelu => {
                    for (o, &x) in o.iter_mut().zip(x) {
                        *o = x * half * (S::one() + (x * alpha).erf());
                    }
                }
                ActFn::Relu => {
                    for (o, &x) in o.iter_mut().zip(x) {
                        *o = if x.value() > 0.0 { x } else { S::zero() };
                    }
                }
            },
        )
    });
}

/// dinp = act'(inp) · dout (overwritten). All (N, F).
pub fn act_backward<S: Scalar>(act: ActFn, dinp: &mut [S], dout: &[S], inp: &[S]) {
    let alpha = S::from_f64(SQRT1_2);
    let beta = S::from_f64(TWO_OVER_SQRTPI * SQRT1_2 * 0.5);
    let half = S::from_f64(0.5);
    let mhalf = S::from_f64(-0.5);
    dinp.par_chunks_mut(CHUNK).zip(dout.par_chunks(CHUNK)).zip(inp.par_chunks(CHUNK)).for_each(|((di, dy), x)| {
        simd::dispatch(
            #[inline(always)]
            || match act {
                ActFn::Gelu => {
                    for i in 0..di.len() {
                        let x = x[i];
                        let cdf = half * (S::one() + (x * alpha).erf());
                        let pdf = (x * x * mhalf).exp() * beta;
                        di[i] = dy[i] * (cdf + x * pdf);
                    }
                }
                ActFn::Relu => {
                    for i in 0..di.len() {
                        di[i] = if x[i].value() > 0.0 { dy[i] } else { S::zero() };
                    }
                }
            },
        )
    });
}
