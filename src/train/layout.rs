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
    sibling(run, "lock")
}

pub fn failed(run: &Path) -> PathBuf {
    sibling(run, "failed")
}

/// `<parent>/<name>.<ext>` beside the run directory, also for `.` or a name with dots in it.
fn sibling(run: &Path, ext: &str) -> PathBuf {
    let abs: PathBuf = std::path::absolute(run).unwrap_or_else(|_| run.to_path_buf()).components().collect();
    match abs.file_name() {
        Some(name) if !run.as_os_str().is_empty() => abs.with_file_name(format!("{}.{ext}", name.to_string_lossy())),
        _ => run.join(format!(".{ext}")),
    }
}

/// `summary.json`, parsed.
pub fn read_summary(run: &Path) -> Result<super::rundir::Summary> {
    let p = summary(run);
    let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::format(&p, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_beside_the_run_whatever_its_name() {
        assert_eq!(lock(Path::new("/r/runs/canonical_k10")), Path::new("/r/runs/canonical_k10.lock"));
        assert_eq!(lock(Path::new("/r/runs/my.run")), Path::new("/r/runs/my.run.lock"));
        assert_eq!(failed(Path::new("/r/runs/x/")), Path::new("/r/runs/x.failed"));
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            lock(Path::new(".")),
            here.with_file_name(format!("{}.lock", here.file_name().unwrap().to_string_lossy()))
        );
    }
}
