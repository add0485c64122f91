//! One training run in a run directory, start to finish: create or resume, train with progress
//! reporting, write the summary. Shared by `windtunnel train` and `windtunnel replicate`.

use super::progress::Progress;
use super::rundir::{RunDir, Summary};
use super::trainer::Trainer;
use crate::config::RunConfig;
use crate::error::Result;
use crate::io::weights;
use crate::numerics::{Dtype, Scalar};
use std::path::Path;

/// How to open the run directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// A new run; an existing non-empty directory is an error unless `force` (then replaced).
    Create { force: bool },
    /// Continue the run in the directory from its last checkpoint; `other_revision`: even if
    /// another revision trained it so far.
    Resume { other_revision: bool },
}

/// Train `cfg` in `dir` with scalar type S and return the summary.
pub fn run_session<S: Scalar>(
    cfg: RunConfig,
    dir: &Path,
    open: Open,
    mut progress: Box<dyn Progress>,
) -> Result<Summary> {
    let cfg = match open {
        Open::Resume { .. } => super::inputs::against_run(cfg, dir),
        Open::Create { .. } => super::inputs::absolute(cfg)?,
    };
    // A resume state holds the weights: train.init is not read (its file may have moved since).
    let from_state = matches!(open, Open::Resume { .. }) && super::layout::resume(dir).exists();
    let init = if from_state { "seed:0" } else { cfg.train.init.as_str() };
    if !init.starts_with("seed:") && !Path::new(init).exists() {
        return Err(crate::error::Error::config("train.init", format!("cannot read {init}: no such file")));
    }
    let model = weights::init_model::<S>(init, &cfg.model)?;
    let mut trainer = Trainer::new(cfg, model, Path::new("."))?;
    let mut rundir = match open {
        Open::Resume { other_revision } => RunDir::resume(dir, &mut trainer, other_revision)?,
        Open::Create { force } => RunDir::create(dir, &trainer.cfg, S::NAME, force)?,
    };
    trainer.run_reporting(&mut rundir, progress.as_mut())?;
    rundir.finish(&trainer)
}

/// Train with a run's dtype.
pub fn run_session_dtype(
    cfg: RunConfig,
    dtype: Dtype,
    dir: &Path,
    open: Open,
    progress: Box<dyn Progress>,
) -> Result<Summary> {
    crate::with_scalar!(dtype, S => run_session::<S>(cfg, dir, open, progress))
}
