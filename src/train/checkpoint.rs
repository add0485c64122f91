//! Checkpoints, written atomically (temp file + fsync + rename: a run killed mid-write leaves the
//! previous file, never a truncated one).
//!
//! - `checkpoints/step_NNNNNNNN.safetensors`: parameters under TL names (loadable by
//!   TransformerLens and by `--init`), at step 0, every power of two, every `checkpoint_every`
//!   steps and at the end.
//! - `resume.safetensors`: the latest state needed to continue bit-exactly — parameters, Adam
//!   moments (`adam.m.<name>`, `adam.v.<name>`), and in the metadata the step (which is also the
//!   data cursor: batch order, z-shuffles and candidate evals are functions of the step), Adam's
//!   update count, the running eval-window sums and the stopping counters.

use super::record::Window;
use crate::error::{Error, Result};
use crate::io::tensors::{self, Tensor};
use crate::io::weights::{FileMeta, param_tensors};
use crate::model::{Model, ModelConfig};
use crate::numerics::Scalar;
use crate::optim::AdamW;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Everything besides tensors that determines how training continues.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// Optimizer steps completed (the data cursor).
    pub step: u64,
    pub examples_seen: u64,
    pub window: Window,
    pub last_lr: f64,
    /// Consecutive evals below the early-stop threshold.
    pub early_stop_count: u64,
    /// Step at which candidate_loss first fell below 0.5·ln K.
    pub t1_step: Option<u64>,
    /// First steps with first_target_loss < 0.5·ln K (T2) and candidate_loss < 0.05·ln K (the
    /// end of the T3 window); absent in resume files written before they were tracked.
    #[serde(default)]
    pub t2_step: Option<u64>,
    #[serde(default)]
    pub t3_end_step: Option<u64>,
    /// First step with first_target_loss < 0.9·ln K (T4).
    #[serde(default)]
    pub t4_step: Option<u64>,
    /// The first logged first-target loss, and the first step below 0.1 × it (the lag).
    #[serde(default)]
    pub first_target_at_first_eval: Option<f64>,
    #[serde(default)]
    pub lag_step: Option<u64>,
    /// Why the run stopped, once it has.
    pub stopped: Option<String>,
    /// Seconds spent training and evaluating, summed over sessions.
    pub train_seconds: f64,
    pub eval_seconds: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct ResumeMeta {
    #[serde(flatten)]
    file: FileMeta,
    adam_t: u64,
    state: TrainState,
}

/// The step a run resumes at: its resume state's, from the file's header.
pub fn resume_step(run: &Path) -> Option<u64> {
    let meta = tensors::read_metadata(&super::layout::resume(run))?;
    Some(serde_json::from_str::<ResumeMeta>(&meta).ok()?.state.step)
}

pub fn checkpoint_path(run: &Path, step: u64) -> PathBuf {
    super::layout::checkpoint(run, step)
}

/// Whether a parameters checkpoint is due after `step` completed steps.
pub fn is_checkpoint_step(step: u64, every: u64, max_steps: u64) -> bool {
    step == 0 || step.is_power_of_two() || step.is_multiple_of(every) || step == max_steps
}

/// A state with a NaN or infinity is never written: it would replace the last good one.
fn refuse_non_finite<S: Scalar>(what: &str, step: u64, slices: &[&[S]]) -> Result<()> {
    match slices.iter().flat_map(|v| v.iter()).position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::Diverged {
            step,
            message: format!(
                "the {what} at step {step} holds a non-finite value (element {i}); it was not written, so the last \
                 good one is kept"
            ),
        }),
    }
}

pub fn save_params<S: Scalar>(run: &Path, model: &Model<S>, step: u64) -> Result<()> {
    refuse_non_finite("parameters", step, &[&model.params])?;
    let mut meta: serde_json::Value =
        serde_json::from_str(&FileMeta::new("checkpoint", &model.cfg, S::NAME).to_json()).unwrap();
    meta["step"] = step.into();
    let path = checkpoint_path(run, step);
    std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| Error::io(&path, e))?;
    tensors::write(&path, &param_tensors(model), Some(&meta.to_string()))
}

pub fn save_resume<S: Scalar>(run: &Path, model: &Model<S>, opt: &AdamW<S>, state: &TrainState) -> Result<()> {
    refuse_non_finite("resume state", state.step, &[&model.params, &opt.m, &opt.v])?;
    let mut ts = param_tensors(model);
    for (i, e) in model.layout.entries.iter().enumerate() {
        ts.push(Tensor::from_scalars(format!("adam.m.{}", e.name), e.shape.clone(), model.layout.view(&opt.m, i)));
        ts.push(Tensor::from_scalars(format!("adam.v.{}", e.name), e.shape.clone(), model.layout.view(&opt.v, i)));
    }
    let meta = ResumeMeta { file: FileMeta::new("resume", &model.cfg, S::NAME), adam_t: opt.t, state: state.clone() };
    tensors::write(&super::layout::resume(run), &ts, Some(&serde_json::to_string(&meta).unwrap()))
}

/// Load `resume.safetensors` into a model and optimizer of the given config and dtype.
pub fn load_resume<S: Scalar>(run: &Path, cfg: &ModelConfig, opt: &mut AdamW<S>) -> Result<(Model<S>, TrainState)> {
    let path = super::layout::resume(run);
    if !path.exists() {
        return Err(Error::format(&path, "missing: the run has no resumable state (was it started by this version?)"));
    }
    let file = tensors::read(&path)?;
    let meta: ResumeMeta = file
        .metadata
        .as_deref()
        .and_then(|m| serde_json::from_str(m).ok())
        .ok_or_else(|| Error::format(&path, "no readable resume metadata"))?;
    if meta.file.dtype != S::NAME {
        return Err(Error::format(
            &path,
            // The dtype a resume uses is the manifest's (`--dtype` cannot change it): the files disagree.
            format!(
                "holds {} state but the run's manifest.json says {}: the two files disagree (restore the run's own \
                 manifest.json and resume.safetensors, or retrain with --force)",
                meta.file.dtype,
                S::NAME
            ),
        ));
    }
    let model = crate::io::weights::model_from_file::<S>(&file, &path, Some(cfg))?;
    for (i, e) in model.layout.entries.iter().enumerate() {
        for (prefix, dst) in [("adam.m.", &mut opt.m), ("adam.v.", &mut opt.v)] {
            let t = file
                .get(&format!("{prefix}{}", e.name))
                .ok_or_else(|| Error::format(&path, format!("missing {prefix}{}", e.name)))?;
            let vals = t
                .to_scalars::<S>()
                .ok_or_else(|| Error::format(&path, format!("{prefix}{} is not a float tensor", e.name)))?;
            if vals.len() != e.len {
                return Err(Error::format(
                    &path,
                    format!("{prefix}{} has {} values, expected {}", e.name, vals.len(), e.len),
                ));
            }
            refuse_poisoned(&path, &format!("{prefix}{}", e.name), &vals, prefix == "adam.v.")?;
            model.layout.view_mut(dst, i).copy_from_slice(&vals);
        }
        refuse_poisoned(&path, &e.name, model.layout.view(&model.params, i), false)?;
    }
    opt.t = meta.adam_t;
    Ok((model, meta.state))
}

/// A resume state is written only when finite, so a NaN, an infinity or a negative second moment
/// means the file was damaged: named now, not found steps later as a divergence.
fn refuse_poisoned<S: Scalar>(path: &Path, name: &str, vals: &[S], second_moment: bool) -> Result<()> {
    let bad = |x: &S| !x.is_finite() || (second_moment && x.value() < 0.0);
    match vals.iter().position(bad) {
        None => Ok(()),
        Some(j) => Err(Error::format(
            path,
            format!(
                "{name} element {j} is {}: the resume state is damaged (it is written only when finite{}); \
                 retrain with --force, or restore the file",
                vals[j].value(),
                if second_moment { ", Adam's second moments ≥ 0" } else { "" }
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::TrainState;

    #[test]
    fn a_non_finite_state_is_never_written_over_the_last_good_one() {
        use crate::model::{Model, ModelConfig};
        let dir = std::env::temp_dir().join(format!("wt-nonfinite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cfg = ModelConfig { d_model: 8, n_heads: 2, d_head: 4, d_mlp: 16, n_layers: 1, ..ModelConfig::default() };
        let mut model = Model::<f32>::init(&cfg, 1);
        super::save_params(&dir, &model, 3).unwrap();
        let good = std::fs::read(super::checkpoint_path(&dir, 3)).unwrap();
        model.params[5] = f32::NAN;
        let e = super::save_params(&dir, &model, 3).unwrap_err().to_string();
        assert!(e.contains("non-finite") && e.contains("element 5"), "{e}");
        assert_eq!(std::fs::read(super::checkpoint_path(&dir, 3)).unwrap(), good, "the good checkpoint is untouched");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resume_state_written_before_t2_and_t3_were_tracked_still_loads() {
        let old = r#"{"step":9000,"examples_seen":1,"window":{"n":0,"loss":0.0,"accuracy":0.0,
            "first_target_loss":0.0,"grad_norm_sq":0.0,"grad_norm_sq_clipped":0.0,"clipped":0},
            "last_lr":0.001,"early_stop_count":0,"t1_step":6700,"stopped":null,
            "train_seconds":1.0,"eval_seconds":0.5}"#;
        match serde_json::from_str::<TrainState>(old) {
            Ok(s) => assert_eq!((s.step, s.t1_step, s.t2_step, s.t3_end_step), (9000, Some(6700), None, None)),
            Err(e) => panic!("old resume state rejected: {e}"),
        }
    }
}
