//! Ctrl-C or SIGTERM during `replicate` stops the run in progress (its resume state saved) and
//! starts no other: the runs not begun stay not started, without a directory. (Before, each
//! remaining run was started, stopped at once and left a 9.7 MB resume state at step 2.)

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The run directories under `runs` (lock files aside): (finished, unfinished).
fn run_dirs(runs: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(runs).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.into_iter().partition(|d| d.join("summary.json").exists())
}

#[test]
fn a_signal_during_replicate_starts_no_further_run() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replicate-interrupt");
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_windtunnel"))
        .args(["replicate", "plateau", "--scale", "ci", "--runs-only", "--jobs", "1", "--threads", "1", "--quiet"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = out.join("ci/runs");
    // Signal once a run has logged an evaluation: it is training, and 6 of the 7 runs are left.
    let logged = |d: &Path| std::fs::metadata(d.join("metrics.jsonl")).is_ok_and(|m| m.len() > 0);
    while !runs.exists() || !std::fs::read_dir(&runs).unwrap().flatten().any(|e| logged(&e.path())) {
        assert!(child.try_wait().unwrap().is_none(), "replicate ended before any run logged an evaluation");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted replicate does not report success");
    let (finished, unfinished) = run_dirs(&runs);
    assert!(unfinished.len() <= 1, "runs started after the signal: {unfinished:?}");
    assert!(finished.len() + unfinished.len() < 7, "every run was started: {finished:?} {unfinished:?}");
    for d in &unfinished {
        assert!(d.join("resume.safetensors").exists(), "{} was interrupted without its resume state", d.display());
    }
}

/// A probe runs as its own process beside the training; a signal to `replicate` stops it too
/// (its result is written whole at its end, so none is left) and starts nothing else.
#[test]
fn a_signal_during_a_probe_stops_the_probe_process() {
    use std::io::{BufRead, BufReader};
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replicate-interrupt-probe");
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_windtunnel"))
        .args(["replicate", "snap", "--scale", "ci", "--jobs", "1", "--threads", "1"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The probe process inherits replicate's stderr: its first line says the probe started.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let started = lines.by_ref().map_while(Result::ok).find(|l| l.contains("] snap …"));
    let started = started.expect("replicate ended before a probe started");
    assert!(started.starts_with("[ci_canonical_k10]"), "the probed run trained first: {started}");
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted replicate does not report success");
    assert!(!rest.iter().any(|l| l.contains("snap done in")), "the probe ran on: {rest:?}");
    let runs = out.join("ci/runs");
    assert!(!runs.join("ci_canonical_k10/probes/snap.json").exists(), "a probe result after the signal");
    assert!(!runs.join("ci_canonical_k20").exists(), "a run started after the signal");
}
