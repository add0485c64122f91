//! The only door to transcendental functions.
//!
//! Every `exp`, `ln`, `erf`, `sqrt`, `cos`, … in the crate goes through this module, which calls the
//! pure-Rust `libm` crate. `std`'s `f32::exp` and friends call the platform libm, whose results
//! differ between machines and even between calls (std docs: "non-deterministic precision"), so
//! they are banned by `clippy.toml` and by `tests/contract_lint.rs`.
//!
//! `sqrt` is IEEE correctly rounded everywhere; it is routed here anyway so that one grep finds
//! every non-arithmetic operation.

#[inline(always)]
pub fn expf(x: f32) -> f32 {
    libm::expf(x)
}
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}
#[inline(always)]
pub fn logf(x: f32) -> f32 {
    libm::logf(x)
}
#[inline(always)]
pub fn log(x: f64) -> f64 {
    libm::log(x)
}
#[inline(always)]
pub fn erff(x: f32) -> f32 {
    libm::erff(x)
}
#[inline(always)]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}
#[inline(always)]
pub fn sqrtf(x: f32) -> f32 {
    libm::sqrtf(x)
}
#[inline(always)]
pub fn sqrt(x: f64) -> f64 {
    libm::sqrt(x)
}
#[inline(always)]
pub fn cosf(x: f32) -> f32 {
    libm::cosf(x)
}
#[inline(always)]
pub fn cos(x: f64) -> f64 {
    libm::cos(x)
}
#[inline(always)]
pub fn sin(x: f64) -> f64 {
    libm::sin(x)
}

/// `x^n` via `libm::pow`. Python's `beta ** t` calls the C library `pow`; glibc (≥ 2.28) and
/// musl, which `libm` ports, share the same algorithm (ARM optimized-routines), so Adam's bias
/// corrections match PyTorch's Python-side f64 scalars.
pub fn powi_f64(x: f64, n: u64) -> f64 {
    libm::pow(x, n as f64)
}

/// Natural log used for reporting (ln K etc.).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    libm::log(x)
}

/// `x ** y` for f64, as Python's float power (C `pow`; see [`powi_f64`]).
#[inline(always)]
pub fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[inline(always)]
pub fn acos(x: f64) -> f64 {
    libm::acos(x)
}
