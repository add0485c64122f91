//! The run directory: `config.toml` (resolved), `manifest.json`, `metrics.jsonl`,
//! `summary.json`, `checkpoints/`, `resume.safetensors`.

use super::checkpoint::{TrainState, load_resume, save_params, save_resume};
use super::record::Record;
use super::trainer::{Sink, Trainer};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::io::tensors::write_atomic;
use crate::numerics::Scalar;
use crate::optim::{AdamW, AdamWParams};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use super::manifest::{Manifest, Segment, simd_compiled, simd_cpu};
pub use super::summary::Summary;

/// Temp files of writes a kill interrupted (`.<name>.<pid>.tmp`, see `write_atomic`).
fn remove_orphan_temp_files(run: &Path) {
    for dir in [run.to_path_buf(), super::layout::checkpoints(run)] {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.ends_with(".tmp") {
                std::fs::remove_file(e.path()).ok();
            }
        }
    }
}

/// Writes a run directory as the trainer goes.
pub struct RunDir {
    pub path: PathBuf,
    metrics: std::fs::File,
}

/// `--force` deletes only what is recognisably a windtunnel run: a directory holding a run
/// manifest and nothing but a run's files. Anything else (a user's folder, `.`, a home
/// directory) is refused and left untouched.
fn refuse_unless_a_run(path: &Path) -> Result<()> {
    let is_manifest = Manifest::read(path).is_ok();
    let foreign = super::layout::foreign_files(path)?;
    if is_manifest && foreign.is_empty() {
        return Ok(());
    }
    let why = if is_manifest {
        format!("it also holds files no run writes ({})", foreign.join(", "))
    } else {
        "it has no run manifest (manifest.json)".to_string()
    };
    Err(Error::refused(format!(
        "--force deletes only windtunnel run directories, and {} is not one: {why}. Nothing was deleted; choose \
         another --out",
        path.display()
    )))
}

impl RunDir {
    /// Create a new run directory. An existing non-empty one is an error unless `force`, which
    /// deletes it first — only if it is a run directory.
    pub fn create(path: &Path, cfg: &RunConfig, dtype: &str, force: bool) -> Result<Self> {
        if path.exists() && std::fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(true) {
            if !force {
                return Err(Error::refused(format!(
                    "run directory {} already exists; use --resume {} to continue it or --force to start over",
                    path.display(),
                    path.display()
                )));
            }
            refuse_unless_a_run(path)?;
            std::fs::remove_dir_all(path).map_err(|e| Error::io(path, e))?;
        }
        std::fs::create_dir_all(super::layout::checkpoints(path)).map_err(|e| Error::io(path, e))?;
        write_atomic(&super::layout::config(path), cfg.to_toml().as_bytes())?;
        let mut m = Manifest::current(dtype);
        (m.config_toml, m.inputs) = (Some(cfg.to_toml()), super::inputs::hashes(cfg)?);
        m.write(path)?;
        Self::open(path)
    }

    fn open(path: &Path) -> Result<Self> {
        let mp = super::layout::metrics(path);
        let metrics = std::fs::OpenOptions::new().create(true).append(true).open(&mp).map_err(|e| Error::io(&mp, e))?;
        Ok(RunDir { path: path.to_path_buf(), metrics })
    }

    /// The config and dtype of an existing run.
    pub fn read_config(path: &Path) -> Result<(RunConfig, String)> {
        Ok((super::layout::read_config(path)?, Manifest::read(path)?.dtype))
    }

    /// Reopen a run for resuming: load `resume.safetensors` into `trainer`, drop metric
    /// records newer than the resumed step (they are regenerated identically) and record the
    /// new training segment. `other_revision`: allow a build of another revision to continue it.
    pub fn resume<S: Scalar>(path: &Path, trainer: &mut Trainer<S>, other_revision: bool) -> Result<Self> {
        let mut m = Manifest::read(path)?;
        m.check_resumable(path, other_revision)?;
        let from_state = super::layout::resume(path).exists();
        super::inputs::check(path, &trainer.cfg, m.config_toml.as_deref(), &m.inputs, from_state)?;
        remove_orphan_temp_files(path);
        if !from_state {
            // Killed before its first resume state: starting over from step 0 gives the same bits.
            write_atomic(&super::layout::metrics(path), b"")?;
            m.resumed(0);
            m.write(path)?;
            return Self::open(path);
        }
        let hp = AdamWParams::of(&trainer.cfg.train);
        let mut opt = AdamW::new(hp, trainer.model.layout.total);
        let (model, state) = load_resume(path, &trainer.cfg.model, &mut opt)?;
        let mp = super::layout::metrics(path);
        let kept: Vec<Record> =
            super::layout::read_metrics_for_resume(path)?.into_iter().filter(|r| r.step <= state.step).collect();
        // A gap before the resume state cannot be regenerated: refuse before anything is written.
        super::layout::check_metrics(path, &kept, trainer.cfg.train.eval_every)?;
        let text: String = kept.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        write_atomic(&mp, text.as_bytes())?;
        m.resumed(state.step);
        m.write(path)?;
        trainer.restore(model, opt, state);
        Self::open(path)
    }

    /// Write `summary.json` and the loss curves, and return the summary.
    pub fn finish<S: Scalar>(&self, trainer: &Trainer<S>) -> Result<Summary> {
        let records = super::layout::read_metrics(&self.path)?;
        super::layout::check_metrics(&self.path, &records, trainer.cfg.train.eval_every)?;
        let s = summarize(&records, &trainer.state, &trainer.cfg, trainer.train.len());
        write_atomic(&super::layout::summary(&self.path), serde_json::to_string_pretty(&s).unwrap().as_bytes())?;
        let name = self.path.file_name().map_or("run".into(), |n| n.to_string_lossy().into_owned());
        let title = format!("{name} (K = {}, D = {})", s.k, s.d);
        let fig = crate::plot::line_plot(&super::figure::loss_curve(title, s.ln_k, &records, &s.taus))?;
        fig.save(&super::layout::loss_figure(&self.path))?;
        Ok(s)
    }
}

impl<S: Scalar> Sink<S> for RunDir {
    fn record(&mut self, _: &Trainer<S>, r: &Record) -> Result<()> {
        let mp = super::layout::metrics(&self.path);
        writeln!(self.metrics, "{}", serde_json::to_string(r).unwrap()).map_err(|e| Error::io(&mp, e))?;
        self.metrics.flush().map_err(|e| Error::io(&mp, e))?;
        Ok(())
    }

    fn checkpoint(&mut self, t: &Trainer<S>) -> Result<()> {
        save_params(&self.path, &t.model, t.state.step)?;
        save_resume(&self.path, &t.model, &t.opt, &t.state)
    }

    /// Only the resume state: the checkpoint files stay those of an uninterrupted run.
    fn interrupt(&mut self, t: &Trainer<S>) -> Error {
        match save_resume(&self.path, &t.model, &t.opt, &t.state) {
            Ok(()) => Error::Interrupted { step: t.state.step, run: Some(self.path.clone()) },
            Err(e) => e,
        }
    }
}

/// The summary of a run from its records and final state.
pub fn summarize(records: &[Record], state: &TrainState, cfg: &RunConfig, d: usize) -> Summary {
    let t = super::tau::taus(records, cfg.data.k);
    let p = super::tau::plateau(records, cfg.data.k, t.t1);
    Summary {
        steps: state.step,
        stopped: state.stopped.clone(),
        k: cfg.data.k,
        d,
        ln_k: super::tau::Thresholds::new(cfg.data.k).ln_k,
        taus: t,
        plateau: p,
        final_record: records.last().cloned(),
        train_seconds: state.train_seconds,
        eval_seconds: state.eval_seconds,
        eval_overhead: if state.train_seconds > 0.0 { state.eval_seconds / state.train_seconds } else { 0.0 },
        steps_per_s: if state.train_seconds > 0.0 {
            state.step as f64 / (state.train_seconds + state.eval_seconds)
        } else {
            0.0
        },
    }
}
