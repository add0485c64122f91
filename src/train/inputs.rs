//! What a run was started from: its resolved config and a hash of every input file, recorded in
//! the manifest, so that `--resume` refuses a run whose config was edited or whose input files
//! changed, and says which. Input paths are stored absolute; a relative one (a hand-written
//! config) resolves against the run directory, never against wherever the resume is started.

use crate::config::RunConfig;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The config keys that name input files, with their paths.
fn paths(cfg: &RunConfig) -> Vec<(&'static str, String)> {
    let mut v = vec![];
    if !cfg.train.init.starts_with("seed:") {
        v.push(("train.init", cfg.train.init.clone()));
    }
    if let Some(p) = &cfg.train.data_order {
        v.push(("train.data_order", p.clone()));
    }
    v
}

fn map_paths(cfg: &mut RunConfig, f: impl Fn(&str) -> String) {
    if !cfg.train.init.starts_with("seed:") {
        cfg.train.init = f(&cfg.train.init);
    }
    if let Some(p) = &cfg.train.data_order {
        cfg.train.data_order = Some(f(p));
    }
}

/// A new run: relative input paths made absolute (from the current directory).
pub fn absolute(mut cfg: RunConfig) -> Result<RunConfig> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?;
    map_paths(&mut cfg, |p| cwd.join(p).to_string_lossy().into_owned());
    Ok(cfg)
}

/// A resumed run: relative input paths resolve against its directory.
pub fn against_run(mut cfg: RunConfig, run: &Path) -> RunConfig {
    map_paths(&mut cfg, |p| run.join(p).to_string_lossy().into_owned());
    cfg
}

fn sha256_file(key: &str, path: &str) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::config(key, format!("cannot read {path}: {e}")))?;
    Ok(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// `{config key: sha256 of the file}` for every input file.
pub fn hashes(cfg: &RunConfig) -> Result<BTreeMap<String, String>> {
    paths(cfg).into_iter().map(|(k, p)| Ok((k.to_string(), sha256_file(k, &p)?))).collect()
}

/// The keys whose values differ between two TOML texts, in order ("train.lr").
pub fn differing_keys(have: &str, want: &str) -> Vec<String> {
    let entries = |t: &str| -> BTreeMap<String, String> {
        let mut section = String::new();
        let mut m = BTreeMap::new();
        for line in t.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = format!("{s}.");
            } else if let Some((k, v)) = line.split_once('=') {
                m.insert(format!("{section}{}", k.trim()), v.trim().to_string());
            }
        }
        m
    };
    let (a, b) = (entries(have), entries(want));
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect()
}

/// Refuse to resume `run` when its config differs from the one it started with, or an input
/// file changed. Runs started before these were recorded (`recorded` None) are not checked.
/// `from_state`: the run continues from its resume state, which holds the weights, so the file
/// of `train.init` is neither read nor compared (it may have moved since the run started).
pub fn check(
    run: &Path,
    cfg: &RunConfig,
    recorded: Option<&str>,
    files: &BTreeMap<String, String>,
    from_state: bool,
) -> Result<()> {
    let Some(recorded) = recorded else { return Ok(()) };
    let keys = differing_keys(&cfg.to_toml(), recorded);
    if !keys.is_empty() {
        return Err(Error::refused(format!(
            "{}: config.toml differs from the config the run started with ({}); a resumed run must keep its config. \
             Restore it, or start a new run",
            run.display(),
            keys.join(", ")
        )));
    }
    let paths: BTreeMap<&str, String> = paths(cfg).into_iter().collect();
    for (key, was) in files {
        if from_state && key == "train.init" {
            continue;
        }
        let now = match paths.get(key.as_str()) {
            Some(p) => Some(sha256_file(key, p)?),
            None => None,
        };
        if now.as_ref() != Some(was) {
            return Err(Error::refused(format!(
                "{}: the file of {key} changed since the run started (sha256 {}…, now {}); resuming would train on \
                 other inputs",
                run.display(),
                &was[..12.min(was.len())],
                now.map_or("missing".into(), |h| format!("{}…", &h[..12]))
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_keys_name_the_section_and_key_and_nothing_that_agrees() {
        let want = "[data]\nk = 10\n[train]\nlr = 0.001\nsteps = 50000\n";
        assert!(differing_keys(want, want).is_empty());
        let have = "# comment\n[data]\nk = 10\n[train]\nlr = 0.002\n";
        assert_eq!(differing_keys(have, want), vec!["train.lr", "train.steps"]);
    }

    #[test]
    fn an_edited_config_or_a_changed_input_file_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("wt-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let order = dir.join("order.bin");
        std::fs::write(&order, b"one").unwrap();
        let mut cfg = RunConfig::default();
        cfg.train.data_order = Some("order.bin".into());
        let cfg = against_run(cfg, &dir);
        let (recorded, files) = (cfg.to_toml(), hashes(&cfg).unwrap());
        assert!(check(&dir, &cfg, Some(&recorded), &files, false).is_ok());
        assert!(
            check(&dir, &cfg, None, &BTreeMap::new(), false).is_ok(),
            "runs from before the record are not checked"
        );
        let mut edited = cfg.clone();
        edited.train.lr = 2e-3;
        let e = check(&dir, &edited, Some(&recorded), &files, false).unwrap_err().to_string();
        assert!(e.contains("train.lr") && !e.contains("data.k"), "{e}");
        std::fs::write(&order, b"two").unwrap();
        let e = check(&dir, &cfg, Some(&recorded), &files, false).unwrap_err().to_string();
        assert!(e.contains("train.data_order changed"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_moved_init_file_is_not_needed_once_a_resume_state_holds_the_weights() {
        let dir = std::env::temp_dir().join(format!("wt-inputs-init-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("init.safetensors"), b"weights").unwrap();
        let mut cfg = RunConfig::default();
        cfg.train.init = "init.safetensors".into();
        let cfg = against_run(cfg, &dir);
        let (recorded, files) = (cfg.to_toml(), hashes(&cfg).unwrap());
        std::fs::remove_file(dir.join("init.safetensors")).unwrap();
        assert!(check(&dir, &cfg, Some(&recorded), &files, true).is_ok());
        let e = check(&dir, &cfg, Some(&recorded), &files, false).unwrap_err().to_string();
        assert!(e.contains("train.init") && e.contains("cannot read"), "without a resume state it is needed: {e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
