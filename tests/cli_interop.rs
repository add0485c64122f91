//! `windtunnel export` and `windtunnel verify` end to end, including bad files.

mod common;
use common::Scratch;
use std::path::Path;
use std::process::Command;
use windtunnel::io::tensors::{self, Values};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("interop-{name}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn export_then_verify_catches_a_perturbed_tensor_by_name() {
    let a = tmp("a.safetensors");
    let (code, _, err) = run(&["export", "--batch-size", "4", "--out", s(&a)]);
    assert_eq!(code, 0, "{err}");
    let f = tensors::read(&a).unwrap();
    for key in ["tokens", "labels", "logits", "loss", "embed.W_E", "grad.unembed.b_U", "grad.blocks.3.attn.W_K"] {
        assert!(f.get(key).is_some(), "export lacks {key}");
    }
    assert_eq!(f.get("logits").unwrap().shape, vec![4, 16, 40]);
    assert_eq!(f.get("loss").unwrap().shape, Vec::<usize>::new());
    assert!(matches!(f.get("labels").unwrap().values, Values::I64(_)));
    // Provenance: the arithmetic version, crate version and revision that computed the tensors.
    let meta: serde_json::Value = serde_json::from_str(f.metadata.as_deref().unwrap()).unwrap();
    assert_eq!(meta["arithmetic"], windtunnel::numerics::ARITHMETIC, "{meta}");
    assert_eq!(meta["windtunnel_version"], env!("CARGO_PKG_VERSION"), "{meta}");
    assert!(meta["git_revision"].as_str().is_some_and(|r| !r.is_empty()), "{meta}");

    // A second export, by another process, is bit-identical tensor by tensor.
    let b = tmp("b.safetensors");
    let (code, _, err) = run(&["export", "--batch-size", "4", "--out", s(&b)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(&["verify", s(&a), s(&b)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("144 tensors compared, 0 failed"), "{out}");
    assert_eq!(out.lines().count(), 2, "a pass is the diagnosis and the count: {out}");
    let (code, out, _) = run(&["verify", s(&a), s(&b), "--all"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().filter(|l| l.ends_with("  ok")).count(), 144, "--all: a row per tensor: {out}");

    let mut g = f.clone();
    let t = g.tensors.iter_mut().find(|t| t.name == "grad.blocks.1.mlp.W_out").unwrap();
    if let Values::F32(v) = &mut t.values {
        v[7] += 1e-3;
    }
    let b = tmp("b.safetensors");
    tensors::write(&b, &g.tensors, None).unwrap();
    let (code, out, _) = run(&["verify", s(&a), s(&b)]);
    assert_eq!(code, 1);
    let failing: Vec<&str> = out.lines().filter(|l| l.contains("FAIL")).collect();
    assert_eq!(failing.len(), 1, "{out}");
    assert!(failing[0].starts_with("grad.blocks.1.mlp.W_out"), "{out}");

    // Missing and extra keys, and --keys filtering.
    g.tensors.retain(|t| t.name != "logits");
    tensors::write(&b, &g.tensors, None).unwrap();
    let (code, out, _) = run(&["verify", s(&a), s(&b), "--keys", "logits,loss"]);
    assert_eq!(code, 1);
    assert!(out.contains("logits") && out.contains("missing in"), "{out}");
    let (code, out, _) = run(&["verify", s(&a), s(&b), "--keys", "loss"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 tensors compared, 0 failed"), "{out}");
}

#[test]
fn bad_files_give_clear_errors_not_panics() {
    let good = tmp("good.safetensors");
    run(&["export", "--batch-size", "2", "--out", s(&good)]);
    let bytes = std::fs::read(&good).unwrap();
    let trunc = tmp("trunc.safetensors");
    std::fs::write(&trunc, &bytes[..bytes.len() / 2]).unwrap();
    let junk = tmp("junk.safetensors");
    std::fs::write(&junk, b"# not a tensor file\nhello world\n").unwrap();
    let empty = tmp("empty.safetensors");
    std::fs::write(&empty, b"").unwrap();
    for bad in [&trunc, &junk, &empty] {
        for args in
            [vec!["verify", s(&good), s(bad)], vec!["export", "--init", s(bad), "--out", s(&tmp("x.safetensors"))]]
        {
            let (code, _, err) = run(&args);
            assert_eq!(code, 3, "a format error: {args:?}: {err}");
            assert!(err.contains("not a") && err.contains(s(bad)) && !err.contains("panicked"), "{err}");
        }
    }
    let (code, _, err) = run(&["verify", s(&good), "/nonexistent/file.safetensors"]);
    assert_eq!(code, 3, "an I/O error");
    assert!(err.contains("No such file"), "{err}");

    // A weights file of another config.
    let small = tmp("small.safetensors");
    let (code, _, err) = run(&["export", "--set", "model.n_layers=2", "--batch-size", "2", "--out", s(&small)]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["export", "--init", s(&small), "--out", s(&tmp("y.safetensors"))]);
    assert_eq!(code, 3, "a format error: {err}");
    assert!(err.contains("another config") && err.contains("n_layers=2"), "{err}");
    // A batch file without labels.
    let (code, _, err) = run(&["export", "--batch", s(&tmp("y.safetensors")), "--out", s(&tmp("z.safetensors"))]);
    assert_eq!(code, 3, "no such file: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn export_on_the_authors_init_reproduces_the_tl_batch_loss() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let init = root.join("golden/tl/init_f64.safetensors");
    let tl = root.join("golden/tl/grads_f64.safetensors");
    let out = tmp("wt_tl.safetensors");
    let (code, _, err) = run(&["export", "--init", s(&init), "--batch", s(&tl), "--dtype", "f64", "--out", s(&out)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(&[
        "verify",
        s(&tl),
        s(&out),
        "--keys",
        "loss,logits,grad.blocks.0.mlp",
        "--rtol",
        "1e-9",
        "--atol",
        "1e-14",
    ]);
    assert_eq!(code, 0, "{out}");
}

/// A safetensors file with one tensor `x` of the given dtype and raw bytes.
fn raw_safetensors(path: &Path, dtype: &str, shape: &[usize], data: &[u8]) {
    let header = format!(r#"{{"x":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[0,{}]}}}}"#, data.len());
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn verify_compares_integer_tensors_exactly_and_refuses_a_nan_tolerance() {
    let (a, b) = (tmp("u8a.safetensors"), tmp("u8b.safetensors"));
    for dtype in ["U8", "BOOL", "I8"] {
        raw_safetensors(&a, dtype, &[2], &[1, 0]);
        raw_safetensors(&b, dtype, &[2], &[1, 1]);
        let (code, out, _) = run(&["verify", s(&a), s(&b)]);
        assert_eq!(code, 1, "{dtype}: {out}");
        assert!(out.contains("1 integer elements differ") && out.contains("1 failed"), "{dtype}: {out}");
        let (code, out, _) = run(&["verify", s(&a), s(&b), "--quiet"]);
        assert_eq!(code, 1, "{dtype} --quiet: {out}");
        // The same integers agree (exactly: no tolerance applies to them).
        let (code, out, _) = run(&["verify", s(&a), s(&a)]);
        assert!(code == 0 && out.contains("0 failed"), "{dtype} against itself: {out}");
        // Left out explicitly, it is not a failure (and nothing is compared).
        let (code, out, _) = run(&["verify", s(&a), s(&b), "--exclude", "x"]);
        assert!(code == 1 && out.contains("0 tensors compared"), "an empty comparison is no pass: {out}");
    }
    for bad in ["nan", "-1", "inf"] {
        let flag = format!("--rtol={bad}");
        let (code, _, err) = run(&["verify", s(&a), s(&b), &flag]);
        assert_eq!(code, 2, "--rtol {bad}: {err}");
        assert!(err.contains("--rtol"), "{err}");
    }
}
