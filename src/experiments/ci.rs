//! The `ci` scale: the same suites on a reduced model and data, chosen so that every phenomenon is
//! still there (a plateau at ln K, a collective snap) and the whole set runs in minutes on two
//! cores. Each run is a paper config file with these overrides on top:
//!
//! - model: 2 layers, d_model 64, 4 heads of 16, d_mlp 256 (≈ 0.1M parameters instead of 0.8M);
//! - data: 200 base strings per run (D = 200·K) unless the suite fixes D;
//! - train: batch 64, eval every 25 steps, checkpoints every 50, and a stopping rule that keeps what
//!   the suite measures (2·T1 for the D-sweep, 1.5·T1 where only T1 is needed, convergence for
//!   T2/T3).
//!
//! Calibration (2026-11-29): K = 3, 5, 10, 20 at n_b = 200 give T1 = 150, 225, 475, 1050 with
//! plateau heights 1.02–1.19·ln K.

use super::run_key::{Eta, Family, RunKey, Scale};
use super::runner::RunSpec;

/// The reduced model and cadence every ci run gets.
const BASE: [&str; 9] = [
    "model.n_layers=2",
    "model.d_model=64",
    "model.n_heads=4",
    "model.d_head=16",
    "model.d_mlp=256",
    "train.batch_size=64",
    "train.eval_every=25",
    "train.checkpoint_every=50",
    "train.early_stop_patience=8",
];

fn spec(key: RunKey, config: &str, extra: &[String]) -> RunSpec {
    let mut ov: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
    ov.extend_from_slice(extra);
    RunSpec::with(key, config, ov)
}

fn ci(family: Family, k: usize) -> RunKey {
    RunKey::new(Scale::Ci, family, k)
}

fn s(x: impl Into<String>) -> String {
    x.into()
}

pub const CI_K: [usize; 6] = [3, 5, 7, 10, 15, 20];
pub const CI_LR: [Eta; 3] = [Eta::CANONICAL, Eta::new(2, -3), Eta::new(4, -3)];
pub const CI_BATCH: [usize; 3] = [32, 64, 128];
pub const CI_GROUPS: [usize; 4] = [1, 10, 50, 200];

/// The ci canonical run at K (D-sweep); K = 10 and 20 keep checkpoints to 3·T1 for the probes.
pub fn ci_canonical(k: usize) -> RunSpec {
    let m = if k == 10 || k == 20 { "3.0" } else { "2.0" };
    spec(
        RunKey::canonical(Scale::Ci, k),
        "canonical_k10.toml",
        &[
            format!("data.k={k}"),
            s("data.n_b=200"),
            format!("train.stop_at_t1_multiple={m}"),
            s(super::runner::T4_KNOWN),
        ],
    )
}

fn t1x(m: &str) -> String {
    format!("train.stop_at_t1_multiple={m}")
}

/// Train until the candidate loss stays below 0.05·ln K (T2 and the T3 window are then known).
fn converged() -> String {
    s("train.early_stop_frac=0.05")
}

pub fn plateau() -> Vec<RunSpec> {
    let mut v: Vec<RunSpec> = (1..=4)
        .map(|z| {
            spec(
                ci(Family::ZLength(z), 10),
                "zlen1_k10.toml",
                &[format!("data.z_length={z}"), s("data.n_b=200"), t1x("1.5")],
            )
        })
        .collect();
    v.extend([3, 10, 20].map(ci_canonical));
    v
}

pub fn fixed_d() -> Vec<RunSpec> {
    [(2000, [(5, 400), (10, 200), (20, 100)]), (4000, [(5, 800), (10, 400), (20, 200)])]
        .iter()
        .flat_map(|(d, ks)| {
            ks.iter().map(move |&(k, nb)| {
                spec(
                    ci(Family::FixedD(*d), k),
                    "canonical_k10.toml",
                    &[format!("data.k={k}"), format!("data.n_b={nb}"), t1x("1.2")],
                )
            })
        })
        .collect()
}

pub fn canonical_sweep() -> Vec<RunSpec> {
    CI_K.map(ci_canonical).to_vec()
}

pub fn lr() -> Vec<RunSpec> {
    CI_LR
        .iter()
        .map(|e| {
            spec(
                ci(Family::Lr, 10).with_eta(*e),
                "canonical_k10.toml",
                &[s("data.n_b=200"), format!("train.lr={e}"), converged()],
            )
        })
        .collect()
}

pub fn batch() -> Vec<RunSpec> {
    CI_BATCH
        .iter()
        .map(|b| {
            spec(
                ci(Family::Batch, 10).with_batch(*b),
                "canonical_k10.toml",
                &[s("data.n_b=200"), format!("train.batch_size={b}"), converged()],
            )
        })
        .collect()
}

/// The K = 10 and K = 20 runs every probe suite reads.
pub fn probed() -> Vec<RunSpec> {
    vec![ci_canonical(10), ci_canonical(20)]
}

pub fn asymmetry() -> Vec<RunSpec> {
    super::asymmetry::TASKS
        .iter()
        .flat_map(|&t| {
            [5, 10].map(|k| {
                spec(
                    ci(Family::Asymmetry(t), k),
                    &format!("{}_k{k}.toml", t.name()),
                    &[s("data.n_b=200"), s("train.max_steps=3000"), s("train.warmup_steps=100")],
                )
            })
        })
        .collect()
}

pub fn z_sharing() -> Vec<RunSpec> {
    CI_GROUPS
        .iter()
        .map(|&g| {
            let mode = match g {
                1 => vec![s("data.z_sharing=\"shared\"")],
                200 => vec![s("data.z_sharing=\"private\"")],
                _ => vec![s("data.z_sharing=\"supergroup\""), format!("data.n_supergroups={g}")],
            };
            let mut ov = vec![s("data.n_b=200"), s("data.k=10"), s("data.auto_z_length=true"), converged()];
            ov.extend(mode);
            spec(ci(Family::ZSharing(g), 10), "canonical_k10.toml", &ov)
        })
        .collect()
}
