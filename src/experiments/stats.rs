//! Statistics for the claims: ordinary least squares, log–log power-law fits with a seeded
//! percentile bootstrap (2000 resamples of the points, with replacement, as the author's
//! `exp_dataset_confound.py`), mean and population standard deviation.
//! All sums run in a fixed order on one thread.

use crate::numerics::math;
use crate::rng::stream::{Purpose, Stream};
use serde::Serialize;

/// A straight-line fit y = intercept + slope·x.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    pub slope: f64,
    pub intercept: f64,
    pub r2: f64,
    pub n: usize,
    /// Percentile bootstrap 95% interval of the slope (None with fewer than 3 points).
    pub ci95: Option<(f64, f64)>,
}

/// OLS of y on x. None when fewer than two points or all x are equal.
pub fn ols(x: &[f64], y: &[f64]) -> Option<Fit> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 { sxy * sxy / (sxx * syy) } else { 1.0 };
    Some(Fit { slope, intercept: my - slope * mx, r2, n, ci95: None })
}

/// Percentile `q` ∈ [0, 1] of sorted data, linear interpolation (numpy's default).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (pos - lo as f64) * (sorted[hi] - sorted[lo])
}

/// OLS plus a percentile bootstrap CI of the slope: `n_boot` resamples of the n points with
/// replacement from windtunnel's stream (seed, `Bootstrap`, `id`); resamples whose x are all
/// equal have no slope and are drawn again.
pub fn fit_with_ci(x: &[f64], y: &[f64], n_boot: usize, seed: u64, id: u64) -> Option<Fit> {
    let mut fit = ols(x, y)?;
    if fit.n < 3 {
        return Some(fit);
    }
    let mut rng = Stream::new(seed, Purpose::Bootstrap, id);
    let mut slopes = Vec::with_capacity(n_boot);
    let (mut bx, mut by) = (vec![0.0; fit.n], vec![0.0; fit.n]);
    while slopes.len() < n_boot {
        for i in 0..fit.n {
            let j = rng.below(fit.n as u64) as usize;
            bx[i] = x[j];
            by[i] = y[j];
        }
        if let Some(f) = ols(&bx, &by) {
            slopes.push(f.slope);
        }
    }
    slopes.sort_by(f64::total_cmp);
    fit.ci95 = Some((percentile(&slopes, 0.025), percentile(&slopes, 0.975)));
    Some(fit)
}

/// Power law y ∝ x^slope: the fit of ln y on ln x (positive values only).
pub fn power_law(x: &[f64], y: &[f64], seed: u64, id: u64) -> Option<Fit> {
    let (lx, ly): (Vec<f64>, Vec<f64>) =
        x.iter().zip(y).filter(|(a, b)| **a > 0.0 && **b > 0.0).map(|(a, b)| (math::ln(*a), math::ln(*b))).unzip();
    fit_with_ci(&lx, &ly, 2000, seed, id)
}

/// Mean and population standard deviation.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / n;
    (m, math::sqrt(var))
}

/// `x` with about `n` significant digits (like Python's `{:.ng}`).
pub fn sig(x: f64, n: usize) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    // The decimal exponent, read off Rust's exact scientific formatting (no platform log10).
    let e = format!("{:e}", x.abs());
    let mag: i32 = e[e.find('e').expect("has an exponent") + 1..].parse().expect("integer exponent");
    if !(-3..5).contains(&mag) {
        format!("{:.*e}", n.saturating_sub(1), x)
    } else {
        format!("{:.*}", (n as i32 - 1 - mag).max(0) as usize, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(sig(2887.4, 3), "2887");
        assert_eq!(sig(7.7412, 3), "7.74");
        assert_eq!(sig(-0.00428, 3), "-0.00428");
        assert_eq!(sig(0.0000123, 3), "1.23e-5");
        assert_eq!(sig(-0.684, 3), "-0.684");
        assert_eq!(sig(123456.0, 2), "1.2e5");
    }

    #[test]
    fn ols_recovers_an_exact_line() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y: Vec<f64> = x.iter().map(|v| 0.5 + 2.0 * v).collect();
        let f = ols(&x, &y).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 0.5).abs() < 1e-12 && (f.r2 - 1.0).abs() < 1e-12);
        assert!(ols(&[1.0, 1.0], &[2.0, 3.0]).is_none());
    }

    /// The author's 11 canonical waiting times (spec §8 row 3) give the quoted δ = 1.194, R² = 0.994.
    #[test]
    fn paper_d_scaling_exponent() {
        use crate::experiments::paper::{ALPHA, D_SWEEP_T1};
        let (d, tau): (Vec<f64>, Vec<f64>) = D_SWEEP_T1.value.iter().map(|&(k, t)| (1000.0 * k as f64, t)).unzip();
        let f = power_law(&d, &tau, 42, 0).unwrap();
        assert!((f.slope - ALPHA.value.0).abs() < 5e-4, "{}", f.slope);
        assert!((f.r2 - 0.994).abs() < 5e-4, "{}", f.r2);
        let (lo, hi) = f.ci95.unwrap();
        // The paper's bootstrap (numpy RandomState(42)) gives [1.137, 1.308]; ours is another stream.
        assert!(lo < f.slope && f.slope < hi && (lo - 1.137).abs() < 0.05 && (hi - 1.308).abs() < 0.05, "{lo} {hi}");
        // Deterministic.
        assert_eq!(power_law(&d, &tau, 42, 0), Some(f));
    }

    /// Fixed D = 10k (spec §8 row 2): τ = 1600, 1650, 1600, 1600 at K = 5, 10, 20, 36 → δ = −0.004.
    #[test]
    fn paper_fixed_d_slope() {
        let f = power_law(&[5.0, 10.0, 20.0, 36.0], &[1600.0, 1650.0, 1600.0, 1600.0], 42, 1).unwrap();
        assert!((f.slope + 0.004).abs() < 1e-3, "{}", f.slope);
    }

    #[test]
    fn mean_std_is_population() {
        let (m, s) = mean_std(&[1.0, 3.0]);
        assert_eq!((m, s), (2.0, 1.0));
    }
}
