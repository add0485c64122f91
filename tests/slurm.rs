//! `replicate --executor slurm` against a real one-node Slurm (`scripts/slurm-local.sh start`;
//! `.ci/run` starts it, runs this test with `--ignored`, and stops it): the same small suite
//! trained locally and through Slurm job arrays gives bit-identical parameters and report
//! numbers; a task cancelled mid-run fails by name, and running the command again resubmits that
//! run alone, which resumes and still ends bit-identical.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_windtunnel");

const ONLY: &str = "ci_canonical_k3,ci_canonical_k5,ci_canonical_k3_s1,ci_canonical_k5_s1,linear_k10";

/// The plan: the ci D-sweep and the linear baseline at two seeds.
fn plan(out: &Path) -> Vec<String> {
    let o = out.to_str().unwrap();
    ["replicate", "d-scaling", "linear", "--scale", "ci", "--out", o, "--seeds", "2"].map(String::from).to_vec()
}

/// Of it, two runs (K = 3 and 5) × two seeds and the linear-baseline probe.
fn args(out: &Path) -> Vec<String> {
    let mut a = plan(out);
    a.extend(["--only", ONLY].map(String::from));
    a
}

/// The same units trained, probed and reported locally, one command each.
fn run_locally(out: &Path) {
    let mut probes = plan(out);
    probes.extend(["--probes-only", "--only", "linear_k10"].map(String::from));
    let mut report = plan(out);
    report.push("--report-only".into());
    for a in [args(out), probes, report] {
        let o = run(&a);
        assert!(o.status.success(), "local {a:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

fn run(args: &[String]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn slurm_args(out: &Path) -> Vec<String> {
    let mut a = args(out);
    a.extend(["--executor", "slurm", "--wait", "--cpus-per-task", "1", "--mem", "1G"].map(String::from));
    a
}

/// A safetensors file's tensor table and data bytes (its metadata records wall times, which
/// differ), or a JSON file without its wall times.
fn tensor_bits(bytes: &[u8]) -> Vec<u8> {
    if bytes.first() == Some(&b'{') {
        let mut v: Value = serde_json::from_slice(bytes).unwrap();
        strip_seconds(&mut v);
        return v.to_string().into_bytes();
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let mut header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    header.as_object_mut().unwrap().remove("__metadata__");
    let mut v = header.to_string().into_bytes();
    v.extend_from_slice(&bytes[8 + n..]);
    v
}

fn strip_seconds(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.contains("seconds"));
            m.values_mut().for_each(strip_seconds);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_seconds),
        _ => {}
    }
}

/// Every file's tensors under each run's `checkpoints/` and its `resume.safetensors`.
fn parameters(out: &Path) -> Vec<(String, Vec<u8>)> {
    let runs = out.join("ci/runs");
    let mut v = vec![];
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(d.join("checkpoints"))
            .map(|r| r.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        files.push(d.join("resume.safetensors"));
        files.push(d.join("probes/linear.json"));
        files.sort();
        for f in files.into_iter().filter(|f| f.exists()) {
            v.push((f.strip_prefix(out).unwrap().display().to_string(), tensor_bits(&std::fs::read(&f).unwrap())));
        }
    }
    v
}

/// report.json without wall times (the only field allowed to differ).
fn numbers(out: &Path) -> Value {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(out.join("ci/report.json")).unwrap()).unwrap();
    strip_seconds(&mut v);
    v
}

/// Cancel array task `index` of the training job once its run is past its first evals, so that
/// its resume state is past step 0 (a run also saves one at step 0, and resuming from there would
/// look like a fresh start).
fn cancel_mid_run(out: &Path, run: &str, index: usize) {
    let t0 = Instant::now();
    let jobs = out.join("ci/slurm/jobs.txt");
    let dir = out.join("ci/runs").join(run);
    let evals = || std::fs::read_to_string(dir.join("metrics.jsonl")).map_or(0, |m| m.lines().count());
    while !(jobs.exists() && dir.join("resume.safetensors").exists() && evals() >= 4) {
        assert!(t0.elapsed() < Duration::from_secs(900), "run {run} never checkpointed under Slurm");
        std::thread::sleep(Duration::from_millis(200));
    }
    let id = std::fs::read_to_string(&jobs).unwrap().lines().next().unwrap().to_string();
    let o = Command::new("scancel").arg(format!("{id}_{index}")).output().unwrap();
    assert!(o.status.success(), "scancel: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
#[ignore = "needs a running Slurm (scripts/slurm-local.sh start); .ci/run runs it"]
fn slurm_runs_are_bit_identical_to_local_ones_and_resubmit_only_what_is_missing() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // A space in the Slurm side's results directory: sbatch must get every path in one piece.
    let (local, slurm) = (tmp.join("slurm-identity-local"), tmp.join("slurm identity slurm"));
    let _ = std::fs::remove_dir_all(&local);
    let _ = std::fs::remove_dir_all(&slurm);

    run_locally(&local);

    // Through Slurm, with the K = 5 seed-0 run (task 1) cancelled after its first checkpoint.
    let child = Command::new(BIN).args(slurm_args(&slurm)).stderr(std::process::Stdio::piped()).spawn().unwrap();
    cancel_mid_run(&slurm, "ci_canonical_k5", 1);
    let first = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "the cancelled task must fail the command:\n{err}");
    assert!(err.contains("FAILED train ci_canonical_k5: see ") && err.contains("train-ci_canonical_k5.log"), "{err}");
    assert_eq!(err.matches("FAILED train").count(), 1, "{err}");

    // Again: only the cancelled run is resubmitted; it resumes.
    let second = run(&slurm_args(&slurm));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{err}");
    assert!(err.contains("1 training task(s)"), "{err}");
    let log = std::fs::read_to_string(slurm.join("ci/slurm/logs/train-ci_canonical_k5.log")).unwrap();
    assert!(log.contains("resuming at step"), "{log}");
    // Slurm's own task logs land in logs/, the space in the path notwithstanding.
    let logs: Vec<String> = std::fs::read_dir(slurm.join("ci/slurm/logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(logs.iter().filter(|n| n.starts_with("slurm-") && n.ends_with(".out")).count() >= 5, "{logs:?}");

    let (a, b) = (parameters(&local), parameters(&slurm));
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 8, "{} files", a.len());
    for ((na, ba), (nb, bb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs between local and Slurm");
    }
    assert_eq!(numbers(&local), numbers(&slurm), "report numbers differ");
}

#[test]
#[ignore = "needs a running Slurm (scripts/slurm-local.sh start); .ci/run runs it"]
fn slurm_submission_errors_name_the_problem_and_touch_nothing() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("slurm-errors");
    let mut a = slurm_args(&out);
    a.extend(["--partition", "no-such-partition"].map(String::from));
    let o = run(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--partition") && err.contains("no-such-partition") && err.contains("debug"), "{err}");
    assert!(!out.join("ci/slurm/jobs.txt").exists());
    // More CPUs or memory per task than the node has: such jobs may be accepted and never start
    // (`--wait` waited for ever), so they are refused before sbatch.
    for (flag, value) in [("--cpus-per-task", "1024"), ("--mem", "64T")] {
        let mut a = slurm_args(&out);
        let i = a.iter().position(|x| x == flag).unwrap();
        a[i + 1] = value.into();
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(flag) && err.contains("could never start"), "{err}");
        assert!(!out.join("ci/slurm/jobs.txt").exists());
    }
}
