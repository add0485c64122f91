//! Running many training runs: each run has a name, a config file from `configs/` and overrides;
//! its directory is `<runs>/<name>`, shared by every suite that uses it. Complete runs are
//! skipped, interrupted ones resumed, and a directory holding a different config is refused.
//! Runs execute `jobs` at a time, each on its own rayon pool (results do not depend on threads).

use super::configs::Configs;
use super::run_key::RunKey;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::train::layout::read_summary;
use crate::train::lock::RunLock;
use crate::train::progress::Progress;
use crate::train::rundir::{RunDir, Summary};
use crate::train::session::{Open, run_session_dtype};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Δz lead needs T4 of every canonical run, which comes after 2·T1 at large K.
pub const T4_KNOWN: &str = "train.stop_not_before_t4=true";

/// One run of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// What the run is; analyses find it by this.
    pub key: RunKey,
    /// Directory name under the runs directory: the key, written out.
    pub name: String,
    /// Config file under `configs/`.
    pub config: String,
    /// `key=value` overrides applied on top of the file.
    pub overrides: Vec<String>,
}

impl RunSpec {
    pub fn new(key: RunKey, config: impl Into<String>, overrides: &[&str]) -> Self {
        Self::with(key, config, overrides.iter().map(|s| s.to_string()).collect())
    }

    pub fn with(key: RunKey, config: impl Into<String>, overrides: Vec<String>) -> Self {
        RunSpec { key, name: key.to_string(), config: config.into(), overrides }
    }

    pub fn resolve(&self, configs: &Configs) -> Result<RunConfig> {
        configs.resolve(&self.config, &self.overrides)
    }

    /// Init/batch-order seed `s` of this run: seed 0 is the run itself (the author's seeds, 42);
    /// seed s ≥ 1 is `<name>_s<s>` with init and order seeds 42 + s. The data seed is unchanged.
    pub fn seeded(&self, s: u32) -> RunSpec {
        if s == 0 {
            return self.clone();
        }
        let mut r = RunSpec::with(self.key.with_seed(s), &self.config, self.overrides.clone());
        r.overrides.push(format!("train.init=\"seed:{}\"", 42 + s));
        r.overrides.push(format!("train.order_seed={}", 42 + s));
        r
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Missing,
    Incomplete,
    Complete,
    /// The directory holds another run: the message says how it differs.
    Mismatch(String),
}

/// State of a run directory against the config it should hold.
pub fn status(dir: &Path, cfg: &RunConfig) -> Status {
    if !crate::train::layout::config(dir).exists() {
        return Status::Missing;
    }
    match RunDir::read_config(dir) {
        Ok((have, _)) if have.to_toml() != cfg.to_toml() => {
            Status::Mismatch(format!("{} holds a different config than the suite asks for", dir.display()))
        }
        Err(e) => Status::Mismatch(e.to_string()),
        Ok(_) if crate::train::layout::summary(dir).exists() => Status::Complete,
        // Killed before its first checkpoint: nothing to resume, start again.
        Ok(_) if !crate::train::layout::resume(dir).exists() => Status::Missing,
        Ok(_) => Status::Incomplete,
    }
}

/// Outcome of one run.
pub struct Done {
    pub name: String,
    pub dir: PathBuf,
    pub result: Result<Summary>,
    pub skipped: bool,
}

/// Makes the progress sink of a run, given its name.
pub type ProgressFactory<'a> = dyn Fn(&str) -> Box<dyn Progress> + Sync + 'a;

/// How many runs at once, with how many threads each, and whether a run another revision
/// started may be resumed.
#[derive(Clone, Copy, Debug)]
pub struct Execution {
    pub jobs: usize,
    pub threads: usize,
    pub other_revision: bool,
}

/// Run every spec (deduplicated by name) `jobs` at a time with `threads` rayon threads each.
pub fn execute(
    specs: &[RunSpec],
    configs: &Configs,
    runs: &Path,
    how: Execution,
    progress: &ProgressFactory<'_>,
) -> Vec<Done> {
    let Execution { jobs, threads, other_revision } = how;
    let mut seen = std::collections::BTreeSet::new();
    let queue: VecDeque<RunSpec> = specs.iter().filter(|s| seen.insert(s.name.clone())).cloned().collect();
    let queue = Mutex::new(queue);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build().expect("thread pool");
                loop {
                    // After Ctrl-C or SIGTERM no run starts: the runs in progress save their resume
                    // state and the rest stay not started (each would stop at once and save one).
                    if crate::train::progress::interrupted() {
                        break;
                    }
                    let Some(spec) = queue.lock().unwrap().pop_front() else { break };
                    let dir = runs.join(&spec.name);
                    let outcome = pool.install(|| run_one(&spec, configs, &dir, other_revision, progress));
                    done.lock().unwrap().push(outcome);
                }
            });
        }
    });
    let mut out = done.into_inner().unwrap();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn run_one(
    spec: &RunSpec,
    configs: &Configs,
    dir: &Path,
    other_revision: bool,
    progress: &ProgressFactory<'_>,
) -> Done {
    let mk = |result, skipped| Done { name: spec.name.clone(), dir: dir.to_path_buf(), result, skipped };
    let cfg = match spec.resolve(configs) {
        Ok(c) => c,
        Err(e) => return mk(Err(e), false),
    };
    if matches!(status(dir, &cfg), Status::Complete) {
        return mk(read_summary(dir), true);
    }
    let _lock = match RunLock::acquire(dir) {
        Ok(l) => l,
        Err(e) => return mk(Err(e), false),
    };
    let _ = std::fs::remove_file(crate::train::layout::failed(dir));
    let open = match status(dir, &cfg) {
        Status::Complete => return mk(read_summary(dir), true),
        Status::Mismatch(m) => {
            return mk(Err(Error::refused(format!("{m}; delete the directory or choose another --out"))), false);
        }
        Status::Incomplete => Open::Resume { other_revision },
        Status::Missing => Open::Create { force: true },
    };
    let result = run_session_dtype(cfg, crate::numerics::Dtype::F32, dir, open, progress(&spec.name));
    // An interrupted run is resumable, not failed.
    if let Some(e) = result.as_ref().err().filter(|e| !matches!(e, Error::Interrupted { .. })) {
        let _ = crate::train::layout::write_failed(dir, &e.to_string());
    }
    mk(result, false)
}
