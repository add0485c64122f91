//! The layout of a run directory, named once. Every reader and writer of a run (the trainer,
//! checkpoints, probes, `replicate`, `--status`, Slurm tasks) finds its files here.
//!
//! ```text
//! <runs>/<name>/config.toml          the resolved config (defaults written out)
//! <runs>/<name>/manifest.json        provenance: version, revision, arithmetic, CPU, command
//! <runs>/<name>/metrics.jsonl        one record per eval
//! <runs>/<name>/summary.json         written once, when the run is complete
//! <runs>/<name>/resume.safetensors   the state to resume from (parameters, AdamW moments, cursor)
//! <runs>/<name>/checkpoints/step_NNNNNNNN.safetensors
//! <runs>/<name>/probes/<probe>.json  cached probe results (and their .svg, .seconds)
//! <runs>/<name>.lock                 the one writer: "<host> <pid>", heartbeat by mtime
//! <runs>/<name>.failed               the error of the last failed attempt, until one succeeds
//! ```

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

pub fn config(run: &Path) -> PathBuf {
    run.join("config.toml")
}

pub fn manifest(run: &Path) -> PathBuf {
    run.join("manifest.json")
}

pub fn metrics(run: &Path) -> PathBuf {
    run.join("metrics.jsonl")
}

pub fn summary(run: &Path) -> PathBuf {
    run.join("summary.json")
}

pub fn resume(run: &Path) -> PathBuf {
    run.join("resume.safetensors")
}

pub fn checkpoints(run: &Path) -> PathBuf {
    run.join("checkpoints")
}

pub fn checkpoint(run: &Path, step: u64) -> PathBuf {
    checkpoints(run).join(format!("step_{step:08}.safetensors"))
}

pub fn probes(run: &Path) -> PathBuf {
    run.join("probes")
}

pub fn lock(run: &Path) -> PathBuf {
    run.with_extension("lock")
}

pub fn failed(run: &Path) -> PathBuf {
    run.with_extension("failed")
}

/// `summary.json`, parsed.
pub fn read_summary(run: &Path) -> Result<super::rundir::Summary> {
    let p = summary(run);
    let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::format(&p, e.to_string()))
}
