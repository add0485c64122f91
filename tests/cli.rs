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
    let lines: Vec<&str> = out.lines().collect();
    let max = lines[lines.len() - 2];
    let v: f64 = max.strip_prefix("max_rel_err ").unwrap().parse().unwrap();
    assert!(v <= 1e-6, "{max}");
    let verdict = lines[lines.len() - 1];
    assert!(verdict.starts_with("gradient check passed") && verdict.contains("tolerance 1.0e-6"), "{verdict}");
    assert_eq!(lines.len(), 73, "header + 70 tensors + max line + verdict");
    let (code, out, _) = run(&["gradcheck", "--batch-size", "2", "--tolerance", "1e-15"]);
    assert_eq!(code, 1);
    assert!(
        out.lines().last().unwrap().starts_with("gradient check FAILED") && out.contains("> tolerance 1.0e-15"),
        "{out}"
    );
    // --quiet prints only what failed: the verdict line alone.
    let (code, out, _) = run(&["gradcheck", "--batch-size", "2", "--tolerance", "1e-15", "--quiet"]);
    assert!(code == 1 && out.lines().count() == 1 && out.contains("FAILED"), "{out}");
}

#[test]
fn version_names_the_revision_and_the_arithmetic() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    let want = format!("windtunnel {} (revision ", env!("CARGO_PKG_VERSION"));
    assert!(out.starts_with(&want) && out.trim_end().ends_with(", arithmetic 2)"), "{out}");
}

#[test]
fn hashes_check_passes_on_the_golden_file_and_names_a_changed_hash() {
    let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/canonical_f64.txt");
    let (code, out, err) = run(&["hashes", "--dtype", "f64", "--check", golden]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("78 f64 hashes identical"), "{out}");
    // Another revision in the header is no difference; one changed hash and another arithmetic are.
    let text = std::fs::read_to_string(golden).unwrap();
    let other = std::env::temp_dir().join(format!("wt-golden-{}.txt", std::process::id()));
    std::fs::write(&other, text.replacen(" at ", " at 000000000000 was ", 1)).unwrap();
    assert_eq!(run(&["hashes", "--dtype", "f64", "--check", other.to_str().unwrap()]).0, 0);
    let loss = text.lines().find(|l| l.starts_with("loss ")).unwrap();
    let bad = text.replace(loss, "loss 0000000000000000").replacen("# arithmetic 2", "# arithmetic 1", 1);
    std::fs::write(&other, bad).unwrap();
    let (code, out, _) = run(&["hashes", "--dtype", "f64", "--check", other.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DIFFERS loss: ") && out.contains("golden 0000000000000000"), "{out}");
    assert!(
        out.contains("declares arithmetic 1")
            && out.contains("2 difference(s) from")
            && out.contains("(78 f64 hashes computed)"),
        "{out}"
    );
    std::fs::write(&other, "not a golden file\n").unwrap();
    let (code, _, err) = run(&["hashes", "--check", other.to_str().unwrap()]);
    assert!(code == 3 && err.contains("not a golden file"), "{err}");
    std::fs::remove_file(other).ok();
}

#[test]
fn a_text_input_from_a_device_is_refused_not_read_without_end() {
    let (code, _, err) = run(&["train", "--config", "/dev/zero", "--out", "/nonexistent/never"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("/dev/zero") && err.contains("longer than 16 MiB"), "{err}");
    let (code, _, err) = run(&["hashes", "--check", "/dev/zero"]);
    assert!(code == 3 && err.contains("longer than 16 MiB"), "{err}");
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
    let names = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("train "))
            .filter_map(|l| l.split_whitespace().nth(1))
            .map(String::from)
            .collect()
    };
    assert_eq!(names(&stdout), ["lr_k20_eta3e-4", "canonical_k20"], "{stdout}");
    assert!(stdout.contains("2 units: 0 finished, 0 training, 0 failed, 0 interrupted, 2 not started"), "{stdout}");
    let (_, stdout, _) =
        run(&["replicate", "lr", "--scale", "paper", "--out", o, "--list", "--only", "lr_k20_eta2e-3,lr_k20_eta3e-4"]);
    let names = names(&stdout);
    assert_eq!(names, ["lr_k20_eta2e-3", "lr_k20_eta3e-4"], "in the order given: {stdout}");
    let (code, _, err) = run(&["replicate", "lr", "--scale", "paper", "--out", o, "--only", "lr_k20_eta9"]);
    assert_ne!(code, 0);
    assert!(err.contains("--only") && err.contains("\"lr_k20_eta9\"") && err.contains("lr_k20_eta2e-3"), "{err}");
    assert!(!out.exists(), "a rejected --only must not create the output directory");
}

#[test]
fn replicate_works_from_any_directory_with_the_built_in_configs() {
    let dir = std::env::temp_dir().join(format!("wt-anywhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel"))
        .current_dir(&dir)
        .args(["replicate", "plateau", "--scale", "paper", "--out", "r", "--list-commands"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // 8 plateau runs and, at seeds 1 and 2, the 7 besides canonical K = 36 (none trained).
    assert_eq!(stdout.lines().count(), 8 + 2 * 7, "{stdout}");
    assert!(stdout.contains("--only zlen1_k10_s2\n") && !stdout.contains("canonical_k36_s1"), "{stdout}");
    assert!(stdout.lines().all(|l| l.contains(" replicate plateau --scale paper --out r --only ")), "{stdout}");
    // Edited configs: a directory without them is an error naming the file.
    let (code, _, err) =
        run(&["replicate", "plateau", "--scale", "paper", "--out", "r", "--list", "--configs", "/nonexistent"]);
    assert_eq!(code, 3, "an I/O error: {err}");
    assert!(err.contains("/nonexistent/zlen1_k10.toml"), "{err}");
    // No suite named: usage, with the names to choose from.
    let (code, _, err) = run(&["replicate", "--list"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("SUITES") && err.contains("allowed: all, plateau, fixed-d") && err.contains("linear"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replicate_status_as_json_carries_each_unit_with_its_command_and_state() {
    let o = std::env::temp_dir().join(format!("wt-status-{}", std::process::id()));
    let (code, stdout, err) = run(&[
        "replicate",
        "snap",
        "--scale",
        "ci",
        "--out",
        o.to_str().unwrap(),
        "--seeds",
        "2",
        "--status",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let units = v["units"].as_array().unwrap();
    let names: Vec<&str> = units.iter().map(|u| u["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ci_canonical_k10",
            "ci_canonical_k20",
            "ci_canonical_k10_s1",
            "ci_canonical_k20_s1",
            "ci_canonical_k10",
            "ci_canonical_k20",
            "ci_canonical_k10_s1",
            "ci_canonical_k20_s1"
        ],
        "the runs, then the probes of every seed"
    );
    assert_eq!(units[4]["kind"], "snap");
    assert_eq!(units[7]["kind"], "snap");
    assert!(units.iter().all(|u| u["state"] == "not_started" && u["command"].as_array().unwrap().len() > 5));
    assert_eq!(units[0]["max_steps"], 50000);
}

#[test]
fn replicate_status_counts_unreadable_and_foreign_run_directories_on_one_line_each() {
    let o = std::env::temp_dir().join(format!("wt-status-broken-{}", std::process::id()));
    let runs = o.join("ci/runs");
    for (name, config) in [("ci_lr_k10_eta1e-3", "garbage [[\n"), ("ci_lr_k10_eta2e-3", "[data]\nk = 3\n")] {
        std::fs::create_dir_all(runs.join(name)).unwrap();
        std::fs::write(runs.join(name).join("config.toml"), config).unwrap();
    }
    let (code, stdout, err) = run(&["replicate", "lr", "--scale", "ci", "--out", o.to_str().unwrap(), "--status"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "three units, the counts, the estimate: {stdout}");
    assert!(lines[0].contains("Mismatch") && lines[0].contains("not valid TOML"), "{stdout}");
    assert!(lines[1].contains("Mismatch") && lines[1].contains("manifest.json"), "{stdout}");
    assert!(lines[3].contains("1 not started, 2 mismatched"), "{stdout}");
    assert!(lines[4].starts_with("training left: 1 run"), "the mismatched are not estimated: {stdout}");
    std::fs::remove_dir_all(&o).unwrap();
}

#[test]
fn replicate_status_says_where_an_interrupted_run_resumes_and_who_holds_a_busy_one() {
    let o = std::env::temp_dir().join(format!("wt-status-resume-{}", std::process::id()));
    let o = o.to_str().unwrap();
    let go = |extra: &[&str]| {
        let mut a = vec!["replicate", "d-scaling", "--scale", "ci", "--out", o, "--only", "ci_canonical_k3"];
        a.extend(extra);
        run(&a)
    };
    let (code, _, err) = go(&["--threads", "1"]);
    assert_eq!(code, 0, "{err}");
    let run_dir = std::path::Path::new(o).join("ci/runs/ci_canonical_k3");
    // Killed after its last resume state but before its summary: interrupted at that step.
    std::fs::remove_file(run_dir.join("summary.json")).unwrap();
    let (code, stdout, err) = go(&["--status"]);
    assert_eq!(code, 0, "{err}");
    let line = stdout.lines().find(|l| l.contains("ci_canonical_k3")).unwrap();
    assert!(line.contains("Interrupted") && line.contains("resumes at step 300"), "{stdout}");
    // Held by a process on another host with a fresh heartbeat: training there, by name.
    std::fs::write(run_dir.with_extension("lock"), "node-17 4242 token=t\n").unwrap();
    let (_, stdout, _) = go(&["--status"]);
    let line = stdout.lines().find(|l| l.contains("ci_canonical_k3")).unwrap();
    assert!(line.contains("Training") && line.contains("process 4242 on node-17, heartbeat 0 s ago"), "{stdout}");
    // Silent for 2 minutes (two heartbeats are 1 minute): presumed interrupted, and where it resumes.
    let lock = std::fs::File::options().append(true).open(run_dir.with_extension("lock")).unwrap();
    lock.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(120)).unwrap();
    let (_, stdout, _) = go(&["--status"]);
    let line = stdout.lines().find(|l| l.contains("ci_canonical_k3")).unwrap();
    assert!(
        line.contains("no heartbeat for 12") && line.contains("s, presumed interrupted; resumes at step 300"),
        "{stdout}"
    );
    std::fs::remove_dir_all(o).unwrap();
}

#[test]
fn replicate_slurm_errors_name_the_problem() {
    let o = std::env::temp_dir().join(format!("wt-slurm-err-{}", std::process::id()));
    // No sbatch on PATH.
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel"))
        .env("PATH", "/nonexistent")
        .args(["replicate", "batch", "--out", o.to_str().unwrap(), "--executor", "slurm"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "could not run: {err}");
    assert!(err.contains("`sbatch` is not on PATH"), "{err}");
    // A results directory that cannot be created.
    let (code, _, err) = run(&["replicate", "batch", "--out", "/proc/nope", "--executor", "slurm", "--dry-run"]);
    assert_eq!(code, 3, "an I/O error: {err}");
    assert!(err.contains("/proc/nope: results directory cannot be created"), "{err}");
    // An unknown suite.
    let (code, _, err) = run(&["replicate", "bogus", "--executor", "slurm", "--dry-run"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"bogus\"") && err.contains("d-scaling"), "{err}");
    // --dry-run prints the array scripts and submits nothing.
    let (code, stdout, err) = run(&[
        "replicate",
        "batch",
        "--out",
        o.to_str().unwrap(),
        "--executor",
        "slurm",
        "--dry-run",
        "--partition",
        "p1",
        "--time",
        "01:00:00",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("#SBATCH --array=0-2")
            && stdout.contains("#SBATCH --partition=p1")
            && stdout.contains("#SBATCH --time=01:00:00"),
        "{stdout}"
    );
    assert!(stdout.contains("--dependency=afterany:"), "{stdout}");
    assert!(!o.join("ci/slurm/jobs.txt").exists());
    std::fs::remove_dir_all(&o).unwrap();
}

#[test]
fn train_refuses_a_run_another_host_is_training() {
    let dir = std::env::temp_dir().join(format!("wt-train-lock-{}", std::process::id()));
    let lock = dir.with_extension("lock");
    std::fs::write(&lock, "node-9 12345").unwrap();
    let (code, _, err) = run(&["train", "--out", dir.to_str().unwrap(), "--set", "train.max_steps=2"]);
    assert_eq!(code, 4, "refused: {err}");
    assert!(err.contains("node-9") && err.contains("12345"), "{err}");
    assert!(!dir.exists(), "nothing written");
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "node-9 12345");
    std::fs::remove_file(&lock).unwrap();
}

#[test]
fn train_force_never_deletes_a_directory_that_is_not_a_run() {
    let dir = std::env::temp_dir().join(format!("wt-precious-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("thesis.tex"), "years of work").unwrap();
    let (code, _, err) = run(&["train", "--out", dir.to_str().unwrap(), "--force", "--set", "train.max_steps=2"]);
    assert_eq!(code, 4, "refused: {err}");
    assert!(err.contains("not one") && err.contains("no run manifest") && err.contains("Nothing was deleted"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("thesis.tex")).unwrap(), "years of work");
    assert!(dir.join("sub").is_dir());
    // `--out . --force` from inside it.
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel"))
        .current_dir(&dir)
        .args(["train", "--out", ".", "--force", "--set", "train.max_steps=2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "refused: {err}");
    assert!(err.contains("Nothing was deleted"), "{err}");
    assert!(dir.join("thesis.tex").exists());
    // A run directory with a stranger's file in it is not deleted either.
    let run_dir = dir.join("run");
    let (code, _, err) = run(&["train", "--out", run_dir.to_str().unwrap(), "--set", "train.max_steps=2", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(run_dir.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = run(&["train", "--out", run_dir.to_str().unwrap(), "--force", "--set", "train.max_steps=2"]);
    assert_eq!(code, 4, "refused: {err}");
    assert!(err.contains("notes.txt"), "{err}");
    std::fs::remove_file(run_dir.join("notes.txt")).unwrap();
    // Nor one with a hidden file, or a stranger's file among its checkpoints or probes.
    std::fs::create_dir_all(run_dir.join("probes/data")).unwrap();
    for (file, shown) in [
        (".git", ".git"),
        ("checkpoints/mine.txt", "checkpoints/mine.txt"),
        ("checkpoints/.keep", "checkpoints/.keep"),
        ("probes/.secret.json", "probes/.secret.json"),
        ("probes/data/x.json", "probes/data"),
    ] {
        std::fs::write(run_dir.join(file), "mine").unwrap();
        let (code, _, err) =
            run(&["train", "--out", run_dir.to_str().unwrap(), "--force", "--set", "train.max_steps=2"]);
        assert_eq!(code, 4, "{file} refused: {err}");
        assert!(err.contains(shown), "{file}: {err}");
        assert!(run_dir.join(file).exists(), "{file} kept");
        std::fs::remove_file(run_dir.join(file)).unwrap();
    }
    std::fs::remove_dir(run_dir.join("probes/data")).unwrap();
    // An interrupted write's temp file is the run's own.
    std::fs::write(run_dir.join(".metrics.jsonl.123.tmp"), "").unwrap();
    std::fs::write(run_dir.join("checkpoints/.step_00000002.safetensors.77.tmp"), "").unwrap();
    let (code, _, err) =
        run(&["train", "--out", run_dir.to_str().unwrap(), "--force", "--set", "train.max_steps=2", "--quiet"]);
    assert_eq!(code, 0, "a real run is replaced: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn zero_counts_and_non_finite_settings_are_refused_by_name() {
    for (args, field) in [
        (vec!["probe", "snap", "--run", "/nonexistent", "--groups", "0"], "--groups"),
        (vec!["probe", "hessian", "--run", "/nonexistent", "--batch-size", "0"], "--batch-size"),
        (vec!["probe", "hessian", "--run", "/nonexistent", "--lanczos-steps", "0"], "--lanczos-steps"),
        (vec!["probe", "linear", "--hidden", "0"], "--hidden"),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(field) && err.contains("at least 1"), "{args:?}: {err}");
    }
    for (set, field) in [
        ("train.weight_decay=nan", "train.weight_decay"),
        ("train.lr=nan", "train.lr"),
        ("train.beta2=nan", "train.beta2"),
        ("train.adam_eps=1e-50", "train.adam_eps"),
    ] {
        let dir = std::env::temp_dir().join(format!("wt-nan-{}-{field}", std::process::id()));
        let (code, _, err) = run(&["train", "--out", dir.to_str().unwrap(), "--set", set]);
        assert_eq!(code, 2, "{set}: {err}");
        assert!(err.contains(field), "{set}: {err}");
        assert!(!dir.exists(), "{set}: nothing may be written");
    }
}

#[test]
fn the_linear_baseline_refuses_k_1_instead_of_printing_nan() {
    let (code, out, err) = run(&["probe", "linear", "--k", "1", "--steps", "1", "--out", "/tmp/wt-never-created"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--k") && err.contains("allowed 2..") && !out.contains("NaN"), "{err}");
}

#[test]
fn a_path_that_is_not_utf8_is_refused_by_its_flag_before_anything_is_written() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::env::temp_dir().join(std::ffi::OsStr::from_bytes(b"wt-not-utf8-\xff"));
    for flag in ["train --out", "train --resume", "export --out"] {
        let (cmd, f) = flag.split_once(' ').unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args([cmd, f]).arg(&bad).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains(f) && err.contains("not valid UTF-8") && !err.contains("panicked"), "{flag}: {err}");
        assert!(!bad.exists(), "{flag}: nothing written");
    }
}

#[test]
fn a_z_length_out_of_range_is_refused_for_every_task_instead_of_hanging() {
    for task in ["b_to_a", "bz_to_a"] {
        let (code, _, err) = run(&["data", "--task", task, "--z-length", "64"]);
        assert_eq!(code, 2, "{task}: {err}");
        assert!(err.contains("z_length") && err.contains("1..=4"), "{task}: {err}");
    }
}

/// The command's exit code and stderr under a fixed memory limit (the outcome then does not
/// depend on this machine's memory).
fn with_memory_limit(limit: &str, args: &[&str]) -> (i32, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(args).env("WINDTUNNEL_MAX_MEMORY", limit).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn sizes_too_large_for_the_machine_are_refused_with_the_estimate_before_allocating() {
    // A fixed limit, so the outcome does not depend on this machine's memory.
    let run = |args: &[&str]| with_memory_limit("16G", args);
    let huge = [
        "train",
        "--quiet",
        "--out",
        "/tmp/wt-never-created",
        "--set",
        "model.d_model=8192",
        "--set",
        "model.n_heads=256",
        "--set",
        "model.d_head=1024",
        "--set",
        "model.d_mlp=65536",
        "--set",
        "model.n_layers=64",
    ];
    let (code, err) = run(&huge);
    assert!(code != 0 && err.contains("GB of memory") && err.contains("17.2 GB is available"), "{err}");
    assert!(!std::path::Path::new("/tmp/wt-never-created").exists(), "refused before creating the run");
    let out = std::env::temp_dir().join("wt-export-huge.safetensors");
    let (code, err) =
        run(&["export", "--out", out.to_str().unwrap(), "--batch-size", "20000", "--set", "data.n_b=10000"]);
    assert!(code != 0 && err.contains("an export of a batch of 20000 needs about"), "{err}");
    for hidden in ["1000000000000", "18446744073709551615"] {
        let (code, err) =
            run(&["probe", "linear", "--hidden", hidden, "--steps", "1", "--out", "/tmp/wt-never-created"]);
        assert!(code != 0 && err.contains(&format!("the linear baseline with --hidden {hidden} needs about")), "{err}");
    }
    let (code, err) = run(&["verify", "/dev/zero", "/dev/zero"]);
    assert!(code != 0 && err.contains("not a regular file"), "{err}");
}

/// Hardening issue item 3: each of these ran past a 1 GB limit (export --steps held 8 GB at batch
/// 10,000; the data and many-tensor estimates were 3–15× low) and is now refused by its estimate.
#[test]
fn memory_estimates_cover_every_command_that_allocates_by_the_user_s_sizes() {
    let run = |args: &[&str]| with_memory_limit("700M", args);
    let dir = std::env::temp_dir().join(format!("wt-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let traj = dir.join("t.safetensors");
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec!["export", "--steps", "2", "--set", "train.batch_size=10000", "--out", traj.to_str().unwrap()],
            "training at batch 10000",
        ),
        (vec!["bench", "--batch-size", "10000", "--steps", "1", "--warmup", "0"], "training at batch 10000"),
        (vec!["gradcheck", "--batch-size", "10000"], "a gradient check of a batch of 10000"),
        // 780 bytes per example measured; 256 were assumed.
        (vec!["data", "--k", "10", "--n-b", "80000"], "a dataset of D = 800000 examples"),
    ];
    for (args, what) in cases {
        let (code, err) = run(&args);
        assert!(code == 4 && err.contains(&format!("{what} needs about")), "{args:?}: {err}");
    }
    assert!(!traj.exists());
    // A million one-float tensors: an 82 MB file that took 1.1 GB to read.
    let n = 1_000_000;
    let mut header = String::from("{");
    for i in 0..n {
        let sep = if i + 1 < n { "," } else { "}" };
        header +=
            &format!("\"t{i}\":{{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[{},{}]}}{sep}", 4 * i, 4 * i + 4);
    }
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.extend(vec![0u8; 4 * n]);
    let many = dir.join("many.safetensors");
    std::fs::write(&many, bytes).unwrap();
    let (code, err) = run(&["verify", many.to_str().unwrap(), many.to_str().unwrap()]);
    assert!(code == 4 && err.contains("reading") && err.contains("needs about"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_windtunnel_variable_is_refused_by_name() {
    let bin = env!("CARGO_BIN_EXE_windtunnel");
    let cases = [
        ("WINDTUNNEL_SIMD", "avx3", "allowed scalar, sse2, baseline, avx2, avx512"),
        ("WINDTUNNEL_MAX_MEMORY", "8 gigs", "allowed a number of bytes"),
        ("WINDTUNNEL_MAX_MEMORY", "0", "allowed a number of bytes ≥ 1"),
        ("WINDTUNNEL_LOCK_STALE", "9", "allowed whole seconds, 10–86400"),
        ("WINDTUNNEL_LOCK_STALE", "5m", "allowed whole seconds, 10–86400"),
    ];
    for (var, value, allowed) in cases {
        let out =
            std::process::Command::new(bin).args(["data", "--k", "3", "--n-b", "5"]).env(var, value).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {err}");
        assert!(err.contains(var) && err.contains(value) && err.contains(allowed), "{var}={value}: {err}");
    }
    for (var, value) in [("WINDTUNNEL_SIMD", "avx2"), ("WINDTUNNEL_MAX_MEMORY", "8G"), ("WINDTUNNEL_LOCK_STALE", "10")]
    {
        let out =
            std::process::Command::new(bin).args(["data", "--k", "3", "--n-b", "5"]).env(var, value).output().unwrap();
        assert!(out.status.success(), "{var}={value}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn completions_are_scripts_the_shell_accepts_naming_every_subcommand() {
    let (code, bash, _) = run(&["completions", "bash"]);
    assert_eq!(code, 0);
    for word in ["replicate", "verify", "--scale", "--resume", "completions"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let path = std::env::temp_dir().join(format!("wt-completion-{}.bash", std::process::id()));
    std::fs::write(&path, &bash).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    std::fs::remove_file(&path).ok();
    assert!(syntax.success(), "bash -n rejects the completion script");
    let (code, zsh, _) = run(&["completions", "zsh"]);
    assert!(code == 0 && zsh.starts_with("#compdef windtunnel"), "{}", &zsh[..zsh.len().min(80)]);
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert!(code == 2 && err.contains("possible values"), "{err}");
}
