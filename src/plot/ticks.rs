//! Axis ticks chosen here, not by plotters: every axis gets at least three labelled ticks (a log
//! axis spanning less than a decade too), labelled as a person would write them (`1000`, `2e4`,
//! `0.25`), never `1000.0`.

use crate::numerics::math;
use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

fn log10(x: f64) -> f64 {
    math::ln(x) / std::f64::consts::LN_10
}

fn exp10(d: i32) -> f64 {
    math::pow(10.0, d as f64)
}

/// Ticks of a linear axis over `[lo, hi]`: multiples of 1, 2 or 5 × 10^k, 4–10 of them.
pub fn linear(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 6.0;
    let mag = exp10(log10(raw).floor() as i32);
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| (hi - lo) / s <= 8.0).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| clean(i as f64 * step)).collect()
}

/// Ticks of a log axis over `[lo, hi]` (both > 0): powers of ten, then 1-2-5 within each decade,
/// then every mantissa 1–9, whichever first gives at least three ticks; linear ticks when the
/// range is too narrow for any of these.
pub fn log(lo: f64, hi: f64) -> Vec<f64> {
    let (d0, d1) = (log10(lo).floor() as i32, log10(hi).ceil() as i32);
    let within = |mantissas: &[f64]| -> Vec<f64> {
        (d0..=d1)
            .flat_map(|d| mantissas.iter().map(move |m| clean(m * exp10(d))))
            .filter(|&x| x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9))
            .collect()
    };
    for mantissas in [&[1.0][..], &[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]] {
        let t = within(mantissas);
        if t.len() >= 3 {
            return thin(t, 10);
        }
    }
    // Less than a factor of ~3: the axis is nearly linear, and so are its ticks.
    linear(lo, hi)
}

/// At most `n` ticks, keeping every k-th.
fn thin(t: Vec<f64>, n: usize) -> Vec<f64> {
    let k = t.len().div_ceil(n);
    t.into_iter().step_by(k.max(1)).collect()
}

/// Round away binary noise (0.30000000000000004 → 0.3).
fn clean(x: f64) -> f64 {
    format!("{x:.12e}").parse().unwrap_or(x)
}

/// A tick label: integers as integers up to 10⁵, then `2e5`; decimals with up to 3 significant
/// digits, small ones as `1e-4`.
pub fn label(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.2e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{e}");
    }
    if v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    let digits = (2 - log10(a).floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A plotters axis whose ticks are ours: the inner coordinate (linear or log) maps values to
/// pixels; the key points are the ticks chosen above.
pub struct Axis<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Axis<R> {
    pub fn new(inner: R, ticks: Vec<f64>) -> Self {
        Axis { inner, ticks }
    }

    /// The same axis with ticks at `ticks` (those inside its range).
    pub fn with_ticks(self, ticks: Vec<f64>) -> Self {
        let r = self.inner.range();
        let ticks = ticks.into_iter().filter(|t| *t >= r.start && *t <= r.end).collect();
        Axis { inner: self.inner, ticks }
    }
}

/// A linear axis over `[lo, hi]` with [`linear`] ticks.
pub fn linear_axis(lo: f64, hi: f64) -> Axis<RangedCoordf64> {
    Axis::new((lo..hi).into(), linear(lo, hi))
}

/// A log axis over `[lo, hi]` with [`log`] ticks.
pub fn log_axis(lo: f64, hi: f64) -> Axis<LogCoord<f64>> {
    Axis::new((lo..hi).log_scale().into(), log(lo, hi))
}

impl<R: Ranged<ValueType = f64>> Ranged for Axis<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_cover_the_range() {
        assert_eq!(linear(0.0, 1.0), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear(-0.05, 1.05), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        let t = linear(0.0, 52_000.0);
        assert!(t.len() >= 4 && t.len() <= 10 && t[1] == 10_000.0, "{t:?}");
    }

    #[test]
    fn a_log_axis_always_gets_three_labels() {
        assert_eq!(log(800.0, 40_000.0), vec![1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0]);
        assert_eq!(log(1e-4, 1.0), vec![1e-4, 1e-3, 1e-2, 0.1, 1.0]);
        assert!(log(1200.0, 1900.0).len() >= 3, "{:?}", log(1200.0, 1900.0));
        assert!(log(3e-4, 5e-3).len() >= 3);
    }

    #[test]
    fn labels_read_as_written() {
        assert_eq!(label(1000.0), "1000");
        assert_eq!(label(20_000.0), "20000");
        assert_eq!(label(200_000.0), "2e5");
        assert_eq!(label(0.25), "0.25");
        assert_eq!(label(0.3), "0.3");
        assert_eq!(label(1.5), "1.5");
        assert_eq!(label(3.58), "3.58");
        assert_eq!(label(5e-4), "5e-4");
        assert_eq!(label(-0.002), "-0.002");
        assert_eq!(label(0.0), "0");
    }
}
