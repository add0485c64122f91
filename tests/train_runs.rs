//! Training runs: determinism across thread counts, bit-exact resume (in process and after
//! SIGKILL at arbitrary moments), run-directory safety, and divergence handling.

use std::path::Path;
use std::process::Command;
use windtunnel::check::golden::tensor_hash;
use windtunnel::config::RunConfig;
use windtunnel::model::Model;
use windtunnel::train::layout::read_metrics;
use windtunnel::train::record::without_timing;
use windtunnel::train::rundir::RunDir;
use windtunnel::train::{MemorySink, Record, Trainer};

mod common;
use common::{SMALL, Scratch};

fn small(overrides: &[&str]) -> RunConfig {
    RunConfig::from_toml_with(SMALL, &overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "test").unwrap()
}

fn tmpdir(name: &str) -> Scratch {
    Scratch::new(&format!("runs-{name}"))
}

fn straight(cfg: &RunConfig) -> (Model<f32>, Vec<Record>) {
    let m = Model::<f32>::init(&cfg.model, 42);
    let mut tr = Trainer::new(cfg.clone(), m, Path::new(".")).unwrap();
    let mut sink = MemorySink::default();
    tr.run(&mut sink).unwrap();
    (tr.model, sink.records)
}

/// The records and what stopped the run.
fn straight_stop(cfg: &RunConfig) -> (Vec<Record>, Option<String>) {
    let m = Model::<f32>::init(&cfg.model, 42);
    let mut tr = Trainer::new(cfg.clone(), m, Path::new(".")).unwrap();
    let mut sink = MemorySink::default();
    tr.run(&mut sink).unwrap();
    (sink.records, tr.state.stopped)
}

fn strip(rs: &[Record]) -> Vec<Record> {
    rs.iter().map(without_timing).collect()
}

#[test]
fn training_is_bit_identical_at_1_and_2_threads() {
    let cfg = small(&[]);
    let run =
        |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| straight(&cfg));
    let (m1, r1) = run(1);
    let (m2, r2) = run(2);
    assert_eq!(tensor_hash(&m1.params), tensor_hash(&m2.params));
    assert_eq!(strip(&r1), strip(&r2));
    assert_eq!(r1.len(), 8);
    assert!(r1.iter().all(|r| r.candidate_loss.is_some() && r.dz_paper.is_some() && r.dz_clean.is_some()));
}

#[test]
fn interrupted_and_resumed_run_equals_a_straight_run() {
    let cfg = small(&[]);
    let (want, want_recs) = straight(&cfg);
    for stop_at in [7u64, 16, 23] {
        let dir = tmpdir(&format!("resume{stop_at}"));
        // Session 1: train `stop_at` steps through the run directory, then "crash".
        {
            let m = Model::<f32>::init(&cfg.model, 42);
            let mut tr = Trainer::new(cfg.clone(), m, Path::new(".")).unwrap();
            let mut rd = RunDir::create(&dir, &cfg, "f32", false).unwrap();
            windtunnel::train::Sink::checkpoint(&mut rd, &tr).unwrap();
            while tr.state.step < stop_at {
                tr.step().unwrap();
                if tr.state.step.is_multiple_of(5) {
                    let r = tr.evaluate().unwrap();
                    windtunnel::train::Sink::record(&mut rd, &tr, &r).unwrap();
                }
                if windtunnel::train::checkpoint::is_checkpoint_step(tr.state.step, 10, 40) {
                    windtunnel::train::Sink::checkpoint(&mut rd, &tr).unwrap();
                }
            }
        }
        // Session 2: resume from the last checkpoint and finish.
        let m = Model::<f32>::init(&cfg.model, 42);
        let mut tr = Trainer::new(cfg.clone(), m, Path::new(".")).unwrap();
        let mut rd = RunDir::resume(&dir, &mut tr, false).unwrap();
        assert!(tr.state.step <= stop_at && tr.state.step > 0, "resumed at {}", tr.state.step);
        tr.run(&mut rd).unwrap();
        assert_eq!(tensor_hash(&tr.model.params), tensor_hash(&want.params), "stop at {stop_at}");
        let recs = read_metrics(&dir).unwrap();
        for (a, b) in strip(&recs).iter().zip(strip(&want_recs).iter()) {
            assert_eq!(a, b, "metrics after resume at {stop_at}");
        }
        assert_eq!(recs.len(), want_recs.len());
        std::fs::remove_dir_all(&dir).ok();
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_windtunnel"))
}

fn final_hash(dir: &Path) -> String {
    let f = windtunnel::io::tensors::read(&dir.join("checkpoints/step_00000300.safetensors")).unwrap();
    let vals: Vec<f32> = f.tensors.iter().flat_map(|t| t.to_f64().unwrap().into_iter().map(|x| x as f32)).collect();
    tensor_hash(&vals)
}

#[test]
fn sigkill_at_arbitrary_moments_then_resume_gives_the_same_bits() {
    let cfg_path = tmpdir("cfg.toml");
    std::fs::write(
        &cfg_path,
        SMALL.replace("max_steps = 40", "max_steps = 300").replace("checkpoint_every = 10", "checkpoint_every = 7"),
    )
    .unwrap();
    let reference = tmpdir("ref");
    let st = bin()
        .args(["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", reference.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let want = final_hash(&reference);
    let mut resumed = 0;
    for (i, delay_ms) in [0u64, 100, 300].iter().enumerate() {
        let dir = tmpdir(&format!("kill{i}"));
        let mut child = bin()
            .args(["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill after the first checkpoint (plus a delay, to land anywhere in a later step or write).
        let t0 = std::time::Instant::now();
        while !dir.join("resume.safetensors").exists() && t0.elapsed() < std::time::Duration::from_secs(60) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        std::thread::sleep(std::time::Duration::from_millis(*delay_ms));
        child.kill().ok(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        // Whatever was on disk must be readable, and no temporary file may pose as a checkpoint.
        if dir.join("checkpoints").exists() {
            for e in std::fs::read_dir(dir.join("checkpoints")).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "safetensors") {
                    windtunnel::io::tensors::read(&p)
                        .unwrap_or_else(|e| panic!("corrupt checkpoint {}: {e}", p.display()));
                }
            }
        }
        assert!(dir.join("resume.safetensors").exists(), "no checkpoint within 60 s");
        if dir.join("summary.json").exists() {
            continue; // finished before the kill landed: nothing was interrupted
        }
        resumed += 1;
        let st = bin()
            .args(["train", "--quiet", "--resume", dir.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(final_hash(&dir), want, "killed after {delay_ms} ms");
        std::fs::remove_dir_all(&dir).ok();
    }
    assert!(resumed >= 2, "only {resumed} of 3 kills interrupted the run: the test checked too little");
    std::fs::remove_dir_all(&reference).ok();
}

#[test]
fn an_existing_run_directory_is_never_overwritten_without_force() {
    let cfg_path = tmpdir("cfg2.toml");
    std::fs::write(&cfg_path, SMALL.replace("max_steps = 40", "max_steps = 5")).unwrap();
    let dir = tmpdir("exists");
    let run = |extra: &[&str]| {
        let mut args = vec!["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        bin().args(&args).output().unwrap()
    };
    assert!(run(&[]).status.success());
    let metrics = std::fs::read(dir.join("metrics.jsonl")).unwrap();
    let second = run(&[]);
    assert_eq!(second.status.code(), Some(4), "refused");
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("already exists") && err.contains("--resume") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(dir.join("metrics.jsonl")).unwrap(), metrics, "untouched");
    assert!(run(&["--force"]).status.success());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn divergence_stops_with_a_clear_message_and_keeps_the_last_good_checkpoint() {
    // Weights of 1e30 overflow the forward pass: the loss is not finite at the first step.
    let cfg = small(&[]);
    let mut m = Model::<f32>::init(&cfg.model, 1);
    for p in m.params.iter_mut() {
        *p *= 1e30;
    }
    let init = tmpdir("huge.safetensors");
    windtunnel::io::weights::save_params(&init, &m).unwrap();
    let cfg_path = tmpdir("cfg3.toml");
    std::fs::write(&cfg_path, SMALL).unwrap();
    let dir = tmpdir("nan");
    let out = bin()
        .args(["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()])
        .args(["--set", &format!("train.init={:?}", init.to_str().unwrap())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "failed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("diverged at step 0") && err.contains("last good checkpoint"), "{err}");
    assert!(!err.contains("panicked"));
    assert!(dir.join("checkpoints/step_00000000.safetensors").exists());
    std::fs::remove_dir_all(&dir).ok();
    // A caller of the library matches the variant, not the message.
    let mut tr = windtunnel::train::Trainer::new(cfg, m, std::path::Path::new(".")).unwrap();
    assert!(matches!(tr.step(), Err(windtunnel::error::Error::Diverged { step: 0, .. })));
}

#[test]
fn config_errors_name_the_key_and_range() {
    let out = bin().args(["train", "--set", "train.batch_size=0", "--out", "/tmp/never"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("train.batch_size") && err.contains("allowed 1..=65536"), "{err}");
    let out = bin().args(["train", "--set", "train.learning_rate=1", "--out", "/tmp/never"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("learning_rate"), "{err}");
    assert!(!Path::new("/tmp/never").exists());
}

#[test]
fn stop_after_taus_stops_once_every_waiting_time_is_known_and_is_a_prefix_of_the_full_run() {
    let long = small(&["train.max_steps=600", "train.lr=1e-2"]);
    let (_, full) = straight(&long);
    let k = long.data.k;
    let t = windtunnel::train::tau::taus(&full, k);
    let (t1, t2, t3_end) = (t.t1.expect("T1"), t.t2.expect("T2"), t.t3_end.expect("T3 end"));
    let stop = small(&["train.max_steps=600", "train.lr=1e-2", "train.stop_after_taus=20"]);
    let (_, short) = straight(&stop);
    let last = short.last().unwrap().step;
    let want = t1.max(t2).max(t3_end) + 20;
    // Evals fall every 5 steps, so the stop is the first eval at or after `want`.
    assert!(last >= want && last < want + 5, "stopped at {last}, want {want} (T1 {t1}, T2 {t2}, T3 end {t3_end})");
    assert!(last < 600, "never stopped early");
    assert_eq!(strip(&short), strip(&full[..short.len()]), "the stopped run is a prefix of the full run");
    assert_eq!(windtunnel::train::tau::taus(&short, k), windtunnel::train::tau::taus(&full[..short.len()], k));
}

#[test]
fn stop_after_taus_without_a_transition_runs_to_max_steps() {
    let (_, recs) = straight(&small(&["train.max_steps=60", "train.lr=1e-6", "train.stop_after_taus=0"]));
    assert_eq!(recs.last().unwrap().step, 60);
}

#[test]
fn a_run_of_another_arithmetic_version_is_not_resumed() {
    let cfg_path = tmpdir("cfg_v1.toml");
    std::fs::write(&cfg_path, SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let dir = tmpdir("v1run");
    let train = |args: &[&str]| bin().args(args).output().unwrap();
    let out = train(&["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains(&format!("\"arithmetic\": {}", windtunnel::numerics::ARITHMETIC)), "{manifest}");
    // The same run as a v1 build wrote it: no `arithmetic` field at all, and no segments.
    let mut v1: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    for key in ["arithmetic", "segments"] {
        v1.as_object_mut().unwrap().remove(key).expect(key);
    }
    std::fs::write(dir.join("manifest.json"), v1.to_string()).unwrap();
    let metrics = std::fs::read(dir.join("metrics.jsonl")).unwrap();
    let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("arithmetic v1") && err.contains("arithmetic v2") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(dir.join("metrics.jsonl")).unwrap(), metrics, "a refused resume changes nothing");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_edited_config_or_another_dtype_is_not_resumed_and_says_which() {
    let cfg_path = tmpdir("cfg_edit.toml");
    std::fs::write(&cfg_path, SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let dir = tmpdir("edited");
    let train = |args: &[&str]| bin().args(args).output().unwrap();
    assert!(
        train(&["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()])
            .status
            .success()
    );
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    let lr = config.lines().find(|l| l.starts_with("lr = ")).unwrap().to_string();
    std::fs::write(dir.join("config.toml"), config.replace(&lr, "lr = 0.5")).unwrap();
    let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("train.lr") && !err.contains("train.batch_size"), "{err}");
    std::fs::write(dir.join("config.toml"), &config).unwrap();
    let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap(), "--dtype", "f64"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("trained in f32"), "{err}");
    let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap(), "--dtype", "f32"]);
    assert!(out.status.success(), "the run's own dtype and config resume: {}", String::from_utf8_lossy(&out.stderr));
    // A manifest that disagrees with the resume state: named, and no advice the other check refuses.
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"dtype\": \"f32\""), "{manifest}");
    std::fs::write(dir.join("manifest.json"), manifest.replace("\"dtype\": \"f32\"", "\"dtype\": \"f64\"")).unwrap();
    let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("holds f32 state") && err.contains("says f64"), "{err}");
    assert!(!err.contains("--dtype"), "--dtype cannot change a resumed run, so it is not advised: {err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_run_killed_before_its_first_resume_state_resumes_from_step_0_with_the_same_bits() {
    let cfg_path = tmpdir("cfg_early.toml");
    std::fs::write(&cfg_path, SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let (straight_dir, dir) = (tmpdir("early_straight"), tmpdir("early_killed"));
    let train = |args: &[&str]| bin().args(args).output().unwrap();
    for d in [&straight_dir, &dir] {
        assert!(
            train(&["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", d.to_str().unwrap()])
                .status
                .success()
        );
    }
    // What a kill in the first moments leaves: config and manifest, no state, a half-written file.
    for f in ["resume.safetensors", "summary.json", "metrics.jsonl"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    std::fs::remove_dir_all(dir.join("checkpoints")).unwrap();
    std::fs::write(dir.join(".metrics.jsonl.12345.tmp"), b"half").unwrap();
    let out = train(&["train", "--resume", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no resume state") && err.contains("from step 0") && !err.contains("resuming"), "{err}");
    let params = |d: &Path| {
        let f = windtunnel::io::tensors::read(&d.join("checkpoints/step_00000020.safetensors")).unwrap();
        f.tensors.iter().flat_map(|t| t.to_f64().unwrap()).map(f64::to_bits).collect::<Vec<u64>>()
    };
    assert_eq!(params(&dir), params(&straight_dir), "the same final parameters, bit for bit");
    let records = |d: &Path| strip(&read_metrics(d).unwrap());
    assert_eq!(records(&dir), records(&straight_dir), "the same records, every eval once");
    assert!(!dir.join(".metrics.jsonl.12345.tmp").exists(), "the orphan temp file is gone");
    for d in [&straight_dir, &dir] {
        std::fs::remove_dir_all(d).ok();
    }
}

#[test]
fn stop_not_before_t4_holds_the_t1_rule_until_t4_and_stays_a_prefix() {
    let long = small(&["train.max_steps=600", "train.lr=1e-2"]);
    let (_, full) = straight(&long);
    let t = windtunnel::train::tau::taus(&full, long.data.k);
    let (t1, t4) = (t.t1.expect("T1"), t.t4.expect("T4"));
    let (plain, plain_why) =
        straight_stop(&small(&["train.max_steps=600", "train.lr=1e-2", "train.stop_at_t1_multiple=1.0"]));
    let (held, held_why) = straight_stop(&small(&[
        "train.max_steps=600",
        "train.lr=1e-2",
        "train.stop_at_t1_multiple=1.0",
        "train.stop_not_before_t4=true",
    ]));
    assert_eq!(plain.last().unwrap().step, t1, "without the hold the run stops at T1");
    assert_eq!(
        held.last().unwrap().step,
        t1.max(t4),
        "with it, at the first eval where both rules allow (T1 {t1}, T4 {t4})"
    );
    assert!(t4 > t1, "the fixture must have T4 after T1 for this test to mean anything (T1 {t1}, T4 {t4})");
    assert_eq!(strip(&held), strip(&full[..held.len()]));
    // The stop reason says the T1 rule waited for T4, and only when it did.
    assert_eq!(plain_why.as_deref(), Some(format!("stopped at 1·T1 (T1 = {t1})").as_str()));
    let want = format!("stopped at 1·T1 (T1 = {t1}), held until T4 = {t4} (train.stop_not_before_t4)");
    assert_eq!(held_why.as_deref(), Some(want.as_str()));
}

#[test]
fn stop_after_lag_stops_that_many_steps_after_the_first_target_loss_falls_tenfold() {
    let (full, _) = straight_stop(&small(&["train.max_steps=600", "train.lr=1e-2"]));
    let first = full[0].first_target_loss;
    let lag = full.iter().find(|r| r.first_target_loss < 0.1 * first).expect("the fixture learns").step;
    assert!(lag > full[0].step && lag + 50 < 600, "the fixture must reach its lag early (lag {lag})");
    let (held, why) = straight_stop(&small(&["train.max_steps=600", "train.lr=1e-2", "train.stop_after_lag=50"]));
    assert_eq!(held.last().unwrap().step, lag + 50, "evals every 5 steps: the first at lag + 50");
    assert_eq!(strip(&held), strip(&full[..held.len()]), "a stopped run is a prefix of the full one");
    let want = format!("stopped 50 steps after the lag (first-target loss < 0.1 × its first value) at {lag}");
    assert_eq!(why.as_deref(), Some(want.as_str()));
}

#[test]
fn ctrl_c_saves_the_resume_state_says_how_to_continue_and_the_resumed_run_has_the_same_bits() {
    // The canonical model, 20 steps: slow enough (a step takes a tenth of a second or more) for
    // Ctrl-C to land mid-run.
    let short = ["--set", "train.max_steps=20", "--set", "train.eval_every=5", "--set", "train.checkpoint_every=10"];
    let (reference, dir) = (tmpdir("int-ref"), tmpdir("int"));
    let st = bin().args(["train", "--quiet", "--out", reference.to_str().unwrap()]).args(short).status().unwrap();
    assert!(st.success());
    let child = bin()
        .args(["train", "--out", dir.to_str().unwrap()])
        .args(short)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once it trains (a record written), Ctrl-C, as a terminal sends it.
    let t0 = std::time::Instant::now();
    while std::fs::metadata(dir.join("metrics.jsonl")).ok().is_none_or(|m| m.len() == 0) {
        assert!(t0.elapsed().as_secs() < 120, "no record within 120 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let resume = format!("continue with `windtunnel train --resume {}`", dir.display());
    assert!(err.contains("interrupted at step ") && err.contains(&resume) && !err.contains("error:"), "{err}");
    let step: u64 = err.split("interrupted at step ").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
    assert!((5..20).contains(&step) && dir.join("resume.safetensors").exists(), "{err}");
    assert!(!dir.join("summary.json").exists());
    let st = bin().args(["train", "--quiet", "--resume", dir.to_str().unwrap()]).status().unwrap();
    assert!(st.success());
    let names = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d.join("checkpoints")).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    assert_eq!(names(&dir), names(&reference), "an interrupt adds no checkpoint file");
    let params = |d: &Path| {
        let f = windtunnel::io::tensors::read(&d.join("checkpoints/step_00000020.safetensors")).unwrap();
        f.tensors.iter().flat_map(|t| t.to_f64().unwrap()).map(f64::to_bits).collect::<Vec<u64>>()
    };
    assert!(params(&dir) == params(&reference), "interrupted at step {step}: other bits after resume");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&reference).ok();
}

/// Everything one progress display is told: where the run starts, each step, each record.
#[derive(Default)]
struct Tally {
    start: Option<(u64, u64)>,
    steps: Vec<u64>,
    records: Vec<u64>,
}

impl windtunnel::train::progress::Progress for Tally {
    fn start(&mut self, step: u64, max_steps: u64) {
        self.start = Some((step, max_steps));
    }
    fn step(&mut self, step: u64) {
        self.steps.push(step);
    }
    fn record(&mut self, r: &Record) {
        self.records.push(r.step);
    }
}

#[test]
fn the_progress_display_sees_every_step_and_every_record_the_sink_keeps() {
    let cfg = small(&[]);
    let mut tr = Trainer::new(cfg.clone(), Model::<f32>::init(&cfg.model, 42), Path::new(".")).unwrap();
    let (mut sink, mut tally) = (MemorySink::default(), Tally::default());
    tr.run_reporting(&mut sink, &mut tally).unwrap();
    let max = cfg.train.max_steps;
    assert_eq!(tally.start, Some((0, max)));
    assert_eq!(tally.steps, (1..=max).collect::<Vec<_>>());
    assert_eq!(tally.records, sink.records.iter().map(|r| r.step).collect::<Vec<_>>());
    assert_eq!(tally.records.len(), 8);
}

/// The tests' scratch paths leave nothing behind: a directory or a file, also when a test panics.
#[test]
fn scratch_paths_are_removed_when_dropped_even_by_a_panic() {
    let (dir, file) = (tmpdir("scratch-dir"), tmpdir("scratch.toml"));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/x"), "x").unwrap();
    std::fs::write(&file, "x").unwrap();
    let (d, f) = (dir.to_path_buf(), file.to_path_buf());
    drop((dir, file));
    assert!(!d.exists() && !f.exists(), "{} or {} left behind", d.display(), f.display());
    let inner = std::panic::catch_unwind(|| {
        let dir = tmpdir("scratch-panic");
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.to_path_buf();
        std::panic::panic_any(p);
    });
    let p = *inner.unwrap_err().downcast::<std::path::PathBuf>().unwrap();
    assert!(!p.exists(), "{} left behind by a panicking test", p.display());
}
