//! The layout of a run directory, named once, and its readers. Every reader and writer of a run
//! (the trainer, checkpoints, probes, `replicate`, `--status`, Slurm tasks) finds its files here;
//! the trainer's writer is `rundir::RunDir`.
//!
//! ```text
//! <runs>/<name>/config.toml          the resolved config (defaults written out)
//! <runs>/<name>/manifest.json        provenance: version, revision, arithmetic, CPU, command
//! <runs>/<name>/metrics.jsonl        one record per eval
//! <runs>/<name>/summary.json         written once, when the run is complete
//! <runs>/<name>/loss.svg, loss.csv   the loss curves, written with the summary
//! <runs>/<name>/resume.safetensors   the state to resume from (parameters, AdamW moments, cursor)
//! <runs>/<name>/checkpoints/step_NNNNNNNN.safetensors
//! <runs>/<name>/probes/<probe>.json  cached probe results (and their .svg, .csv, .seconds);
//!                                    the linear baseline's linear_k<K>/ holds only these
//! <runs>/<name>.lock                 the one writer: "<host> <pid> start= token=", heartbeat by mtime
//! <runs>/<name>.failed               the error of the last failed attempt, until one succeeds
//! ```

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

const CONFIG: &str = "config.toml";
const MANIFEST: &str = "manifest.json";
const METRICS: &str = "metrics.jsonl";
const SUMMARY: &str = "summary.json";
const RESUME: &str = "resume.safetensors";
const CHECKPOINTS: &str = "checkpoints";
const PROBES: &str = "probes";
const LOSS_FIGURE: &str = "loss.svg";
const LOSS_CSV: &str = "loss.csv";

/// Every name a run directory holds (anything else in it is not the run's).
pub const RUN_FILES: [&str; 9] =
    [CONFIG, MANIFEST, METRICS, SUMMARY, RESUME, CHECKPOINTS, PROBES, LOSS_FIGURE, LOSS_CSV];

/// The entries of a run directory no run writes (relative paths): a stranger's file, a hidden
/// file that is not an interrupted write's temp file, or anything in `checkpoints/` or `probes/`
/// that is not a checkpoint or a probe's output. `--force` deletes a run only when this is empty.
pub fn foreign_files(run: &Path) -> Result<Vec<String>> {
    let temp = |n: &str, own: &dyn Fn(&str) -> bool| {
        n.strip_prefix('.')
            .and_then(|r| r.strip_suffix(".tmp"))
            .and_then(|r| r.rsplit_once('.'))
            .is_some_and(|(name, pid)| own(name) && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    };
    let checkpoint = |n: &str| {
        n.strip_prefix("step_")
            .and_then(|r| r.strip_suffix(".safetensors"))
            .is_some_and(|d| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
    };
    let probe = |n: &str| {
        !n.starts_with('.') && [".json", ".csv", ".svg", ".seconds"].iter().any(|e| n.len() > e.len() && n.ends_with(e))
    };
    let root = |n: &str| RUN_FILES.contains(&n);
    let mut out = entries(run, "", &|n, dir| (root(n) || temp(n, &root)) && (!dir || n == CHECKPOINTS || n == PROBES))?;
    for (sub, own) in [(CHECKPOINTS, &checkpoint as &dyn Fn(&str) -> bool), (PROBES, &probe)] {
        if run.join(sub).is_dir() {
            out.extend(entries(&run.join(sub), sub, &|n, dir| !dir && (own(n) || temp(n, own)))?);
        }
    }
    Ok(out)
}

/// The names in `dir` that `own(name, is_dir)` does not accept, as `<prefix>/<name>`.
fn entries(dir: &Path, prefix: &str, own: &dyn Fn(&str, bool) -> bool) -> Result<Vec<String>> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(true);
        if !own(&name, is_dir) {
            out.push(if prefix.is_empty() { name } else { format!("{prefix}/{name}") });
        }
    }
    out.sort();
    Ok(out)
}

pub fn config(run: &Path) -> PathBuf {
    run.join(CONFIG)
}

pub fn manifest(run: &Path) -> PathBuf {
    run.join(MANIFEST)
}

pub fn metrics(run: &Path) -> PathBuf {
    run.join(METRICS)
}

pub fn summary(run: &Path) -> PathBuf {
    run.join(SUMMARY)
}

/// The loss-curve figure (its CSV beside it, `loss.csv`).
pub fn loss_figure(run: &Path) -> PathBuf {
    run.join(LOSS_FIGURE)
}

pub fn resume(run: &Path) -> PathBuf {
    run.join(RESUME)
}

pub fn checkpoints(run: &Path) -> PathBuf {
    run.join(CHECKPOINTS)
}

pub fn checkpoint(run: &Path, step: u64) -> PathBuf {
    checkpoints(run).join(format!("step_{step:08}.safetensors"))
}

pub fn probes(run: &Path) -> PathBuf {
    run.join(PROBES)
}

/// A probe's cached result, `<run>/probes/<probe>.json` (the linear baseline's directory, which
/// holds no training run, keeps its result the same way).
pub fn probe_result(run: &Path, probe: &str) -> PathBuf {
    probes(run).join(format!("{probe}.json"))
}

/// The wall seconds the probe took, beside its result.
pub fn probe_seconds(run: &Path, probe: &str) -> PathBuf {
    probes(run).join(format!("{probe}.seconds"))
}

/// Write `<run>/probes/<file>` atomically (a result, its timing, a figure or its CSV).
pub fn write_probe_file(run: &Path, file: &str, bytes: &[u8]) -> Result<PathBuf> {
    let dir = probes(run);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let p = dir.join(file);
    crate::io::tensors::write_atomic(&p, bytes)?;
    Ok(p)
}

/// Keep the error of a failed attempt beside the run until one succeeds.
pub fn write_failed(run: &Path, error: &str) -> Result<()> {
    crate::io::tensors::write_atomic(&failed(run), error.as_bytes())
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

/// `config.toml`, parsed; an error that says the directory is not a run when it has none.
pub fn read_config(run: &Path) -> Result<crate::config::RunConfig> {
    let cp = config(run);
    if !cp.exists() {
        return Err(Error::format(run, "not a windtunnel run directory (no config.toml)"));
    }
    crate::config::RunConfig::load(Some(&cp), &[])
}

/// `metrics.jsonl`, one record per eval; empty before the first eval.
pub fn read_metrics(run: &Path) -> Result<Vec<super::Record>> {
    parse_metrics(&metrics(run), &metrics_text(run)?)
}

/// The records a resume keeps: as [`read_metrics`], less a torn last record (a short write on a
/// full disk leaves one without its newline; the resume regenerates it anyway).
pub fn read_metrics_for_resume(run: &Path) -> Result<Vec<super::Record>> {
    let text = metrics_text(run)?;
    let torn = match text.rfind('\n') {
        _ if text.ends_with('\n') || text.is_empty() => None,
        Some(i) => Some(i + 1),
        None => Some(0),
    };
    match torn {
        Some(cut) if serde_json::from_str::<super::Record>(&text[cut..]).is_err() => {
            parse_metrics(&metrics(run), &text[..cut])
        }
        _ => parse_metrics(&metrics(run), &text),
    }
}

fn metrics_text(run: &Path) -> Result<String> {
    let path = metrics(run);
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn parse_metrics(path: &Path, text: &str) -> Result<Vec<super::Record>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| Error::format(path, format!("line {}: {e}", i + 1))))
        .collect()
}

/// Records are at eval_every, 2·eval_every, … (the last may be a shorter stop): a missing one
/// would move a waiting time silently, so it is an error naming the gap.
pub fn check_metrics(run: &Path, records: &[super::Record], eval_every: u64) -> Result<()> {
    let n = records.len();
    for (i, r) in records.iter().enumerate() {
        let want = (i as u64 + 1) * eval_every;
        let last_ok = i + 1 == n && r.step > want - eval_every && r.step < want;
        if r.step != want && !last_ok {
            let after = if i == 0 { 0 } else { records[i - 1].step };
            return Err(Error::format(
                &metrics(run),
                format!(
                    "no record between steps {after} and {} (evals every {eval_every}): its waiting times would be \
                     wrong. Train the run again (--force); --resume regenerates only the records after its resume \
                     state, so it repairs a gap only there",
                    r.step
                ),
            ));
        }
    }
    Ok(())
}

/// The steps that have a parameter checkpoint, ascending.
pub fn checkpoint_steps(run: &Path) -> Vec<u64> {
    let mut steps: Vec<u64> = std::fs::read_dir(checkpoints(run))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("step_")?.strip_suffix(".safetensors")?.parse().ok()
        })
        .collect();
    steps.sort();
    steps
}

/// `summary.json`, parsed.
pub fn read_summary(run: &Path) -> Result<super::summary::Summary> {
    let p = summary(run);
    let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::format(&p, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_metric_record_is_an_error_naming_the_gap() {
        let recs = |steps: &[u64]| {
            steps.iter().map(|&step| super::super::Record { step, ..Default::default() }).collect::<Vec<_>>()
        };
        let run = Path::new("r");
        assert!(check_metrics(run, &recs(&[50, 100, 150]), 50).is_ok());
        assert!(check_metrics(run, &recs(&[50, 100, 120]), 50).is_ok(), "a stop between evals ends the log");
        assert!(check_metrics(run, &recs(&[]), 50).is_ok());
        let e = check_metrics(run, &recs(&[50, 150, 200]), 50).unwrap_err().to_string();
        assert!(e.contains("between steps 50 and 150"), "{e}");
        assert!(check_metrics(run, &recs(&[100, 150]), 50).is_err(), "the first eval is missing");
        assert!(check_metrics(run, &recs(&[50, 100, 100]), 50).is_err(), "a repeated record");
    }

    #[test]
    fn readers_find_what_the_names_say_and_reject_what_is_not_a_run() {
        let dir = std::env::temp_dir().join(format!("wt-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(checkpoints(&dir)).unwrap();
        assert!(read_config(&dir).unwrap_err().to_string().contains("not a windtunnel run"));
        assert!(read_metrics(&dir).unwrap().is_empty(), "no metrics yet is no records");
        for s in [200u64, 0, 1000] {
            std::fs::write(checkpoint(&dir, s), b"").unwrap();
        }
        std::fs::write(checkpoints(&dir).join("step_x.safetensors"), b"").unwrap();
        assert_eq!(checkpoint_steps(&dir), vec![0, 200, 1000]);
        std::fs::write(metrics(&dir), "{\"step\": 1}\nnot json\n").unwrap();
        assert!(read_metrics(&dir).unwrap_err().to_string().contains("line 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
