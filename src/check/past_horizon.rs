//! A trajectory reference longer than the per-step horizon (`windtunnel horizon`, docs/interop.md
//! §4): on the plateau rounding differences grow exponentially, so past it two correct loops
//! disagree per step and per parameter. Its per-step records are compared over the first
//! `horizon` steps, the parameters after that are set aside, and the waiting times (when the
//! loss descends) are compared instead.

use super::compare::Row;
use crate::io::tensors::{Tensor, TensorFile, Values};
use serde::Serialize;

/// Steps over which two correct f32 loops agree per step: the same windtunnel run with one
/// parameter one ulp up differs in loss by > 1e-6 from step 250 and by > 1e-3 from step 450
/// (canonical K = 10, evaluated every 50 steps; docs/interop.md §4).
pub const HORIZON_F32: usize = 250;
/// The same in f64: the loss differs by more than the f64 preset's 1e-12 from step 400 (> 1e-6
/// from 600, > 1e-3 from 750).
pub const HORIZON_F64: usize = 400;
/// The loss over consecutive windows of this many steps (the trainer's eval cadence).
pub const WINDOW: usize = 50;
/// The descents compared: the first window whose mean loss is below these fractions of the first's.
pub const DESCENT: [f64; 2] = [0.5, 0.1];
/// Waiting times of the 1-ulp runs agree within 7 % in f32 (T1 1850 vs 1900, T2 2500 vs 2650)
/// and within one eval in f64: two correct loops agree within this fraction (or one window).
pub const WAITING_TOL: f64 = 0.10;

/// The per-step records cut at the horizon (the learning rate and data order are kept whole).
const CUT: [&str; 2] = ["losses", "grad_norm_sq"];

/// What was done with a trajectory past its horizon.
#[derive(Clone, Debug, Serialize)]
pub struct PastHorizon {
    pub steps: usize,
    pub horizon: usize,
    pub dtype: &'static str,
    /// Tensors of parameters after the horizon, set aside.
    pub not_judged: Vec<String>,
}

impl PastHorizon {
    pub fn render(&self) -> String {
        let (n, h, d, k) = (self.steps, self.horizon, self.dtype, self.not_judged.len());
        format!(
            "a {n}-step trajectory is past the {d} per-step horizon of {h} steps (docs/interop.md §4): per-step \
             records compared over steps 1–{h}, {k} parameter tensors after step {h} not judged (two correct \
             loops differ there), and the waiting times compared instead\n"
        )
    }
}

/// The horizon of a trajectory whose tensors include F32 ones (else f64).
pub fn horizon(reference: &TensorFile) -> (usize, &'static str) {
    match reference.tensors.iter().any(|t| t.dtype_name() == "F32") {
        true => (HORIZON_F32, "f32"),
        false => (HORIZON_F64, "f64"),
    }
}

/// The step a parameter tensor of a trajectory holds: `step_NNNNNN.<name>` or, for the final
/// parameters, the last step; `None` for the per-step records and the data order.
fn param_step(name: &str, steps: usize) -> Option<usize> {
    if CUT.contains(&name) || name == "lr" || name == "perm" {
        return None;
    }
    match name.strip_prefix("step_").and_then(|r| r.split_once('.')) {
        Some((n, _)) => n.parse().ok(),
        None => Some(steps),
    }
}

/// The first `h` values of a 1-D tensor.
fn head(t: &Tensor, h: usize) -> Tensor {
    let values = match &t.values {
        Values::F32(v) => Values::F32(v[..h.min(v.len())].to_vec()),
        Values::F64(v) => Values::F64(v[..h.min(v.len())].to_vec()),
        Values::I64(v) => Values::I64(v[..h.min(v.len())].to_vec()),
        Values::Other(d) => Values::Other(d.clone()),
    };
    Tensor { name: t.name.clone(), shape: vec![h.min(t.numel())], values }
}

/// Cut both files of a trajectory longer than its horizon; `None` (nothing changed) within it.
pub fn cut(reference: &mut TensorFile, other: &mut TensorFile) -> Option<PastHorizon> {
    let steps = reference.get("losses")?.numel();
    let (h, dtype) = horizon(reference);
    if steps <= h || reference.get("lr").is_none() {
        return None;
    }
    let past = |name: &str| param_step(name, steps).is_some_and(|s| s > h);
    let not_judged = reference.tensors.iter().filter(|t| past(&t.name)).map(|t| t.name.clone()).collect();
    for file in [reference, other] {
        file.tensors.retain(|t| !past(&t.name));
        for t in file.tensors.iter_mut().filter(|t| CUT.contains(&t.name.as_str()) && t.shape.len() == 1) {
            *t = head(t, h);
        }
    }
    Some(PastHorizon { steps, horizon: h, dtype, not_judged })
}

/// The step (end of the first window) at which the mean loss falls below `fraction` of the first
/// window's mean; `None` when it never does.
pub fn descent(losses: &[f64], fraction: f64) -> Option<usize> {
    let mut windows = losses.chunks_exact(WINDOW).map(|w| w.iter().sum::<f64>() / WINDOW as f64);
    let first = windows.next()?;
    windows.position(|m| m < fraction * first).map(|i| (i + 2) * WINDOW)
}

/// One row per descent: the two loops' steps, passing when they agree within [`WAITING_TOL`] (or
/// one window), or when neither descends.
pub fn waiting_rows(reference: &[f64], other: &[f64]) -> Vec<Row> {
    DESCENT
        .iter()
        .map(|&f| {
            let (r, o) = (descent(reference, f), descent(other, f));
            let (pass, delta, note) = match (r, o) {
                (Some(r), Some(o)) => {
                    let d = r.abs_diff(o) as f64;
                    (d <= (WAITING_TOL * r as f64).max(WINDOW as f64), d, format!("step {r} vs {o}"))
                }
                (None, None) => (true, 0.0, format!("neither within {} steps", reference.len())),
                (r, o) => (false, f64::INFINITY, format!("step {r:?} vs {o:?}")),
            };
            let rel = r.map_or(0.0, |r| delta / r as f64);
            let note = format!("{note}: within {:.0} % or {WINDOW} steps", WAITING_TOL * 100.0);
            Row {
                name: format!("waiting: loss < {f}·first"),
                shape: vec![],
                max_abs: delta,
                max_rel: rel,
                norm_rel: rel,
                pass,
                note,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plateau at 3 that snaps to 0.2 at step `snap`.
    fn curve(n: usize, snap: usize) -> Vec<f64> {
        (1..=n).map(|s| if s < snap { 3.0 } else { 0.2 }).collect()
    }

    #[test]
    fn a_descent_is_the_first_window_below_the_fraction() {
        assert_eq!(descent(&curve(1000, 500), 0.5), Some(550), "the window 501–550 is the first all below");
        assert_eq!(descent(&curve(1000, 5000), 0.5), None);
        assert_eq!(descent(&curve(30, 10), 0.5), None, "shorter than two windows");
    }

    #[test]
    fn waiting_times_pass_within_the_tolerance_and_fail_beyond_it() {
        let rows = waiting_rows(&curve(3000, 2000), &curve(3000, 2150));
        assert!(rows.iter().all(|r| r.pass), "150 of 2050 steps: inside 10 %");
        let rows = waiting_rows(&curve(3000, 2000), &curve(3000, 2300));
        assert!(rows.iter().all(|r| !r.pass), "300 of 2050: outside");
        assert!(rows[0].note.contains("step 2050 vs 2350"), "{}", rows[0].note);
        assert!(waiting_rows(&curve(3000, 100), &curve(3000, 140)).iter().all(|r| r.pass), "one window");
        assert!(waiting_rows(&curve(900, 5000), &curve(900, 5000)).iter().all(|r| r.pass), "neither descends");
        assert!(waiting_rows(&curve(3000, 2000), &curve(3000, 5000)).iter().all(|r| !r.pass), "one never does");
    }

    fn traj(steps: usize) -> TensorFile {
        let mut tensors = vec![
            Tensor::from_scalars("losses", vec![steps], &vec![1.0f64; steps]),
            Tensor::from_scalars("lr", vec![steps], &vec![1e-3f64; steps]),
            Tensor::from_scalars("embed.W_E", vec![2], &[1.0f32, 2.0]),
            Tensor::from_scalars("step_000100.embed.W_E", vec![2], &[1.0f32, 2.0]),
            Tensor::from_scalars("step_000300.embed.W_E", vec![2], &[1.0f32, 2.0]),
        ];
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        TensorFile { tensors, metadata: None }
    }

    #[test]
    fn a_trajectory_is_cut_only_past_its_horizon() {
        let (mut r, mut o) = (traj(HORIZON_F32), traj(HORIZON_F32));
        assert!(cut(&mut r, &mut o).is_none(), "at the horizon: compared as it is");
        assert_eq!(r.tensors.len(), 5);
        let (mut r, mut o) = (traj(HORIZON_F32 + 1), traj(HORIZON_F32 + 1));
        let p = cut(&mut r, &mut o).expect("one step past");
        assert_eq!(p.not_judged, ["embed.W_E", "step_000300.embed.W_E"]);
        for f in [&r, &o] {
            let names: Vec<&str> = f.tensors.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["losses", "lr", "step_000100.embed.W_E"]);
            assert_eq!(f.get("losses").unwrap().shape, [HORIZON_F32]);
            assert_eq!(f.get("lr").unwrap().shape, [HORIZON_F32 + 1], "the schedule is compared whole");
        }
        assert!(p.render().contains("compared over steps 1–250, 2 parameter tensors after step 250 not judged"));
    }
}
