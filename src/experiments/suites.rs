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
//! 0.01·ln K) stop at 1.2·T1: the claim needs T1 only. Displacement is the exception the other
//! way: its post-transition phase is an average over the author's full 50,000 steps, so its runs
//! (`displacement_k10`, `displacement_k20`) train the canonical configs to the end.

use super::claims::{Ctx, Suite, SuiteOutcome};
use super::run_key::{Eta, Family, RunKey, Scale};
use super::runner::{RunSpec, T4_KNOWN};
use super::{
    asymmetry, batch, ci, d_scaling, displacement_claims, dynamics, hessian_claims, linear_claims, probe_claims,
    scaling, sweeps,
};
use crate::error::{Error, Result};

pub const CANONICAL_K: [usize; 11] = [3, 5, 7, 10, 13, 15, 17, 20, 25, 30, 36];
pub const LR_ETAS: [Eta; 5] = [Eta::new(3, -4), Eta::new(5, -4), Eta::CANONICAL, Eta::new(2, -3), Eta::new(5, -3)];
pub const BATCHES: [usize; 4] = [64, 128, 256, 512];
pub const GROUPS: [usize; 6] = [1, 10, 50, 100, 500, 1000];

const TAUS_KNOWN: &str = "train.stop_after_taus=1000";

/// The canonical run at K (paper scale).
pub fn canonical(k: usize) -> RunSpec {
    let multiple = if k == 10 || k == 20 { "train.stop_at_t1_multiple=3.0" } else { "train.stop_at_t1_multiple=2.0" };
    RunSpec::new(RunKey::canonical(Scale::Paper, k), format!("canonical_k{k}.toml"), &[multiple, T4_KNOWN])
}

/// A run whose config file is named as the run (`lr_k20_eta3e-4.toml`).
fn cfg(key: RunKey, ov: &[&str]) -> RunSpec {
    RunSpec::new(key, format!("{key}.toml"), ov)
}

fn paper(family: Family, k: usize) -> RunKey {
    RunKey::new(Scale::Paper, family, k)
}

fn paper_plateau() -> Vec<RunSpec> {
    let mut v: Vec<RunSpec> = (1..=4).map(|z| cfg(paper(Family::ZLength(z), 10), &[])).collect();
    v.extend([3, 10, 20, 36].map(canonical));
    v
}

/// The fixed-D runs at D = `d` thousand.
fn fixed_d_runs(d: usize) -> [RunSpec; 4] {
    [5, 10, 20, 36].map(|k| cfg(paper(Family::FixedD(d * 1000), k), &["train.stop_at_t1_multiple=1.2"]))
}

fn paper_fixed_d() -> Vec<RunSpec> {
    [10, 20].into_iter().flat_map(fixed_d_runs).collect()
}

fn paper_canonical_sweep() -> Vec<RunSpec> {
    CANONICAL_K.map(canonical).to_vec()
}

/// The canonical K the D sweep repeats on seeds 1 and 2 (issue 17): K = 25–36 are left at one
/// seed, their 2–3·T1 runs would more than double the cost.
pub const SEEDED_K: [usize; 8] = [3, 5, 7, 10, 13, 15, 17, 20];

/// The runs seeds s ≥ 1 repeat at paper scale, for the suites seeded by default: the D sweep to
/// K = 20 (the D-law and, from the same runs, the Δz lead), fixed D = 10k, and the suites whose
/// rows differ at seed 0 (verdicts issue): LR, batch, the plateau suite's z-length and canonical
/// runs, and the probes of canonical K = 10 and 20 (snap, ablation, Hessian: the D sweep's seed
/// runs, trained again for their checkpoints), displacement's 50,000-step runs and asymmetry's
/// nine runs (verdicts issue: every probe of canonical K = 10 / 20, and the row not replicated).
fn seeded_canonical() -> Vec<RunSpec> {
    SEEDED_K.map(canonical).to_vec()
}

fn seeded_fixed_d() -> Vec<RunSpec> {
    fixed_d_runs(10).to_vec()
}

fn seeded_plateau() -> Vec<RunSpec> {
    paper_plateau().into_iter().filter(|r| r.key != RunKey::canonical(Scale::Paper, 36)).collect()
}

/// η = 1e-3 is the canonical K = 20 run itself (spec §8 row 4: "= landauer_dense_k20").
fn paper_lr() -> Vec<RunSpec> {
    LR_ETAS
        .map(
            |e| if e == Eta::CANONICAL { canonical(20) } else { cfg(paper(Family::Lr, 20).with_eta(e), &[TAUS_KNOWN]) },
        )
        .to_vec()
}

fn paper_batch() -> Vec<RunSpec> {
    let mut v: Vec<RunSpec> = [20, 36]
        .iter()
        .flat_map(|&k| BATCHES.map(|b| cfg(paper(Family::Batch, k).with_batch(b), &[TAUS_KNOWN])))
        .collect();
    // The matched-temperature partner of (η 1e-3, B 256): η/B is the same at (5e-4, 128).
    let matched = paper(Family::Batch, 20).with_batch(128).with_eta(Eta::new(5, -4));
    v.push(RunSpec::new(matched, "batch_k20_b128.toml", &["train.lr=5e-4", TAUS_KNOWN]));
    v
}

/// The K = 10 and K = 20 canonical runs every probe suite reads.
fn paper_probed() -> Vec<RunSpec> {
    vec![canonical(10), canonical(20)]
}

/// Displacement coherence needs the author's 50,000 steps: a run stopped at 3·T1 holds ≈ 15
/// post-transition displacements, his ≈ 200. The canonical K = 10 / 20 configs run to the end,
/// a checkpoint every 200 steps (the probe's displacement interval).
pub const DISPLACEMENT_BUDGET: [&str; 2] = ["train.max_steps=50000", "train.checkpoint_every=200"];

fn paper_displacement() -> Vec<RunSpec> {
    [10, 20]
        .map(|k| RunSpec::new(paper(Family::Displacement, k), format!("canonical_k{k}.toml"), &DISPLACEMENT_BUDGET))
        .to_vec()
}

/// The reverse task and both readings of the forward one, K = 5, 10, 20, on the launch script's
/// cosine config but with a 20k-step budget (its 5000 steps are too short for K = 20 to reach
/// the lag), stopped 1000 steps after the lag. New names: the 5000-step runs stay as they were.
pub const ASYMMETRY_BUDGET: [&str; 2] = ["train.max_steps=20000", "train.stop_after_lag=1000"];

fn paper_asymmetry() -> Vec<RunSpec> {
    asymmetry::TASKS
        .iter()
        .flat_map(|&t| {
            [5, 10, 20].map(|k| {
                RunSpec::new(paper(Family::Asymmetry(t), k), format!("{}_k{k}.toml", t.name()), &ASYMMETRY_BUDGET)
            })
        })
        .collect()
}

fn paper_z_sharing() -> Vec<RunSpec> {
    GROUPS.map(|g| cfg(paper(Family::ZSharing(g), 20), &[TAUS_KNOWN])).to_vec()
}

/// The linear baseline trains its own small models inside the probe (no training runs).
fn none() -> Vec<RunSpec> {
    vec![]
}

/// Every suite, in report order: adding a claim is one entry here.
pub static SUITES: [Suite; 13] = [
    suite_entry("plateau", paper_plateau, ci::plateau, Some(seeded_plateau), scaling::plateau, false),
    suite_entry("fixed-d", paper_fixed_d, ci::fixed_d, Some(seeded_fixed_d), scaling::fixed_d, false),
    suite_entry(
        "d-scaling",
        paper_canonical_sweep,
        ci::canonical_sweep,
        Some(seeded_canonical),
        d_scaling::d_scaling,
        false,
    ),
    suite_entry("lr", paper_lr, ci::lr, Some(paper_lr), sweeps::lr, false),
    suite_entry("batch", paper_batch, ci::batch, Some(paper_batch), batch::batch, false),
    suite_entry("snap", paper_probed, ci::probed, Some(paper_probed), probe_claims::snap_suite, true),
    suite_entry("ablation", paper_probed, ci::probed, Some(paper_probed), probe_claims::ablation_suite, true),
    suite_entry("hessian", paper_probed, ci::probed, Some(paper_probed), hessian_claims::hessian_suite, true),
    suite_entry(
        "displacement",
        paper_displacement,
        ci::probed,
        Some(paper_displacement),
        displacement_claims::displacement_suite,
        true,
    ),
    suite_entry(
        "dz-lead",
        paper_canonical_sweep,
        ci::canonical_sweep,
        Some(seeded_canonical),
        dynamics::dz_lead,
        false,
    ),
    suite_entry("asymmetry", paper_asymmetry, ci::asymmetry, Some(paper_asymmetry), asymmetry::asymmetry, false),
    suite_entry("z-sharing", paper_z_sharing, ci::z_sharing, None, dynamics::z_sharing, false),
    trains_in_probe(
        suite_entry("linear", none, none, Some(none), linear_claims::linear_suite, true),
        linear_claims::linear_names,
    ),
];

type Runs = fn() -> Vec<RunSpec>;

/// One registry entry: name, runs at paper and ci scale, the runs seeds s ≥ 1 repeat at paper
/// scale (None: not seeded by default), the analysis, whether it reads probe results.
const fn suite_entry(
    name: &'static str,
    paper: Runs,
    ci: Runs,
    seeded: Option<Runs>,
    analyse: fn(&Ctx, &Suite) -> Result<SuiteOutcome>,
    reads_probes: bool,
) -> Suite {
    Suite { name, paper, ci, seeded, analyse, reads_probes, probe_models: None }
}

/// `suite`, whose probe trains its own models, named at each seed by `models`.
const fn trains_in_probe(suite: Suite, models: fn(Scale, u32) -> Vec<String>) -> Suite {
    Suite { probe_models: Some(models), ..suite }
}

/// The suite called `name`; an unknown name is an error listing the valid ones.
pub fn suite(name: &str) -> Result<&'static Suite> {
    SUITES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
        Error::config("suite", format!("{name:?} (allowed: all, {})", names.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_suite_is_an_error_listing_every_valid_one() {
        let e = suite("d-scalin").unwrap_err().to_string();
        assert!(e.contains("\"d-scalin\"") && SUITES.iter().all(|s| e.contains(s.name)), "{e}");
    }

    #[test]
    fn paper_seeds_repeat_the_fits_runs_to_k20_and_at_d10k_only() {
        let names = |suite: &str, s| -> Vec<String> {
            super::suite(suite).unwrap().runs_at_seed(Scale::Paper, s).into_iter().map(|r| r.name).collect()
        };
        let d = names("d-scaling", 1);
        assert_eq!(d.len(), 8);
        assert_eq!((d[0].as_str(), d[7].as_str()), ("canonical_k3_s1", "canonical_k20_s1"));
        assert_eq!(names("dz-lead", 2), names("d-scaling", 2));
        assert_eq!(
            names("fixed-d", 2),
            ["fixed_d10k_k5_s2", "fixed_d10k_k10_s2", "fixed_d10k_k20_s2", "fixed_d10k_k36_s2"]
        );
        assert_eq!(names("d-scaling", 0).len(), 11, "seed 0 is the whole sweep");
        // A seeded run is its seed-0 run with other init and order seeds only.
        let sweep = suite("d-scaling").unwrap().runs(Scale::Paper);
        let s1 = suite("d-scaling").unwrap().runs_at_seed(Scale::Paper, 1);
        assert_eq!(s1[7], sweep[7].seeded(1));
        let seeds = |n: &str, scale, given| suite(n).unwrap().seeds(scale, given);
        assert_eq!((seeds("d-scaling", Scale::Paper, None), seeds("fixed-d", Scale::Paper, None)), (3, 3));
        assert_eq!((seeds("linear", Scale::Paper, None), seeds("d-scaling", Scale::Ci, None)), (3, 1));
        assert!(names("linear", 1).is_empty(), "its models train inside the probe");
        assert_eq!((seeds("lr", Scale::Paper, None), seeds("batch", Scale::Paper, None)), (3, 3), "they differed");
        assert_eq!((seeds("displacement", Scale::Paper, None), seeds("asymmetry", Scale::Paper, None)), (3, 3));
        assert_eq!(names("displacement", 2), ["displacement_k10_s2", "displacement_k20_s2"]);
        assert_eq!(names("asymmetry", 1).len(), 9, "every task and K");
        assert_eq!((seeds("z-sharing", Scale::Paper, Some(2)), seeds("d-scaling", Scale::Paper, Some(1))), (2, 1));
        assert_eq!(
            names("z-sharing", 1).len(),
            suite("z-sharing").unwrap().runs(Scale::Paper).len(),
            "--seeds on other suites: all runs"
        );
        assert_eq!(names("lr", 1).len(), 5, "every η");
        assert!(names("plateau", 2).iter().all(|n| n != "canonical_k36_s2"), "K = 36 is not seeded");
        assert_eq!(
            suite("d-scaling").unwrap().runs_at_seed(Scale::Ci, 1).len(),
            suite("d-scaling").unwrap().runs(Scale::Ci).len()
        );
    }

    /// A key says what the run's config is: K, η (bit for bit), batch, seed and what its family varies.
    #[test]
    fn every_run_key_matches_the_config_it_resolves_to() {
        let configs = crate::experiments::configs::Configs::from_arg(None);
        let mut names = std::collections::BTreeMap::new();
        let mut checked = 0;
        for suite in SUITES.iter() {
            for (scale, seed) in [(Scale::Paper, 0), (Scale::Paper, 2), (Scale::Ci, 0), (Scale::Ci, 1)] {
                for spec in suite.runs_at_seed(scale, seed) {
                    let (key, cfg) = (spec.key, spec.resolve(&configs).unwrap());
                    let at = format!("{} ({}, seed {seed})", spec.name, suite.name);
                    assert_eq!((key.scale, key.seed), (scale, seed), "{at}");
                    assert_eq!(spec.name, key.to_string(), "{at}");
                    assert_eq!((key.k, key.batch), (cfg.data.k, cfg.train.batch_size), "{at}");
                    assert_eq!(
                        key.eta.value().to_bits(),
                        cfg.train.lr.to_bits(),
                        "{at}: η {} vs {}",
                        key.eta,
                        cfg.train.lr
                    );
                    assert_eq!(cfg.train.order_seed, 42 + u64::from(seed), "{at}");
                    match key.family {
                        Family::ZLength(z) => assert_eq!(cfg.data.z_length, z, "{at}"),
                        // The nominal D: n_b is D / K rounded (K = 36 at 10k: 278 base strings).
                        Family::FixedD(d) => assert_eq!(cfg.data.n_b, (d + key.k / 2) / key.k, "{at}"),
                        Family::Asymmetry(t) => assert_eq!(cfg.data.task, t, "{at}"),
                        Family::Displacement => assert_eq!(cfg.train.max_steps, 50_000, "{at}"),
                        _ => assert_eq!(cfg.data.task, crate::task::TaskKind::BzToA, "{at}"),
                    }
                    // One name, one run: a name two suites share is the same spec.
                    if let Some(other) = names.insert(spec.name.clone(), spec.clone()) {
                        assert_eq!(other, spec, "{at}: two runs under one name");
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 150, "{checked}");
    }

    #[test]
    fn every_suite_but_the_linear_baseline_has_runs_at_both_scales() {
        for s in SUITES.iter().filter(|s| s.probe_models.is_none()) {
            assert!(!s.runs(Scale::Paper).is_empty() && !s.runs(Scale::Ci).is_empty(), "{}", s.name);
        }
    }
}
