//! The run directory: `config.toml` (resolved), `manifest.json`, `metrics.jsonl`,
//! `summary.json`, `checkpoints/`, `resume.safetensors`.

use super::checkpoint::{TrainState, load_resume, save_params, save_resume};
use super::record::Record;
use super::tau::{Plateau, Taus, plateau, taus};
use super::trainer::{Sink, Trainer};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::io::tensors::write_atomic;
use crate::numerics::Scalar;
use crate::optim::{AdamW, AdamWParams};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Provenance of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub windtunnel_version: String,
    pub git_revision: String,
    /// [`crate::numerics::ARITHMETIC`] of the build that trained the run (absent before v2: 1).
    #[serde(default = "arithmetic_v1")]
    pub arithmetic: u32,
    pub threads: usize,
    /// Widest SIMD extension of this CPU, and the level the binary was compiled for.
    pub simd_cpu: String,
    pub simd_compiled: String,
    /// CPU brand string and the kernels chosen for it (speed only; never the bits).
    #[serde(default)]
    pub cpu: String,
    #[serde(default)]
    pub kernels: String,
    pub dtype: String,
    pub command: Vec<String>,
    pub started_unix_s: u64,
    /// The resolved config the run started with, and the sha256 of each input file by config
    /// key (absent in runs started before they were recorded): `--resume` checks both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_toml: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub inputs: std::collections::BTreeMap<String, String>,
}

fn arithmetic_v1() -> u32 {
    1
}

/// The widest SIMD level of this CPU (`scalar`, `avx2+fma`, `avx512`).
pub fn simd_cpu() -> String {
    crate::numerics::simd::detected().name().into()
}

pub fn simd_compiled() -> String {
    if cfg!(target_feature = "avx512f") {
        "avx512f"
    } else if cfg!(target_feature = "avx2") {
        "avx2"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else {
        "baseline"
    }
    .into()
}

impl Manifest {
    pub fn current(dtype: &str) -> Self {
        Manifest {
            windtunnel_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: env!("WINDTUNNEL_GIT_REV").into(),
            arithmetic: crate::numerics::ARITHMETIC,
            threads: rayon::current_num_threads(),
            simd_cpu: simd_cpu(),
            simd_compiled: simd_compiled(),
            cpu: crate::numerics::simd::cpu_model(),
            kernels: crate::numerics::kernel_summary(),
            dtype: dtype.into(),
            command: std::env::args().collect(),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            config_toml: None,
            inputs: Default::default(),
        }
    }

    /// `manifest.json` of the run directory `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        let mp = super::layout::manifest(dir);
        let text = std::fs::read_to_string(&mp).map_err(|e| Error::io(&mp, e))?;
        serde_json::from_str(&text).map_err(|e| Error::format(&mp, e.to_string()))
    }

    /// Refuse to continue a run trained under another arithmetic: its trajectory would mix two.
    pub fn check_resumable(&self, dir: &Path) -> Result<()> {
        let now = crate::numerics::ARITHMETIC;
        if self.arithmetic == now {
            return Ok(());
        }
        Err(Error::other(format!(
            "{} was trained under arithmetic v{} (windtunnel {} at {}); this build computes arithmetic v{now}, so resuming \
             would mix two arithmetics in one trajectory. Start the run over (--force), or finish it with a v{} build \
             (git checkout {})",
            dir.display(),
            self.arithmetic,
            self.windtunnel_version,
            self.git_revision,
            self.arithmetic,
            self.git_revision.trim_end_matches("-dirty")
        )))
    }
}

/// `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub steps: u64,
    pub stopped: Option<String>,
    pub k: usize,
    pub d: usize,
    pub ln_k: f64,
    pub taus: Taus,
    pub plateau: Option<Plateau>,
    pub final_record: Option<Record>,
    pub train_seconds: f64,
    pub eval_seconds: f64,
    /// eval_seconds / train_seconds.
    pub eval_overhead: f64,
    pub steps_per_s: f64,
}

pub fn summarize(records: &[Record], state: &TrainState, cfg: &RunConfig, d: usize) -> Summary {
    let t = taus(records, cfg.data.k);
    let p = plateau(records, cfg.data.k, t.t1);
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
    /// Told about every step and record (progress display).
    pub progress: Box<dyn super::session::Progress>,
}

/// `--force` deletes only what is recognisably a windtunnel run: a directory holding a run
/// manifest and nothing but a run's files. Anything else (a user's folder, `.`, a home
/// directory) is refused and left untouched.
fn refuse_unless_a_run(path: &Path) -> Result<()> {
    let is_manifest = Manifest::read(path).is_ok();
    let foreign: Vec<String> = std::fs::read_dir(path)
        .map_err(|e| Error::io(path, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !super::layout::RUN_FILES.contains(&n.as_str()) && !n.starts_with('.') && !n.ends_with(".tmp"))
        .collect();
    if is_manifest && foreign.is_empty() {
        return Ok(());
    }
    let why = if is_manifest {
        format!("it also holds files no run writes ({})", foreign.join(", "))
    } else {
        "it has no run manifest (manifest.json)".to_string()
    };
    Err(Error::other(format!(
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
                return Err(Error::other(format!(
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
        let manifest = serde_json::to_string_pretty(&m).unwrap();
        write_atomic(&super::layout::manifest(path), manifest.as_bytes())?;
        Self::open(path)
    }

    fn open(path: &Path) -> Result<Self> {
        let mp = super::layout::metrics(path);
        let metrics = std::fs::OpenOptions::new().create(true).append(true).open(&mp).map_err(|e| Error::io(&mp, e))?;
        Ok(RunDir { path: path.to_path_buf(), metrics, progress: Box::new(super::session::Silent) })
    }

    /// The config and dtype of an existing run.
    pub fn read_config(path: &Path) -> Result<(RunConfig, String)> {
        Ok((super::layout::read_config(path)?, Manifest::read(path)?.dtype))
    }

    /// Reopen a run for resuming: load `resume.safetensors` into `trainer` and drop metric
    /// records newer than the resumed step (they are regenerated identically).
    pub fn resume<S: Scalar>(path: &Path, trainer: &mut Trainer<S>) -> Result<Self> {
        let m = Manifest::read(path)?;
        m.check_resumable(path)?;
        super::inputs::check(path, &trainer.cfg, m.config_toml.as_deref(), &m.inputs)?;
        remove_orphan_temp_files(path);
        if !super::layout::resume(path).exists() {
            // Killed before its first resume state: starting over from step 0 gives the same bits.
            write_atomic(&super::layout::metrics(path), b"")?;
            return Self::open(path);
        }
        let hp = AdamWParams::of(&trainer.cfg.train);
        let mut opt = AdamW::new(hp, trainer.model.layout.total);
        let (model, state) = load_resume(path, &trainer.cfg.model, &mut opt)?;
        let mp = super::layout::metrics(path);
        let kept: Vec<Record> =
            super::layout::read_metrics(path)?.into_iter().filter(|r| r.step <= state.step).collect();
        let text: String = kept.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        write_atomic(&mp, text.as_bytes())?;
        trainer.restore(model, opt, state);
        Self::open(path)
    }

    /// Write `summary.json` and the loss curves, and return the summary.
    pub fn finish<S: Scalar>(&self, trainer: &Trainer<S>) -> Result<Summary> {
        let records = super::layout::read_metrics(&self.path)?;
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
        self.progress.record(r);
        Ok(())
    }

    fn checkpoint(&mut self, t: &Trainer<S>) -> Result<()> {
        save_params(&self.path, &t.model, t.state.step)?;
        save_resume(&self.path, &t.model, &t.opt, &t.state)
    }

    fn progress(&mut self, t: &Trainer<S>, _stats: &super::eval::BatchStats) {
        self.progress.step(t.state.step);
    }
}
