//! AdamW in PyTorch's single-tensor order (torch 2.15 `_single_tensor_adam`, decoupled weight
//! decay, the path PyTorch takes for CPU tensors), one parameter group, decay on every tensor.
//!
//! Per step `t` (from 1), with Python-side scalars in f64 and tensor ops in S:
//! ```text
//! p  = p · S(1 − lr·wd)
//! m  = m + S(1−β1)·(g − m)                       (exp_avg.lerp_(g, 1−β1), weight < 0.5 branch)
//! v  = v·S(β2) + S(1−β2)·g·g                     (mul_(β2).addcmul_(g, g, value=1−β2))
//! bc1 = 1 − β1^t ; bc2 = 1 − β2^t ; step = lr/bc1 ; bc2s = bc2^0.5        (f64)
//! denom = sqrt(v) / S(bc2s) + S(eps)
//! p  = p + S(−step)·m / denom                    (addcdiv_(m, denom, value=−step))
//! ```
//! PyTorch's *vectorised* lerp uses an FMA, so f32 trajectories agree with PyTorch to tolerance,
//! not bits; f64 trajectories agree to ≈1e-15 per step (tests/train_parity.rs).

use crate::numerics::{Scalar, math, simd};
use rayon::prelude::*;

/// Elements per parallel task (fixed; every element is updated independently).
const CHUNK: usize = 16_384;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamWParams {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl AdamWParams {
    /// The optimiser settings of a run's config.
    pub fn of(c: &crate::config::TrainConfig) -> Self {
        AdamWParams { beta1: c.beta1, beta2: c.beta2, eps: c.adam_eps, weight_decay: c.weight_decay }
    }
}

/// Optimizer state: first and second moments (same layout as the parameters) and the step count.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamW<S> {
    pub hp: AdamWParams,
    pub m: Vec<S>,
    pub v: Vec<S>,
    /// Number of updates applied so far.
    pub t: u64,
}

impl<S: Scalar> AdamW<S> {
    pub fn new(hp: AdamWParams, n: usize) -> Self {
        AdamW { hp, m: vec![S::zero(); n], v: vec![S::zero(); n], t: 0 }
    }

    /// One update with learning rate `lr` (already multiplied by the schedule).
    pub fn step(&mut self, params: &mut [S], grads: &[S], lr: f64) {
        assert_eq!(params.len(), grads.len());
        self.t += 1;
        let hp = self.hp;
        let decay = S::from_f64(1.0 - lr * hp.weight_decay);
        let w1 = S::from_f64(1.0 - hp.beta1);
        let b2 = S::from_f64(hp.beta2);
        let w2 = S::from_f64(1.0 - hp.beta2);
        let t = self.t as f64;
        let bc1 = 1.0 - math::pow(hp.beta1, t);
        let bc2 = 1.0 - math::pow(hp.beta2, t);
        let step_size = lr / bc1;
        let bc2_sqrt = S::from_f64(math::pow(bc2, 0.5));
        let eps = S::from_f64(hp.eps);
        let neg_step = S::from_f64(-step_size);
        params
            .par_chunks_mut(CHUNK)
            .zip(self.m.par_chunks_mut(CHUNK))
            .zip(self.v.par_chunks_mut(CHUNK))
            .zip(grads.par_chunks(CHUNK))
            .for_each(|(((p, m), v), g)| {
                // At the CPU's SIMD width: every operation is one IEEE rounding (no FMA), the
                // same bits at any width.
                simd::dispatch(
                    #[inline(always)]
                    || {
                        let n = p.len();
                        let (m, v, g) = (&mut m[..n], &mut v[..n], &g[..n]);
                        for i in 0..n {
                            p[i] *= decay;
                            m[i] = m[i] + w1 * (g[i] - m[i]);
                            v[i] = v[i] * b2 + w2 * g[i] * g[i];
                            let denom = v[i].sqrt() / bc2_sqrt + eps;
                            p[i] += neg_step * m[i] / denom;
                        }
                    },
                )
            });
    }
}
