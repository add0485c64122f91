//! The run lock between processes (hardening issue, item 1): eight processes started at the
//! same moment on one run — eight `train`, eight `train --resume`, or eight `replicate` — leave
//! exactly one writer, every other one refused by name, and metrics that are complete, in order
//! and bit-identical to a run trained alone; eight `train --force` at once retrain it one at a time.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use windtunnel::train::layout::read_metrics;
use windtunnel::train::record::without_timing;

const N: usize = 8;
const ROUNDS: usize = 20;

mod common;
use common::{SMALL, Scratch};

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("runlock-{name}"))
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_windtunnel"))
}

/// Start `N` copies of a command as close together as spawning allows, then wait for all.
fn race(args: &[String]) -> Vec<Output> {
    let children: Vec<_> =
        (0..N).map(|_| bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()).collect();
    children.into_iter().map(|c| c.wait_with_output().unwrap()).collect()
}

fn metrics(dir: &Path) -> Vec<windtunnel::train::Record> {
    read_metrics(dir).unwrap().iter().map(without_timing).collect()
}

/// Exactly one process trained (exit 0 and not skipped); every other one was refused because
/// the run was locked, existed already or was finished — never a second writer.
fn assert_one_writer(outs: &[Output], round: usize, refusal: &[&str]) {
    let ok = outs.iter().filter(|o| o.status.success()).count();
    for o in outs.iter().filter(|o| !o.status.success()) {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(refusal.iter().any(|r| err.contains(r)), "round {round}: unexpected failure: {err}");
    }
    assert_eq!(ok, 1, "round {round}: {ok} processes trained the run");
}

fn reference(cfg: &Path, name: &str) -> Vec<windtunnel::train::Record> {
    let dir = tmp(&format!("reference-{name}"));
    let st = bin().args(["train", "--quiet", "--config"]).arg(cfg).arg("--out").arg(&dir).status().unwrap();
    assert!(st.success());
    let m = metrics(&dir);
    assert_eq!(m.iter().map(|r| r.step).collect::<Vec<_>>(), (5..=40).step_by(5).collect::<Vec<u64>>());
    std::fs::remove_dir_all(&dir).unwrap();
    m
}

fn config_file(name: &str) -> Scratch {
    let p = tmp(&format!("cfg-{name}.toml"));
    std::fs::write(&p, SMALL).unwrap();
    p
}

#[test]
fn eight_trains_of_one_new_run_at_once_leave_one_writer_and_complete_metrics() {
    let cfg = config_file("new");
    let want = reference(&cfg, "new");
    for round in 0..ROUNDS {
        let dir = tmp(&format!("new{round}"));
        let args: Vec<String> = ["train", "--quiet", "--config", cfg.to_str().unwrap(), "--out", dir.to_str().unwrap()]
            .map(String::from)
            .into();
        let outs = race(&args);
        assert_one_writer(&outs, round, &["is being trained by", "already exists", "names no holder"]);
        assert_eq!(metrics(&dir), want, "round {round}");
        assert!(!windtunnel::train::lock::lock_path(&dir).exists(), "round {round}: the lock is released");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn eight_resumes_of_one_interrupted_run_at_once_leave_one_writer_and_complete_metrics() {
    let cfg = config_file("resume");
    let want = reference(&cfg, "resume");
    let seed = tmp("interrupted");
    interrupted_run(&cfg, &seed);
    for round in 0..ROUNDS {
        let dir = tmp(&format!("resume{round}"));
        copy_dir(&seed, &dir);
        let args: Vec<String> = ["train", "--quiet", "--resume", dir.to_str().unwrap()].map(String::from).into();
        let outs = race(&args);
        assert_one_writer(&outs, round, &["is being trained by", "names no holder", "already finished"]);
        assert_eq!(metrics(&dir), want, "round {round}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn eight_replicates_of_one_suite_at_once_train_each_run_once() {
    let configs = tmp("configs");
    std::fs::create_dir_all(&configs).unwrap();
    std::fs::write(configs.join("lr_k20_eta2e-3.toml"), SMALL).unwrap();
    let want = reference(&configs.join("lr_k20_eta2e-3.toml"), "replicate");
    for round in 0..ROUNDS / 4 {
        let out = tmp(&format!("replicate{round}"));
        let args: Vec<String> = [
            "replicate",
            "lr",
            "--scale",
            "paper",
            "--only",
            "lr_k20_eta2e-3",
            "--runs-only",
            "--jobs",
            "1",
            "--configs",
            configs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .into();
        let outs = race(&args);
        let dir = out.join("paper/runs/lr_k20_eta2e-3");
        assert_eq!(metrics(&dir), want, "round {round}: one writer, complete metrics");
        let trained = outs.iter().filter(|o| String::from_utf8_lossy(&o.stderr).contains("] starting at step")).count();
        for o in &outs {
            let err = String::from_utf8_lossy(&o.stderr);
            let refused = err.contains("being trained by another process: ") && !err.contains("FAILED");
            assert!(o.status.success() || refused, "round {round}: {err}");
        }
        assert_eq!(trained, 1, "round {round}: {trained} processes started training it");
        std::fs::remove_dir_all(&out).unwrap();
    }
}

/// `--force` on an existing run, eight at once (hardening item 11: the deletions collided with
/// "Directory not empty"): the lock admits one at a time, so every process either retrained the
/// run or was refused by the lock, and the run left is complete and as if trained alone.
#[test]
fn eight_forced_retrains_of_one_run_at_once_never_collide() {
    let cfg = config_file("force");
    let want = reference(&cfg, "force");
    let dir = tmp("forced");
    let args: Vec<String> =
        ["train", "--quiet", "--force", "--config", cfg.to_str().unwrap(), "--out", dir.to_str().unwrap()]
            .map(String::from)
            .into();
    assert!(bin().args(&args).status().unwrap().success());
    for round in 0..ROUNDS / 4 {
        let outs = race(&args);
        let ok = outs.iter().filter(|o| o.status.success()).count();
        for o in outs.iter().filter(|o| !o.status.success()) {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("is being trained by") || err.contains("names no holder"), "round {round}: {err}");
        }
        assert!(ok >= 1, "round {round}: nobody retrained the run");
        assert_eq!(metrics(&dir), want, "round {round}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run stopped after its step-20 resume state, as a kill would leave it.
fn interrupted_run(cfg: &Path, dir: &Path) {
    let st = bin().args(["train", "--quiet", "--config"]).arg(cfg).arg("--out").arg(dir).status().unwrap();
    assert!(st.success());
    let full = tmp("full");
    std::fs::rename(dir, &full).unwrap();
    // Retrain to step 20 only: same bits up to there, then drop what a kill would not have written.
    let short = tmp("short-cfg.toml");
    std::fs::write(&short, SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let st = bin().args(["train", "--quiet", "--config"]).arg(&short).arg("--out").arg(dir).status().unwrap();
    assert!(st.success());
    std::fs::copy(full.join("config.toml"), dir.join("config.toml")).unwrap();
    std::fs::copy(full.join("manifest.json"), dir.join("manifest.json")).unwrap();
    for f in ["summary.json", "loss.svg"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    std::fs::remove_dir_all(&full).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}
