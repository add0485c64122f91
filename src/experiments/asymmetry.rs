//! Directional asymmetry (spec §8 row 10, ambiguity A4): the forward task, A → B (each A has
//! one B: memorised pair by pair), against the reverse (B, z) → A (the K targets of a B share
//! its group structure). The seed summary says forward is 1.7–4.4× slower. "Forward" has two
//! readings, both run and graded: A → B without z (`a_to_b`) and (A, z) → B with a redundant z
//! (`az_to_b`, the author's launch script). measure (each run's lag) → grade (forward lag /
//! reverse lag per K) → render.

use super::claims::{Ctx, Row, RunData, Suite, SuiteOutcome, Verdict, outcome, table};
use super::paper;
use super::run_key::Family;
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use crate::task::TaskKind;
use serde_json::json;

/// The two readings of the forward task.
pub const FORWARDS: [TaskKind; 2] = [TaskKind::AToB, TaskKind::AzToB];

/// The suite's runs: the reverse task and both readings of the forward one, in this order.
pub const TASKS: [TaskKind; 3] = [TaskKind::BzToA, FORWARDS[0], FORWARDS[1]];

/// The paper's forward/reverse slowdown: 1.7–4.4×.
pub const ASYMMETRY_BAND: (f64, f64) = (1.7, 4.4);

/// `analyze_k_sweep.py::compute_lag_metric`: first step with first-target loss below a tenth
/// of its first logged value.
pub fn lag(r: &RunData) -> Option<u64> {
    let first = r.records.first()?.first_target_loss;
    r.records.iter().find(|x| x.first_target_loss < 0.1 * first).map(|x| x.step)
}

/// Forward lag / reverse lag of one K (the paper's direction: > 1 when the forward task A → B
/// is slower); None when either run never reached its lag: no ratio, not an infinite one.
pub fn lag_ratio(forward: Option<u64>, reverse: Option<u64>) -> Option<f64> {
    match (forward, reverse) {
        (Some(f), Some(r)) if r > 0 => Some(f as f64 / r as f64),
        _ => None,
    }
}

/// One forward reading against the reverse task over the K of the suite.
#[derive(Default)]
struct Compared {
    ratios: Vec<f64>,
    /// A run of the pair is still training (or missing).
    pending: bool,
    /// K where a finished run never reached its lag.
    unfinished: Vec<usize>,
    /// Per K: the forward lag and the ratio, as shown.
    shown: Vec<(String, String)>,
}

fn compare(runs: &[RunData], ks: &[usize], forward: TaskKind) -> Compared {
    let mut c = Compared::default();
    for &k in ks {
        let get = |t: TaskKind| runs.iter().find(|r| r.key.k == k && r.key.family == Family::Asymmetry(t));
        let (Some(rev), Some(fwd)) = (get(TaskKind::BzToA), get(forward)) else {
            c.pending = true;
            c.shown.push(("–".into(), "–".into()));
            continue;
        };
        let (lr, lf) = (lag(rev), lag(fwd));
        let ratio = match lag_ratio(lf, lr) {
            Some(r) if rev.complete && fwd.complete => {
                c.ratios.push(r);
                format!("{r:.2}")
            }
            _ if !(rev.complete && fwd.complete) => {
                c.pending = true;
                "–".into()
            }
            _ => {
                c.unfinished.push(k);
                "not reached (longer budget needed)".into()
            }
        };
        c.shown.push((fwd.show(lf), ratio));
    }
    c
}

pub fn asymmetry(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let runs = ctx.load(suite)?;
    let mut ks: Vec<usize> = runs.iter().map(|r| r.k()).collect();
    ks.sort();
    ks.dedup();
    let compared: Vec<Compared> = FORWARDS.iter().map(|&f| compare(&runs, &ks, f)).collect();
    let rows = FORWARDS
        .iter()
        .zip(&compared)
        .map(|(&f, c)| asymmetry_row(f, &ks, &c.ratios, c.pending, &c.unfinished))
        .collect();
    let detail: Vec<Vec<String>> = ks
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let rev = runs.iter().find(|r| r.key.k == *k && r.key.family == Family::Asymmetry(TaskKind::BzToA));
            let mut row = vec![k.to_string(), rev.map_or("–".into(), |r| r.show(lag(r)))];
            for c in &compared {
                row.extend([c.shown[i].0.clone(), c.shown[i].1.clone()]);
            }
            row
        })
        .collect();
    let series = runs
        .iter()
        .map(|r| {
            let pts = r.records.iter().map(|x| (x.step as f64, x.first_target_loss)).collect();
            Series::line(format!("{} K={}", r.cfg.data.task.name(), r.k()), pts)
        })
        .collect();
    let p = LinePlot {
        title: "Forward vs reverse: first-target loss".into(),
        x_label: "step".into(),
        y_label: "first-target loss (nats)".into(),
        series,
        log_y: true,
        ..Default::default()
    };
    let figures = vec![ctx.figure("asymmetry.svg", &line_plot(&p)?)?];
    let header = [
        "K",
        "lag bz→a (reverse)",
        "lag a→b (forward)",
        "ratio a/bz",
        "lag az→b (forward, z redundant)",
        "ratio az/bz",
    ];
    let mut o = outcome("asymmetry", &runs, rows, figures, table(&header, &detail));
    o.data = json!({"ratios_a_to_b": compared[0].ratios, "ratios_az_to_b": compared[1].ratios});
    Ok(o)
}

/// The claim of one forward reading.
fn claim(forward: TaskKind) -> &'static str {
    match forward {
        TaskKind::AzToB => "Forward (A,z)→B (z redundant) is slower than reverse (B,z)→A",
        _ => "Forward A→B (unambiguous, memorised) is slower than reverse (B,z)→A (shared group structure)",
    }
}

/// The asymmetry row of one forward reading from its lag ratios over the K compared (forward /
/// reverse): incomplete while a run trains (`pending`), or when at some K (`unfinished`) a
/// finished run never reached its lag.
pub fn asymmetry_row(forward: TaskKind, ks: &[usize], ratios: &[f64], pending: bool, unfinished: &[usize]) -> Row {
    let (claim, paper, f) = (claim(forward), paper::ASYMMETRY.quote, forward.name());
    let short = if forward == TaskKind::AzToB { "az/bz" } else { "a/bz" };
    if ratios.is_empty() || pending || !unfinished.is_empty() {
        let why = match unfinished.is_empty() {
            true => String::new(),
            false => format!(
                "; at K = {} a run never reached its lag within its budget, so no ratio exists yet",
                unfinished.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
            ),
        };
        let seen = match ratios.is_empty() {
            true => "none yet".to_string(),
            false => ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" / "),
        };
        return Row::incomplete(
            claim,
            paper,
            format!("{} of {} K compared ({short} {seen}){why}", ratios.len(), ks.len()),
        );
    }
    let ours = ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" / ");
    let k_list = ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    Row::new(
        claim,
        paper,
        format!("lag ratio forward/reverse ({short}) = {ours} (K = {k_list})"),
        asymmetry_verdict(ratios),
        format!(
            "lag = first step with first-target loss < 0.1 × its first logged value (the author's metric); ratio = \
             {f} lag / bz_to_a lag (the paper: forward is slower); a run that never gets there leaves its K \
             incomplete; replicated: every ratio 1.7–4.4×, differs: every ratio > 1×"
        ),
    )
    .with("k", ks)
    .with("lag_ratio", ratios)
    .measured(&format!("{short} lag ratio per K"), ratios, ASYMMETRY_BAND)
}

/// Replicated when the forward task is slower at every K by the paper's 1.7–4.4× (ratios are
/// forward / reverse); differs when it is slower by another factor; not replicated when it is
/// not slower at some K.
pub fn asymmetry_verdict(ratios: &[f64]) -> Verdict {
    let (lo, hi) = ASYMMETRY_BAND;
    Verdict::grade(
        !ratios.is_empty() && ratios.iter().all(|&r| r > 1.0),
        ratios.iter().all(|&r| (lo..=hi).contains(&r)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_asymmetry_k_that_never_reached_its_lag_leaves_the_row_incomplete_not_infinitely_slow() {
        let row = asymmetry_row(TaskKind::AToB, &[5, 10, 20], &[1.19, 1.04], false, &[20]);
        assert_eq!(row.verdict, Verdict::Incomplete);
        assert!(row.reason.contains("2 of 3 K compared (a/bz 1.19 / 1.04)"), "{}", row.reason);
        assert!(row.reason.contains("at K = 20 a run never reached its lag"), "{}", row.reason);
        assert_eq!(row.measure, None, "no figure to grade over seeds");
        let training = asymmetry_row(TaskKind::AToB, &[5, 10], &[1.19], true, &[]);
        assert_eq!(training.verdict, Verdict::Incomplete);
        assert!(!training.reason.contains("never reached"), "{}", training.reason);
        let none = asymmetry_row(TaskKind::AzToB, &[5, 10, 20], &[], true, &[]);
        assert_eq!(none.verdict, Verdict::Incomplete);
        assert!(none.reason.contains("0 of 3 K compared (az/bz none yet)"), "{}", none.reason);
        // Every K compared: graded, with the ratios as the figure.
        let done = asymmetry_row(TaskKind::AToB, &[5, 10, 20], &[1.19, 1.04, 2.0], false, &[]);
        assert_eq!(done.verdict, Verdict::Differs);
        assert_eq!(done.measure.as_ref().map(|m| m.values.clone()), Some(vec![1.19, 1.04, 2.0]));
        assert_eq!(asymmetry_row(TaskKind::AToB, &[5, 10], &[1.8, 4.0], false, &[]).verdict, Verdict::Replicated);
        assert_eq!(asymmetry_row(TaskKind::AToB, &[5, 10], &[1.8, 0.9], false, &[]).verdict, Verdict::NotReplicated);
    }

    #[test]
    fn the_lag_ratio_is_forward_over_reverse_and_absent_when_a_run_never_got_there() {
        assert_eq!(lag_ratio(Some(300), Some(100)), Some(3.0), "forward 3x slower: ratio 3");
        assert_eq!(lag_ratio(Some(100), Some(300)), Some(1.0 / 3.0));
        assert_eq!(lag_ratio(None, Some(100)), None, "never reached: no ratio, not infinitely slow");
        assert_eq!(lag_ratio(Some(100), None), None);
        assert_eq!(lag_ratio(Some(100), Some(0)), None);
    }

    /// A run of K that logged up to `last` (of max_steps 1000).
    #[test]
    fn asymmetry_needs_the_forward_task_slower_at_every_k() {
        assert_eq!(asymmetry_verdict(&[1.7, 2.5, 4.4]), Verdict::Replicated, "both band edges inside");
        assert_eq!(asymmetry_verdict(&[1.69, 2.0]), Verdict::Differs, "just below the band");
        assert_eq!(asymmetry_verdict(&[4.41, 2.0]), Verdict::Differs, "just above the band");
        assert_eq!(asymmetry_verdict(&[1.06, 2.0]), Verdict::Differs);
        assert_eq!(asymmetry_verdict(&[1.0, 2.0]), Verdict::NotReplicated, "equal speed is no asymmetry");
        // The committed K = 5, 10 lags (bz/az 0.84, 0.96) read in the paper's direction.
        assert_eq!(asymmetry_verdict(&[1.0 / 0.84, 1.0 / 0.96]), Verdict::Differs);
        assert_eq!(asymmetry_verdict(&[0.94, 2.0]), Verdict::NotReplicated, "reverse slower at one K");
        assert_eq!(asymmetry_verdict(&[]), Verdict::NotReplicated);
    }
}
