//! Weight displacement and direction consistency (spec §7.9, claim 11): for checkpoints at
//! multiples of 200 steps, Δ_t = θ(t) − θ(t−200); its norm, its norm relative to ‖θ(t−200)‖,
//! per-component norms, and cos(Δ_t, Δ_{t−200}). Phases by τ = T2 (as the author; T1 when the
//! run never reached T2; none yet: the points without phases): plateau t < τ/2, pre-transition
//! τ/2 ≤ t < τ, post t ≥ τ. A report on a run whose early checkpoints are gone continues the
//! run's earlier report (a 50,000-step run trained across sessions).

use super::run::RunView;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::numerics::math::sqrt;
use crate::plot::{LinePlot, Series, line_plot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const STRIDE: u64 = 200;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DisplacementPoint {
    pub step: u64,
    pub norm: f64,
    pub relative: f64,
    /// Norm per component: embed, attn, mlp, ln, unembed.
    pub components: BTreeMap<String, f64>,
    /// cos(Δ_t, Δ_{t−200}); absent for the first Δ.
    pub cosine: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseMeans {
    pub phase: String,
    pub n: usize,
    /// None when the phase holds no displacement (τ shorter than a few 200-step windows).
    pub norm_mean: Option<f64>,
    pub norm_std: Option<f64>,
    /// None when the phase holds no pair of consecutive displacements.
    pub cosine_mean: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DisplacementReport {
    /// None while the run has reached neither T2 nor T1: the points are measured, the phases wait.
    pub tau: Option<u64>,
    pub tau_definition: String,
    pub points: Vec<DisplacementPoint>,
    pub phases: Vec<PhaseMeans>,
    /// Points carried over from an earlier report on the same run whose checkpoints are gone.
    #[serde(default)]
    pub from_earlier_report: usize,
}

impl DisplacementReport {
    /// Whether the points reach the run's last 200-step checkpoint (a report written part way
    /// through a long run is continued, not graded).
    pub fn reaches(&self, last_step: u64) -> bool {
        self.points.last().is_some_and(|p| p.step >= last_step - last_step % STRIDE)
    }

    /// Whether the points start at the run's beginning (the first displacement ends at step 200,
    /// or 400 without a step-0 checkpoint): without them the plateau phase is not the plateau's.
    pub fn starts_at_the_beginning(&self) -> bool {
        self.points.first().is_some_and(|p| p.step <= 2 * STRIDE)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
}

/// The mean, or None for no values (an empty phase is not a phase with zero displacement).
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Points from the checkpoints at multiples of [`STRIDE`]; a gap in them restarts the cosine chain.
fn measure_points(run: &RunView, steps: &[u64]) -> Result<Vec<DisplacementPoint>> {
    let mut prev: Option<(u64, Model<f32>)> = None;
    let mut prev_delta: Option<Vec<f32>> = None;
    let mut points = vec![];
    for (i, &s) in steps.iter().enumerate() {
        if i % 25 == 0 {
            run.note_checkpoint("displacement", i, steps.len(), s);
        }
        let m: Model<f32> = run.model(s)?;
        match &prev {
            Some((ps, p)) if s - ps == STRIDE => {
                let delta: Vec<f32> = m.params.iter().zip(&p.params).map(|(a, b)| a - b).collect();
                let norm = sqrt(dot(&delta, &delta));
                points.push(DisplacementPoint {
                    step: s,
                    norm,
                    relative: norm / sqrt(dot(&p.params, &p.params)),
                    components: component_norms(&m, &delta),
                    cosine: prev_delta.as_ref().map(|pd| dot(&delta, pd) / (norm * sqrt(dot(pd, pd)))),
                });
                prev_delta = Some(delta);
            }
            _ => prev_delta = None,
        }
        prev = Some((s, m));
    }
    Ok(points)
}

fn component_norms(m: &Model<f32>, delta: &[f32]) -> BTreeMap<String, f64> {
    let mut components: BTreeMap<String, f64> = BTreeMap::new();
    for (i, e) in m.layout.entries.iter().enumerate() {
        let d = &delta[e.offset..e.offset + e.len];
        *components.entry(m.layout.component(i).to_string()).or_default() += dot(d, d);
    }
    components.values_mut().for_each(|v| *v = sqrt(*v));
    components
}

/// The points of an earlier report on this run continued by the points measured now, when the
/// checkpoints before the last two are gone (a 50,000-step run trained across sessions keeps only
/// its last two; 250 checkpoints do not travel). The measured chain must contain the earlier
/// report's last step with bit-identical norm: the same training, continued. Returns the points
/// and how many came from the earlier report.
pub fn continue_points(
    earlier: &[DisplacementPoint],
    measured: Vec<DisplacementPoint>,
) -> std::result::Result<(Vec<DisplacementPoint>, usize), String> {
    let Some(last) = earlier.last() else { return Ok((measured, 0)) };
    let Some(overlap) = measured.iter().find(|p| p.step == last.step) else {
        let first = measured.first().map_or("none".to_string(), |p| p.step.to_string());
        return Err(format!(
            "the earlier displacement report ends at step {}, but no pair of checkpoints ends there \
             (the measured points start at step {first}); keep the two checkpoints before that step",
            last.step
        ));
    };
    if overlap.norm.to_bits() != last.norm.to_bits() {
        return Err(format!(
            "the earlier displacement report does not belong to these checkpoints (‖Δ‖ at step {} is {} there, \
             {} now); delete it to start over",
            last.step, last.norm, overlap.norm
        ));
    }
    let n = earlier.len();
    let mut points = earlier.to_vec();
    points.extend(measured.into_iter().filter(|p| p.step > last.step));
    Ok((points, n))
}

/// The earlier report's points, when the checkpoints no longer start at the run's beginning.
fn earlier_points(run: &RunView, steps: &[u64]) -> Result<Vec<DisplacementPoint>> {
    if steps.first().is_some_and(|&s| s <= STRIDE) {
        return Ok(vec![]);
    }
    Ok(run.read_json::<DisplacementReport>("displacement")?.map_or(vec![], |r| r.points))
}

/// Plateau t < τ/2, pre-transition τ/2 ≤ t < τ, post t ≥ τ: mean norm and cosine of each.
fn phases(points: &[DisplacementPoint], t: f64) -> Vec<PhaseMeans> {
    [("plateau", 0.0, t / 2.0), ("pre-transition", t / 2.0, t), ("post", t, f64::INFINITY)]
        .iter()
        .map(|&(name, lo, hi)| {
            let sel: Vec<&DisplacementPoint> =
                points.iter().filter(|p| (p.step as f64) >= lo && (p.step as f64) < hi).collect();
            let norms: Vec<f64> = sel.iter().map(|p| p.norm).collect();
            let cs: Vec<f64> = sel.iter().filter_map(|p| p.cosine).collect();
            let mean = mean(&norms);
            let var = mean.and_then(|m| self::mean(&norms.iter().map(|x| (x - m) * (x - m)).collect::<Vec<_>>()));
            PhaseMeans {
                phase: name.into(),
                n: sel.len(),
                norm_mean: mean,
                norm_std: var.map(sqrt),
                cosine_mean: self::mean(&cs),
            }
        })
        .collect()
}

pub fn run_displacement(run: &RunView) -> Result<DisplacementReport> {
    let (tau, def) = match (run.taus.t2, run.taus.t1) {
        (Some(t), _) => (Some(t), "T2"),
        (None, Some(t)) => (Some(t), "T1 (the run never reached T2)"),
        _ => (None, "not reached yet (T2 nor T1): the phases need it"),
    };
    let steps: Vec<u64> = run.steps.iter().copied().filter(|s| s.is_multiple_of(STRIDE)).collect();
    let earlier = earlier_points(run, &steps)?;
    if steps.len() < 3 && earlier.is_empty() {
        return Err(Error::format(
            &run.dir,
            format!("needs at least 3 checkpoints at multiples of {STRIDE} steps; found {}", steps.len()),
        ));
    }
    let measured = measure_points(run, &steps)?;
    let (points, from_earlier_report) = continue_points(&earlier, measured).map_err(|m| Error::format(&run.dir, m))?;
    let phases = tau.map_or(vec![], |tau| phases(&points, tau as f64));
    let report = DisplacementReport { tau, tau_definition: def.into(), points, phases, from_earlier_report };
    run.write_json("displacement", &report)?;
    let rolling = |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        (0..v.len())
            .map(|i| {
                let w = &v[i.saturating_sub(2)..(i + 3).min(v.len())];
                (v[i].0, w.iter().map(|p| p.1).sum::<f64>() / w.len() as f64)
            })
            .collect()
    };
    let cos: Vec<(f64, f64)> = report.points.iter().filter_map(|p| p.cosine.map(|c| (p.step as f64, c))).collect();
    let norms: Vec<(f64, f64)> = report.points.iter().map(|p| (p.step as f64, p.norm)).collect();
    let p = LinePlot {
        title: format!("Weight displacement per {STRIDE} steps (5-point rolling mean), K = {}", run.cfg.data.k),
        x_label: "step".into(),
        y_label: "cos(Δt, Δt−200)  /  ‖Δt‖ (scaled to max 1)".into(),
        series: vec![
            Series::line("direction consistency cos", rolling(cos)),
            Series::line("‖Δt‖ / max", {
                let mx = norms.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-30);
                rolling(norms.into_iter().map(|(x, y)| (x, y / mx)).collect())
            }),
        ],
        vlines: tau.map(|t| (t as f64, format!("τ ({})", report.tau_definition))).into_iter().collect(),
        ..Default::default()
    };
    run.write_figure("displacement.svg", &line_plot(&p)?)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_phase_has_no_mean_rather_than_a_zero_one() {
        assert_eq!(super::mean(&[]), None);
        assert_eq!(super::mean(&[1.0, 2.0]), Some(1.5));
    }
}
