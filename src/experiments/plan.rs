//! A replication plan: which suites, at which scale, with how many seeds, from which configs,
//! into which results directory; and its units of work (train one run, compute one suite's
//! probes on one run) with their state on disk and the command that does each. Every executor
//! (local, Slurm, `--list-commands` for any other scheduler) works from these units.

use super::claims::Suite;
use super::configs::Configs;
use super::run_key::Scale;
use super::runner::{RunSpec, Status, status};
use crate::error::Result;
use crate::train::lock::holder;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub struct Plan {
    pub suites: Vec<&'static Suite>,
    pub scale: Scale,
    pub out: PathBuf,
    pub configs: Configs,
    /// `--seeds`: init/order seeds for every suite; when absent, each suite's default.
    pub seeds: Option<u32>,
    /// When not empty, only these units (run names, or the run a probe reads) are listed or submitted.
    pub only: Vec<String>,
    /// Write a report over runs of several arithmetic versions (flagged) instead of refusing.
    pub allow_mixed_arithmetic: bool,
    /// Resume runs another revision trained so far (`--allow-other-revision`).
    pub allow_other_revision: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Finished,
    /// A live process holds the run's lock.
    Training,
    /// The last attempt ended in an error (`<run>.failed` holds it).
    Failed,
    /// Has a checkpoint to resume from, and nobody is training it.
    Interrupted,
    NotStarted,
    /// The directory holds a different config than the plan asks for.
    Mismatch,
}

/// One unit of work and where it stands.
#[derive(Clone, Debug, Serialize)]
pub struct Unit {
    /// `train` or the probe suite.
    pub kind: String,
    pub name: String,
    pub state: State,
    /// Last logged step, and the configured maximum (the estimate of the work left).
    pub step: u64,
    pub max_steps: u64,
    pub detail: String,
    pub command: Vec<String>,
    /// Hours of training left, from measured steps/s (`estimate.rs`), and what that rests on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hours_left: Option<f64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub estimate: String,
}

impl Plan {
    pub fn runs_dir(&self) -> PathBuf {
        self.out.join(self.scale.name()).join("runs")
    }

    /// Every run of the plan (all seeds), deduplicated by name, in suite order.
    pub fn specs(&self) -> Vec<RunSpec> {
        let mut seen = std::collections::BTreeSet::new();
        let mut v = vec![];
        let seeds = |suite: &Suite| suite.seeds(self.scale, self.seeds);
        for s in 0..self.suites.iter().map(|suite| seeds(suite)).max().unwrap_or(1) {
            for suite in self.suites.iter().filter(|suite| s < seeds(suite)) {
                for spec in suite.runs_at_seed(self.scale, s) {
                    if seen.insert(spec.name.clone()) {
                        v.push(spec);
                    }
                }
            }
        }
        v
    }

    /// (probe suite, run name) pairs: the runs each probe suite reads, at every seed it is graded with.
    pub fn probe_pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![];
        for suite in self.suites.iter().filter(|s| s.reads_probes) {
            for s in 0..suite.seeds(self.scale, self.seeds) {
                let names = match suite.probe_models {
                    Some(models) => models(self.scale, s),
                    None => suite.runs_at_seed(self.scale, s).into_iter().map(|r| r.name).collect(),
                };
                v.extend(names.into_iter().map(|n| (suite.name, n)));
            }
        }
        v
    }

    fn selected(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|n| n == name)
    }

    /// Every unit name of the plan: its runs, then the runs its probes read (not deduplicated).
    pub fn unit_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.specs().into_iter().map(|s| s.name).collect();
        v.extend(self.probe_pairs().into_iter().map(|(_, n)| n));
        v
    }

    /// The arguments that select this plan again: `replicate <suites> --scale … --out …`.
    pub fn args(&self, bin: &Path) -> Vec<String> {
        let mut a = vec![bin.display().to_string(), "replicate".into()];
        a.extend(self.suites.iter().map(|s| s.name.to_string()));
        a.extend(["--scale".into(), self.scale.name().into(), "--out".into(), self.out.display().to_string()]);
        if let Some(n) = self.seeds {
            a.extend(["--seeds".into(), n.to_string()]);
        }
        if self.allow_other_revision {
            a.push("--allow-other-revision".into());
        }
        a.extend(self.configs.arg());
        a
    }

    /// The training units, each with its state and the command that trains (or resumes) it.
    pub fn train_units(&self, bin: &Path) -> Result<Vec<Unit>> {
        let dir = self.runs_dir();
        let mut v = vec![];
        let mut rates = super::estimate::Rates::default();
        let specs: Vec<(RunSpec, crate::config::RunConfig)> =
            self.specs().into_iter().map(|s| s.resolve(&self.configs).map(|c| (s, c))).collect::<Result<_>>()?;
        for (spec, cfg) in &specs {
            if let Ok(s) = crate::train::layout::read_summary(&dir.join(&spec.name)) {
                rates.add(cfg.train.batch_size, s.steps_per_s);
            }
        }
        for (spec, cfg) in specs.into_iter().filter(|(s, _)| self.selected(&s.name)) {
            let run = dir.join(&spec.name);
            let (state, detail) = run_state(&run, status(&run, &cfg));
            let records = crate::train::layout::read_metrics(&run).unwrap_or_default();
            let last = records.last();
            let detail = match (last, state) {
                (Some(r), State::Training | State::Interrupted) => format!(
                    "step {}: loss {:.3}, candidate {:.3}{detail}",
                    r.step,
                    r.train_loss,
                    r.candidate_loss.unwrap_or(f64::NAN)
                ),
                _ => detail,
            };
            let mut command = self.args(bin);
            command.extend(["--only".into(), spec.name.clone()]);
            let (step, own_rate) = (last.map_or(0, |r| r.step), super::estimate::recent_rate(&records));
            let (max, batch) = (cfg.train.max_steps, cfg.train.batch_size);
            let (hours_left, estimate) = match state {
                State::Finished => (Some(0.0), String::new()),
                _ => super::estimate::unit(&dir, spec.key, (step, own_rate), max, batch, &rates)
                    .map_or((None, String::new()), |(h, why)| (Some(h), why)),
            };
            v.push(Unit {
                kind: "train".into(),
                name: spec.name,
                state,
                step,
                max_steps: cfg.train.max_steps,
                detail,
                command,
                hours_left,
                estimate,
            });
        }
        // `--only` lists (and trains) in the order given.
        v.sort_by_key(|u| self.only.iter().position(|n| *n == u.name));
        Ok(v)
    }

    /// The probe units: finished when the probe's cached result exists.
    pub fn probe_units(&self, bin: &Path) -> Vec<Unit> {
        let dir = self.runs_dir();
        self.probe_pairs()
            .into_iter()
            .filter(|(_, name)| self.selected(name))
            .map(|(suite, name)| {
                let cache = crate::train::layout::probe_result(&dir.join(&name), suite);
                let mut command = self.args(bin);
                command.splice(2..2 + self.suites.len(), [suite.to_string()]);
                command.extend(["--probes-only".into(), "--only".into(), name.clone()]);
                let state = if cache.exists() { State::Finished } else { State::NotStarted };
                let detail = String::new();
                let (hours_left, estimate) = (None, String::new());
                Unit { kind: suite.into(), name, state, step: 0, max_steps: 0, detail, command, hours_left, estimate }
            })
            .collect()
    }
}

/// Training state of a run directory from its files and lock.
fn run_state(run: &Path, st: Status) -> (State, String) {
    let failed = std::fs::read_to_string(crate::train::layout::failed(run)).ok();
    match st {
        Status::Complete => (State::Finished, String::new()),
        Status::Mismatch(m) => (State::Mismatch, m),
        _ if holder(run).is_some_and(|h| h.alive()) => {
            let h = holder(run).expect("just read");
            let detail = if h.silent() {
                // Still counted as training (not resubmitted) until the lock lapses.
                format!(
                    " (process {} on {}: no heartbeat for {} s, presumed interrupted; resumes at {} once its lock \
                     lapses, in {} s)",
                    h.pid,
                    h.host,
                    h.age.as_secs(),
                    resumes_at(run),
                    h.lapses_in().as_secs()
                )
            } else {
                format!(" (process {} on {}, heartbeat {} s ago)", h.pid, h.host, h.age.as_secs())
            };
            (State::Training, detail)
        }
        _ if failed.is_some() => (State::Failed, format!(": {}", failed.unwrap_or_default().trim())),
        Status::Incomplete => (State::Interrupted, format!("; resumes at {}", resumes_at(run))),
        Status::Missing => (State::NotStarted, String::new()),
    }
}

fn resumes_at(run: &Path) -> String {
    crate::train::checkpoint::resume_step(run).map_or("its resume state".into(), |s| format!("step {s}"))
}

/// A shell-quoted command line.
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(seeds: Option<u32>) -> Plan {
        Plan {
            suites: ["snap", "linear"].iter().map(|n| super::super::suites::suite(n).unwrap()).collect(),
            scale: Scale::Ci,
            out: "/r".into(),
            configs: Configs::Builtin,
            seeds,
            only: vec![],
            allow_mixed_arithmetic: false,
            allow_other_revision: false,
        }
    }

    #[test]
    fn seeds_add_named_runs_with_their_own_init_and_order() {
        let names: Vec<String> = plan(Some(2)).specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["ci_canonical_k10", "ci_canonical_k20", "ci_canonical_k10_s1", "ci_canonical_k20_s1"]);
        let s1 = plan(Some(2)).specs()[2].resolve(&Configs::Builtin).unwrap();
        let s0 = plan(Some(2)).specs()[0].resolve(&Configs::Builtin).unwrap();
        assert_eq!((s0.train.init.as_str(), s0.train.order_seed), ("seed:42", 42));
        assert_eq!((s1.train.init.as_str(), s1.train.order_seed), ("seed:43", 43));
        assert_eq!(s0.data, s1.data, "the data seed stays");
    }

    #[test]
    fn units_of_an_empty_results_directory_are_not_started_with_one_command_each() {
        let p = Plan { out: std::env::temp_dir().join("wt-plan-empty-nonexistent"), ..plan(None) };
        let t = p.train_units(Path::new("/bin/wt")).unwrap();
        assert_eq!(t.len(), 2);
        assert!(t.iter().all(|u| u.state == State::NotStarted));
        let line = shell_line(&t[0].command);
        assert!(line.starts_with("/bin/wt replicate snap linear --scale ci --out "), "{line}");
        assert!(line.ends_with("--only ci_canonical_k10"), "{line}");
        let probes = p.probe_units(Path::new("/bin/wt"));
        let lines: Vec<String> = probes.iter().map(|u| shell_line(&u.command)).collect();
        assert_eq!(probes.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("/bin/wt replicate snap --scale ci"), "{}", lines[0]);
        assert!(lines[2].contains("replicate linear ") && lines[2].ends_with("--probes-only --only linear_k10"));
    }

    #[test]
    fn the_paper_plan_has_seeds_where_a_claim_rests_on_a_fit() {
        let all = Plan { scale: Scale::Paper, suites: super::super::suites::SUITES.iter().collect(), ..plan(None) };
        let names: Vec<String> = all.specs().into_iter().map(|s| s.name).collect();
        let has = |n: &str| names.iter().any(|x| x == n);
        assert!(has("canonical_k3_s1") && has("canonical_k20_s2") && has("fixed_d10k_k36_s2"));
        assert!(has("lr_k20_eta3e-4_s1") && has("batch_k36_b64_s2") && has("zlen4_k10_s1"), "the suites that differed");
        assert!(!has("canonical_k25_s1") && !has("fixed_d20k_k5_s1") && !has("canonical_k36_s1"));
        assert!(!has("canonical_k3_s3") && !has("linear_k10_s1"));
        assert!(has("displacement_k20_s2") && has("asym_a_to_b_k5_s1"), "the probes' and asymmetry's runs");
        // Canonical K ≤ 20 (the probed K = 10 and 20 among them), fixed D = 10k, the four LR runs
        // besides canonical K = 20, nine batch runs, four z lengths, two displacement runs and nine
        // asymmetry runs, at seeds 1 and 2 (a run two suites share is trained once).
        let seeded = names.iter().filter(|n| n.ends_with("_s1") || n.ends_with("_s2")).count();
        assert_eq!(seeded, 2 * (8 + 4 + 4 + 9 + 4 + 2 + 9));
        let one = Plan { seeds: Some(1), ..all };
        assert!(one.specs().iter().all(|s| !s.name.ends_with("_s1")), "--seeds 1 turns them off");
        assert!(one.args(Path::new("wt")).ends_with(&["--seeds".into(), "1".into()]));
    }

    #[test]
    fn the_paper_probes_of_snap_ablation_and_hessian_cover_seeds_1_and_2() {
        let named = |suite: &str| Plan {
            scale: Scale::Paper,
            suites: vec![super::super::suites::suite(suite).unwrap()],
            ..plan(None)
        };
        let pairs = |suite: &str| named(suite).probe_pairs().into_iter().map(|(_, n)| n).collect::<Vec<_>>();
        let seeded = ["canonical_k10", "canonical_k20", "canonical_k10_s1", "canonical_k20_s1", "canonical_k10_s2"];
        for suite in ["snap", "ablation", "hessian"] {
            assert_eq!(pairs(suite)[..5], seeded, "{suite}");
            assert_eq!(pairs(suite).len(), 6, "{suite}");
        }
        assert_eq!(
            pairs("displacement")[2..],
            ["displacement_k10_s1", "displacement_k20_s1", "displacement_k10_s2", "displacement_k20_s2"]
        );
        assert_eq!(
            pairs("linear")[3..],
            ["linear_k10_s1", "linear_k20_s1", "linear_k36_s1", "linear_k10_s2", "linear_k20_s2", "linear_k36_s2"]
        );
        let one = Plan { seeds: Some(1), ..named("hessian") };
        assert_eq!(one.probe_pairs().len(), 2, "--seeds 1: seed 0's runs only");
        // Every probe unit selects its own run by name, the seed runs too.
        let units = named("snap").probe_units(Path::new("/bin/wt"));
        assert!(shell_line(&units[5].command).ends_with("--probes-only --only canonical_k20_s2"));
    }

    #[test]
    fn shell_quoting_survives_spaces_and_quotes() {
        assert_eq!(shell_line(&["a b".into(), "it's".into(), "x=1".into()]), "'a b' 'it'\\''s' x=1");
    }
}
