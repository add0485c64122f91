//! Which builds trained the runs of a report: by (arithmetic version, revision), flagged when
//! arithmetic versions mix, and each run trained in several segments with its segments' builds.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The runs under a directory by the (arithmetic version, revision) that trained them.
pub type Builds = std::collections::BTreeMap<(u32, String), Vec<String>>;

pub fn builds(runs: &Path) -> Result<Builds> {
    let mut by_version = Builds::new();
    let entries = match std::fs::read_dir(runs) {
        Ok(e) => e,
        Err(_) => return Ok(by_version),
    };
    for e in entries.flatten() {
        let dir = e.path();
        if crate::train::layout::manifest(&dir).exists() {
            let m = crate::train::rundir::Manifest::read(&dir)?;
            let name = e.file_name().to_string_lossy().into_owned();
            // A run resumed by other builds counts under each of them.
            for seg in m.segments() {
                let names = by_version.entry((seg.arithmetic, seg.git_revision)).or_default();
                if !names.contains(&name) {
                    names.push(name.clone());
                }
            }
        }
    }
    for names in by_version.values_mut() {
        names.sort();
    }
    Ok(by_version)
}

/// The runs under `runs` trained in more than one segment, each segment's build, CPU, host and
/// steps (one markdown list; empty when every run was trained in one go).
pub fn segments(runs: &Path) -> Result<String> {
    let mut lines = vec![];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(runs).into_iter().flatten().flatten().map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs.iter().filter(|d| crate::train::layout::manifest(d).exists()) {
        let segs = crate::train::rundir::Manifest::read(dir)?.segments();
        if segs.len() < 2 {
            continue;
        }
        let last = crate::train::layout::read_summary(dir).map(|s| s.steps.to_string()).unwrap_or("…".into());
        let each: Vec<String> = segs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let to = segs.get(i + 1).map_or(last.clone(), |n| n.from_step.to_string());
                let host = if s.host.is_empty() { String::new() } else { format!(", {}", s.host) };
                format!("steps {}–{to}: `{}` (v{}, {}{host})", s.from_step, s.git_revision, s.arithmetic, s.cpu)
            })
            .collect();
        let name = dir.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        lines.push(format!("- {name}: {}\n", each.join("; ")));
    }
    if lines.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("\nRuns trained in several segments (one per start or resume):\n\n{}", lines.concat()))
}

/// One line for the top of the report: the build that trained every run, or how many did.
pub fn trained_by(builds: &Builds) -> String {
    let dirty = |rev: &str| if rev.ends_with("-dirty") { " — **built from uncommitted changes**" } else { "" };
    match builds.keys().collect::<Vec<_>>()[..] {
        [] => String::new(),
        [(v, rev)] => format!("Every run was trained by revision `{rev}` (arithmetic v{v}){}.\n\n", dirty(rev)),
        ref several => {
            let revs: Vec<String> = several.iter().map(|(v, r)| format!("`{r}` (v{v}){}", dirty(r))).collect();
            format!(
                "**The runs were trained by {} builds** (Provenance lists which): {}.\n\n",
                several.len(),
                revs.join(", ")
            )
        }
    }
}

/// Which arithmetic versions and revisions trained the runs under `runs` (one markdown section);
/// runs of different arithmetic versions are flagged, since their numbers are not comparable bit
/// for bit and a resumed run never mixes them.
pub fn provenance(by_version: &Builds, runs: &Path, allow_mixed: bool) -> Result<String> {
    let mut s = String::from("\n## Provenance\n\n");
    let versions: std::collections::BTreeSet<u32> = by_version.keys().map(|k| k.0).collect();
    if versions.len() > 1 && !allow_mixed {
        let each: Vec<String> =
            by_version.iter().map(|((v, rev), n)| format!("v{v} at {rev}: {}", n.join(", "))).collect();
        return Err(Error::refused(format!(
            "{} holds runs of arithmetic versions {versions:?} ({}); their numbers are not one replication. Retrain the \
             odd ones out, or pass --allow-mixed-arithmetic to write the report anyway (it says so at the top of \
             its Provenance section)",
            runs.display(),
            each.join("; ")
        )));
    }
    if versions.len() > 1 {
        s += &format!(
            "**Mixed arithmetic: these runs were trained under arithmetic versions {versions:?}; results of different versions \
             are not one replication (docs/determinism.md, \"Versions\").**\n\n"
        );
    }
    if by_version.is_empty() {
        return Ok(String::new());
    }
    for ((v, rev), names) in by_version {
        let dirty = if rev.ends_with("-dirty") { " — **built from uncommitted changes**" } else { "" };
        s += &format!("- arithmetic v{v}, revision `{rev}`{dirty}: {} runs ({})\n", names.len(), names.join(", "));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn provenance_flags_runs_of_two_arithmetic_versions() {
        let runs = std::env::temp_dir().join(format!("wt_provenance_{}", std::process::id()));
        let write = |name: &str, arithmetic: Option<u32>| {
            // Manifests from before segments were recorded: the top-level fields describe the run.
            let mut m = serde_json::to_value(crate::train::rundir::Manifest::current("f32")).unwrap();
            m.as_object_mut().unwrap().remove("segments");
            match arithmetic {
                Some(v) => m["arithmetic"] = json!(v),
                None => drop(m.as_object_mut().unwrap().remove("arithmetic")),
            }
            std::fs::create_dir_all(runs.join(name)).unwrap();
            std::fs::write(crate::train::layout::manifest(&runs.join(name)), m.to_string()).unwrap();
        };
        write("a", Some(2));
        write("b", Some(2));
        let one = provenance(&builds(&runs).unwrap(), &runs, false).unwrap();
        assert_eq!(trained_by(&builds(&runs).unwrap()).matches("arithmetic v2").count(), 1);
        assert!(one.contains("arithmetic v2") && one.contains("2 runs (a, b)") && !one.contains("Mixed"), "{one}");
        write("old", None);
        let e = provenance(&builds(&runs).unwrap(), &runs, false).unwrap_err().to_string();
        assert!(
            e.contains("{1, 2}") && e.contains("v1 at") && e.contains("old") && e.contains("--allow-mixed-arithmetic"),
            "{e}"
        );
        let mixed = provenance(&builds(&runs).unwrap(), &runs, true).unwrap();
        assert!(trained_by(&builds(&runs).unwrap()).starts_with("**The runs were trained by 2 builds**"));
        assert!(
            mixed.contains("Mixed arithmetic") && mixed.contains("arithmetic v1") && mixed.contains("(old)"),
            "{mixed}"
        );
        std::fs::remove_dir_all(&runs).ok();
    }

    #[test]
    fn a_run_resumed_by_another_build_counts_under_both_and_lists_its_segments() {
        let runs = std::env::temp_dir().join(format!("wt_segments_{}", std::process::id()));
        let write = |name: &str, m: &crate::train::rundir::Manifest| {
            std::fs::create_dir_all(runs.join(name)).unwrap();
            m.write(&runs.join(name)).unwrap();
        };
        let once = crate::train::rundir::Manifest::current("f32");
        write("once", &once);
        assert_eq!(segments(&runs).unwrap(), "", "a run trained in one go lists no segments");
        let mut twice = once.clone();
        twice.segments[0].git_revision = "0123456789ab".into();
        twice.resumed(6000);
        write("twice", &twice);
        let b = builds(&runs).unwrap();
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!(b[&(2, "0123456789ab".to_string())], ["twice"]);
        assert_eq!(b[&(2, crate::train::manifest::revision().to_string())], ["once", "twice"]);
        let md = segments(&runs).unwrap();
        assert!(md.contains("- twice: steps 0–6000: `0123456789ab` (v2, ") && md.contains("; steps 6000–…: `"), "{md}");
        assert!(!md.contains("once"), "{md}");
        std::fs::remove_dir_all(&runs).ok();
    }
}
