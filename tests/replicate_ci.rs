//! The paper's claims at `ci` scale, end to end: `windtunnel replicate` trains the runs of the
//! waiting-time suites and the snap probe, writes the report, and every claim points the paper's
//! way: a plateau at ln K, τ grows with D (α > 0.8), τ flat in K at fixed D, larger η ⇒ longer,
//! smaller batch ⇒ longer in steps, a collective snap. (≈ 4–5 minutes on 2 cores.)

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const SUITES: [&str; 6] = ["plateau", "fixed-d", "d-scaling", "lr", "batch", "snap"];

fn suite<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["suite"] == name)
        .unwrap_or_else(|| panic!("no suite {name}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn ci_scale_replicates_the_direction_of_every_claim() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replicate-ci");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["replicate"];
    args.extend(SUITES);
    args.extend(["--scale", "ci", "--out", out.to_str().unwrap()]);
    let o = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "replicate failed:\n{stderr}");
    // The snap probes ran beside the training, each in its own process after its run, so the
    // analysis after the runs had no probe left to compute.
    let (training, analysis) =
        stderr.split_once("runs (and the probes beside them) finished").unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(training.matches("] snap done in").count(), 2, "{stderr}");
    assert!(!analysis.contains(" done in "), "{stderr}");

    let base = out.join("ci");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(base.join("report.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(base.join("report.md")).unwrap();
    for s in SUITES {
        let o = suite(&report, s);
        assert_eq!(o["runs_complete"], o["runs_total"], "{s}: runs incomplete");
        for row in o["rows"].as_array().unwrap() {
            assert_ne!(row["verdict"], "Incomplete", "{s}: {row}");
        }
        assert!(md.contains(&format!("\n## {s}\n")), "report.md lacks the {s} section");
        for fig in o["figures"].as_array().unwrap() {
            let p = base.join(fig.as_str().unwrap());
            assert!(std::fs::read_to_string(&p).unwrap().starts_with("<svg"), "{}", p.display());
        }
    }
    // The seven mechanisms are all listed.
    assert_eq!(report["mechanisms"].as_array().unwrap().len(), 7);

    // Claim 1: candidate loss at ln K, first-target loss at ln 36 on the plateau.
    let p = &suite(&report, "plateau")["data"];
    for c in p["candidate_over_ln_k"].as_array().unwrap() {
        assert!((0.85..1.25).contains(&f(c)), "plateau candidate/ln K = {c}");
    }
    for c in p["first_over_ln36"].as_array().unwrap() {
        assert!((0.9..1.05).contains(&f(c)), "plateau first-target/ln 36 = {c}");
    }

    // Claim 3: τ grows with D, α > 0.8, a good power law.
    let fit = &suite(&report, "d-scaling")["data"]["fit"];
    assert!(f(&fit["slope"]) > 0.8 && f(&fit["r2"]) > 0.9, "d-scaling fit {fit}");

    // Claim 2: at fixed D, τ is flat in K (|δ| far below α).
    for fit in suite(&report, "fixed-d")["data"]["fits"].as_array().unwrap() {
        assert!(f(&fit["slope"]).abs() < 0.3, "fixed-d fit {fit}");
    }

    // Claim 4: the largest η has the longest transition window and plateau.
    let lr = &suite(&report, "lr")["data"];
    let (t3, t1) = (lr["t3"].as_array().unwrap(), lr["t1"].as_array().unwrap());
    assert_eq!(t3.len(), 3, "every η run has T3: {lr}");
    assert!(f(&t3[2]) > f(&t3[0]) && f(&t1[2]) > f(&t1[0]), "lr: {lr}");

    // Claims 5 and 6: smaller batch ⇒ longer in steps; a collective snap.
    for s in ["batch", "snap"] {
        let rows = suite(&report, s)["rows"].as_array().unwrap();
        assert!(!rows.is_empty());
        // The in-tokens rows are graded against the paper's stated 1.8×, which the author's own
        // runs do not show either (0.90): at ci scale they are not replicated, so they are not asserted.
        for row in rows.iter().filter(|r| !r["claim"].as_str().unwrap().contains("token normalisation")) {
            assert!(row["verdict"] == "Replicated" || row["verdict"] == "Differs", "{s}: {row}");
        }
    }

    // A second call finds every run complete and every probe cached: it trains and probes nothing.
    let o = Command::new(env!("CARGO_BIN_EXE_windtunnel")).args(&args).output().unwrap();
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("starting at step") && !stderr.contains(" done in "), "{stderr}");
}
