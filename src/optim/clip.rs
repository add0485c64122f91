//! Gradient norms and PyTorch's `clip_grad_norm_`: `coef = max_norm / (total + 1e-6)`, clamped
//! to 1, and the gradients are *always* multiplied by it (spec §6.3).
//!
//! Norms are computed per tensor (Σ g² in f64, index order), then the total over tensors in
//! registration order: `total² = Σ_t norm_t²`. The per-tensor sums are independent outputs, each
//! owned by one task.

use crate::model::Layout;
use crate::numerics::Scalar;
use rayon::prelude::*;

/// Σ g² per tensor, f64, in registration order.
pub fn tensor_sq_norms<S: Scalar>(layout: &Layout, grads: &[S]) -> Vec<f64> {
    layout.entries.par_iter().map(|e| crate::numerics::sum_sq_f64(&grads[e.offset..e.offset + e.len])).collect()
}

/// Σ over tensors of their squared norms, in registration order (the logged `grad_norm_sq`).
pub fn total_sq_norm<S: Scalar>(layout: &Layout, grads: &[S]) -> f64 {
    let mut total = 0.0;
    for s in tensor_sq_norms(layout, grads) {
        total += s;
    }
    total
}

/// Clip in place; returns the coefficient applied (≤ 1).
pub fn clip_grad_norm<S: Scalar>(grads: &mut [S], total_sq: f64, max_norm: f64) -> f64 {
    let total = crate::numerics::math::sqrt(total_sq);
    let coef = (max_norm / (total + 1e-6)).min(1.0);
    let c = S::from_f64(coef);
    grads.par_chunks_mut(16_384).for_each(|g| {
        crate::numerics::simd::dispatch(
            #[inline(always)]
            || {
                for x in g {
                    *x *= c;
                }
            },
        )
    });
    coef
}
