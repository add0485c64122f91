//! A count of the floating-point work actually done (2 per fused multiply-add in products and
//! attention), for `windtunnel bench`'s useful GFLOP/s. It observes; it never changes a value.

use std::sync::atomic::{AtomicU64, Ordering};

static FLOPS: AtomicU64 = AtomicU64::new(0);

/// Record `n` flops (called once per product or attention pass, not per element).
#[inline]
pub fn add(n: usize) {
    FLOPS.fetch_add(n as u64, Ordering::Relaxed);
}

/// Flops recorded since the last call.
pub fn take() -> u64 {
    FLOPS.swap(0, Ordering::Relaxed)
}
