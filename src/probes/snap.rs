//! Per-group accuracy and the "collective snap" (spec §7.5, claim 6).
//!
//! `Random(42).sample(bases, 200)` groups (the author's default seed, INFERRED); for each group and
//! *each* of its K selectors, the K candidate targets are scored by sequence log-probability
//! (target characters + EOS) and a hit counts when the correct one scores highest. Group accuracy
//! is hits/K. Checkpoints: `linspace(100, min(1.5·T1, last), 20)` snapped to saved steps.

use super::run::{RunView, snapped_linspace};
use crate::error::Result;
use crate::model::Model;
use crate::plot::{LinePlot, Series, line_plot};
use crate::rng::PyRandom;
use crate::task::tokenizer;
use crate::train::eval::sequence_log_probs;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapPoint {
    pub step: u64,
    pub step_over_tau: f64,
    /// Fraction of groups with accuracy ≥ 0.8, and = 1.0.
    pub frac_ge_08: f64,
    pub frac_eq_1: f64,
    pub mean_accuracy: f64,
    /// Histogram of group accuracy in 10 bins [0, 0.1), …, [0.9, 1.0].
    pub histogram: [usize; 10],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapReport {
    pub tau_t1: u64,
    pub n_groups: usize,
    pub points: Vec<SnapPoint>,
}

pub fn group_accuracies(run: &RunView, model: &Model<f32>, groups: &[usize]) -> Vec<f64> {
    let task = run.cfg.data.task;
    let mut seqs = Vec::new();
    for &g in groups {
        let group = &run.mapping.groups[g];
        for (z, _) in &group.pairs {
            for (_, a) in &group.pairs {
                seqs.push(tokenizer::encode(task, &group.b, z, a));
            }
        }
    }
    let mut ws = model.workspace(256, seqs[0].tokens.len());
    let scores = sequence_log_probs(model, &mut ws, &seqs);
    let k = run.cfg.data.k;
    groups
        .iter()
        .enumerate()
        .map(|(gi, _)| {
            let mut hits = 0;
            for c in 0..k {
                let s = &scores[(gi * k + c) * k..(gi * k + c + 1) * k];
                let best = (0..k).fold(0, |b, j| if s[j] > s[b] { j } else { b });
                hits += (best == c) as usize;
            }
            hits as f64 / k as f64
        })
        .collect()
}

pub fn run_snap(run: &RunView, steps: Option<Vec<u64>>, n_groups: usize) -> Result<SnapReport> {
    let tau = run.t1("snap")?;
    let steps = steps.unwrap_or_else(|| {
        let hi = (1.5 * tau as f64).min(run.last_step() as f64);
        snapped_linspace(run, 100.0, hi, 20)
    });
    let idx: Vec<usize> = (0..run.mapping.groups.len()).collect();
    let groups = PyRandom::new(42).sample(&idx, n_groups.min(idx.len()));
    let mut points = Vec::new();
    for (i, &step) in steps.iter().enumerate() {
        run.note_checkpoint("snap", i, steps.len(), step);
        let model: Model<f32> = run.model(step)?;
        let acc = group_accuracies(run, &model, &groups);
        let n = acc.len() as f64;
        let mut histogram = [0usize; 10];
        for &a in &acc {
            histogram[((a * 10.0) as usize).min(9)] += 1;
        }
        points.push(SnapPoint {
            step,
            step_over_tau: step as f64 / tau as f64,
            frac_ge_08: acc.iter().filter(|&&a| a >= 0.8).count() as f64 / n,
            frac_eq_1: acc.iter().filter(|&&a| a == 1.0).count() as f64 / n,
            mean_accuracy: acc.iter().sum::<f64>() / n,
            histogram,
        });
    }
    let report = SnapReport { tau_t1: tau, n_groups: groups.len(), points };
    run.write_json("snap", &report)?;
    let p = LinePlot {
        title: format!("Per-group accuracy (K = {}, {} groups)", run.cfg.data.k, report.n_groups),
        x_label: "step / T1".into(),
        y_label: "fraction of groups / accuracy".into(),
        series: vec![
            Series::line("groups ≥ 0.8", report.points.iter().map(|p| (p.step_over_tau, p.frac_ge_08)).collect()),
            Series::line("groups = 1.0", report.points.iter().map(|p| (p.step_over_tau, p.frac_eq_1)).collect()),
            Series::line("mean accuracy", report.points.iter().map(|p| (p.step_over_tau, p.mean_accuracy)).collect()),
        ],
        vlines: vec![(1.0, "T1".into())],
        ..Default::default()
    };
    run.write_figure("snap.svg", &line_plot(&p)?)?;
    Ok(report)
}
