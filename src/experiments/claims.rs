//! The vocabulary of the claims report: one row per claim (paper's number, windtunnel's number,
//! verdict, reason), the runs a suite reads, and where its figures go.

use super::run_key::{RunKey, Scale};
use super::runner::RunSpec;
pub use super::stats::sig;
pub use super::verdict::{Measure, Verdict};
use crate::config::RunConfig;
use crate::error::Result;
use crate::plot;
use crate::train::record::Record;
use crate::train::tau::{Taus, taus};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Init/order seeds a paper-scale suite seeded by default is graded with (`seed_range.rs`).
pub const PAPER_SEEDS: u32 = 3;

/// One claim's suite: its name, its runs at each scale, and its analysis (the registry of
/// every suite is `suites.rs`).
pub struct Suite {
    pub name: &'static str,
    pub(super) paper: fn() -> Vec<RunSpec>,
    pub(super) ci: fn() -> Vec<RunSpec>,
    /// At paper scale, the runs every seed s ≥ 1 repeats, for a suite seeded by default.
    pub(super) seeded: Option<fn() -> Vec<RunSpec>>,
    pub(super) analyse: fn(&Ctx, &Suite) -> Result<SuiteOutcome>,
    /// Its claims read probe results computed on its runs' checkpoints.
    pub reads_probes: bool,
    /// For a suite whose probe trains its own models (the linear baseline: no training runs),
    /// their result directories at init/order seed `s`.
    pub probe_models: Option<fn(Scale, u32) -> Vec<String>>,
}

impl std::fmt::Debug for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Suite {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Suite {
    /// The suite's rows, figures and numbers from the runs `ctx` reads.
    pub fn grade(&self, ctx: &Ctx) -> Result<SuiteOutcome> {
        (self.analyse)(ctx, self)
    }

    /// The suite's runs at a scale (seed 0).
    pub fn runs(&self, scale: Scale) -> Vec<RunSpec> {
        match scale {
            Scale::Paper => (self.paper)(),
            Scale::Ci => (self.ci)(),
        }
    }

    /// The runs every init/order seed s ≥ 1 repeats (named `<run>_s<s>`): at paper scale the
    /// seeded subset of a suite seeded by default, otherwise all its runs.
    pub fn seeded_runs(&self, scale: Scale) -> Vec<RunSpec> {
        match (scale, self.seeded) {
            (Scale::Paper, Some(seeded)) => seeded(),
            _ => self.runs(scale),
        }
    }

    /// How many seeds the suite is trained and graded with: `--seeds` when given, else
    /// [`PAPER_SEEDS`] for the paper-scale suites seeded by default and 1 otherwise.
    pub fn seeds(&self, scale: Scale, given: Option<u32>) -> u32 {
        match given {
            Some(n) => n.max(1),
            None if scale == Scale::Paper && self.seeded.is_some() => PAPER_SEEDS,
            None => 1,
        }
    }

    /// The suite's runs at seed `s`: all of them at seed 0, the seeded subset at s ≥ 1.
    pub fn runs_at_seed(&self, scale: Scale, s: u32) -> Vec<RunSpec> {
        if s == 0 { self.runs(scale) } else { self.seeded_runs(scale).iter().map(|r| r.seeded(s)).collect() }
    }
}

/// The rows other parts of the report read (the falsified mechanisms), found by key, never by
/// their text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// The LR suite's T1 ratio (the plateau's end against η).
    LrT1,
    /// A batch suite's T2-in-steps row (one per K).
    BatchSteps,
}

/// One row of the claims table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub verdict: Verdict,
    pub reason: String,
    /// The row's figures as numbers (report.json), beside the formatted `ours` text.
    pub values: std::collections::BTreeMap<String, serde_json::Value>,
    /// The graded figure beside the paper's value, for grading over seeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
    /// The verdict over seeds (set by the Seeds section; `verdict` is then that one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_seeds: Option<super::seed_range::OverSeeds>,
    #[serde(skip)]
    pub key: Option<Key>,
}

impl Row {
    pub fn new(claim: &str, paper: &str, ours: String, verdict: Verdict, reason: impl Into<String>) -> Self {
        let values = Default::default();
        let (claim, paper, reason) = (claim.into(), paper.into(), reason.into());
        Row { claim, paper, ours, verdict, reason, values, measure: None, over_seeds: None, key: None }
    }

    /// The figure this row grades (`values`) against the paper's interval `paper`.
    pub fn measured(mut self, name: &str, values: &[f64], paper: (f64, f64)) -> Self {
        self.measure = Some(Measure { name: name.into(), values: values.to_vec(), paper });
        self
    }

    /// Attach a figure as a number (or an array of numbers) under `name`; NaN becomes null.
    pub fn with(mut self, name: &str, value: impl Serialize) -> Self {
        self.values.insert(name.into(), serde_json::to_value(value).expect("figures serialise"));
        self
    }

    pub fn keyed(mut self, key: Key) -> Self {
        self.key = Some(key);
        self
    }

    pub fn incomplete(claim: &str, paper: &str, what: impl Into<String>) -> Self {
        Row::new(claim, paper, "–".into(), Verdict::Incomplete, what)
    }
}

/// What one suite found.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteOutcome {
    pub suite: String,
    pub rows: Vec<Row>,
    /// Figure paths relative to the report.
    pub figures: Vec<String>,
    /// A markdown table (or text) of the per-run numbers behind the rows.
    pub details: String,
    /// Machine-readable numbers.
    pub data: serde_json::Value,
    pub runs_total: usize,
    pub runs_complete: usize,
    /// Training plus probe seconds spent on this suite's runs (a run shared by suites counts in each).
    pub compute_seconds: f64,
}

/// One run of a suite as it stands on disk (possibly still training).
pub struct RunData {
    /// What the run is: analyses find runs by key.
    pub key: RunKey,
    pub name: String,
    pub dir: PathBuf,
    pub cfg: RunConfig,
    pub records: Vec<Record>,
    pub taus: Taus,
    pub complete: bool,
    pub train_seconds: f64,
}

impl RunData {
    pub fn load(spec: &RunSpec, configs: &super::configs::Configs, runs: &Path) -> Result<Self> {
        let cfg = spec.resolve(configs)?;
        let dir = runs.join(&spec.name);
        let records = crate::train::layout::read_metrics(&dir)?;
        crate::train::layout::check_metrics(&dir, &records, cfg.train.eval_every)?;
        let summary = crate::train::layout::read_summary(&dir).ok();
        let taus = taus(&records, cfg.data.k);
        let train_seconds = match &summary {
            Some(s) => s.train_seconds + s.eval_seconds,
            None => records.last().map_or(0.0, |r| r.wall_time_s),
        };
        Ok(RunData {
            key: spec.key,
            name: spec.name.clone(),
            dir,
            cfg,
            records,
            taus,
            complete: summary.is_some(),
            train_seconds,
        })
    }

    pub fn k(&self) -> usize {
        self.cfg.data.k
    }

    /// Dataset size D = n_b·K.
    pub fn d(&self) -> usize {
        self.cfg.data.n_b * self.cfg.data.k
    }

    pub fn ln_k(&self) -> f64 {
        crate::train::tau::Thresholds::new(self.cfg.data.k).ln_k
    }

    pub fn last_step(&self) -> u64 {
        self.records.last().map_or(0, |r| r.step)
    }

    /// Finished by running its full `max_steps` (not by a stopping rule): a waiting time it has
    /// not reached by now it never reaches.
    pub fn ran_out(&self) -> bool {
        self.complete && self.last_step() >= self.cfg.train.max_steps
    }

    /// "1850", "none" (not reached), "> 4000" (not reached yet, still training) or "not trained".
    pub fn show(&self, t: Option<u64>) -> String {
        match t {
            Some(v) => v.to_string(),
            None if self.complete => "none".into(),
            None if self.records.is_empty() => "not trained".into(),
            None => format!("> {}", self.last_step()),
        }
    }
}

/// Where a suite reads runs and writes figures.
#[derive(Clone)]
pub struct Ctx {
    pub scale: Scale,
    pub configs: super::configs::Configs,
    pub runs: PathBuf,
    /// `<report dir>/figures`.
    pub figures: PathBuf,
    /// Run probes whose results are missing (false: report them as incomplete).
    pub run_probes: bool,
    /// When not empty, compute probes only on these runs.
    pub only: Vec<String>,
    /// `--seeds`: init/order seeds for every suite; when absent, each suite's default.
    pub seeds: Option<u32>,
    /// The seed whose runs [`Ctx::load`] reads (0: the author's).
    pub seed: u32,
    /// Read only the runs the seeds repeat, at seed 0 too (so every seed grades the same set).
    pub seeded_only: bool,
}

impl Ctx {
    /// The suite's runs at this context's seed (0: the author's seeds).
    pub fn load(&self, suite: &Suite) -> Result<Vec<RunData>> {
        self.load_seed(suite, self.seed)
    }

    /// The suite's runs at init/order seed `s` (see [`super::runner::RunSpec::seeded`]).
    pub fn load_seed(&self, suite: &Suite, s: u32) -> Result<Vec<RunData>> {
        let specs = match (s, self.seeded_only) {
            (0, true) => suite.seeded_runs(self.scale),
            _ => suite.runs_at_seed(self.scale, s),
        };
        specs.iter().map(|spec| RunData::load(spec, &self.configs, &self.runs)).collect()
    }

    /// How many init/order seeds `suite` is graded with.
    pub fn seeds_of(&self, suite: &Suite) -> u32 {
        suite.seeds(self.scale, self.seeds)
    }

    /// Whether a missing probe result on the run `name` may be computed now.
    pub fn probe_allowed(&self, name: &str) -> bool {
        self.run_probes && (self.only.is_empty() || self.only.iter().any(|n| n == name))
    }

    /// Save a figure under figures/ (`name`, an .svg, and its .csv) and return the SVG's path
    /// relative to the report.
    pub fn figure(&self, name: &str, fig: &plot::Figure) -> Result<String> {
        fig.save(&self.figures.join(name))?;
        Ok(format!("figures/{name}"))
    }
}

/// A suite's outcome from its rows, figures and details, counting its runs and their seconds.
pub fn outcome(suite: &str, runs: &[RunData], rows: Vec<Row>, figures: Vec<String>, details: String) -> SuiteOutcome {
    SuiteOutcome {
        suite: suite.into(),
        rows,
        figures,
        details,
        data: serde_json::json!({}),
        runs_total: runs.len(),
        runs_complete: runs.iter().filter(|r| r.complete).count(),
        compute_seconds: seconds(runs),
    }
}

/// Seconds of training of a set of runs.
pub fn seconds(runs: &[RunData]) -> f64 {
    runs.iter().map(|r| r.train_seconds).sum()
}

pub fn fmt_ci(fit: &super::stats::Fit) -> String {
    match fit.ci95 {
        Some((lo, hi)) => format!("{:.3} [{:.3}, {:.3}], R² {:.3}, n = {}", fit.slope, lo, hi, fit.r2, fit.n),
        None => format!("{:.3} (n = {})", fit.slope, fit.n),
    }
}

/// A markdown table; a `|` inside a cell (|B|, |λ_min|) is escaped so it does not split the cell.
pub fn table<S: AsRef<str>>(header: &[&str], rows: &[Vec<S>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let esc = |c: &str| c.replace('|', "\\|");
    let mut s = line(header.iter().map(|h| esc(h)).collect());
    s += &format!("|{}|\n", vec!["---"; header.len()].join("|"));
    for r in rows {
        s += &line(r.iter().map(|c| esc(c.as_ref())).collect());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_inside_a_cell_does_not_split_it() {
        let t = table(&["run", "|B|/G"], &[vec!["g1", "λ = |λ_min|"]]);
        assert_eq!(t, "| run | \\|B\\|/G |\n|---|---|\n| g1 | λ = \\|λ_min\\| |\n");
        // Every line has as many unescaped separators as the header: 2 columns, 3 pipes.
        for line in t.lines() {
            assert_eq!(line.replace("\\|", "").matches('|').count(), 3, "{line}");
        }
    }
}
