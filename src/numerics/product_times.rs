//! Where the matrix products' time goes inside a training step (`windtunnel bench --products`):
//! wall time per product shape, and the part spent packing `b`, while switched on. Timing only:
//! nothing here reaches a float output, and when off a product pays one relaxed load.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// One product's shape: `out[m, n]` over an inner dimension `k`; `a_trans` for the
/// weight-gradient layout, `split` for how `gemm` divides it among tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shape {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub a_trans: bool,
    pub split: Split,
}

/// How `gemm` runs a product (speed only: each gives the same bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Split {
    /// Tasks own blocks of output rows.
    Rows,
    /// Tasks own blocks of output columns (long weight gradients).
    Columns,
    /// Run as the transposed product, its rows split among tasks (short, wide weight gradients).
    Transposed,
}

impl Split {
    pub fn name(self) -> &'static str {
        match self {
            Split::Rows => "rows",
            Split::Columns => "columns",
            Split::Transposed => "transposed",
        }
    }
}

/// Calls of one shape and the seconds they took; `pack_secs` is the part packing `b` (row-split
/// products only: the column tasks pack inside their parallel work, counted in `secs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub calls: u64,
    pub secs: f64,
    pub pack_secs: f64,
}

static ON: AtomicBool = AtomicBool::new(false);
static SPENT: Mutex<BTreeMap<Shape, Spent>> = Mutex::new(BTreeMap::new());

/// Start (or stop) timing products; starting forgets what was recorded.
pub fn switch(on: bool) {
    if on {
        take();
    }
    ON.store(on, Ordering::Relaxed);
}

/// Whether products are being timed (`gemm` times its packing only then).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Run the product `f` of `shape` (it returns the seconds it spent packing), timed when on.
/// The model calls its products one after another (each runs its own tasks in parallel), so
/// the recorded times are wall time, not sums over threads.
pub fn timed(shape: Shape, f: impl FnOnce() -> f64) {
    if !on() {
        f();
        return;
    }
    let t0 = Instant::now();
    let pack_secs = f();
    let secs = t0.elapsed().as_secs_f64();
    let mut spent = SPENT.lock().unwrap_or_else(|e| e.into_inner());
    let e = spent.entry(shape).or_default();
    e.calls += 1;
    e.secs += secs;
    e.pack_secs += pack_secs;
}

/// What was recorded, in shape order, and forget it.
pub fn take() -> Vec<(Shape, Spent)> {
    std::mem::take(&mut *SPENT.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_on_per_shape() {
        let s = |m| Shape { m, k: 2, n: 3, a_trans: false, split: Split::Rows };
        switch(false);
        timed(s(1), || 0.0);
        switch(true);
        timed(s(1), || 0.25);
        timed(s(1), || 0.5);
        timed(s(7), || 0.0);
        switch(false);
        timed(s(7), || 0.0);
        let got = take();
        assert_eq!(
            got.iter().map(|(sh, sp)| (sh.m, sp.calls, sp.pack_secs)).collect::<Vec<_>>(),
            [(1, 2, 0.75), (7, 1, 0.0)]
        );
        assert!(got.iter().all(|(_, sp)| sp.secs >= 0.0));
        assert!(take().is_empty(), "take forgets");
    }
}
