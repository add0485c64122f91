//! Provenance across resumes (verdicts issue, part 3): `train --resume` refuses a run another
//! revision trained unless told, and the manifest records one segment per start or resume.

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::SMALL;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_windtunnel"))
}

fn manifest(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn resume_under_another_revision_is_refused_unless_allowed_and_then_recorded_as_a_segment() {
    let root = std::env::temp_dir().join(format!("wt-resume-rev-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let cfg = root.join("small.toml");
    std::fs::write(&cfg, SMALL).unwrap();
    let dir: PathBuf = root.join("run");
    let st = bin().args(["train", "--quiet", "--config"]).arg(&cfg).arg("--out").arg(&dir).status().unwrap();
    assert!(st.success());
    let m = manifest(&dir);
    let segs = m["segments"].as_array().expect("a new run records its first segment");
    assert_eq!(segs.len(), 1);
    assert_eq!((segs[0]["from_step"].as_u64(), &segs[0]["git_revision"]), (Some(0), &m["git_revision"]));
    assert!(!segs[0]["host"].as_str().unwrap().is_empty() && !segs[0]["cpu"].as_str().unwrap().is_empty());

    // As if another revision had trained it and been interrupted at its last resume state.
    let mut old = m.clone();
    old["segments"][0]["git_revision"] = "0123456789ab".into();
    old["git_revision"] = "0123456789ab".into();
    let old_text = serde_json::to_string_pretty(&old).unwrap();
    std::fs::write(dir.join("manifest.json"), &old_text).unwrap();
    std::fs::remove_file(dir.join("summary.json")).unwrap();

    let o = bin().args(["train", "--quiet", "--resume"]).arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "resumed under another revision without being told");
    assert!(err.contains("0123456789ab") && err.contains("--allow-other-revision"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("manifest.json")).unwrap(), old_text, "a refusal changes nothing");
    assert!(!dir.join("summary.json").exists());

    let o = bin().args(["train", "--quiet", "--allow-other-revision", "--resume"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let segs = manifest(&dir)["segments"].as_array().unwrap().clone();
    let steps: Vec<u64> = segs.iter().map(|s| s["from_step"].as_u64().unwrap()).collect();
    assert_eq!(steps, [0, 40], "the old revision's segment, then this build's from the resumed step");
    assert_eq!(segs[0]["git_revision"], "0123456789ab");
    assert_eq!(segs[1]["git_revision"], m["git_revision"]);
    assert!(dir.join("summary.json").exists());

    // The flag is a resume option only.
    let o = bin().args(["train", "--quiet", "--allow-other-revision", "--config"]).arg(&cfg).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--allow-other-revision"));
    std::fs::remove_dir_all(&root).unwrap();
}
