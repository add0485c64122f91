//! The `windtunnel` binary end to end: output formats, exit codes, and clear errors.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn data_prints_the_spec_hashes_and_writes_jsonl() {
    let (code, out, _) = run(&[
        "data",
        "--task",
        "bz_to_a",
        "--k",
        "10",
        "--n-b",
        "1000",
        "--seed",
        "42",
        "--enforce-unique-first-char",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out, "sha_gen d48263b03358a2c6\nsha_train 42266227ef2e6b66\n");
    let (_, out, _) = run(&["data", "--k", "36", "--n-b", "278", "--enforce-unique-first-char"]);
    assert_eq!(out, "sha_gen 3a99c4e8895c2cf8\nsha_train 2b10b6ed783508f1\n");

    let path = std::env::temp_dir().join(format!("wt-data-{}.jsonl", std::process::id()));
    let (code, _, _) =
        run(&["data", "--k", "3", "--n-b", "5", "--enforce-unique-first-char", "--out", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 15);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["tokens"].as_array().unwrap().len(), 16);
    assert_eq!(first["labels"][11], first["tokens"][11]);
    std::fs::remove_file(path).ok();
}

#[test]
fn bad_data_parameters_exit_2_with_the_field_and_range() {
    for (args, want) in [
        (vec!["data", "--k", "37", "--enforce-unique-first-char"], "--k"),
        (vec!["data", "--k", "0"], "--k"),
        (vec!["data", "--n-b", "0"], "--n-b"),
        (vec!["data", "--b-length", "2", "--n-b", "5000"], "--n-b"),
        (vec!["data", "--k", "20", "--z-length", "1"], "--z-length"),
        (vec!["data", "--task", "ba"], "--task"),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert!(err.starts_with("error: ") && err.contains(want) && err.contains("allowed"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn gradcheck_tiny_prints_rows_and_max_and_fails_above_tolerance() {
    let (code, out, _) = run(&["gradcheck", "--batch-size", "2"]);
    assert_eq!(code, 0);
    let last = out.lines().last().unwrap();
    let v: f64 = last.strip_prefix("max_rel_err ").unwrap().parse().unwrap();
    assert!(v <= 1e-6, "{last}");
    assert_eq!(out.lines().count(), 72, "header + 70 tensors + max line");
    let (code, _, err) = run(&["gradcheck", "--batch-size", "2", "--tolerance", "1e-15"]);
    assert_eq!(code, 1);
    assert!(err.contains("FAILED"));
}

#[test]
fn gradcheck_config_errors_name_the_field() {
    let path = std::env::temp_dir().join(format!("wt-cfg-{}.toml", std::process::id()));
    std::fs::write(&path, "[model]\nn_layers = 0\n").unwrap();
    let (code, _, err) = run(&["gradcheck", "--config", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("model.n_layers") && err.contains("allowed 1..=64"), "{err}");
    std::fs::write(&path, "[model]\nd_modle = 3\n").unwrap();
    let (code, _, err) = run(&["gradcheck", "--config", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("d_modle"), "{err}");
    std::fs::remove_file(path).ok();
}

#[test]
fn replicate_only_selects_runs_by_name_and_rejects_unknown_names() {
    let out = std::env::temp_dir().join(format!("wt-only-{}", std::process::id()));
    let o = out.to_str().unwrap();
    let (code, stdout, _) =
        run(&["replicate", "lr", "--scale", "paper", "--out", o, "--list", "--only", "lr_k20_eta3e-4,canonical_k20"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names, ["lr_k20_eta3e-4", "canonical_k20"], "{stdout}");
    let (_, stdout, _) =
        run(&["replicate", "lr", "--scale", "paper", "--out", o, "--list", "--only", "lr_k20_eta2e-3,lr_k20_eta3e-4"]);
    let names: Vec<&str> = stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names, ["lr_k20_eta2e-3", "lr_k20_eta3e-4"], "in the order given: {stdout}");
    let (code, _, err) = run(&["replicate", "lr", "--scale", "paper", "--out", o, "--only", "lr_k20_eta9"]);
    assert_ne!(code, 0);
    assert!(err.contains("--only") && err.contains("\"lr_k20_eta9\"") && err.contains("lr_k20_eta2e-3"), "{err}");
    assert!(!out.exists(), "a rejected --only must not create the output directory");
}
