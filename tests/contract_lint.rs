//! A textual backstop for the determinism contract, so that `cargo test` alone fails when `src/`
//! fuses a multiply-add outside `numerics/fused.rs` (arithmetic v2: the one door to FMA), uses
//! fast-math intrinsics, hash maps, or a rayon reduction. The type-aware check of std
//! transcendentals (`f32::exp` …) is `clippy.toml`, which `.ci/run` enforces with `-D warnings`;
//! this test also makes sure those rules stay in place.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Marker for the one audited exception: a single-key metadata map required by the
/// safetensors API (no iteration order can reach the output).
const ONE_KEY_MAP: &str = "// determinism: one-key map";

/// Source with `//` comments removed (docs may *mention* banned names).
fn code_of(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(ONE_KEY_MAP))
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Ways to spell a fused multiply-add; only `numerics/fused.rs` may use them.
const FMA_SPELLINGS: [&str; 5] = ["mul_add", "fmadd", "fmaf(", "libm::fma", "_mm_fma"];

/// Statements (split at `;`, `{`, `}`) that start a rayon parallel iterator and end in a reduction.
fn parallel_reductions(code: &str) -> Vec<String> {
    let mut found = vec![];
    for stmt in code.split([';', '{', '}']) {
        let flat: String = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        let parallel = flat.contains("par_iter") || flat.contains("par_chunks") || flat.contains("into_par_iter");
        let reduces = [".sum(", ".sum::<", ".product(", ".reduce(", ".reduce_with(", ".fold(", ".fold_with("]
            .iter()
            .any(|r| flat.contains(r));
        if parallel && reduces {
            found.push(flat);
        }
    }
    found
}

#[test]
fn src_has_no_fma_fast_math_hash_maps_or_parallel_reductions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 10, "src/ not found");
    let banned = ["_fast(", "algebraic_", "HashMap", "HashSet", "core::intrinsics", "fmsub", "fnmadd"];
    let mut problems = vec![];
    for f in &files {
        let code = code_of(f);
        for b in banned {
            if code.contains(b) {
                problems.push(format!("{}: uses `{b}`", f.display()));
            }
        }
        if !f.ends_with("numerics/fused.rs") {
            for b in FMA_SPELLINGS.iter().filter(|b| code.contains(*b)) {
                problems.push(format!("{}: fuses with `{b}` outside numerics/fused.rs", f.display()));
            }
        }
        for r in parallel_reductions(&code) {
            problems.push(format!("{}: parallel reduction `{r}`", f.display()));
        }
    }
    assert!(problems.is_empty(), "determinism contract violations:\n{}", problems.join("\n"));
}

#[test]
fn the_lint_itself_detects_violations() {
    assert_eq!(parallel_reductions("let s: f32 = xs.par_iter().map(|x| x * 2.0).sum();").len(), 1);
    assert_eq!(parallel_reductions("let s = xs\n  .par_chunks(8)\n  .fold(|| 0.0, |a, b| a + b[0]);").len(), 1);
    assert!(
        parallel_reductions("out.par_chunks_mut(8).for_each(|c| c[0] = 1.0); let s = v.iter().sum::<f32>();")
            .is_empty()
    );
}

#[test]
fn fma_lives_in_one_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/numerics/fused.rs");
    let code = code_of(&root);
    assert!(code.contains("mul_add") && code.contains("libm::fmaf"), "numerics/fused.rs lost its FMA");
    assert!(FMA_SPELLINGS.iter().any(|b| "let y = x.mul_add(a, b);".contains(b)), "the FMA lint matches nothing");
}

#[test]
fn clippy_rules_for_std_transcendentals_are_in_place() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("clippy.toml")).unwrap();
    for m in [
        "f32::exp",
        "f32::ln",
        "f32::tanh",
        "f32::powf",
        "f32::powi",
        "f64::exp",
        "f64::ln",
        "f32::mul_add",
        "rayon::iter::ParallelIterator::sum",
        "rayon::iter::ParallelIterator::reduce",
        "rayon::iter::ParallelIterator::fold",
        "std::collections::HashMap",
    ] {
        assert!(text.contains(&format!("\"{m}\"")), "clippy.toml lost the rule for {m}");
    }
}

/// The features `cargo` resolves for the library's dependencies, per package: `cargo tree` over
/// normal edges, or normal and dev edges.
fn resolved_features(edges: &str) -> std::collections::BTreeMap<String, String> {
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--offline", "--prefix", "none", "-f", "{p}|{f}", "-e", edges])
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines = text.lines().map(|l| l.trim_end_matches(" (*)")).filter_map(|l| l.split_once('|'));
    lines.map(|(p, f)| (p.to_string(), f.to_string())).collect()
}

/// `cargo build` and `cargo test` must resolve the same features for every package they share;
/// otherwise each compiles its own copy of the library (≈ 150 s apiece in CI, three switches
/// between them) and a developer alternating the README's two commands pays it every time.
#[test]
fn build_and_test_resolve_the_same_features_so_the_library_compiles_once() {
    let (build, test) = (resolved_features("normal"), resolved_features("normal,dev"));
    assert!(build.len() > 20, "{build:?}");
    let differ: Vec<String> = build
        .iter()
        .filter(|(p, f)| test.get(*p).is_some_and(|t| t != *f))
        .map(|(p, f)| format!("{p}: build [{f}] vs test [{}]", test[p]))
        .collect();
    assert!(differ.is_empty(), "pin these features in Cargo.toml's [dependencies]: {differ:#?}");
}

/// The Python extension's crate copies the root's release profile, so `pip install ./python`
/// reuses the dependencies `cargo test --release` compiled and builds windtunnel as the root does.
#[test]
fn the_python_extension_builds_with_the_root_release_profile() {
    let profile = |path: &str| {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
        text.parse::<toml::Table>().unwrap()["profile"].clone()
    };
    // The root's own package gets the plain `[profile.release]`; in the extension's workspace
    // windtunnel is a dependency and needs those settings named, or "*" would reach it.
    let mut root = profile("Cargo.toml");
    let release = root["release"].as_table().unwrap().clone();
    let own: toml::Table = release.iter().filter(|(_, v)| !v.is_table()).map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut own_opt = toml::Table::from_iter([("opt-level".to_string(), toml::Value::Integer(3))]);
    own_opt.extend(own);
    let release = root["release"].as_table_mut().unwrap();
    release["package"].as_table_mut().unwrap().insert("windtunnel".into(), own_opt.into());
    assert_eq!(profile("python/native/Cargo.toml"), root);
}
