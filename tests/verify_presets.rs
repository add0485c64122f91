//! `verify`'s presets, calibrated: TransformerLens (the committed dumps of `golden/tl/`) passes
//! against windtunnel in f32 and f64 with margin, and four wrong ports fail in both dtypes with
//! the first divergence named where the port first goes wrong: LayerNorm eps 1e-6 instead of
//! 1e-5, another activation (ReLU for exact GELU), a 1e-3 change in one weight, and a loss over
//! unshifted positions.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use windtunnel::io::tensors::{self, Tensor, Values};
use windtunnel::numerics::math;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("verify-presets-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn golden(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/tl").join(name).to_string_lossy().into_owned()
}

/// windtunnel's export of the TL batch from `init`, with activations; `extra` are --set overrides.
fn export(dtype: &str, init: &str, extra: &[&str], out: &Path) {
    let batch = golden(&format!("grads_{dtype}.safetensors"));
    let mut args = vec!["export", "--init", init, "--batch", &batch, "--dtype", dtype, "--hooks", "-q"];
    for e in extra {
        args.extend(["--set", e]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
}

fn verify(reference: &Path, other: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["verify", reference.to_str().unwrap(), other.to_str().unwrap(), "--json"];
    args.extend(extra);
    let (code, out, err) = run(&args);
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}")))
}

/// The file with one tensor's values replaced.
fn edited(from: &Path, to: &Path, name: &str, edit: impl Fn(&[f64], &Tensor) -> Vec<f64>) {
    let file = tensors::read(from).unwrap();
    let ts: Vec<Tensor> = file
        .tensors
        .iter()
        .map(|t| match t.name == name {
            false => t.clone(),
            true => {
                let v = edit(&t.to_f64().unwrap(), t);
                match t.values {
                    Values::F32(_) => {
                        Tensor::from_scalars(name, t.shape.clone(), &v.iter().map(|&x| x as f32).collect::<Vec<_>>())
                    }
                    _ => Tensor::from_scalars(name, t.shape.clone(), &v),
                }
            }
        })
        .collect();
    tensors::write(to, &ts, file.metadata.as_deref()).unwrap();
}

/// Cross-entropy of logits at position t against labels at the same t: a port that forgot the shift.
fn unshifted_loss(file: &Path) -> f64 {
    let f = tensors::read(file).unwrap();
    let logits = f.get("logits").unwrap();
    let labels = f.get("labels").unwrap().to_f64().unwrap();
    let (v, shape) = (logits.to_f64().unwrap(), &logits.shape);
    let (b, t, n) = (shape[0], shape[1], shape[2]);
    let (mut sum, mut count) = (0.0, 0.0);
    for i in 0..b * t {
        let l = labels[i];
        if l < 0.0 {
            continue;
        }
        let row = &v[i * n..(i + 1) * n];
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + math::ln(row.iter().map(|x| math::exp(x - m)).sum::<f64>());
        sum += lse - row[l as usize];
        count += 1.0;
    }
    let _ = t;
    sum / count
}

#[test]
fn transformerlens_passes_and_four_wrong_ports_fail_at_their_first_divergence() {
    for dtype in ["f32", "f64"] {
        let init = golden(&format!("init_{dtype}.safetensors"));
        let wt = tmp(&format!("wt_{dtype}.safetensors"));
        export(dtype, &init, &[], &wt);
        // A correct port: TL's dump (its cache holds 2 of the 32 examples, so activations are left out).
        let tl = PathBuf::from(golden(&format!("grads_{dtype}.safetensors")));
        let (code, v) = verify(&tl, &wt, &["--exclude", "cache"]);
        assert_eq!(code, 0, "{dtype}: TransformerLens must pass: {v}");
        let worst = v["tensors"].as_array().unwrap().iter().filter_map(|t| t["norm_rel"].as_f64()).fold(0.0, f64::max);
        let tol = if dtype == "f32" { 1e-5 } else { 1e-12 };
        assert!(worst * 5.0 < tol, "{dtype}: TL passes with margin: worst {worst:e} vs {tol:e}");
        let wrong = |name: &str| tmp(&format!("{name}_{dtype}.safetensors"));
        export(dtype, &init, &["model.eps=1e-6"], &wrong("eps"));
        export(dtype, &init, &["model.act_fn=relu"], &wrong("act"));
        let nudged = tmp(&format!("init_nudged_{dtype}.safetensors"));
        edited(Path::new(&init), &nudged, "blocks.1.attn.W_V", |v, _| {
            let mut v = v.to_vec();
            v[0] += 1e-3;
            v
        });
        export(dtype, nudged.to_str().unwrap(), &[], &wrong("weight"));
        let unshifted = unshifted_loss(&wt);
        edited(&wt, &wrong("loss"), "loss", |_, _| vec![unshifted]);
        for (port, first) in [
            ("eps", "cache.blocks.0.ln1.hook_scale"),
            ("act", "cache.blocks.0.mlp.hook_post"),
            ("weight", "blocks.1.attn.W_V"),
            ("loss", "loss"),
        ] {
            let (code, v) = verify(&wt, &wrong(port), &[]);
            assert_eq!(code, 1, "{dtype} {port} must fail: {v}");
            assert_eq!(v["first_divergence"], first, "{dtype} {port}");
        }
    }
}

#[test]
fn shapes_are_explained_and_a_size_1_dim_is_no_difference() {
    let wt = tmp("shapes_ref.safetensors");
    export("f64", &golden("init_f64.safetensors"), &[], &wt);
    let file = tensors::read(&wt).unwrap();
    let reshaped: Vec<Tensor> = file
        .tensors
        .iter()
        .map(|t| match t.name.as_str() {
            "loss" => Tensor { shape: vec![1], ..t.clone() },
            "blocks.0.mlp.W_in" => {
                let (r, c) = (t.shape[0], t.shape[1]);
                let v = t.to_f64().unwrap();
                let tr: Vec<f64> = (0..r * c).map(|i| v[(i % r) * c + i / r]).collect();
                Tensor::from_scalars(t.name.clone(), vec![c, r], &tr)
            }
            _ => t.clone(),
        })
        .collect();
    let other = tmp("shapes_other.safetensors");
    tensors::write(&other, &reshaped, file.metadata.as_deref()).unwrap();
    let (code, v) = verify(&wt, &other, &[]);
    assert_eq!(code, 1);
    let row = |n: &str| v["tensors"].as_array().unwrap().iter().find(|t| t["name"] == n).unwrap().clone();
    assert_eq!(row("loss")["pass"], true, "a loss saved as [1] is the loss: {}", row("loss"));
    let w = row("blocks.0.mlp.W_in");
    assert_eq!(w["pass"], false);
    let note = w["note"].as_str().unwrap();
    assert!(note.contains("transposed") && note.contains("values match once transposed"), "{note}");
    assert_eq!(v["first_divergence"], "blocks.0.mlp.W_in");
}

#[test]
fn other_names_get_a_hint_and_rename_maps_them() {
    let wt = tmp("names_ref.safetensors");
    export("f64", &golden("init_f64.safetensors"), &[], &wt);
    let file = tensors::read(&wt).unwrap();
    let renamed = |f: &dyn Fn(&str) -> String| -> Vec<Tensor> {
        file.tensors.iter().map(|t| Tensor { name: f(&t.name), ..t.clone() }).collect()
    };
    // Hugging Face GPT-2 names for the embeddings: a hint, and the missing list is cut short.
    let hf = tmp("names_hf.safetensors");
    let to_hf = |n: &str| if n == "embed.W_E" { "transformer.wte.weight".into() } else { format!("x.{n}") };
    tensors::write(&hf, &renamed(&to_hf), None).unwrap();
    let (code, out, _) = run(&["verify", wt.to_str().unwrap(), hf.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("hint:") && out.contains("c_attn") && out.contains("more missing in"), "{out}");
    // --rename maps them back one to one: the comparison passes.
    let map = tmp("names.txt");
    let lines: String = file.tensors.iter().map(|t| format!("{} {}\n", to_hf(&t.name), t.name)).collect();
    std::fs::write(&map, lines).unwrap();
    let (code, out, err) =
        run(&["verify", wt.to_str().unwrap(), hf.to_str().unwrap(), "--rename", map.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

/// windtunnel's trajectory reference from the author's init and PyTorch's epoch permutation.
fn trajectory(out: &Path, extra: &[&str]) {
    let order = format!("train.data_order={:?}", golden("traj_constant_f64.safetensors"));
    let init = golden("init_f64.safetensors");
    let mut args = vec!["export", "--steps", "12", "--dtype", "f64", "--init", &init, "--set", &order, "-q"];
    for e in extra {
        args.extend(["--set", e]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_trajectory_reference_matches_pytorchs_and_a_wrong_loop_is_named() {
    let pytorch = PathBuf::from(golden("traj_constant_f64.safetensors"));
    let ours = tmp("traj.safetensors");
    trajectory(&ours, &[]);
    // The author's PyTorch loop (TL harness), 12 AdamW steps: losses, lr, gradient norms, parameters.
    let (code, v) = verify(&pytorch, &ours, &["--exclude", "perm"]);
    assert_eq!(code, 0, "{v}");
    assert!(v["compared"].as_u64().unwrap() >= 70, "{v}");
    let (code, v) = verify(
        &ours,
        &{
            let p = tmp("traj_lr.safetensors");
            trajectory(&p, &["train.lr=1.1e-3"]);
            p
        },
        &[],
    );
    assert_eq!((code, v["first_divergence"].as_str()), (1, Some("lr")));
    let no_decay = tmp("traj_wd.safetensors");
    trajectory(&no_decay, &["train.weight_decay=0.0"]);
    let (code, v) = verify(&ours, &no_decay, &[]);
    assert_eq!((code, v["first_divergence"].as_str()), (1, Some("losses")), "step 2's loss sees step 1's update");
    // The key bias drifts on rounding noise: within 2·Σlr it is no difference, beyond it is.
    let drift = |by: f64, name: &str| {
        let p = tmp(name);
        edited(&ours, &p, "blocks.2.attn.b_K", |v, _| v.iter().map(|x| x + by).collect());
        verify(&ours, &p, &[]).0
    };
    assert_eq!(drift(5e-3, "traj_bk_small.safetensors"), 0);
    assert_eq!(drift(0.1, "traj_bk_large.safetensors"), 1);
}

/// windtunnel's f32 trajectory replaying PyTorch's 25-step f32 run (golden/tl, python/make_golden.sh (c)).
fn trajectory_f32(out: &Path, extra: &[&str]) {
    let order = format!("train.data_order={:?}", golden("traj_constant_f32_25.safetensors"));
    let init = golden("init_f32.safetensors");
    let mut args = vec!["export", "--steps", "25", "--dtype", "f32", "--init", &init, "--set", &order, "-q"];
    for e in extra {
        args.extend(["--set", e]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_f32_trajectory_passes_on_adams_noise_floor_and_a_wrong_loop_still_fails() {
    let pytorch = PathBuf::from(golden("traj_constant_f32_25.safetensors"));
    let ours = tmp("traj32.safetensors");
    trajectory_f32(&ours, &[]);
    let (code, v) = verify(&pytorch, &ours, &["--exclude", "perm"]);
    assert_eq!(code, 0, "{v}");
    // Adam amplifies f32 rounding: some parameters differ beyond the f32 preset's 1e-5 normwise and
    // pass only by the trajectory rule, far inside its bound (1e-2·Σlr = 2.5e-4).
    let rows = v["tensors"].as_array().unwrap();
    let by_rule: Vec<&serde_json::Value> =
        rows.iter().filter(|r| r["note"].as_str().unwrap().contains("f32 trajectory")).collect();
    assert!(!by_rule.is_empty(), "{v}");
    assert!(by_rule.iter().all(|r| r["norm_rel"].as_f64().unwrap() > 1e-5 && r["max_abs"].as_f64().unwrap() < 1e-4));
    let losses = rows.iter().find(|r| r["name"] == "losses").unwrap();
    assert!(losses["norm_rel"].as_f64().unwrap() < 2e-6, "{losses}");
    // A loop without weight decay: the gradient norms show it (2.7e-5 vs noise 6e-7).
    let no_decay = tmp("traj32_wd.safetensors");
    trajectory_f32(&no_decay, &["train.weight_decay=0.0"]);
    let (code, v) = verify(&pytorch, &no_decay, &["--exclude", "perm"]);
    assert_eq!((code, v["first_divergence"].as_str()), (1, Some("grad_norm_sq")), "{v}");
    // A parameter off by more than the bound fails.
    let nudged = tmp("traj32_nudged.safetensors");
    edited(&ours, &nudged, "blocks.0.mlp.W_in", |v, _| {
        let mut v = v.to_vec();
        v[7] += 1e-3;
        v
    });
    let (code, v) = verify(&ours, &nudged, &[]);
    assert_eq!((code, v["first_divergence"].as_str()), (1, Some("blocks.0.mlp.W_in")), "{v}");
}
