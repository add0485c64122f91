//! Hessian spectra along training (spec §7.8, §11, claim 9), computed exactly (dual-number HVPs
//! in f64 from the f32 checkpoints) two ways: the paper's power iteration — reproduced as is,
//! including its early stop — and Lanczos with full re-orthogonalisation, with residuals.
//!
//! Batch: the author's 512 examples. Checkpoints (the anisotropy script's schedule, τ = T1): five
//! evenly spaced points in [max(100, 0.2τ), 0.8τ], then 0.9τ, τ, 1.2τ, 2τ and min(3τ, last).

use super::run::RunView;
use crate::error::Result;
use crate::hessian::vec::{dot, norm};
use crate::hessian::{Hvp, lanczos, power_iteration};
use crate::model::Model;
use crate::plot::{LinePlot, Series, line_plot};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HessianPoint {
    pub step: u64,
    pub phase: String,
    pub loss: f64,
    pub grad_norm: f64,
    // The paper's method.
    pub power_lambda_max: f64,
    pub power_lambda_min: f64,
    pub power_iters_max: usize,
    pub power_iters_min: usize,
    pub power_residual_max: f64,
    pub power_residual_min: f64,
    pub power_anisotropy: f64,
    // Lanczos.
    pub lanczos_steps: usize,
    pub lanczos_lambda_max: f64,
    pub lanczos_lambda_min: f64,
    pub lanczos_residual_max: f64,
    pub lanczos_residual_min: f64,
    pub lanczos_anisotropy: f64,
    /// The five smallest and five largest Ritz values.
    pub lanczos_smallest: Vec<f64>,
    pub lanczos_largest: Vec<f64>,
    /// Angle (degrees) between the gradient and the Lanczos λ_min eigenvector.
    pub angle_grad_vmin_deg: f64,
    pub hvps: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HessianReport {
    pub tau_t1: u64,
    pub batch_size: usize,
    pub points: Vec<HessianPoint>,
}

/// `|λ_max| / max(|λ_min|, 1e-10)`, the paper's anisotropy ratio.
pub fn anisotropy(lmax: f64, lmin: f64) -> f64 {
    lmax.abs() / lmin.abs().max(1e-10)
}

pub fn schedule(run: &RunView, tau: u64) -> Vec<u64> {
    let t = tau as f64;
    let (lo, hi) = ((0.2 * t).max(100.0), 0.8 * t);
    let mut targets: Vec<f64> = (0..5).map(|i| lo + (hi - lo) * i as f64 / 4.0).collect();
    targets.extend([0.9 * t, t, 1.2 * t, 2.0 * t, (3.0 * t).min(run.last_step() as f64)]);
    let mut steps: Vec<u64> = targets.into_iter().map(|x| run.snap(x)).collect();
    steps.sort();
    steps.dedup();
    steps
}

pub fn hessian_at(run: &RunView, step: u64, batch_size: usize, lanczos_steps: usize, tau: u64) -> Result<HessianPoint> {
    let t0 = std::time::Instant::now();
    let m32: Model<f32> = run.model(step)?;
    let model: Model<f64> = m32.cast();
    let batch = run.batch(&run.subset(batch_size));
    let mut hvp = Hvp::new(&model, batch);
    let pmax = power_iteration(&mut hvp, 0.0, 0, 50);
    let (loss, grad) = (hvp.loss, hvp.grad.clone());
    let pmin = power_iteration(&mut hvp, pmax.lambda + 1.0, 1, 50);
    let lz = lanczos(&mut hvp, lanczos_steps, 2);
    let (lmin, lmax) = (lz.ritz[0].clone(), lz.ritz.last().unwrap().clone());
    let gnorm = norm(&grad);
    let cos = if gnorm > 0.0 { dot(&grad, &lz.v_min) / gnorm } else { 0.0 };
    let t = tau as f64;
    let phase = if (step as f64) < 0.8 * t {
        "PLATEAU"
    } else if (step as f64) < 1.2 * t {
        "TRANS"
    } else {
        "CONV"
    };
    Ok(HessianPoint {
        step,
        phase: phase.into(),
        loss,
        grad_norm: gnorm,
        power_lambda_max: pmax.lambda,
        power_lambda_min: pmin.lambda,
        power_iters_max: pmax.iters,
        power_iters_min: pmin.iters,
        power_residual_max: pmax.residual,
        power_residual_min: pmin.residual,
        power_anisotropy: anisotropy(pmax.lambda, pmin.lambda),
        lanczos_steps: lz.iters,
        lanczos_lambda_max: lmax.value,
        lanczos_lambda_min: lmin.value,
        lanczos_residual_max: lmax.residual,
        lanczos_residual_min: lmin.residual,
        lanczos_anisotropy: anisotropy(lmax.value, lmin.value),
        lanczos_smallest: lz.ritz.iter().take(5).map(|r| r.value).collect(),
        lanczos_largest: lz.ritz.iter().rev().take(5).map(|r| r.value).collect(),
        angle_grad_vmin_deg: crate::numerics::math::acos(cos.abs().min(1.0)).to_degrees(),
        hvps: hvp.calls,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The points of an interrupted run of the probe (`hessian.partial.json`) that this one would
/// compute again: the same τ, batch and Lanczos length, at the first of the same steps. Each point
/// depends only on its checkpoint, so continuing gives the bits of one pass (`seconds` aside).
fn earlier_points(
    run: &RunView,
    tau: u64,
    batch_size: usize,
    lanczos_steps: usize,
    steps: &[u64],
) -> Result<Vec<HessianPoint>> {
    let Some(partial) = run.read_json::<HessianReport>("hessian.partial")? else { return Ok(vec![]) };
    if partial.tau_t1 != tau || partial.batch_size != batch_size {
        return Ok(vec![]);
    }
    let same = |(p, &s): (&HessianPoint, &u64)| p.step == s && p.lanczos_steps == lanczos_steps;
    Ok(partial.points.iter().zip(steps).take_while(|&x| same(x)).map(|(p, _)| p.clone()).collect())
}

pub fn run_hessian(
    run: &RunView,
    steps: Option<Vec<u64>>,
    batch_size: usize,
    lanczos_steps: usize,
    on_point: &mut dyn FnMut(&HessianPoint),
) -> Result<HessianReport> {
    let tau = run.t1("hessian")?;
    let steps = steps.unwrap_or_else(|| schedule(run, tau));
    let mut points = earlier_points(run, tau, batch_size, lanczos_steps, &steps)?;
    for (i, &s) in steps.iter().enumerate().skip(points.len()) {
        run.note_checkpoint("hessian", i, steps.len(), s);
        let p = hessian_at(run, s, batch_size, lanczos_steps, tau)?;
        on_point(&p);
        points.push(p);
        // Save as we go (each point takes minutes), under another name: `hessian.json` is the
        // complete result, and the report's cache takes any file of that name as complete.
        run.write_json("hessian.partial", &HessianReport { tau_t1: tau, batch_size, points: points.clone() })?;
    }
    let report = HessianReport { tau_t1: tau, batch_size, points };
    run.write_json("hessian", &report)?;
    let _ = std::fs::remove_file(crate::train::layout::probe_result(&run.dir, "hessian.partial"));
    let xs = |f: &dyn Fn(&HessianPoint) -> f64| report.points.iter().map(|p| (p.step as f64, f(p))).collect::<Vec<_>>();
    let p = LinePlot {
        title: format!("Hessian extreme eigenvalues (K = {}, batch {})", run.cfg.data.k, batch_size),
        x_label: "step".into(),
        y_label: "eigenvalue".into(),
        series: vec![
            Series::line("λ_max (power, paper)", xs(&|p| p.power_lambda_max)),
            Series::line("λ_min (power, paper)", xs(&|p| p.power_lambda_min)),
            Series::line("λ_max (Lanczos)", xs(&|p| p.lanczos_lambda_max)),
            Series::line("λ_min (Lanczos)", xs(&|p| p.lanczos_lambda_min)),
        ],
        hlines: vec![(0.0, "0".into())],
        vlines: vec![(tau as f64, "T1".into())],
        ..Default::default()
    };
    run.write_figure("hessian.svg", &line_plot(&p)?)?;
    Ok(report)
}
