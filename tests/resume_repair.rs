//! What a resume does with damaged metric records (hardening issue, items 2 and 7): a torn last
//! record (a short write on a full disk) is dropped and regenerated; a missing record before
//! the resume state cannot be, so the resume refuses, names the gap and changes nothing; and no
//! summary is written from records with a gap. A damaged resume state (a NaN or a negative second
//! moment: it is written only when finite) is named before anything trains (item 10), and a moved
//! `train.init` file does not block a resume that takes its weights from the resume state (item 11).

use std::path::{Path, PathBuf};
use std::process::Command;
use windtunnel::check::golden::tensor_hash;
use windtunnel::config::RunConfig;
use windtunnel::model::Model;
use windtunnel::train::checkpoint::is_checkpoint_step;
use windtunnel::train::layout::read_metrics;
use windtunnel::train::record::without_timing;
use windtunnel::train::rundir::RunDir;
use windtunnel::train::{MemorySink, Record, Sink, Trainer};

mod common;
use common::Scratch;

fn cfg() -> RunConfig {
    RunConfig::from_toml_with(common::SMALL, &[], "test").unwrap()
}

fn tmpdir(name: &str) -> Scratch {
    Scratch::new(&format!("repair-{name}"))
}

fn windtunnel() -> Command {
    Command::new(env!("CARGO_BIN_EXE_windtunnel"))
}

fn trainer() -> Trainer<f32> {
    trainer_of(cfg())
}

fn trainer_of(cfg: RunConfig) -> Trainer<f32> {
    let m = Model::<f32>::init(&cfg.model, 42);
    Trainer::new(cfg, m, Path::new(".")).unwrap()
}

/// Train through a run directory to `stop_at` (records every 5, resume states every 10), then "crash".
fn crashed_run(dir: &Path, stop_at: u64) {
    let mut tr = trainer();
    let mut rd = RunDir::create(dir, &cfg(), "f32", false).unwrap();
    rd.checkpoint(&tr).unwrap();
    while tr.state.step < stop_at {
        tr.step().unwrap();
        if tr.state.step.is_multiple_of(5) {
            let r = tr.evaluate().unwrap();
            rd.record(&tr, &r).unwrap();
        }
        if is_checkpoint_step(tr.state.step, 10, 40) {
            rd.checkpoint(&tr).unwrap();
        }
    }
}

fn strip(rs: &[Record]) -> Vec<Record> {
    rs.iter().map(without_timing).collect()
}

fn metrics(dir: &Path) -> PathBuf {
    dir.join("metrics.jsonl")
}

#[test]
fn a_torn_last_record_is_dropped_and_the_resumed_run_equals_a_straight_one() {
    let mut straight = trainer();
    let mut sink = MemorySink::default();
    straight.run(&mut sink).unwrap();
    let dir = tmpdir("torn");
    crashed_run(&dir, 18); // resume state at 16 (a power of two); records 5, 10, 15
    let mut text = std::fs::read_to_string(metrics(&dir)).unwrap();
    text.push_str(r#"{"step":20,"epoch":3,"examples_se"#);
    std::fs::write(metrics(&dir), &text).unwrap();
    let mut tr = trainer();
    let mut rd = RunDir::resume(&dir, &mut tr, false).expect("a torn tail does not block the resume");
    assert_eq!(tr.state.step, 16);
    tr.run(&mut rd).unwrap();
    assert_eq!(tensor_hash(&tr.model.params), tensor_hash(&straight.model.params));
    assert_eq!(strip(&read_metrics(&dir).unwrap()), strip(&sink.records), "every record once, none torn");
    rd.finish(&tr).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_record_that_is_not_the_torn_tail_still_stops_the_resume() {
    let dir = tmpdir("malformed");
    crashed_run(&dir, 16);
    let text = std::fs::read_to_string(metrics(&dir)).unwrap();
    let broken = text.replacen("{\"step\":10", "{\"step\":1x", 1);
    std::fs::write(metrics(&dir), &broken).unwrap();
    let e = RunDir::resume(&dir, &mut trainer(), false).err().expect("a malformed middle record").to_string();
    assert!(e.contains("metrics.jsonl") && e.contains("line 2"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_gap_before_the_resume_state_is_refused_by_name_and_nothing_is_written() {
    let dir = tmpdir("gap");
    crashed_run(&dir, 23); // resume state at 20; records 5 … 20
    let text = std::fs::read_to_string(metrics(&dir)).unwrap();
    let gapped: String = text.lines().filter(|l| !l.starts_with("{\"step\":10,")).map(|l| format!("{l}\n")).collect();
    assert_eq!(gapped.lines().count() + 1, text.lines().count(), "one record removed");
    std::fs::write(metrics(&dir), &gapped).unwrap();
    let manifest = std::fs::read(dir.join("manifest.json")).unwrap();
    let e = RunDir::resume(&dir, &mut trainer(), false).err().expect("a gap before the state").to_string();
    assert!(e.contains("no record between steps 5 and 15") && e.contains("Train the run again"), "{e}");
    assert_eq!(std::fs::read_to_string(metrics(&dir)).unwrap(), gapped, "the records are left as they were");
    assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), manifest, "no segment recorded");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn no_summary_is_written_from_records_with_a_gap() {
    let dir = tmpdir("finish");
    crashed_run(&dir, 16);
    let mut tr = trainer();
    let mut rd = RunDir::resume(&dir, &mut tr, false).unwrap();
    tr.run(&mut rd).unwrap();
    let text = std::fs::read_to_string(metrics(&dir)).unwrap();
    let gapped: String = text.lines().filter(|l| !l.starts_with("{\"step\":25,")).map(|l| format!("{l}\n")).collect();
    std::fs::write(metrics(&dir), gapped).unwrap();
    let e = rd.finish(&tr).expect_err("a gap at finish").to_string();
    assert!(e.contains("no record between steps 20 and 30"), "{e}");
    assert!(!dir.join("summary.json").exists(), "no summary with wrong waiting times");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn poisoned_adam_moments_in_the_resume_state_are_named_before_training() {
    let cfg_path = tmpdir("cfg_poison.toml");
    std::fs::write(&cfg_path, common::SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let dir = tmpdir("poisoned");
    let train = |args: &[&str]| windtunnel().args(args).output().unwrap();
    let made = train(&["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(made.status.success());
    let resume = dir.join("resume.safetensors");
    let good = windtunnel::io::tensors::read(&resume).unwrap();
    let metrics = std::fs::read(dir.join("metrics.jsonl")).unwrap();
    for (prefix, bad) in [("adam.v.", -1.0f32), ("adam.m.", f32::NAN), ("", f32::INFINITY)] {
        let mut f = windtunnel::io::tensors::read(&resume).unwrap();
        let t = f.tensors.iter_mut().find(|t| t.name.starts_with(prefix) && t.name.contains("W_in")).unwrap();
        let mut vals = t.to_scalars::<f32>().unwrap();
        vals[3] = bad;
        let name = t.name.clone();
        *t = windtunnel::io::tensors::Tensor::from_scalars(name.clone(), t.shape.clone(), &vals);
        windtunnel::io::tensors::write(&resume, &f.tensors, f.metadata.as_deref()).unwrap();
        let out = train(&["train", "--quiet", "--resume", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(&format!("{name} element 3 is")), "{name}: {err}");
        assert_eq!(std::fs::read(dir.join("metrics.jsonl")).unwrap(), metrics, "nothing trained");
        windtunnel::io::tensors::write(&resume, &good.tensors, good.metadata.as_deref()).unwrap();
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_moved_init_file_does_not_block_a_resume_from_the_resume_state() {
    let cfg = cfg();
    let init = tmpdir("init.safetensors");
    windtunnel::io::weights::save_params(&init, &Model::<f32>::init(&cfg.model, 7)).unwrap();
    let cfg_path = tmpdir("cfg_init.toml");
    std::fs::write(&cfg_path, common::SMALL.replace("max_steps = 40", "max_steps = 20")).unwrap();
    let dir = tmpdir("moved_init");
    let made = windtunnel()
        .args(["train", "--quiet", "--config", cfg_path.to_str().unwrap(), "--out", dir.to_str().unwrap()])
        .args(["--set", &format!("train.init={:?}", init.to_str().unwrap())])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let moved = init.with_extension("moved");
    std::fs::rename(&init, &moved).unwrap();
    let out = windtunnel().args(["train", "--quiet", "--resume", dir.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Without a resume state the weights come from train.init again, so then it is needed.
    std::fs::remove_file(dir.join("resume.safetensors")).unwrap();
    let out = windtunnel().args(["train", "--quiet", "--resume", dir.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("train.init"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&moved).ok();
}

/// What would lose or mix results is a typed refusal a caller can match (exit code 4), not a
/// generic error: an existing run, `--force` on a directory that is not a run, a resume under an
/// edited config.
#[test]
fn refusals_that_protect_a_run_are_typed() {
    use windtunnel::error::Error;
    let dir = tmpdir("refused");
    crashed_run(&dir, 10);
    let again = RunDir::create(&dir, &cfg(), "f32", false).err().expect("an existing run is not overwritten");
    assert!(matches!(again, Error::Refused(_)) && again.exit_code() == 4, "{again:?}");
    // The trainer of an edited config (what `train --resume` builds from an edited config.toml).
    let edited_cfg = RunConfig::from_toml_with(common::SMALL, &["train.lr=0.5".to_string()], "test").unwrap();
    let edited =
        RunDir::resume(&dir, &mut trainer_of(edited_cfg), false).err().expect("an edited config is not resumed");
    assert!(matches!(edited, Error::Refused(ref m) if m.contains("train.lr")), "{edited:?}");
    let plain = tmpdir("refused-not-a-run");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "mine").unwrap();
    let forced = RunDir::create(&plain, &cfg(), "f32", true).err().expect("--force deletes only run directories");
    assert!(matches!(forced, Error::Refused(_)), "{forced:?}");
    assert!(plain.join("notes.txt").exists(), "nothing was deleted");
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&plain).ok();
}
