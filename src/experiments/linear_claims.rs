//! The linear baseline (spec §9): a two-layer linear readout of (B, z) one-hots, which cannot
//! represent which target z selects, trained at each K; graded on its candidate loss and z-gap.

use super::claims::{Ctx, Row, Suite, SuiteOutcome, Verdict, outcome, table};
use super::paper;
use super::probe_claims::cached_in;
use super::run_key::Scale;
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use crate::probes::linear::{LinearReport, Positions, SEED, train_linear};
use crate::task::DataConfig;
use serde_json::json;

/// The linear baseline's result directories under the runs directory at init/order seed `s`,
/// one per K (`linear_k10`, `linear_k10_s1`, …; seed s trains with seed 42 + s).
pub fn linear_names(scale: Scale, s: u32) -> Vec<String> {
    let suffix = if s == 0 { String::new() } else { format!("_s{s}") };
    linear_plan(scale).0.iter().map(|k| format!("linear_k{k}{suffix}")).collect()
}

/// The paper's bound on the z-gap (claim 12: "z-gap < 0.002"): the criterion and the figure
/// placed in the seeds' range.
const Z_GAP_BOUND: f64 = paper::LINEAR_Z_GAP.value;

/// The linear baseline's settings per scale: (K values, n_b, steps).
fn linear_plan(scale: Scale) -> (Vec<usize>, usize, u64) {
    match scale {
        Scale::Paper => (vec![10, 20, 36], 1000, 30_000),
        Scale::Ci => (vec![10], 200, 3000),
    }
}

/// The baseline trains its own small models inside the probe: the suite lists no runs.
pub fn linear_suite(ctx: &Ctx, _suite: &Suite) -> Result<SuiteOutcome> {
    let (ks, n_b, steps) = linear_plan(ctx.scale);
    let (mut rows, mut series, mut detail, mut data) = (vec![], vec![], vec![], vec![]);
    let mut seconds = 0.0;
    let runs_total = ks.len();
    for (k, label) in ks.into_iter().zip(linear_names(ctx.scale, ctx.seed)) {
        let dir = ctx.runs.join(&label);
        let claim = format!("A two-layer linear model never escapes the plateau (K = {k})");
        let paper = paper::LINEAR_Z_GAP.quote;
        let train = || -> Result<LinearReport> {
            let cfg = DataConfig { k, n_b, ..DataConfig::default() };
            let r = train_linear(&cfg, Positions::First, steps, 64, SEED + u64::from(ctx.seed), &mut |_| {})?;
            let json = serde_json::to_string_pretty(&r).expect("serialises");
            crate::train::layout::write_probe_file(&dir, "linear.json", json.as_bytes())?;
            Ok(r)
        };
        let Some(rep) = cached_in(&dir, "linear", &label, ctx.probe_allowed(&label), &mut seconds, train)? else {
            rows.push(Row::incomplete(&claim, paper, "not trained yet"));
            continue;
        };
        let (c, g) = (rep.final_candidate_over_ln_k, rep.max_abs_z_gap_last_quarter);
        rows.push(Row::new(
            &claim,
            paper,
            format!("candidate loss {c:.3} × ln K after {} steps; max |z-gap| {g:.4}", rep.steps),
            Verdict::grade(c > 0.8, c > 0.95 && g < Z_GAP_BOUND),
            "the first-target linear readout of (B, z) one-hots; replicated: candidate loss > 0.95·ln K and z-gap < 0.002, \
             differs: > 0.8·ln K; a larger z-gap is each selector's first-character frequencies in a finite sample",
        )
        .with("candidate_over_ln_k", c)
        .with("max_abs_z_gap", g)
        .measured("max |z-gap| (nats)", &[g], (0.0, Z_GAP_BOUND)));
        series.push(Series::line(
            format!("K = {k}: candidate / ln K"),
            rep.points.iter().map(|p| (p.step as f64, p.candidate_loss / rep.ln_k)).collect(),
        ));
        detail.push(vec![k.to_string(), n_b.to_string(), rep.steps.to_string(), format!("{c:.3}"), format!("{g:.4}")]);
        data.push(json!({"k": k, "final_candidate_over_ln_k": c, "max_abs_z_gap": g}));
    }
    let p = LinePlot {
        title: "Linear baseline: candidate loss / ln K".into(),
        x_label: "step".into(),
        y_label: "candidate loss / ln K".into(),
        series,
        hlines: vec![(1.0, "ln K".into())],
        ..Default::default()
    };
    let figures = vec![ctx.figure("linear.svg", &line_plot(&p)?)?];
    let mut o =
        outcome("linear", &[], rows, figures, table(&["K", "n_b", "steps", "cand / ln K", "max |z-gap|"], &detail));
    o.compute_seconds = seconds;
    // The linear runs are not transformer runs (no RunData), so they are counted here.
    o.runs_total = runs_total;
    o.runs_complete = o.rows.iter().filter(|r| r.verdict != Verdict::Incomplete).count();
    o.data = json!(data);
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linear_suite_counts_its_runs_and_their_seconds() {
        let root = std::env::temp_dir().join(format!("wt-linear-suite-{}", std::process::id()));
        let k10 = root.join("runs/linear_k10");
        std::fs::create_dir_all(&k10).unwrap();
        // Built here, not copied from results/: the test must not depend on which runs are committed.
        let ln_k = crate::train::tau::Thresholds::new(10).ln_k;
        let point = |step| crate::probes::linear::LinearPoint {
            step,
            train_loss: 2.4,
            candidate_loss: 0.98 * ln_k,
            z_gap: 0.03,
        };
        let report = crate::probes::linear::LinearReport {
            positions: crate::probes::linear::Positions::First,
            k: 10,
            n_b: 1000,
            ln_k,
            d_hidden: 64,
            steps: 30000,
            points: vec![point(29_500), point(30_000)],
            final_candidate_over_ln_k: 0.98,
            max_abs_z_gap_last_quarter: 0.03,
        };
        crate::train::layout::write_probe_file(&k10, "linear.json", serde_json::to_string(&report).unwrap().as_bytes())
            .unwrap();
        crate::train::layout::write_probe_file(&k10, "linear.seconds", b"12.5\n").unwrap();
        // Seed 1's models are their own results, named by seed.
        let k20_s1 = root.join("runs/linear_k20_s1");
        crate::train::layout::write_probe_file(
            &k20_s1,
            "linear.json",
            serde_json::to_string(&report).unwrap().as_bytes(),
        )
        .unwrap();
        let ctx = Ctx {
            scale: Scale::Paper,
            configs: super::super::configs::Configs::from_arg(None),
            runs: root.join("runs"),
            figures: root.join("figures"),
            run_probes: false,
            only: vec![],
            seeds: None,
            seed: 0,
            seeded_only: false,
        };
        std::fs::create_dir_all(&ctx.figures).unwrap();
        let suite = Suite {
            name: "linear",
            paper: Vec::new,
            ci: Vec::new,
            seeded: None,
            analyse: linear_suite,
            reads_probes: true,
            probe_models: Some(linear_names),
        };
        let o = suite.grade(&ctx).unwrap();
        let s1 = suite.grade(&Ctx { seed: 1, ..ctx.clone() }).unwrap();
        std::fs::remove_dir_all(&root).ok();
        let s1: Vec<Verdict> = s1.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(s1[0], Verdict::Incomplete, "seed 1 does not read seed 0's K = 10");
        assert_ne!(s1[1], Verdict::Incomplete, "seed 1's K = 20");
        let m = o.rows[0].measure.as_ref().expect("the z-gap is placed in the seeds' range");
        assert_eq!((m.values.as_slice(), m.paper), ([0.03].as_slice(), (0.0, 0.002)));
        assert_eq!((o.runs_complete, o.runs_total), (1, 3), "K = 10 trained, K = 20 and 36 not");
        assert_eq!(o.compute_seconds, 12.5);
        let verdicts: Vec<Verdict> = o.rows.iter().map(|r| r.verdict).collect();
        assert_ne!(verdicts[0], Verdict::Incomplete);
        assert_eq!(&verdicts[1..], &[Verdict::Incomplete, Verdict::Incomplete]);
    }
}
