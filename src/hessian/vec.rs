//! Deterministic dense-vector operations for the eigen-solvers: dot products are summed in fixed
//! chunks of 65,536 elements (in parallel, one task per chunk, each an FMA chain), then the chunk
//! sums in order.

use crate::fused;
use crate::numerics::fused::Fma;
use rayon::prelude::*;

const CHUNK: usize = 1 << 16;

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let partial: Vec<f64> =
        a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)).map(|(x, y)| fused!(F => dot_seq::<F>(x, y))).collect();
    let mut s = 0.0;
    for p in partial {
        s += p;
    }
    s
}

#[inline(always)]
fn dot_seq<F: Fma>(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (&a, &b) in x.iter().zip(y) {
        s = F::f64(a, b, s);
    }
    s
}

pub fn norm(a: &[f64]) -> f64 {
    crate::numerics::math::sqrt(dot(a, a))
}

/// y = y + alpha·x
pub fn axpy(y: &mut [f64], alpha: f64, x: &[f64]) {
    y.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).for_each(|(y, x)| {
        for (a, b) in y.iter_mut().zip(x) {
            *a += alpha * b;
        }
    });
}

pub fn scale(y: &mut [f64], alpha: f64) {
    y.par_chunks_mut(CHUNK).for_each(|y| {
        for a in y {
            *a *= alpha;
        }
    });
}

/// A unit vector of N(0, 1) draws from `Stream(seed, Direction, index)`.
pub fn random_unit(n: usize, seed: u64, index: u64) -> Vec<f64> {
    let mut s = crate::rng::Stream::new(seed, crate::rng::Purpose::Direction, index);
    let mut v: Vec<f64> = (0..n).map(|_| s.normal()).collect();
    let nv = norm(&v);
    scale(&mut v, 1.0 / nv);
    v
}
