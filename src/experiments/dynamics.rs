//! Analyses read from the training logs alone: Δz leads the loss (claim 8), forward vs reverse
//! direction (claim 10, spec A4), and the z-sharing sweep against gradient cancellation (§9).

use super::claims::{Ctx, Row, RunData, SuiteOutcome, Verdict, fmt_ci, table};
use super::paper;
use super::scaling::{SEED, outcome};
use super::stats::{mean_std, power_law};
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use crate::task::{TaskKind, ZSharing};
use serde_json::json;

pub fn dz_lead(ctx: &Ctx) -> Result<SuiteOutcome> {
    let runs = ctx.load("dz-lead")?;
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
    let all = fracs.len() == runs.len();
    let (m, s) = mean_std(&fracs);
    let mut rows = vec![];
    let claim = "Δz (z-shuffle gap > 0.1 nats) rises before the loss moves";
    let paper = paper::DZ_LEAD.quote;
    rows.push(if fracs.is_empty() {
        Row::incomplete(claim, paper, "no run has both onsets yet")
    } else {
        Row::new(
            claim,
            paper,
            format!("lead / T4 = {m:.2} ± {s:.2} ({} K)", fracs.len()),
            if all { Verdict::grade(m > 0.1, (m - paper::DZ_LEAD.value.0).abs() <= 0.15) } else { Verdict::Incomplete },
            "lead = T4 − (first step with Δz > 0.1); T4 = first step with first-target loss < 0.9·ln K",
        )
        .with("lead_over_t4", &fracs)
        .with("mean", m)
        .with("sd", s)
        .with("paper", paper::DZ_LEAD.value)
    });
    let fit = power_law(&ks, &leads, SEED, 400);
    let claim2 = "The lead grows with K";
    let paper2 = paper::DZ_LEAD_EXPONENT.quote;
    rows.push(match &fit {
        Some(f) if f.n >= 3 => Row::new(
            claim2,
            paper2,
            format!("lead ∝ K^{}", fmt_ci(f)),
            if all { Verdict::grade(f.slope > 0.0, (f.slope - paper::DZ_LEAD_EXPONENT.value).abs() <= 0.5) } else { Verdict::Incomplete },
            "T4 of the same runs as the D sweep: the author's T4 are that waiting time too (the D sweep's waiting-time table)",
        )
        .with("k", &ks)
        .with("lead", &leads)
        .with("exponent", f)
        .with("paper_exponent", paper::DZ_LEAD_EXPONENT.value),
        _ => Row::incomplete(claim2, paper2, format!("{} points", ks.len())),
    });
    let p = LinePlot {
        title: "Δz onset vs loss onset (T4) across K".into(),
        x_label: "K".into(),
        y_label: "step".into(),
        series: [Series::points("Δz > 0.1 onset", onset_pts), Series::points("loss onset T4", t4_pts)]
            .into_iter()
            .chain((ctx.scale == super::suites::Scale::Paper).then(|| {
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

/// `analyze_k_sweep.py::compute_lag_metric`: first step with first-target loss below a tenth
/// of its first logged value.
pub fn lag(r: &RunData) -> Option<u64> {
    let first = r.records.first()?.first_target_loss;
    r.records.iter().find(|x| x.first_target_loss < 0.1 * first).map(|x| x.step)
}

pub fn asymmetry(ctx: &Ctx) -> Result<SuiteOutcome> {
    let runs = ctx.load("asymmetry")?;
    let mut ks: Vec<usize> = runs.iter().map(|r| r.k()).collect();
    ks.sort();
    ks.dedup();
    let (mut ratios, mut detail, mut series) = (vec![], vec![], vec![]);
    let mut pending = false;
    for &k in &ks {
        let get = |t: TaskKind| runs.iter().find(|r| r.k() == k && r.cfg.data.task == t);
        let (Some(bz), Some(az)) = (get(TaskKind::BzToA), get(TaskKind::AzToB)) else { continue };
        let (lb, la) = (lag(bz), lag(az));
        let ratio = match (lb, la) {
            (Some(b), Some(a)) if a > 0 => {
                ratios.push(b as f64 / a as f64);
                format!("{:.2}", b as f64 / a as f64)
            }
            _ => {
                pending = true;
                "–".into()
            }
        };
        detail.push(vec![k.to_string(), bz.show(lb), az.show(la), ratio]);
        for r in [bz, az] {
            let pts = r.records.iter().map(|x| (x.step as f64, x.first_target_loss)).collect();
            series.push(Series::line(format!("{} K={k}", r.cfg.data.task.name()), pts));
        }
    }
    let claim = "Reverse (B,z)→A is slower than forward (A,z)→B";
    let paper = paper::ASYMMETRY.quote;
    let row = if ratios.is_empty() || pending {
        Row::incomplete(claim, paper, format!("{} of {} K compared", ratios.len(), ks.len()))
    } else {
        let ours = ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" / ");
        Row::new(
            claim,
            paper,
            format!(
                "lag ratio bz/az = {ours} (K = {})",
                ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
            ),
            Verdict::grade(ratios.iter().all(|&r| r > 1.0), ratios.iter().all(|&r| (1.7..=4.4).contains(&r))),
            "lag = first step with first-target loss < 0.1 × its first logged value (the author's metric)",
        )
        .with("k", &ks)
        .with("lag_ratio", &ratios)
    };
    let p = LinePlot {
        title: "Forward vs reverse: first-target loss".into(),
        x_label: "step".into(),
        y_label: "first-target loss (nats)".into(),
        series,
        log_y: true,
        ..Default::default()
    };
    let figures = vec![ctx.figure("asymmetry.svg", &line_plot(&p)?)?];
    let mut o =
        outcome("asymmetry", &runs, vec![row], figures, table(&["K", "lag bz→a", "lag az→b", "ratio"], &detail));
    o.data = json!({"ratios": ratios});
    Ok(o)
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

pub fn z_sharing(ctx: &Ctx) -> Result<SuiteOutcome> {
    let runs = ctx.load("z-sharing")?;
    let (mut x, mut y, mut detail) = (vec![], vec![], vec![]);
    for r in &runs {
        let g = groups(r);
        let d = duration(r);
        if let Some(d) = d {
            x.push(r.cfg.data.n_b as f64 / g as f64);
            y.push(d as f64);
        }
        detail.push(vec![
            r.name.clone(),
            g.to_string(),
            (r.cfg.data.n_b / g).to_string(),
            r.show(r.taus.t1),
            r.show(d),
        ]);
    }
    let fit = power_law(&x, &y, SEED, 500);
    let claim = "Gradient cancellation between groups sharing z is not the mechanism (plateau ∝ (|B|/G)^β)";
    let paper = paper::Z_SHARING_BETA.quote;
    let row = match &fit {
        Some(f) if x.len() == runs.len() && f.n >= 3 => Row::new(
            claim,
            paper,
            format!("β = {}", fmt_ci(f)),
            Verdict::grade(f.slope.abs() < 0.5, f.slope.abs() <= 0.15),
            "duration from candidate loss < ln K to < 0.5 nats, vs groups per z-set |B|/G",
        )
        .with("beta", f),
        _ => Row::incomplete(claim, paper, format!("{} of {} runs transitioned", x.len(), runs.len())),
    };
    let p = LinePlot {
        title: "z-sharing sweep: plateau duration vs groups per z-set".into(),
        x_label: "|B| / G".into(),
        y_label: "duration (steps)".into(),
        series: vec![Series::points("duration", x.iter().copied().zip(y.iter().copied()).collect())],
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
