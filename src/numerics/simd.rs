//! Runtime SIMD level. Kernels are compiled several times from one generic body, each copy under
//! `#[target_feature]`, and the widest one the CPU supports is called. The copies perform the
//! same scalar operations in the same order on every output (vectors only run across independent
//! outputs, products are fused by [`super::fused`]), so the level changes speed, never bits —
//! `tests/simd_levels.rs` checks that.
//!
//! `WINDTUNNEL_SIMD=scalar|avx2|avx512` caps the level (for tests and benchmarks); `sse2` is an
//! alias of `scalar`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Any CPU: the x86-64 baseline (or another architecture) with `libm`'s software FMA.
    Scalar,
    /// AVX2 with the FMA instruction (Haswell, Zen 1 and later).
    Avx2,
    /// AVX-512F (Skylake-SP, Zen 4 and later).
    Avx512,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Scalar, Level::Avx2, Level::Avx512];

    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Avx2 => "avx2+fma",
            Level::Avx512 => "avx512",
        }
    }

    /// The FMA implementation this level's kernels use.
    pub fn fma_name(self) -> &'static str {
        match self {
            Level::Scalar => "libm software fma",
            _ => "hardware fma",
        }
    }
}

/// The widest level this CPU supports.
pub fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let fma = std::arch::is_x86_feature_detected!("fma");
        let avx512 = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl");
        if fma && avx512 {
            return Level::Avx512;
        }
        if fma && std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Scalar
}

/// Process-wide cap set by [`set_cap`] (0 = none); for tests that compare levels in one process.
static RUNTIME_CAP: AtomicU8 = AtomicU8::new(0);

fn encode(l: Level) -> u8 {
    match l {
        Level::Scalar => 1,
        Level::Avx2 => 2,
        Level::Avx512 => 3,
    }
}

/// Cap the level for the whole process (tests only: not meant to change mid-computation).
pub fn set_cap(cap: Option<Level>) {
    RUNTIME_CAP.store(cap.map_or(0, encode), Ordering::SeqCst);
}

/// `WINDTUNNEL_SIMD` when set: the level it caps at, or an error naming it and the allowed values.
pub fn env_cap() -> crate::error::Result<Option<Level>> {
    match std::env::var("WINDTUNNEL_SIMD").as_deref() {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok("scalar" | "sse2" | "baseline") => Ok(Some(Level::Scalar)),
        Ok("avx2") => Ok(Some(Level::Avx2)),
        Ok("avx512") => Ok(Some(Level::Avx512)),
        Ok(other) => Err(crate::error::Error::config(
            "WINDTUNNEL_SIMD",
            format!("{other:?} (allowed scalar, sse2, baseline, avx2, avx512)"),
        )),
        Err(_) => Err(crate::error::Error::config("WINDTUNNEL_SIMD", "not valid UTF-8 (allowed scalar, avx2, avx512)")),
    }
}

/// The level in use: the detected one, capped by `WINDTUNNEL_SIMD` and by [`set_cap`].
pub fn level() -> Level {
    static ENV_LEVEL: OnceLock<Level> = OnceLock::new();
    let base = *ENV_LEVEL.get_or_init(|| {
        // A malformed value is refused at start-up (`config::check_environment`).
        detected().min(env_cap().ok().flatten().unwrap_or(Level::Avx512))
    });
    match RUNTIME_CAP.load(Ordering::Relaxed) {
        1 => Level::Scalar,
        2 => base.min(Level::Avx2),
        _ => base,
    }
}

/// Run `f` in a copy compiled for the current level: code that `f` inlines (mark the closure and
/// its callees `#[inline(always)]`) is vectorised at that width. For code without products; code
/// with products uses [`fused!`](crate::fused) to get the level's FMA as well.
#[inline(always)]
pub fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx512 when the CPU reports avx512f and fma.
        Level::Avx512 => unsafe { run_avx512(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx2 when the CPU reports avx2 and fma.
        Level::Avx2 => unsafe { run_avx2(f) },
        _ => f(),
    }
}

/// `fused!(F => expr)`: evaluate `expr` in the copy compiled for the current SIMD level, with the
/// type name `F` bound to that level's [`Fma`](crate::numerics::fused::Fma) (the CPU instruction
/// at AVX2/AVX-512, `libm` at the scalar level). Functions called in `expr` should be
/// `#[inline(always)]` so that they are compiled into the copy.
#[macro_export]
macro_rules! fused {
    ($F:ident => $e:expr) => {{
        use $crate::numerics::simd::{Level, level};
        match level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level()` only returns Avx512 when the CPU reports avx512f and fma.
            Level::Avx512 => unsafe {
                $crate::numerics::simd::run_avx512(
                    #[inline(always)]
                    || {
                        type $F = $crate::numerics::fused::Hardware;
                        $e
                    },
                )
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level()` only returns Avx2 when the CPU reports avx2 and fma.
            Level::Avx2 => unsafe {
                $crate::numerics::simd::run_avx2(
                    #[inline(always)]
                    || {
                        type $F = $crate::numerics::fused::Hardware;
                        $e
                    },
                )
            },
            _ => {
                type $F = $crate::numerics::fused::Software;
                $e
            }
        }
    }};
}

/// # Safety
/// The CPU must support avx512f, avx512bw, avx512dq, avx512vl, avx2 and fma.
#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
pub unsafe fn run_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// # Safety
/// The CPU must support avx2 and fma.
#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
#[target_feature(enable = "avx2,fma")]
pub unsafe fn run_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The micro-architecture families the matrix kernel is tuned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uarch {
    /// Intel with AVX-512 (Skylake-SP … Emerald Rapids): two 512-bit FMA ports.
    IntelAvx512,
    /// AMD Zen 4: AVX-512 executed as two 256-bit halves.
    Zen4,
    /// AMD Zen 5: full-width 512-bit FMA pipes.
    Zen5,
    /// Anything else (AVX2-only parts such as Zen 3, other architectures).
    Other,
}

impl Uarch {
    pub fn name(self) -> &'static str {
        match self {
            Uarch::IntelAvx512 => "intel-avx512",
            Uarch::Zen4 => "zen4",
            Uarch::Zen5 => "zen5",
            Uarch::Other => "other",
        }
    }
}

/// This CPU's family, from CPUID (vendor and family; AVX-512 support from [`detected`]).
pub fn uarch() -> Uarch {
    static U: OnceLock<Uarch> = OnceLock::new();
    *U.get_or_init(|| {
        let (vendor, family) = cpuid_vendor_family();
        match (vendor.as_str(), family, detected() == Level::Avx512) {
            ("GenuineIntel", _, true) => Uarch::IntelAvx512,
            ("AuthenticAMD", 0x19, true) => Uarch::Zen4,
            ("AuthenticAMD", f, true) if f >= 0x1a => Uarch::Zen5,
            _ => Uarch::Other,
        }
    })
}

/// CPUID vendor string and display family (base + extended family).
fn cpuid_vendor_family() -> (String, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        let (l0, l1) = (__cpuid(0), __cpuid(1));
        let bytes: Vec<u8> = [l0.ebx, l0.edx, l0.ecx].iter().flat_map(|r| r.to_le_bytes()).collect();
        let base = (l1.eax >> 8) & 0xf;
        let family = if base == 0xf { base + ((l1.eax >> 20) & 0xff) } else { base };
        (String::from_utf8_lossy(&bytes).into_owned(), family)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (String::new(), 0)
    }
}

/// The CPU's brand string (CPUID leaves 0x80000002–4), e.g. "AMD EPYC 9B14".
pub fn cpu_model() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        let max = __cpuid(0x8000_0000).eax;
        if max < 0x8000_0004 {
            return "unknown x86-64".into();
        }
        let bytes: Vec<u8> = (0x8000_0002u32..=0x8000_0004)
            .flat_map(|leaf| {
                let r = __cpuid(leaf);
                [r.eax, r.ebx, r.ecx, r.edx].into_iter().flat_map(|x| x.to_le_bytes())
            })
            .collect();
        String::from_utf8_lossy(&bytes).trim_matches(char::from(0)).trim().to_string()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::env::consts::ARCH.into()
    }
}
