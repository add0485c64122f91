//! Runtime SIMD level. Kernels are compiled several times from one generic body, each copy under
//! `#[target_feature]`, and the widest one the CPU supports is called. The copies perform the
//! same scalar operations in the same order on every output (vectors only run across independent
//! outputs), so the level changes speed, never bits — `tests/simd_levels.rs` checks that.
//!
//! `WINDTUNNEL_SIMD=sse2|avx2|avx512` caps the level (for tests and benchmarks).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The x86-64 baseline (or any non-x86 target).
    Baseline,
    Avx2,
    Avx512,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Baseline => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

/// The widest level this CPU supports.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Baseline
}

/// Process-wide cap set by [`set_cap`] (0 = none); for tests that compare levels in one process.
static RUNTIME_CAP: AtomicU8 = AtomicU8::new(0);

fn encode(l: Level) -> u8 {
    match l {
        Level::Baseline => 1,
        Level::Avx2 => 2,
        Level::Avx512 => 3,
    }
}

/// Cap the level for the whole process (tests only: not meant to change mid-computation).
pub fn set_cap(cap: Option<Level>) {
    RUNTIME_CAP.store(cap.map_or(0, encode), Ordering::SeqCst);
}

/// The level in use: the detected one, capped by `WINDTUNNEL_SIMD` and by [`set_cap`].
pub fn level() -> Level {
    static ENV_LEVEL: OnceLock<Level> = OnceLock::new();
    let base = *ENV_LEVEL.get_or_init(|| {
        let cap = match std::env::var("WINDTUNNEL_SIMD").as_deref() {
            Ok("sse2") | Ok("baseline") => Level::Baseline,
            Ok("avx2") => Level::Avx2,
            _ => Level::Avx512,
        };
        detected().min(cap)
    });
    match RUNTIME_CAP.load(Ordering::Relaxed) {
        1 => Level::Baseline,
        2 => base.min(Level::Avx2),
        _ => base,
    }
}

/// Run `f` in a copy compiled for the current level: code that `f` inlines (mark the closure and
/// its callees `#[inline(always)]`) is vectorised at that width. Same arithmetic at every level.
#[inline(always)]
pub fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx512 when the CPU reports avx512f.
        Level::Avx512 => unsafe { run_avx512(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx2 when the CPU reports avx2.
        Level::Avx2 => unsafe { run_avx2(f) },
        _ => f(),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2")]
unsafe fn run_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
