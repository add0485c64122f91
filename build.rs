//! Records the git revision (with a `-dirty` suffix for uncommitted changes, untracked files
//! included) for run manifests,
//! and builds the paper's `configs/*.toml` into the binary (so a job on any node can resolve them).
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Untracked files count: a new source file not yet committed is part of the build.
    let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    println!("cargo:rustc-env=WINDTUNNEL_GIT_REV={rev}{}", if dirty { "-dirty" } else { "" });
    println!("cargo:rerun-if-changed=.git/HEAD");
    // A commit moves the branch ref, not HEAD (and need not rewrite the index).
    // Watch only files that exist: cargo reruns a build script whose watched file is missing.
    for name in git(&["symbolic-ref", "-q", "HEAD"]).into_iter().chain(["packed-refs".into()]) {
        match git(&["rev-parse", "--git-path", &name]) {
            Some(path) if std::path::Path::new(&path).exists() => println!("cargo:rerun-if-changed={path}"),
            _ => {}
        }
    }
    println!("cargo:rerun-if-changed=.git/index");
    println!("cargo:rerun-if-changed=src");
    builtin_configs();
}

/// `$OUT_DIR/configs.rs`: `BUILTIN`, every `configs/*.toml` as (file name, text), sorted by name.
fn builtin_configs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("configs/ directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub static BUILTIN: &[(&str, &str)] = &[\n");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        out += &format!("    ({name:?}, include_str!({:?})),\n", f.display().to_string());
    }
    out += "];\n";
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("configs.rs");
    std::fs::write(dest, out).expect("write configs.rs");
}
