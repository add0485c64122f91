//! `replicate --executor slurm` against a real three-host Slurm (`scripts/slurm-cluster.sh
//! start`: slurmctld on wt-ctl, slurmd on wt-a and wt-b, each host in its own namespaces;
//! `.ci/run` starts it, runs these tests one at a time with `--ignored`, and stops it):
//! 1. a sweep spreads over both hosts and equals a local run bit for bit, also after a task is
//!    cancelled and the command run again (which resubmits that run alone);
//! 2. a host killed mid-run: the task is requeued on the other host, waits for the dead host's
//!    lock to lapse, resumes, and the bits still equal the local run; a live holder is refused;
//! 3. a host that cannot see the binary fails its task with exit 3, one that cannot see the
//!    results directory with Slurm's 0:53 (it cannot open the log), both by host name, and
//!    nothing finished is lost or retrained.
//!
//! The tests share the cluster and one of them kills a host: run them with --test-threads=1.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_windtunnel");
const HOSTS: [&str; 2] = ["wt-a", "wt-b"];

fn cluster(args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster.sh");
    let o = Command::new(script).args(args).output().unwrap();
    assert!(o.status.success(), "slurm-cluster.sh {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// `replicate plateau --scale ci --out <out>` with `extra`.
fn plateau(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["replicate", "plateau", "--scale", "ci", "--out", out.to_str().unwrap()].map(String::from).to_vec();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn slurm(mut a: Vec<String>) -> Vec<String> {
    a.extend(["--executor", "slurm", "--wait", "--cpus-per-task", "1", "--mem", "1G"].map(String::from));
    a
}

fn run(args: &[String]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(args: &[String]) -> String {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    String::from_utf8_lossy(&o.stdout).into_owned() + &err
}

fn fresh(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
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

/// Every checkpoint's and resume state's tensors of the runs under `out`.
fn parameters(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(out.join("ci/runs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    let mut v = vec![];
    for d in dirs {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(d.join("checkpoints")).unwrap().map(|e| e.unwrap().path()).collect();
        files.push(d.join("resume.safetensors"));
        files.sort();
        for f in files {
            v.push((f.strip_prefix(out).unwrap().display().to_string(), tensor_bits(&std::fs::read(&f).unwrap())));
        }
    }
    v
}

fn assert_same_bits(local: &Path, slurm: &Path, at_least: usize) {
    let (a, b) = (parameters(local), parameters(slurm));
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>());
    assert!(a.len() >= at_least, "{} files", a.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs between local and Slurm");
    }
    assert_eq!(numbers(local), numbers(slurm), "report numbers differ");
}

/// report.json without wall times (the only field allowed to differ).
fn numbers(out: &Path) -> Value {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(out.join("ci/report.json")).unwrap()).unwrap();
    strip_seconds(&mut v);
    v
}

/// Wait (at most 15 minutes) until `run` under `out` has a resume state past step 0 and at
/// least `evals` evals; the first job id of the submission.
fn wait_for_progress(out: &Path, run: &str, evals: usize) -> String {
    let t0 = Instant::now();
    let jobs = out.join("ci/slurm/jobs.txt");
    let dir = out.join("ci/runs").join(run);
    let n = || std::fs::read_to_string(dir.join("metrics.jsonl")).map_or(0, |m| m.lines().count());
    while !(jobs.exists() && dir.join("resume.safetensors").exists() && n() >= evals) {
        assert!(t0.elapsed() < Duration::from_secs(900), "run {run} never checkpointed under Slurm");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::fs::read_to_string(&jobs).unwrap().lines().next().unwrap().to_string()
}

fn log_names(out: &Path) -> Vec<String> {
    std::fs::read_dir(out.join("ci/slurm/logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

const SWEEP: &str = "ci_canonical_k3,ci_canonical_k10,ci_canonical_k3_s1,ci_canonical_k10_s1";

#[test]
#[ignore = "needs the three-host Slurm (scripts/slurm-cluster.sh start); .ci/run runs it"]
fn a_sweep_spreads_over_both_hosts_and_equals_a_local_run_also_after_a_cancelled_task() {
    // A space in the Slurm side's results directory: sbatch must get every path in one piece.
    let (local, remote) = (fresh("slurm-sweep-local"), fresh("slurm sweep remote"));
    ok(&plateau(&local, &["--seeds", "2", "--only", SWEEP]));
    ok(&plateau(&local, &["--seeds", "2", "--report-only"]));

    // Through Slurm, with the K = 10 seed-0 run (task 1) cancelled after its first checkpoint.
    let args = slurm(plateau(&remote, &["--seeds", "2", "--only", SWEEP]));
    let child = Command::new(BIN).args(&args).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let job = wait_for_progress(&remote, "ci_canonical_k10", 4);
    let o = Command::new("scancel").arg(format!("{job}_1")).output().unwrap();
    assert!(o.status.success(), "scancel: {}", String::from_utf8_lossy(&o.stderr));
    let first = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "the cancelled task must fail the command:\n{err}");
    assert!(err.contains("FAILED train ci_canonical_k10: see ") && err.contains("train-ci_canonical_k10.log"), "{err}");
    assert!(err.contains("(CANCELLED on wt-"), "where it ran and how it ended: {err}");
    assert_eq!(err.matches("FAILED train").count(), 1, "{err}");

    // Again: only the cancelled run is resubmitted; it resumes.
    let err = ok(&args);
    assert!(err.contains("1 training task(s)"), "{err}");
    assert!(read(remote.join("ci/slurm/logs/train-ci_canonical_k10.log")).contains("resuming at step"));

    // The tasks ran on both hosts: each unit's log names where each attempt ran.
    let logs: String = SWEEP.split(',').map(|r| read(remote.join(format!("ci/slurm/logs/train-{r}.log")))).collect();
    for h in HOSTS {
        assert!(logs.contains(&format!(" on {h}, Slurm job ")), "no task ran on {h}:\n{logs}");
    }
    let slurm_logs = log_names(&remote).iter().filter(|n| n.starts_with("slurm-") && n.ends_with(".out")).count();
    assert!(slurm_logs >= 6, "Slurm's own task logs land in logs/, the space notwithstanding: {slurm_logs}");
    assert_same_bits(&local, &remote, 4 * 8);
}

/// Revives a killed host when the test ends, passed or not, so the next test has two.
struct Revive(&'static str);

impl Drop for Revive {
    fn drop(&mut self) {
        cluster(&["revive", self.0]);
    }
}

/// `sbatch --wait` of `cmd` on `host`; its exit status and output.
fn on_host(host: &str, out: &Path, cmd: &[String]) -> (bool, String) {
    let file = out.join(format!("on-{host}.out"));
    let line = cmd.iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" ");
    let o = Command::new("sbatch")
        .args(["--wait", "--nodelist", host, "--mem", "500M", "--output"])
        .arg(&file)
        .args(["--wrap", &line])
        .output()
        .unwrap();
    (o.status.success(), read(&file))
}

#[test]
#[ignore = "needs the three-host Slurm (scripts/slurm-cluster.sh start); .ci/run runs it"]
fn a_host_killed_mid_run_is_replaced_by_the_other_and_the_bits_still_agree() {
    const RUN: &str = "ci_canonical_k20";
    let (local, remote) = (fresh("slurm-kill-local"), fresh("slurm-kill-remote"));
    ok(&plateau(&local, &["--only", RUN]));
    ok(&plateau(&local, &["--report-only"]));

    // Heartbeats every 12 s, a lock lapses after 120 s without one (instead of 30 s and 300 s):
    // long enough that the requeued task (≈ 40–80 s after the kill) finds it not yet lapsed.
    let args = slurm(plateau(&remote, &["--only", RUN]));
    let child = Command::new(BIN)
        .args(&args)
        .env("WINDTUNNEL_LOCK_STALE", "120")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let job = format!("{}_0", wait_for_progress(&remote, RUN, 4));
    let lock = read(remote.join(format!("ci/runs/{RUN}.lock")));
    let dead = HOSTS.into_iter().find(|h| lock.starts_with(&format!("{h} "))).expect("held by a cluster host");
    let other = HOSTS.into_iter().find(|h| *h != dead).unwrap();

    // The live holder is refused by name from the other host.
    let mut same = plateau(&remote, &["--only", RUN]);
    same.insert(0, BIN.into());
    let (refused_ok, said) = on_host(other, &remote, &same);
    assert!(
        !refused_ok && said.contains("is being trained by process") && said.contains(&format!("on {dead}")),
        "{said}"
    );

    // Its host dies: every process on it, slurmd and the task, SIGKILLed at once.
    let _revive = Revive(dead);
    cluster(&["kill", dead]);
    let resume_from = windtunnel::train::checkpoint::resume_step(&remote.join("ci/runs").join(RUN)).unwrap();
    assert!(resume_from > 0);
    // Once the lock has missed two heartbeats, --status names the run, presumes it interrupted
    // and says where it resumes.
    let status = poll(Duration::from_secs(90), || {
        let s = ok(&plateau(&remote, &["--only", RUN, "--status"]));
        s.contains("presumed interrupted").then_some(s)
    });
    assert!(status.contains(RUN) && status.contains(&format!("on {dead}: no heartbeat for")), "{status}");
    assert!(status.contains(&format!("resumes at step {resume_from}")), "{status}");

    // Slurm finds the host down and requeues the task; a requeued job waits ~2 minutes before it
    // may start again, which the test skips, as an operator may.
    poll(Duration::from_secs(180), || {
        let q = Command::new("squeue").args(["-h", "-j", &job, "-o", "%T %r"]).output().unwrap();
        String::from_utf8_lossy(&q.stdout).starts_with("PENDING BeginTime").then_some(())
    });
    let o = Command::new("scontrol").args(["update", &format!("JobId={job}"), "StartTime=now"]).output().unwrap();
    assert!(o.status.success(), "scontrol: {}", String::from_utf8_lossy(&o.stderr));

    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let log = read(remote.join(format!("ci/slurm/logs/train-{RUN}.log")));
    assert!(log.contains(&format!("train {RUN} on {dead}, Slurm job ")), "{log}");
    assert!(log.contains(&format!("train {RUN} on {other}, Slurm job ")), "{log}");
    assert!(log.contains("held by process") && log.contains(&format!("on {dead}, whose heartbeat stopped")), "{log}");
    assert!(log.contains(&format!("resuming at step {resume_from}")), "{log}");
    let manifest: Value = serde_json::from_str(&read(remote.join("ci/runs").join(RUN).join("manifest.json"))).unwrap();
    let hosts: Vec<&str> =
        manifest["segments"].as_array().unwrap().iter().map(|s| s["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, [dead, other], "each training segment records its host");
    assert_same_bits(&local, &remote, 8);
}

/// `f` every second until it gives a value, for at most `limit`.
fn poll<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(t0.elapsed() < limit, "gave up after {limit:?}");
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Un-hides a directory on a host when the test ends.
struct Unhide(&'static str, PathBuf);

impl Drop for Unhide {
    fn drop(&mut self) {
        cluster(&["unhide", self.0, self.1.to_str().unwrap()]);
    }
}

#[test]
#[ignore = "needs the three-host Slurm (scripts/slurm-cluster.sh start); .ci/run runs it"]
fn a_host_that_cannot_see_the_results_fails_by_name_and_loses_nothing() {
    let out = fresh("slurm-blind");
    ok(&plateau(&out, &["--only", "ci_canonical_k3"]));
    let before = parameters(&out);
    let summary = read(out.join("ci/runs/ci_canonical_k3/summary.json"));

    let mut args = slurm(plateau(&out, &["--only", "ci_canonical_k3,ci_canonical_k10"]));
    args.push("--sbatch-arg=--nodelist=wt-b".into());
    // Each blind spot in turn: the binary's directory (the task's script exits 3), then the
    // results directory (an empty local directory, as a network mount that failed: Slurm cannot
    // open the task's log there and the script never runs).
    let bin_dir = Path::new(BIN).parent().unwrap().to_path_buf();
    for (hidden, says) in [
        (&bin_dir, "(FAILED on wt-b, exit 3:0: the results directory or the binary is not visible on wt-b"),
        (&out, "(FAILED on wt-b, exit 0:53: Slurm could not open the task's log on wt-b"),
    ] {
        cluster(&["hide", "wt-b", hidden.to_str().unwrap()]);
        let _unhide = Unhide("wt-b", hidden.clone());
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("1 training task(s)"), "the finished run is not submitted again: {err}");
        assert!(err.contains("FAILED train ci_canonical_k10: see ") && err.contains(says), "{err}");
    }
    assert_eq!(parameters(&out), before, "the finished run's files are untouched");
    assert_eq!(read(out.join("ci/runs/ci_canonical_k3/summary.json")), summary);
    assert!(!out.join("ci/runs/ci_canonical_k10").exists(), "nothing was trained on the blind host");
}

#[test]
#[ignore = "needs the three-host Slurm (scripts/slurm-cluster.sh start); .ci/run runs it"]
fn slurm_submission_errors_name_the_problem_and_touch_nothing() {
    let out = fresh("slurm-errors");
    let base = slurm(plateau(&out, &["--only", "ci_canonical_k3"]));
    let mut a = base.clone();
    a.extend(["--partition", "no-such-partition"].map(String::from));
    let o = run(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--partition") && err.contains("no-such-partition") && err.contains("debug"), "{err}");
    assert!(!out.join("ci/slurm/jobs.txt").exists());
    // More CPUs or memory per task than any host has (one CPU each here): such jobs may be
    // accepted and never start (`--wait` waited for ever), so they are refused before sbatch.
    for (flag, value) in [("--cpus-per-task", "2"), ("--mem", "64T")] {
        let mut a = base.clone();
        let i = a.iter().position(|x| x == flag).unwrap();
        a[i + 1] = value.into();
        let o = run(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(flag) && err.contains("could never start"), "{err}");
        assert!(!out.join("ci/slurm/jobs.txt").exists());
    }
}
