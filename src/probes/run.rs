//! Reading a finished (or running) training run for the probes: its config, metrics, waiting
//! times, checkpoints and data, with errors that say what is missing.

use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::io::weights::load_model;
use crate::model::Model;
use crate::numerics::Scalar;
use crate::rng::{Purpose, Stream};
use crate::task::{Batch, Mapping, TrainSet, generate, train_split};
use crate::train::Record;
use crate::train::layout;
use crate::train::tau::{Taus, taus};
use std::path::{Path, PathBuf};

pub struct RunView {
    pub dir: PathBuf,
    pub cfg: RunConfig,
    pub records: Vec<Record>,
    pub taus: Taus,
    /// Steps with a parameter checkpoint, ascending.
    pub steps: Vec<u64>,
    pub mapping: Mapping,
    pub train: TrainSet,
    /// A line on stderr per checkpoint probed (a probe can take minutes); off for `--quiet`.
    pub progress: bool,
}

impl RunView {
    pub fn open(dir: &Path) -> Result<Self> {
        let hint = "give --run a directory made by `windtunnel train`";
        let cfg = layout::read_config(dir).map_err(|e| match e {
            Error::Format { path, message } => Error::Format { path, message: format!("{message}; {hint}") },
            e => e,
        })?;
        let records = layout::read_metrics(dir)?;
        layout::check_metrics(dir, &records, cfg.train.eval_every)?;
        let taus = taus(&records, cfg.data.k);
        let steps = layout::checkpoint_steps(dir);
        if steps.is_empty() {
            return Err(Error::format(dir, "has no checkpoints (checkpoints/step_*.safetensors)"));
        }
        let mapping = generate(&cfg.data)?;
        let train = train_split(&mapping);
        Ok(RunView { dir: dir.to_path_buf(), cfg, records, taus, steps, mapping, train, progress: true })
    }

    /// `[run] probe: checkpoint i/n (step s)` on stderr, as a probe reaches each checkpoint.
    pub fn note_checkpoint(&self, probe: &str, i: usize, n: usize, step: u64) {
        if self.progress {
            let name = self.dir.file_name().map_or("run".into(), |n| n.to_string_lossy());
            eprintln!("[{name}] {probe}: checkpoint {}/{n} (step {step})", i + 1);
        }
    }

    pub fn last_step(&self) -> u64 {
        *self.steps.last().expect("non-empty")
    }

    /// T1, or an error saying this probe needs it.
    pub fn t1(&self, probe: &str) -> Result<u64> {
        self.taus.t1.ok_or_else(|| {
            Error::format(
                &self.dir,
                format!(
                    "the run has not reached T1 (candidate loss < ½·ln K) in its {} eval records; `{probe}` needs τ",
                    self.records.len()
                ),
            )
        })
    }

    /// The saved step nearest to `target` (ties go to the lower step, as the author's probes).
    pub fn snap(&self, target: f64) -> u64 {
        let mut best = self.steps[0];
        for &s in &self.steps {
            if (s as f64 - target).abs() < (best as f64 - target).abs() {
                best = s;
            }
        }
        best
    }

    pub fn model<S: Scalar>(&self, step: u64) -> Result<Model<S>> {
        let p = crate::train::checkpoint::checkpoint_path(&self.dir, step);
        if !p.exists() {
            let near = self.snap(step as f64);
            return Err(Error::format(&p, format!("missing: no checkpoint at step {step} (nearest saved: {near})")));
        }
        load_model(&p, Some(&self.cfg.model))
    }

    /// The first `n` train-order indices of the permutation `Stream(42, Probe, 0)` — windtunnel's
    /// stand-in for the author's `torch.manual_seed(42); randperm(len(train))[:n]`. Like the
    /// author's, smaller subsets are prefixes of larger ones (the Hessian's 512 ⊂ ablation's 2048).
    pub fn subset(&self, n: usize) -> Vec<usize> {
        let perm = Stream::new(42, Purpose::Probe, 0).permutation(self.train.len());
        perm[..n.min(perm.len())].to_vec()
    }

    pub fn batch(&self, indices: &[usize]) -> Batch {
        Batch::gather(&self.train, indices)
    }

    /// `ln K`.
    pub fn ln_k(&self) -> f64 {
        crate::train::tau::Thresholds::new(self.cfg.data.k).ln_k
    }

    /// Write a probe result as pretty JSON into `<run>/probes/<name>.json`.
    pub fn write_json<T: serde::Serialize>(&self, name: &str, value: &T) -> Result<PathBuf> {
        let json = serde_json::to_string_pretty(value).expect("serialises");
        crate::train::layout::write_probe_file(&self.dir, &format!("{name}.json"), json.as_bytes())
    }

    /// A probe result written by [`RunView::write_json`], or None when there is none.
    pub fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let p = crate::train::layout::probe_result(&self.dir, name);
        if !p.exists() {
            return Ok(None);
        }
        let text = crate::io::read_text(&p)?;
        serde_json::from_str(&text).map(Some).map_err(|e| Error::format(&p, format!("not a {name} result: {e}")))
    }

    /// Write a figure into `<run>/probes/`: `<name>` (an .svg) and the CSV beside it.
    pub fn write_figure(&self, name: &str, fig: &crate::plot::Figure) -> Result<PathBuf> {
        let p = self.write_text(name, &fig.svg)?;
        self.write_text(&Path::new(name).with_extension("csv").to_string_lossy(), &fig.csv)?;
        Ok(p)
    }

    /// Write a text artefact (CSV, SVG) into `<run>/probes/`.
    pub fn write_text(&self, file: &str, text: &str) -> Result<PathBuf> {
        crate::train::layout::write_probe_file(&self.dir, file, text.as_bytes())
    }
}

/// `linspace(lo, hi, n)` snapped to saved steps, deduplicated, ascending.
pub fn snapped_linspace(run: &RunView, lo: f64, hi: f64, n: usize) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).map(|i| run.snap(lo + (hi - lo) * i as f64 / (n.max(2) - 1) as f64)).collect();
    v.sort();
    v.dedup();
    v
}
