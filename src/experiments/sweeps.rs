//! The learning-rate sweep (spec §8 row 4): T3 and T1 against η. It reads the runs as they
//! stand and grades the claim (the batch sweep is `batch.rs`).

use super::claims::{Ctx, Key, Row, RunData, Suite, SuiteOutcome, Verdict, fmt_ci, outcome, table};
use super::paper;
use super::run_key::{Eta, Scale};
use super::scaling::{SEED, pairs};
use super::stats::power_law;
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use serde_json::json;

/// τ, with "never transitioned" as +∞ (only for complete runs).
fn tau_or_inf(r: &RunData, t: Option<u64>) -> Option<f64> {
    match t {
        Some(v) => Some(v as f64),
        None if r.complete => Some(f64::INFINITY),
        None => None,
    }
}

fn non_decreasing(v: &[f64]) -> bool {
    v.windows(2).all(|w| w[1] >= w[0])
}

/// A waiting time of a run.
type Tau = fn(&RunData) -> Option<u64>;

/// The T3 ratio between the largest and smallest constant-LR η against the paper's 3.6×:
/// replicated within a factor 1.5 (2.4–5.4), differs when T3 still grows by more than 1.2×.
pub fn t3_ratio_verdict(ratio: f64) -> Verdict {
    let p = paper::LR_T3_RATIO.value;
    Verdict::grade(ratio > 1.2, (p / 1.5..=p * 1.5).contains(&ratio))
}

/// The waiting time `tau` at η = `hi` over η = `lo`: graded against the paper's T3 ratio (3.6×,
/// within a factor 1.5) when `paper_measures` it, else a finding (direction only: the paper has no figure).
fn eta_ratio_row(
    runs: &[RunData],
    (lo, hi): (Eta, Eta),
    (name, tau, paper_measures): (&str, Tau, bool),
    (claim, paper, why): (&str, &str, &str),
) -> Row {
    let at = |e: Eta| runs.iter().find(|r| r.key.eta == e).and_then(tau);
    match (at(lo), at(hi)) {
        (Some(a), Some(b)) => {
            let ratio = b as f64 / a as f64;
            let row = Row::new(
                claim,
                paper,
                format!(
                    "{name}({hi}) / {name}({lo}) = {b} / {a} = {ratio:.2}× over a {:.1}× η range",
                    hi.value() / lo.value()
                ),
                if paper_measures { t3_ratio_verdict(ratio) } else { Verdict::finding(ratio > 1.2) },
                why,
            )
            .with("eta", [lo.value(), hi.value()])
            .with(name, [a, b])
            .with("ratio", ratio)
            .with("paper_ratio", paper_measures.then_some(paper::LR_T3_RATIO.value));
            let p = paper::LR_T3_RATIO.value;
            if paper_measures { row.measured(&format!("{name} ratio"), &[ratio], (p, p)) } else { row }
        }
        _ => Row::incomplete(
            claim,
            paper,
            runs.iter().map(|r| format!("{:e}: {}", r.cfg.train.lr, r.show(tau(r)))).collect::<Vec<_>>().join(", "),
        ),
    }
}

pub fn lr(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let mut runs = ctx.load(suite)?;
    runs.sort_by(|a, b| a.cfg.train.lr.total_cmp(&b.cfg.train.lr));
    let refs: Vec<&RunData> = runs.iter().collect();
    let (eta, t3) = pairs(&refs, |r| r.cfg.train.lr, |r| r.taus.t3);
    let (eta1, t1) = pairs(&refs, |r| r.cfg.train.lr, |r| r.taus.t1);
    let fit = power_law(&eta, &t3, SEED, 300);
    let mut rows = ratio_rows(&runs, ctx.scale);
    rows.extend(monotone_rows(&runs, fit.as_ref()));
    let p = lr_plot(&runs, (&eta, &t3), (&eta1, &t1), ctx.scale == Scale::Paper);
    let figures = vec![ctx.figure("lr.svg", &line_plot(&p)?)?];
    let mut o = outcome("lr", &runs, rows, figures, run_table(&runs));
    o.data = json!({"t3_fit": fit, "eta": eta, "t3": t3, "eta_t1": eta1, "t1": t1});
    Ok(o)
}

/// T3 and T1 against η; the author's T3 in T3's colour (open markers), runs that never got
/// there as triangles at their budget, a tick at every η swept.
fn lr_plot(runs: &[RunData], (eta, t3): (&[f64], &[f64]), (eta1, t1): (&[f64], &[f64]), paper: bool) -> LinePlot {
    let zip = |x: &[f64], y: &[f64]| x.iter().copied().zip(y.iter().copied()).collect::<Vec<_>>();
    let never = |t: fn(&RunData) -> Option<u64>| -> Vec<(f64, f64)> {
        runs.iter().filter(|r| r.complete && t(r).is_none()).map(|r| (r.cfg.train.lr, r.last_step() as f64)).collect()
    };
    let mut series = vec![
        Series::points("T3 (window)", zip(eta, t3)).in_color(0),
        Series::points("T1", zip(eta1, t1)).in_color(1),
        Series::above("no T3 within the run (at its last step)", never(|r| r.taus.t3)).in_color(0),
        Series::above("no T1 within the run (at its last step)", never(|r| r.taus.t1)).in_color(1),
    ];
    if paper {
        series.push(Series::open("author's T3", paper::LR_T3.value.to_vec()).in_color(0));
        series.push(Series::above("author: no T3 in 50,000 steps (η = 5e-3)", vec![(5e-3, 50_000.0)]).in_color(0));
    }
    series.retain(|s| !s.points.is_empty());
    let mut etas: Vec<f64> = runs.iter().map(|r| r.cfg.train.lr).collect();
    etas.dedup();
    LinePlot {
        title: "Learning-rate sweep: waiting times vs η".into(),
        x_label: "η".into(),
        y_label: "steps".into(),
        series,
        log_x: true,
        log_y: true,
        x_ticks: Some(etas),
        ..Default::default()
    }
}

/// T3 and T1 at the paper's pair of η (2e-3 over 3e-4; at ci scale the largest over the smallest).
fn ratio_rows(runs: &[RunData], scale: Scale) -> Vec<Row> {
    let pair = match scale {
        Scale::Paper => (Eta::new(3, -4), Eta::new(2, -3)),
        Scale::Ci => {
            (runs.first().map_or(Eta::CANONICAL, |r| r.key.eta), runs.last().map_or(Eta::CANONICAL, |r| r.key.eta))
        }
    };
    let t3 = eta_ratio_row(
        runs,
        pair,
        ("T3", |r| r.taus.t3, true),
        (
            "Higher η slows the transition (T3 window, constant LR, K = 20)",
            paper::LR_T3_RATIO.quote,
            "within 1.5× of 3.6 counts as replicated; T3 starts at the last eval above 0.95·ln K, so a loss spike \
             after T1 shortens it",
        ),
    );
    // The same pair measured by the plateau's end, which a spike during the descent cannot move.
    let t1 = eta_ratio_row(
        runs,
        pair,
        ("T1", |r| r.taus.t1, false),
        (
            "Higher η lengthens the plateau (T1, same pair of η)",
            "no figure (the paper measures T3)",
            "a finding: the paper gives no T1 ratio; its direction is the claim's when T1 grows by more than 1.2×",
        ),
    )
    // The report's Kramers mechanism is judged on this row.
    .keyed(Key::LrT1);
    vec![t3, t1]
}

/// T3 monotone in η with the paper's slope (within 0.3); the direction is a positive slope.
pub fn monotone_verdict(t3_by_eta: &[f64], slope: f64) -> Verdict {
    Verdict::grade(slope > 0.0, non_decreasing(t3_by_eta) && (slope - paper::LR_T3_SLOPE.value).abs() <= 0.3)
}

/// Monotonicity in η, of T3 (against the paper's slope) and of T1 (no paper figure).
fn monotone_rows(runs: &[RunData], fit: Option<&super::stats::Fit>) -> Vec<Row> {
    let list = |t: fn(&RunData) -> Option<u64>| {
        runs.iter().map(|r| format!("{:e}: {}", r.cfg.train.lr, r.show(t(r)))).collect::<Vec<_>>().join(", ")
    };
    let known = |t: fn(&RunData) -> Option<u64>| runs.iter().map(|r| tau_or_inf(r, t(r))).collect::<Option<Vec<_>>>();
    let (claim2, paper2) = ("Monotone in η (log–log slope of T3 on η)", paper::LR_T3.quote);
    let t3 = match (known(|r| r.taus.t3), fit) {
        (Some(v), Some(f)) => Row::new(
            claim2,
            paper2,
            format!("{}; slope {}", list(|r| r.taus.t3), fmt_ci(f)),
            monotone_verdict(&v, f.slope),
            if non_decreasing(&v) {
                "T3 never decreases with η; replicated: slope within 0.3 of 0.68, differs: slope > 0"
            } else {
                "T3 is not monotone in η; replicated: monotone, slope within 0.3 of 0.68, differs: slope > 0"
            },
        )
        .with("eta", etas(runs))
        .with("T3", &v)
        .with("slope", f)
        .with("paper_slope", paper::LR_T3_SLOPE.value)
        .measured("T3 slope", &[f.slope], (paper::LR_T3_SLOPE.value, paper::LR_T3_SLOPE.value)),
        _ => Row::incomplete(claim2, paper2, list(|r| r.taus.t3)),
    };
    let claim3 = "Higher η also delays the plateau's end (T1)";
    let t1 = match known(|r| r.taus.t1) {
        Some(v) if v.len() >= 2 => Row::new(
            claim3,
            "not reported (the paper uses T3)",
            list(|r| r.taus.t1),
            Verdict::grade(v.last() > v.first(), non_decreasing(&v)),
            "replicated: T1 never decreases with η, differs: T1 of the largest η above the smallest's",
        )
        .with("eta", etas(runs))
        .with("T1", &v),
        _ => Row::incomplete(claim3, "not reported", list(|r| r.taus.t1)),
    };
    vec![t3, t1]
}

/// The runs' learning rates, in the order of the waiting-time lists.
fn etas(runs: &[RunData]) -> Vec<f64> {
    runs.iter().map(|r| r.cfg.train.lr).collect()
}

fn run_table(runs: &[RunData]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                format!("{:e}", r.cfg.train.lr),
                r.show(r.taus.t1),
                r.show(r.taus.t3),
                match (r.taus.t3_start, r.taus.t3_end) {
                    (None, None) => r.show(None),
                    (a, b) => format!("{}–{}", r.show(a), r.show(b)),
                },
                r.last_step().to_string(),
            ]
        })
        .collect();
    table(&["run", "η", "T1", "T3", "window", "steps run"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t3_ratio_bands_are_1_2_then_2_4_to_5_4() {
        assert!((paper::LR_T3_RATIO.value - 3.6).abs() < 0.05, "the bands below assume the paper's 3.6x");
        assert_eq!(t3_ratio_verdict(3.6), Verdict::Replicated);
        assert_eq!(t3_ratio_verdict(2.41), Verdict::Replicated);
        assert_eq!(t3_ratio_verdict(5.39), Verdict::Replicated);
        assert_eq!(t3_ratio_verdict(2.39), Verdict::Differs);
        assert_eq!(t3_ratio_verdict(5.41), Verdict::Differs);
        assert_eq!(t3_ratio_verdict(1.29), Verdict::Differs, "the committed paper-scale ratio");
        assert_eq!(t3_ratio_verdict(1.21), Verdict::Differs);
        assert_eq!(t3_ratio_verdict(1.19), Verdict::NotReplicated, "no lengthening");
        assert_eq!(t3_ratio_verdict(0.8), Verdict::NotReplicated, "reversed");
    }

    #[test]
    fn t3_monotone_needs_order_and_the_papers_slope() {
        let v = [2100.0, 2200.0, 3400.0, 7550.0, f64::INFINITY];
        assert_eq!(monotone_verdict(&v, 0.68), Verdict::Replicated);
        assert_eq!(monotone_verdict(&v, 0.99), Verdict::Differs);
        assert_eq!(monotone_verdict(&[2100.0, 2000.0, 3400.0], 0.68), Verdict::Differs, "not monotone");
        assert_eq!(monotone_verdict(&v, -0.1), Verdict::NotReplicated);
    }
}
