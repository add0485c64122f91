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

/// A probe of a run (a unit of `Plan::probe_units`), run by a worker as its own process — the
/// unit's command, as a Slurm task runs it — on the worker's thread count, as soon as its run is
/// complete, so probes overlap the training still going on. Its result lands in the run's
/// `probes/`, where the report finds it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeJob {
    /// The run it reads; a name no spec has (the linear baseline's own models) starts at once.
    pub run: String,
    pub command: Vec<String>,
}

enum Job {
    Train(RunSpec),
    Probe(ProbeJob),
}

/// What a worker does next.
enum Next {
    Start(Job),
    /// A probe waits for a run another worker is training.
    Wait,
    /// Nothing is left to start, now or later.
    Stop,
}

/// The shared queue: jobs ready to start, probes waiting for their run, runs being trained.
struct Queue {
    ready: VecDeque<Job>,
    waiting: Vec<ProbeJob>,
    training: std::collections::BTreeSet<String>,
}

impl Queue {
    /// Runs that have probes first (their probes can then overlap the other runs), each group
    /// in the given order; probes of no run here before everything.
    fn new(specs: Vec<RunSpec>, probes: Vec<ProbeJob>) -> Queue {
        let probed = |s: &RunSpec| probes.iter().any(|p| p.run == s.name);
        let (first, rest): (Vec<RunSpec>, Vec<RunSpec>) = specs.into_iter().partition(probed);
        let names: Vec<&String> = first.iter().map(|s| &s.name).collect();
        let (waiting, free): (Vec<ProbeJob>, Vec<ProbeJob>) = probes.into_iter().partition(|p| names.contains(&&p.run));
        let ready = free.into_iter().map(Job::Probe).chain(first.into_iter().chain(rest).map(Job::Train)).collect();
        Queue { ready, waiting, training: Default::default() }
    }

    fn next(&mut self) -> Next {
        if let Some(job) = self.ready.pop_front() {
            if let Job::Train(s) = &job {
                self.training.insert(s.name.clone());
            }
            return Next::Start(job);
        }
        if self.waiting.iter().any(|p| self.training.contains(&p.run)) { Next::Wait } else { Next::Stop }
    }

    /// A run ended: its probes go next when it completed, else they are dropped (the report
    /// says what is missing).
    fn finished(&mut self, run: &str, complete: bool) {
        self.training.remove(run);
        let (mine, others) = std::mem::take(&mut self.waiting).into_iter().partition(|p: &ProbeJob| p.run == run);
        self.waiting = others;
        if complete {
            for p in mine.into_iter().rev() {
                self.ready.push_front(Job::Probe(p));
            }
        }
    }
}

/// Run every spec (deduplicated by name) `jobs` at a time with `threads` rayon threads each,
/// and each probe after its run (see [`ProbeJob`]).
pub fn execute(
    specs: &[RunSpec],
    probes: Vec<ProbeJob>,
    configs: &Configs,
    runs: &Path,
    how: Execution,
    progress: &ProgressFactory<'_>,
) -> Vec<Done> {
    let Execution { jobs, threads, other_revision } = how;
    let mut seen = std::collections::BTreeSet::new();
    let specs: Vec<RunSpec> = specs.iter().filter(|s| seen.insert(s.name.clone())).cloned().collect();
    let queue = Mutex::new(Queue::new(specs, probes));
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
                    let next = queue.lock().unwrap().next();
                    match next {
                        Next::Stop => break,
                        Next::Wait => std::thread::sleep(std::time::Duration::from_millis(200)),
                        Next::Start(Job::Probe(p)) => run_probe(&p, threads),
                        Next::Start(Job::Train(spec)) => {
                            let dir = runs.join(&spec.name);
                            let outcome = pool.install(|| run_one(&spec, configs, &dir, other_revision, progress));
                            queue.lock().unwrap().finished(&spec.name, outcome.result.is_ok());
                            done.lock().unwrap().push(outcome);
                        }
                    }
                }
            });
        }
    });
    let mut out = done.into_inner().unwrap();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One probe in its own process on `threads` threads; stopped on Ctrl-C or SIGTERM (a probe's
/// result is written whole at its end, so nothing half-done remains). A failure is only noted:
/// the report computes a missing probe again in this process and says why it fails.
fn run_probe(p: &ProbeJob, threads: usize) {
    let (bin, args) = p.command.split_first().expect("a probe command");
    let child = std::process::Command::new(bin)
        .args(args)
        .env("RAYON_NUM_THREADS", threads.max(1).to_string())
        .stdout(std::process::Stdio::null())
        .spawn();
    let status = child.and_then(|mut c| {
        loop {
            if let Some(st) = c.try_wait()? {
                break Ok(st);
            }
            if crate::train::progress::interrupted() {
                let _ = c.kill();
                break c.wait();
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    match status {
        Ok(st) if st.success() || crate::train::progress::interrupted() => {}
        Ok(st) => eprintln!("[{}] probe process failed ({st}); the report runs it again here", p.run),
        Err(e) => eprintln!("[{}] probe process could not run ({e}); the report runs it here", p.run),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> RunSpec {
        let key = RunKey::canonical(crate::experiments::run_key::Scale::Ci, 10);
        RunSpec { key, name: name.into(), config: "canonical.toml".into(), overrides: vec![] }
    }

    fn probe(run: &str, what: &str) -> ProbeJob {
        ProbeJob { run: run.into(), command: vec![what.into()] }
    }

    fn label(next: Next) -> String {
        match next {
            Next::Stop => "end".into(),
            Next::Wait => "wait".into(),
            Next::Start(Job::Train(s)) => format!("train {}", s.name),
            Next::Start(Job::Probe(p)) => format!("{} {}", p.command[0], p.run),
        }
    }

    #[test]
    fn probes_follow_their_run_and_probed_runs_train_first() {
        let specs = vec![spec("a"), spec("b"), spec("c")];
        let probes = vec![probe("b", "snap"), probe("b", "hessian"), probe("linear", "linear")];
        let mut q = Queue::new(specs, probes);
        assert_eq!(label(q.next()), "linear linear", "a probe of no run here starts at once");
        assert_eq!(label(q.next()), "train b", "the probed run before the others");
        assert_eq!(label(q.next()), "train a");
        q.finished("b", true);
        assert_eq!(label(q.next()), "snap b", "its probes next, in order");
        assert_eq!(label(q.next()), "hessian b");
        assert_eq!(label(q.next()), "train c");
        q.finished("a", true);
        q.finished("c", true);
        assert_eq!(label(q.next()), "end");
    }

    #[test]
    fn an_idle_worker_waits_for_a_probed_run_and_a_failed_run_drops_its_probes() {
        let mut q = Queue::new(vec![spec("a")], vec![probe("a", "snap")]);
        assert_eq!(label(q.next()), "train a");
        assert_eq!(label(q.next()), "wait", "the other worker waits: a probe will follow");
        q.finished("a", false);
        assert_eq!(label(q.next()), "end", "a failed run's probes are not run");
        let mut q = Queue::new(vec![spec("a")], vec![]);
        assert_eq!(label(q.next()), "train a");
        assert_eq!(label(q.next()), "end", "nothing will follow: no waiting");
    }
}
