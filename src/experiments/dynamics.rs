//! Analyses read from the training logs alone: Δz leads the loss (claim 8), forward vs reverse
//! direction (claim 10, spec A4), and the z-sharing sweep against gradient cancellation (§9).

use super::claims::{Ctx, Row, RunData, Suite, SuiteOutcome, Verdict, fmt_ci, outcome, table};
use super::paper;
use super::scaling::SEED;
use super::stats::{Fit, mean_std, power_law};
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use crate::task::ZSharing;
use serde_json::json;

/// The two Δz-lead rows from the runs and, for those with both onsets, lead / T4, K and the lead.
fn dz_rows(runs: &[RunData], fracs: &[f64], ks: &[f64], leads: &[f64]) -> (Vec<Row>, Option<Fit>, f64, f64) {
    // Graded once every run lacking an onset ran its full max_steps without it (it never left
    // the plateau: named, not waited for); a run that stopped earlier (still training, or stopped
    // by an older rule before T4) is waited for.
    let lacking = |r: &&RunData| r.taus.dz_onset.is_none() || r.taus.t4.is_none();
    let all = runs.iter().filter(lacking).all(RunData::ran_out);
    let never: Vec<String> =
        runs.iter().filter(lacking).filter(|r| r.ran_out()).map(|r| format!("K = {}", r.k())).collect();
    let never = if never.is_empty() { String::new() } else { format!("; no onset in the run: {}", never.join(", ")) };
    let (m, s) = mean_std(fracs);
    let mut rows = vec![];
    let claim = "Δz (z-shuffle gap > 0.1 nats) rises before the loss moves";
    let paper = paper::DZ_LEAD.quote;
    rows.push(if fracs.is_empty() {
        Row::incomplete(claim, paper, "no run has both onsets yet")
    } else {
        Row::new(
            claim,
            paper,
            format!("lead / T4 = {m:.2} ± {s:.2} ({} K){never}", fracs.len()),
            if all { dz_lead_verdict(m) } else { Verdict::Incomplete },
            "lead = T4 − (first step with Δz > 0.1); T4 = first step with first-target loss < 0.9·ln K; replicated: \
             mean within 0.15 of the paper's 0.52, differs: mean > 0.1",
        )
        .with("lead_over_t4", fracs)
        .with("mean", m)
        .with("sd", s)
        .with("paper", paper::DZ_LEAD.value)
        .measured("mean lead / T4", &[m], (paper::DZ_LEAD.value.0, paper::DZ_LEAD.value.0))
    });
    let fit = power_law(ks, leads, SEED, 400);
    let claim2 = "The lead grows with K";
    let paper2 = paper::DZ_LEAD_EXPONENT.quote;
    rows.push(match &fit {
        Some(f) if f.n >= 3 => Row::new(
            claim2,
            paper2,
            format!("lead ∝ K^{}", fmt_ci(f)),
            if all {
                Verdict::grade(f.slope > 0.0, (f.slope - paper::DZ_LEAD_EXPONENT.value).abs() <= 0.5)
            } else {
                Verdict::Incomplete
            },
            "T4 of the same runs as the D sweep: the author's T4 are that waiting time too (the D sweep's waiting-time \
             table); replicated: exponent within 0.5 of 2.13, differs: exponent > 0",
        )
        .with("k", ks)
        .with("lead", leads)
        .with("exponent", f)
        .with("paper_exponent", paper::DZ_LEAD_EXPONENT.value)
        .measured("lead exponent", &[f.slope], (paper::DZ_LEAD_EXPONENT.value, paper::DZ_LEAD_EXPONENT.value)),
        _ => Row::incomplete(claim2, paper2, format!("{} points", ks.len())),
    });
    (rows, fit, m, s)
}

pub fn dz_lead(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let runs = ctx.load(suite)?;
    let (mut fracs, mut ks, mut leads, mut detail) = (vec![], vec![], vec![], vec![]);
    let (mut onset_pts, mut t4_pts) = (vec![], vec![]);
    for r in &runs {
        let (on, t4) = (r.taus.dz_onset, r.taus.t4);
        let frac = match (on, t4) {
            (Some(o), Some(t)) if t > 0 => {
                let f = (t as f64 - o as f64) / t as f64;
                fracs.push(f);
                ks.push(r.k() as f64);
                leads.push(t as f64 - o as f64);
                format!("{f:.2}")
            }
            _ => "–".into(),
        };
        if let Some(o) = on {
            onset_pts.push((r.k() as f64, o as f64));
        }
        if let Some(t) = t4 {
            t4_pts.push((r.k() as f64, t as f64));
        }
        detail.push(vec![r.name.clone(), r.k().to_string(), r.show(on), r.show(t4), frac]);
    }
    let (rows, fit, m, s) = dz_rows(&runs, &fracs, &ks, &leads);
    let p = LinePlot {
        title: "Δz onset vs loss onset (T4) across K".into(),
        x_label: "K".into(),
        y_label: "step".into(),
        series: [Series::points("Δz > 0.1 onset", onset_pts), Series::points("loss onset T4", t4_pts)]
            .into_iter()
            .chain((ctx.scale == super::run_key::Scale::Paper).then(|| {
                Series::points("author's T4", paper::SECOND_SET_T4.value.iter().map(|&(k, t)| (k as f64, t)).collect())
            }))
            .collect(),
        log_x: true,
        log_y: true,
        ..Default::default()
    };
    let mut figures = vec![ctx.figure("dz_lead.svg", &line_plot(&p)?)?];
    if let Some(r) = runs.iter().find(|r| r.k() == 10) {
        let dz: Vec<(f64, f64)> = r.records.iter().filter_map(|x| x.dz_paper.map(|d| (x.step as f64, d))).collect();
        let fl: Vec<(f64, f64)> = r.records.iter().map(|x| (x.step as f64, x.first_target_loss)).collect();
        let mut vlines = vec![];
        for (t, l) in [(r.taus.dz_onset, "Δz onset"), (r.taus.t4, "T4")] {
            if let Some(t) = t {
                vlines.push((t as f64, l.to_string()));
            }
        }
        let q = LinePlot {
            title: format!("Δz and first-target loss, {}", r.name),
            x_label: "step".into(),
            y_label: "nats".into(),
            series: vec![Series::line("Δz (paper-compatible)", dz), Series::line("first-target loss", fl)],
            hlines: vec![(0.1, "0.1".into()), (0.9 * r.ln_k(), "0.9 ln K".into())],
            vlines,
            ..Default::default()
        };
        figures.push(ctx.figure("dz_vs_loss_k10.svg", &line_plot(&q)?)?);
    }
    let mut o = outcome("dz-lead", &runs, rows, figures, table(&["run", "K", "Δz onset", "T4", "lead / T4"], &detail));
    o.data = json!({"lead_fractions": fracs, "mean": m, "std": s, "lead_fit": fit});
    Ok(o)
}

/// The mean lead / T4 against the paper's 0.52: replicated within 0.15, differs when Δz still
/// leads by more than a tenth of the waiting time.
pub fn dz_lead_verdict(mean: f64) -> Verdict {
    Verdict::grade(mean > 0.1, (mean - paper::DZ_LEAD.value.0).abs() <= 0.15)
}

/// Number of z-sets G of a run (shared = 1, private = n_b).
pub fn groups(r: &RunData) -> usize {
    match r.cfg.data.z_sharing {
        ZSharing::Shared => 1,
        ZSharing::Private => r.cfg.data.n_b,
        ZSharing::Supergroup => r.cfg.data.n_supergroups,
    }
}

/// The workshop's plateau duration: first step with candidate loss < ln K to the first step
/// with candidate loss < 0.5 nats.
pub fn duration(r: &RunData) -> Option<u64> {
    let first = |th: f64| r.records.iter().find(|x| x.candidate_loss.is_some_and(|c| c < th)).map(|x| x.step);
    match (first(r.ln_k()), first(0.5)) {
        (Some(a), Some(b)) if b > a => Some(b - a),
        _ => None,
    }
}

/// One z-sharing run as the claim reads it.
pub struct ZPoint {
    pub groups: usize,
    /// |B| / G, groups per z-set.
    pub per_set: f64,
    pub duration: Option<u64>,
    /// Ran its full max_steps ([`RunData::ran_out`]).
    pub ran_out: bool,
}

/// The claim graded over the sweep: β of duration on |B|/G once every run escaped; not
/// replicated when a run that trained its full length never escaped (its plateau depends on G);
/// incomplete while a run that has not escaped yet is still training.
pub fn z_sharing_row(points: &[ZPoint]) -> (Row, Option<Fit>) {
    let claim = "Gradient cancellation between groups sharing z is not the mechanism (plateau ∝ (|B|/G)^β)";
    let paper = paper::Z_SHARING_BETA.quote;
    let (x, y): (Vec<f64>, Vec<f64>) = points.iter().filter_map(|p| Some((p.per_set, p.duration? as f64))).unzip();
    let fit = power_law(&x, &y, SEED, 500);
    let stuck: Vec<String> =
        points.iter().filter(|p| p.ran_out && p.duration.is_none()).map(|p| format!("G = {}", p.groups)).collect();
    let waiting = points.iter().any(|p| !p.ran_out && p.duration.is_none());
    let row = match &fit {
        _ if !waiting && !stuck.is_empty() => Row::new(
            claim,
            paper,
            format!("{} of {} runs never left the plateau ({})", stuck.len(), points.len(), stuck.join(", ")),
            Verdict::NotReplicated,
            "the plateau's length depends on G when some z-sharing levels never escape (the paper: all escape, β ≈ 0.02); \
             not replicated",
        ),
        Some(f) if x.len() == points.len() && f.n >= 3 => Row::new(
            claim,
            paper,
            format!("β = {}", fmt_ci(f)),
            Verdict::grade(f.slope.abs() < 0.5, f.slope.abs() <= 0.15),
            "duration from candidate loss < ln K to < 0.5 nats, vs groups per z-set |B|/G; replicated: |β| ≤ 0.15, \
             differs: |β| < 0.5",
        )
        .with("beta", f)
        .measured("β", &[f.slope], (paper::Z_SHARING_BETA.value, paper::Z_SHARING_BETA.value)),
        _ => Row::incomplete(claim, paper, format!("{} of {} runs transitioned", x.len(), points.len())),
    };
    (row, fit)
}

pub fn z_sharing(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let runs = ctx.load(suite)?;
    let points: Vec<ZPoint> = runs
        .iter()
        .map(|r| ZPoint {
            groups: groups(r),
            per_set: r.cfg.data.n_b as f64 / groups(r) as f64,
            duration: duration(r),
            ran_out: r.ran_out(),
        })
        .collect();
    let detail: Vec<Vec<String>> = runs
        .iter()
        .zip(&points)
        .map(|(r, p)| {
            let per_set = (r.cfg.data.n_b / p.groups).to_string();
            vec![r.name.clone(), p.groups.to_string(), per_set, r.show(r.taus.t1), r.show(p.duration)]
        })
        .collect();
    let (row, fit) = z_sharing_row(&points);
    let pts = points.iter().filter_map(|p| Some((p.per_set, p.duration? as f64))).collect();
    let p = LinePlot {
        title: "z-sharing sweep: plateau duration vs groups per z-set".into(),
        x_label: "|B| / G".into(),
        y_label: "duration (steps)".into(),
        series: vec![Series::points("duration", pts)],
        log_x: true,
        log_y: true,
        ..Default::default()
    };
    let figures = vec![ctx.figure("z_sharing.svg", &line_plot(&p)?)?];
    let mut o =
        outcome("z-sharing", &runs, vec![row], figures, table(&["run", "G", "|B|/G", "T1", "duration"], &detail));
    o.data = json!({"fit": fit});
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(k: usize, onset: Option<u64>, t4: Option<u64>, complete: bool, last: u64) -> RunData {
        let mut cfg = crate::config::RunConfig::default();
        (cfg.data.k, cfg.train.max_steps) = (k, 1000);
        let taus = crate::train::tau::Taus { dz_onset: onset, t4, ..Default::default() };
        let records = vec![crate::train::record::Record { step: last, ..Default::default() }];
        let key = crate::experiments::run_key::RunKey::canonical(crate::experiments::run_key::Scale::Paper, k);
        RunData { key, name: key.to_string(), dir: "/x".into(), cfg, records, taus, complete, train_seconds: 0.0 }
    }

    #[test]
    fn the_dz_lead_differs_between_a_tenth_and_the_papers_band() {
        assert!((paper::DZ_LEAD.value.0 - 0.52).abs() < 1e-9, "the bands below assume the paper's 0.52");
        assert_eq!(dz_lead_verdict(0.52), Verdict::Replicated);
        assert_eq!(dz_lead_verdict(0.38), Verdict::Replicated);
        assert_eq!(dz_lead_verdict(0.66), Verdict::Replicated);
        assert_eq!(dz_lead_verdict(0.36), Verdict::Differs, "just below the band");
        assert_eq!(dz_lead_verdict(0.68), Verdict::Differs, "just above the band");
        assert_eq!(dz_lead_verdict(0.11), Verdict::Differs);
        assert_eq!(dz_lead_verdict(0.1), Verdict::NotReplicated, "no lead worth the name");
        assert_eq!(dz_lead_verdict(-0.2), Verdict::NotReplicated, "Δz after the loss");
    }

    #[test]
    fn dz_lead_grades_once_only_finished_runs_lack_a_t4() {
        let mut runs = vec![run(3, Some(250), Some(500), true, 600), run(5, Some(500), Some(900), true, 950)];
        runs.push(run(7, Some(600), Some(800), true, 900));
        let (fracs, ks, leads) = (vec![0.5, 0.44, 0.25], vec![3.0, 5.0, 7.0], vec![250.0, 400.0, 200.0]);
        runs.push(run(36, Some(900), None, false, 950));
        let (rows, ..) = dz_rows(&runs, &fracs, &ks, &leads);
        assert!(rows.iter().all(|r| r.verdict == Verdict::Incomplete), "K = 36 may still reach T4");
        runs[3].complete = true;
        let (rows, ..) = dz_rows(&runs, &fracs, &ks, &leads);
        assert_eq!(rows[0].verdict, Verdict::Incomplete, "stopped before max_steps by another rule: retrain");
        runs[3] = run(36, Some(900), None, true, 1000);
        let (rows, ..) = dz_rows(&runs, &fracs, &ks, &leads);
        assert_eq!(rows[0].verdict, Verdict::Replicated);
        assert!(rows[0].ours.contains("(3 K); no onset in the run: K = 36"), "{}", rows[0].ours);
        assert_ne!(rows[1].verdict, Verdict::Incomplete);
        let (rows, ..) = dz_rows(&runs, &[0.02, 0.01, 0.03], &ks, &[10.0, 10.0, 20.0]);
        assert_eq!(rows[0].verdict, Verdict::NotReplicated, "no lead");
    }

    #[test]
    fn z_sharing_is_not_replicated_when_a_finished_run_never_escaped() {
        let p = |groups: usize, duration: Option<u64>, ran_out| ZPoint {
            groups,
            per_set: 1000.0 / groups as f64,
            duration,
            ran_out,
        };
        let flat =
            [p(1, Some(3000), true), p(10, Some(3100), true), p(100, Some(2900), true), p(1000, Some(3050), true)];
        assert_eq!(z_sharing_row(&flat).0.verdict, Verdict::Replicated);
        let steep = [p(1, Some(30000), true), p(10, Some(3000), true), p(100, Some(300), true)];
        assert_eq!(z_sharing_row(&steep).0.verdict, Verdict::NotReplicated, "β = 1: cancellation");
        let mut stuck = flat;
        stuck[0] = p(1, None, true);
        let (row, _) = z_sharing_row(&stuck);
        assert_eq!(row.verdict, Verdict::NotReplicated);
        assert!(row.ours.contains("G = 1"), "{}", row.ours);
        stuck[0] = p(1, None, false);
        assert_eq!(z_sharing_row(&stuck).0.verdict, Verdict::Incomplete, "still training");
    }
}
