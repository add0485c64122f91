//! The D-law (claim 3): τ = T1 against D = n_b·K over the canonical K sweep, the exponent at
//! every threshold fraction, and windtunnel's T1, T2 and T4 beside the author's two sets of
//! waiting times (spec A2). measure → grade → render.

use super::claims::{Ctx, Row, RunData, Suite, SuiteOutcome, Verdict, fmt_ci, outcome, table};
use super::paper;
use super::run_key::Scale;
use super::scaling::{SEED, pairs};
use super::stats::{Fit, power_law};
use crate::error::Result;
use crate::numerics::math;
use crate::plot::{Band, LinePlot, Series, line_plot};
use crate::train::tau::Thresholds;
use serde_json::json;

/// What the D sweep measured.
pub struct Numbers {
    /// (D, T1) of the runs that have T1.
    pub d: Vec<f64>,
    pub t1: Vec<f64>,
    /// Every run has T1.
    pub all: bool,
    /// Finished runs that never reached T1 (they never left the plateau).
    pub stuck: Vec<String>,
    pub fit: Option<Fit>,
    /// (threshold fraction, fit, every run has that crossing).
    pub fraction_fits: Vec<(f64, Option<Fit>, bool)>,
}

pub fn measure(runs: &[RunData]) -> Numbers {
    let refs: Vec<&RunData> = runs.iter().collect();
    let (d, t1) = pairs(&refs, |r| r.d() as f64, |r| r.taus.t1);
    let fit = power_law(&d, &t1, SEED, 100);
    let fraction_fits = Thresholds::T1_FRACTIONS
        .iter()
        .enumerate()
        .map(|(i, frac)| {
            let at = |r: &RunData| r.taus.t1_fractions.iter().find(|(f, _)| f == frac).and_then(|(_, t)| *t);
            let (dx, ty) = pairs(&refs, |r| r.d() as f64, at);
            (*frac, power_law(&dx, &ty, SEED, 200 + i as u64), dx.len() == runs.len())
        })
        .collect();
    let stuck = runs.iter().filter(|r| r.ran_out() && r.taus.t1.is_none()).map(|r| format!("K = {}", r.k())).collect();
    Numbers { all: d.len() == runs.len(), stuck, d, t1, fit, fraction_fits }
}

/// α replicated: within 0.15 of the paper's, or the paper's inside the CI.
pub fn alpha_holds(f: &Fit) -> bool {
    let alpha = paper::ALPHA.value.0;
    (f.slope - alpha).abs() <= 0.15 || f.ci95.is_some_and(|(lo, hi)| lo <= alpha && alpha <= hi)
}

/// The exponent over threshold fractions: positive (> 0.8) at every fraction, replicated when
/// the spread is at most 0.2 (the paper's is 0.104).
pub fn fraction_verdict(slopes: &[f64]) -> Verdict {
    let lo = slopes.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = slopes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Verdict::grade(lo > 0.8, hi - lo <= 0.2)
}

pub fn grade(n: &Numbers, runs: usize) -> Vec<Row> {
    let claim = "τ ∝ D^α (T1, OLS in log–log over the canonical K sweep)";
    let alpha_row = match &n.fit {
        _ if !n.stuck.is_empty() => Row::new(
            claim,
            paper::ALPHA.quote,
            format!("{} never reached T1", n.stuck.join(", ")),
            Verdict::NotReplicated,
            "a finished run that never left the plateau has no waiting time: no power law in D holds through it",
        ),
        Some(f) if f.n >= 3 && n.all => Row::new(
            claim,
            paper::ALPHA.quote,
            fmt_ci(f),
            Verdict::grade(f.slope > 0.8, alpha_holds(f)),
            "replicated: |α − 1.194| ≤ 0.15 or 1.194 inside the CI",
        )
        .with("alpha", f)
        .with("paper_alpha", paper::ALPHA.value)
        .measured("α", &[f.slope], (paper::ALPHA.value.0, paper::ALPHA.value.0)),
        Some(f) if f.n >= 3 => {
            Row::new(claim, paper::ALPHA.quote, fmt_ci(f), Verdict::Incomplete, "some runs have not reached T1 yet")
                .with("alpha", f)
        }
        _ => Row::incomplete(claim, paper::ALPHA.quote, format!("{} of {runs} runs have T1", n.d.len())),
    };
    let claim2 = "The exponent does not depend on the τ threshold (0.3–0.7 of ln K)";
    let slopes: Vec<f64> = n.fraction_fits.iter().filter_map(|(_, f, _)| f.as_ref().map(|f| f.slope)).collect();
    let paper_spread = spread(&paper::ALPHA_BY_FRACTION.value);
    let fraction_row = if slopes.len() == Thresholds::T1_FRACTIONS.len() && n.fraction_fits.iter().all(|x| x.2) {
        Row::new(
            claim2,
            paper::ALPHA_BY_FRACTION.quote,
            slopes.iter().map(|s| format!("{s:.3}")).collect::<Vec<_>>().join(" / "),
            fraction_verdict(&slopes),
            format!(
                "spread {:.3} (paper {paper_spread:.3}); replicated: every α > 0.8 and spread ≤ 0.2, differs: every α > 0.8",
                spread(&slopes)
            ),
        )
        .with("alpha_by_fraction", &slopes)
        .with("paper_alpha_by_fraction", paper::ALPHA_BY_FRACTION.value)
    } else {
        Row::incomplete(claim2, paper::ALPHA_BY_FRACTION.quote, "needs every run past its 0.3·ln K crossing")
    };
    vec![alpha_row, fraction_row]
}

fn spread(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn d_scaling(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let runs = ctx.load(suite)?;
    let n = measure(&runs);
    let rows = grade(&n, runs.len());
    let figures = vec![ctx.figure("d_scaling.svg", &line_plot(&plot(&n, ctx.scale))?)?];
    let mut details = run_table(&runs);
    if ctx.scale == Scale::Paper {
        details += &super::waiting_times::render(&super::waiting_times::measure(&runs));
    }
    let mut o = outcome("d-scaling", &runs, rows, figures, details);
    o.data = json!({
        "fit": n.fit,
        "threshold_fits": n.fraction_fits.iter().map(|(f, fit, _)| json!({"fraction": f, "fit": fit})).collect::<Vec<_>>(),
        "points": n.d.iter().zip(&n.t1).map(|(d, t)| json!({"d": d, "t1": t})).collect::<Vec<_>>(),
    });
    Ok(o)
}

fn fit_line(fit: &Fit, xs: &[f64], label: &str) -> Series {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let f = |x: f64| math::exp(fit.intercept + fit.slope * math::ln(x));
    Series::line(label, (0..=20).map(|i| lo * math::pow(hi / lo, i as f64 / 20.0)).map(|x| (x, f(x))).collect())
}

/// The fits with the slope at either end of its 95% CI, through the data's centre (mean ln x):
/// the band of power laws the data allow.
pub fn fit_band(fit: &Fit, xs: &[f64], series: usize) -> Option<Band> {
    let (lo_s, hi_s) = fit.ci95?;
    let xbar = xs.iter().map(|&x| math::ln(x)).sum::<f64>() / xs.len() as f64;
    let ybar = fit.intercept + fit.slope * xbar;
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let at = |s: f64, x: f64| math::exp(ybar + s * (math::ln(x) - xbar));
    let points = (0..=20)
        .map(|i| lo * math::pow(hi / lo, i as f64 / 20.0))
        .map(|x| (x, at(lo_s, x).min(at(hi_s, x)), at(lo_s, x).max(at(hi_s, x))))
        .collect();
    Some(Band { label: format!("95% CI of the slope [{lo_s:.2}, {hi_s:.2}]"), points, series })
}

fn plot(n: &Numbers, scale: Scale) -> LinePlot {
    let mut series = vec![Series::points("T1", n.d.iter().copied().zip(n.t1.iter().copied()).collect())];
    let mut bands = vec![];
    if let Some(f) = &n.fit {
        series.push(fit_line(f, &n.d, &format!("fit α = {:.3}", f.slope)));
        bands.extend(fit_band(f, &n.d, 1));
    }
    if scale == Scale::Paper {
        let pts = paper::D_SWEEP_T1.value.iter().map(|&(k, t)| (1000.0 * k as f64, t)).collect();
        series.push(Series::points("author's T1", pts));
    }
    LinePlot {
        title: "Waiting time vs dataset size D = n_b·K".into(),
        x_label: "D".into(),
        y_label: "T1 (steps)".into(),
        series,
        bands,
        log_x: true,
        log_y: true,
        ..Default::default()
    }
}

fn run_table(runs: &[RunData]) -> String {
    let rows: Vec<Vec<String>> =
        runs.iter()
            .map(|r| {
                let epochs = r.taus.t1.map_or("–".into(), |t| {
                    format!("{:.1}", t as f64 * r.cfg.train.batch_size as f64 / r.d() as f64)
                });
                vec![
                    r.name.clone(),
                    r.k().to_string(),
                    r.d().to_string(),
                    r.show(r.taus.t1),
                    r.show(r.taus.t2),
                    r.show(r.taus.t3),
                    r.show(r.taus.t4),
                    epochs,
                    if r.complete { "done".into() } else { format!("at step {}", r.last_step()) },
                ]
            })
            .collect();
    table(&["run", "K", "D", "T1", "T2", "T3", "T4", "T1 epochs", "state"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(slope: f64, ci: Option<(f64, f64)>) -> Fit {
        Fit { slope, intercept: 0.0, r2: 0.99, n: 11, ci95: ci }
    }

    #[test]
    fn alpha_holds_within_the_tolerance_or_by_the_ci() {
        assert!(alpha_holds(&fit(1.194 + 0.149, None)));
        assert!(!alpha_holds(&fit(1.194 + 0.151, None)));
        assert!(alpha_holds(&fit(1.5, Some((1.1, 1.6)))));
        assert!(!alpha_holds(&fit(0.9, Some((0.8, 1.0)))));
    }

    #[test]
    fn the_alpha_row_grades_all_three_ways_and_waits_for_every_run_still_training() {
        let numbers = |slope: f64, all: bool| Numbers {
            d: vec![1.0; 11],
            t1: vec![1.0; 11],
            all,
            stuck: vec![],
            fit: Some(fit(slope, Some((slope - 0.05, slope + 0.05)))),
            fraction_fits: vec![],
        };
        assert_eq!(grade(&numbers(1.22, true), 11)[0].verdict, Verdict::Replicated);
        assert_eq!(grade(&numbers(1.6, true), 11)[0].verdict, Verdict::Differs);
        assert_eq!(grade(&numbers(0.5, true), 11)[0].verdict, Verdict::NotReplicated);
        assert_eq!(grade(&numbers(1.22, false), 11)[0].verdict, Verdict::Incomplete);
        // A finished run that never reached T1 is not waited for.
        let stuck = Numbers { stuck: vec!["K = 36".into()], ..numbers(1.22, false) };
        let row = &grade(&stuck, 11)[0];
        assert_eq!(row.verdict, Verdict::NotReplicated);
        assert!(row.ours.contains("K = 36 never reached T1"), "{}", row.ours);
    }

    #[test]
    fn the_threshold_spread_is_graded_at_its_edges() {
        assert_eq!(fraction_verdict(&[1.2, 1.3, 1.4]), Verdict::Replicated);
        assert_eq!(fraction_verdict(&[1.2, 1.3, 1.41]), Verdict::Differs);
        assert_eq!(fraction_verdict(&[0.79, 1.0]), Verdict::NotReplicated);
    }
}
