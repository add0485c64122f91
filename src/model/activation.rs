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

/// out = act(inp), elementwise; for GELU, `erf_cache` receives `erf(x·α)`, which the backward
/// reuses (the same operations as recomputing it, so the same bits). All (N, F).
pub fn act_forward<S: Scalar>(act: ActFn, out: &mut [S], erf_cache: &mut [S], inp: &[S]) {
    let alpha = S::from_f64(SQRT1_2);
    let half = S::from_f64(0.5);
    out.par_chunks_mut(CHUNK).zip(erf_cache.par_chunks_mut(CHUNK)).zip(inp.par_chunks(CHUNK)).for_each(
        |((o, e), x)| {
            simd::dispatch(
                #[inline(always)]
                || match act {
                    ActFn::Gelu => {
                        let n = o.len();
                        let (e, x) = (&mut e[..n], &x[..n]);
                        for i in 0..n {
                            e[i] = x[i] * alpha;
                        }
                        S::erf_in_place(e);
                        for i in 0..n {
                            o[i] = x[i] * half * (S::one() + e[i]);
                        }
                    }
                    ActFn::Relu => {
                        for (o, &x) in o.iter_mut().zip(x) {
                            *o = if x.value() > 0.0 { x } else { S::zero() };
                        }
                    }
                },
            )
        },
    );
}

/// dinp = act'(inp) · dout (overwritten), with `erf_cache` from [`act_forward`]. All (N, F).
pub fn act_backward<S: Scalar>(act: ActFn, dinp: &mut [S], dout: &[S], inp: &[S], erf_cache: &[S]) {
    let beta = S::from_f64(TWO_OVER_SQRTPI * SQRT1_2 * 0.5);
    let half = S::from_f64(0.5);
    let mhalf = S::from_f64(-0.5);
    dinp.par_chunks_mut(CHUNK)
        .zip(dout.par_chunks(CHUNK))
        .zip(inp.par_chunks(CHUNK).zip(erf_cache.par_chunks(CHUNK)))
        .for_each(|((di, dy), (x, e))| {
            simd::dispatch(
                #[inline(always)]
                || match act {
                    ActFn::Gelu => {
                        let n = di.len();
                        let (dy, x, e) = (&dy[..n], &x[..n], &e[..n]);
                        for i in 0..n {
                            let cdf = half * (S::one() + e[i]);
                            let pdf = (x[i] * x[i] * mhalf).exp() * beta;
                            di[i] = dy[i] * (cdf + x[i] * pdf);
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
