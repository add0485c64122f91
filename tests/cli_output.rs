//! One CLI: `--json` gives one JSON document on stdout, `-q` prints nothing on success, and the
//! exit code tells a failed check (1) from bad usage (2), a file problem (3) and a refusal (4).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} --json is not one JSON document ({e}): {out}"))
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-output-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// `bench --products` times every matrix product of the timed steps, once: their FLOPs are the
/// step's useful FLOPs less attention's (a product run transposed is counted once), and the MLP's
/// forward and weight gradient are among them, each with its split.
#[test]
fn bench_products_times_every_product_of_the_step() {
    let args = ["bench", "--batch-size", "4", "--steps", "2", "--warmup", "1", "--eval-every", "1000", "--json"];
    let b = json(&[&args[..], &["--products"]].concat());
    let p = b["products_in_step"].as_array().unwrap_or_else(|| panic!("no products_in_step: {b}"));
    let num = |r: &Value, k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}"));
    let flop: f64 = p.iter().map(|r| 2.0 * num(r, "m") * num(r, "k") * num(r, "n") * num(r, "calls_per_step")).sum();
    let useful = num(&b, "useful_gflop_per_step") * 1e9;
    assert!(flop <= useful * (1.0 + 1e-12) && flop > 0.5 * useful, "products {flop} of useful {useful}: {b}");
    for r in p {
        // Packing is part of the product's time (no threshold on either: times are the machine's).
        assert!((0.0..=num(r, "ms_per_step")).contains(&num(r, "pack_ms_per_step")), "{r}");
    }
    let has = |layout: &str, m: f64, k: f64, n: f64, split: &str| {
        p.iter().any(|r| {
            r["layout"] == layout && num(r, "m") == m && num(r, "k") == k && num(r, "n") == n && r["split"] == split
        })
    };
    // 4 examples × 15 positions: X·W_in, and dW_in = Xᵀ·dY run as its transpose (gemm::split).
    assert!(has("nn", 60.0, 128.0, 512.0, "rows") && has("tn", 128.0, 60.0, 512.0, "transposed"), "{p:?}");
    assert!(json(&args)["products_in_step"].is_null(), "only with --products");
    let (code, _, err) = run(&["bench", "--products", "--kernels"]);
    assert!(code == 2 && err.contains("--kernels"), "{code}: {err}");
}

#[test]
fn every_results_command_speaks_json() {
    let d = json(&["data", "--k", "3", "--n-b", "5", "--json"]);
    assert_eq!(d["examples"], 15);
    assert!(d["sha_gen"].as_str().is_some_and(|h| h.len() == 16), "{d}");
    let g = json(&["gradcheck", "--tiny", "--json"]);
    assert_eq!(g["passed"], true);
    assert!(g["max_rel_err"].as_f64().is_some() && !g["rows"].as_array().unwrap().is_empty(), "{g}");
    let file = tmp("ref.safetensors");
    let f = file.to_str().unwrap();
    let e = json(&["export", "--set", "model.n_layers=1", "--batch-size", "2", "--out", f, "--json"]);
    assert_eq!(e["examples"], 2);
    assert!(e["loss"].as_f64().is_some_and(|l| l > 0.0), "{e}");
    let v = json(&["verify", f, f, "--json"]);
    assert_eq!(v["passed"], true);
    assert_eq!(v["failed"], 0);
    assert!(v["compared"].as_u64().unwrap() > 10 && v["tensors"][0]["max_abs"].is_number(), "{v}");
    let b = json(&["bench", "--batch-size", "2", "--steps", "1", "--warmup", "0", "--json"]);
    assert!(b["median_ms"].as_f64().is_some_and(|t| t > 0.0) && b["arithmetic"].is_number(), "{b}");
    let b = json(&["bench", "--batch-size", "2", "--steps", "1", "--warmup", "0", "--tiling", "4x8", "--json"]);
    assert!(b["kernels"].as_str().is_some_and(|k| k.contains("tiles f32 4x8 / f64 4x8")), "{b}");
    let (code, _, err) = run(&["bench", "--tiling", "5x5"]);
    assert!(code == 2 && err.contains("--tiling") && err.contains("12x32"), "{code}: {err}");
    let dir = tmp("run");
    let r = dir.to_str().unwrap();
    let t = json(&[
        "train",
        "--out",
        r,
        "--set",
        "model.n_layers=1",
        "--set",
        "train.max_steps=2",
        "--set",
        "train.eval_every=1",
        "--json",
    ]);
    assert_eq!(t["summary"]["steps"], 2);
    let loss = std::fs::read_to_string(dir.join("loss.csv")).unwrap();
    assert!(loss.starts_with("series,kind,step,loss (nats)") && loss.contains("\ncandidate loss,line,"), "{loss}");
    assert!(std::fs::read_to_string(dir.join("loss.svg")).unwrap().contains("first-target loss"));
    let a = json(&["probe", "attention", "--run", r, "--examples", "4", "--json"]);
    assert!(a["heads"].as_array().is_some_and(|h| !h.is_empty()), "{a}");
    // A line per checkpoint on stderr while a probe works (the run has checkpoints at 0, 1, 2);
    // none with --quiet.
    let (code, _, err) = run(&["probe", "attention", "--run", r, "--examples", "4"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("attention: checkpoint 1/3 (step 0)") && err.contains("checkpoint 3/3 (step 2)"), "{err}");
    let (code, _, err) = run(&["probe", "attention", "--run", r, "--examples", "4", "--quiet"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let l =
        json(&["replicate", "plateau", "--scale", "paper", "--out", tmp("rep").to_str().unwrap(), "--list", "--json"]);
    let units = l["units"].as_array().unwrap();
    assert_eq!(units.len(), 8 + 2 * 7, "8 plateau runs, 7 of them at seeds 1 and 2");
    assert!(units.iter().all(|u| u["state"] == "not_started" && u.get("hours_left").is_none()), "no rate measured yet");
}

#[test]
fn quiet_prints_nothing_on_success_and_the_failures_otherwise() {
    for args in [vec!["data", "--k", "3", "--n-b", "5", "-q"], vec!["gradcheck", "--tiny", "--quiet"]] {
        let (code, out, err) = run(&args);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""), "{args:?}");
    }
    let (a, b) = (tmp("a.safetensors"), tmp("b.safetensors"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    assert_eq!(run(&["export", "--set", "model.n_layers=1", "--batch-size", "2", "--out", a, "-q"]).0, 0);
    assert_eq!(run(&["export", "--set", "model.n_layers=1", "--batch-size", "3", "--out", b, "-q"]).0, 0);
    assert_eq!(run(&["verify", a, a, "-q"]), (0, String::new(), String::new()));
    let (code, out, _) = run(&["verify", a, b, "-q"]);
    assert_eq!(code, 1, "a failed check");
    assert!(out.contains("FAIL") && !out.contains(" ok"), "only the failures: {out}");
    let (code, _, err) = run(&["data", "-q", "--json"]);
    assert_eq!(code, 2, "--quiet and --json conflict: {err}");
}

#[test]
fn exit_codes_tell_usage_from_files_from_refusals() {
    // Bad usage: clap's own errors and config values, with the nearest key for a misspelling.
    assert_eq!(run(&["train", "--no-such-flag"]).0, 2);
    let (code, _, err) = run(&["train", "--set", "train.lrr=1e-3", "--out", tmp("never").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`train.lrr`") && err.contains("did you mean `lr`?"), "{err}");
    let (code, _, err) = run(&["train", "--set", "trian.lr=1e-3"]);
    assert!(code == 2 && err.contains("did you mean `train`?"), "{err}");
    let (code, _, err) = run(&["probe", "linear", "--steps", "0"]);
    assert!(code == 2 && err.contains("--steps"), "a baseline of no steps has no loss: {err}");
    // Files: missing (I/O) and malformed (format).
    let junk = tmp("junk.safetensors");
    std::fs::write(&junk, b"not a tensor file").unwrap();
    assert_eq!(run(&["verify", "/nonexistent/a", "/nonexistent/b"]).0, 3);
    assert_eq!(run(&["verify", junk.to_str().unwrap(), junk.to_str().unwrap()]).0, 3);
    let (code, _, err) = run(&["probe", "snap", "--run", "/nonexistent"]);
    assert!(code == 3 && err.contains("give --run a directory made by"), "{err}");
    let nowhere = tmp("nowhere");
    let (code, _, err) = run(&["replicate", "plateau", "--report-only", "--out", nowhere.to_str().unwrap()]);
    assert!(code == 3 && err.contains("no runs here to report on"), "{err}");
    assert!(!nowhere.exists(), "a report over nothing is not written");
    // Refused: an existing run without --resume or --force.
    let dir = tmp("exists");
    let r = dir.to_str().unwrap();
    assert_eq!(run(&["train", "--out", r, "--set", "model.n_layers=1", "--set", "train.max_steps=1", "-q"]).0, 0);
    let (code, _, err) = run(&["train", "--out", r, "--set", "model.n_layers=1", "--set", "train.max_steps=1"]);
    assert!(code == 4 && err.contains("already exists"), "{err}");
}
