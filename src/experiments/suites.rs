//! The replication suites (one per claim of the paper, spec §8, §9, §14) and the runs each needs,
//! at the paper's exact configurations (`paper`) or at a reduced scale that shows the same
//! phenomena in minutes (`ci`, docs/REPLICATION.md).
//!
//! Paper-scale deviations, all about *when to stop* (never about what is computed before):
//! the author ran the canonical K-sweep to 50k steps, the LR sweep to 50k–120k, the batch and
//! z-sharing sweeps to their full cosine horizon. windtunnel stops the canonical runs at 2·T1
//! (3·T1 for K = 10 and 20, whose checkpoints the probes read up to 3τ) and the LR, batch and
//! z-sharing runs 1000 steps after T1, T2 and the end of the T3 window have all been seen (the
//! author's early stop at 0.01·ln K can take tens of thousands of steps more, and never changes a
//! waiting time); a run that never transitions still runs to its full length. The canonical runs
//! also never stop before T4, which Δz lead needs (at large K it comes after 2·T1). The LR sweep's
//! η = 1e-3 point is the canonical K = 20 run. The fixed-D runs (the author's early stop at
//! 0.01·ln K) stop at 1.2·T1: the claim needs T1 only.

use super::runner::RunSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Ci,
    Paper,
}

impl Scale {
    pub fn name(self) -> &'static str {
        match self {
            Scale::Ci => "ci",
            Scale::Paper => "paper",
        }
    }
}

/// Every suite, in report order.
pub const SUITES: [&str; 13] = [
    "plateau",
    "fixed-d",
    "d-scaling",
    "lr",
    "batch",
    "snap",
    "ablation",
    "hessian",
    "displacement",
    "dz-lead",
    "asymmetry",
    "z-sharing",
    "linear",
];

pub const CANONICAL_K: [usize; 11] = [3, 5, 7, 10, 13, 15, 17, 20, 25, 30, 36];
pub const LR_ETAS: [&str; 5] = ["3e-4", "5e-4", "1e-3", "2e-3", "5e-3"];
pub const BATCHES: [usize; 4] = [64, 128, 256, 512];
pub const GROUPS: [usize; 6] = [1, 10, 50, 100, 500, 1000];

const TAUS_KNOWN: &str = "train.stop_after_taus=1000";

/// The canonical run at K (paper scale).
pub fn canonical(k: usize) -> RunSpec {
    let multiple = if k == 10 || k == 20 { "train.stop_at_t1_multiple=3.0" } else { "train.stop_at_t1_multiple=2.0" };
    RunSpec::new(format!("canonical_k{k}"), format!("canonical_k{k}.toml"), &[multiple, T4_KNOWN])
}

/// Δz lead needs T4 of every canonical run, which comes after 2·T1 at large K.
pub const T4_KNOWN: &str = "train.stop_not_before_t4=true";

/// Runs of a suite at paper scale.
pub fn paper_runs(suite: &str) -> Vec<RunSpec> {
    let cfg = |stem: &str, ov: &[&str]| RunSpec::new(stem, format!("{stem}.toml"), ov);
    match suite {
        "plateau" => {
            let mut v: Vec<RunSpec> = (1..=4).map(|z| cfg(&format!("zlen{z}_k10"), &[])).collect();
            v.extend([3, 10, 20, 36].map(canonical));
            v
        }
        "fixed-d" => {
            let stop = "train.stop_at_t1_multiple=1.2";
            [10, 20].iter().flat_map(|d| [5, 10, 20, 36].map(|k| cfg(&format!("fixed_d{d}k_k{k}"), &[stop]))).collect()
        }
        "d-scaling" | "dz-lead" => CANONICAL_K.map(canonical).to_vec(),
        // η = 1e-3 is the canonical K = 20 run itself (spec §8 row 4: "= landauer_dense_k20").
        "lr" => LR_ETAS
            .map(|e| if e == "1e-3" { canonical(20) } else { cfg(&format!("lr_k20_eta{e}"), &[TAUS_KNOWN]) })
            .to_vec(),
        "batch" => {
            let mut v: Vec<RunSpec> = [20, 36]
                .iter()
                .flat_map(|k| BATCHES.map(|b| cfg(&format!("batch_k{k}_b{b}"), &[TAUS_KNOWN])))
                .collect();
            // The matched-temperature partner of (η 1e-3, B 256): η/B is the same at (5e-4, 128).
            v.push(RunSpec::new("batch_k20_b128_eta5e-4", "batch_k20_b128.toml", &["train.lr=5e-4", TAUS_KNOWN]));
            v
        }
        "snap" | "ablation" | "hessian" | "displacement" => vec![canonical(10), canonical(20)],
        "asymmetry" => {
            ["bz_to_a", "az_to_b"].iter().flat_map(|t| [5, 10, 20].map(|k| cfg(&format!("{t}_k{k}"), &[]))).collect()
        }
        "z-sharing" => GROUPS.map(|g| cfg(&format!("zshare_g{g}_k20"), &[TAUS_KNOWN])).to_vec(),
        _ => vec![],
    }
}

/// Runs of a suite at a scale.
pub fn runs(suite: &str, scale: Scale) -> Vec<RunSpec> {
    match scale {
        Scale::Paper => paper_runs(suite),
        Scale::Ci => super::ci::ci_runs(suite),
    }
}
