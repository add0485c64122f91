//! Running many training runs: each run has a name, a config file from `configs/` and overrides;
//! its directory is `<runs>/<name>`, shared by every suite that uses it. Complete runs are
//! skipped, interrupted ones resumed, and a directory holding a different config is refused.
//! Runs execute `jobs` at a time, each on its own rayon pool (results do not depend on threads).

use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::train::rundir::{RunDir, Summary};
use crate::train::session::{Open, Progress, run_session_dtype};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One run of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Directory name under the runs directory.
    pub name: String,
    /// Config file under `configs/`.
    pub config: String,
    /// `key=value` overrides applied on top of the file.
    pub overrides: Vec<String>,
}

impl RunSpec {
    pub fn new(name: impl Into<String>, config: impl Into<String>, overrides: &[&str]) -> Self {
        RunSpec {
            name: name.into(),
            config: config.into(),
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
        }
    }

    pub fn resolve(&self, configs: &Path) -> Result<RunConfig> {
        RunConfig::load(Some(&configs.join(&self.config)), &self.overrides)
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
    if !dir.join("config.toml").exists() {
        return Status::Missing;
    }
    match RunDir::read_config(dir) {
        Ok((have, _)) if have.to_toml() != cfg.to_toml() => {
            Status::Mismatch(format!("{} holds a different config than the suite asks for", dir.display()))
        }
        Err(e) => Status::Mismatch(e.to_string()),
        Ok(_) if dir.join("summary.json").exists() => Status::Complete,
        // Killed before its first checkpoint: nothing to resume, start again.
        Ok(_) if !dir.join("resume.safetensors").exists() => Status::Missing,
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

/// Run every spec (deduplicated by name) `jobs` at a time with `threads` rayon threads each.
pub fn execute(
    specs: &[RunSpec],
    configs: &Path,
    runs: &Path,
    jobs: usize,
    threads: usize,
    progress: &ProgressFactory<'_>,
) -> Vec<Done> {
    let mut seen = std::collections::BTreeSet::new();
    let queue: VecDeque<RunSpec> = specs.iter().filter(|s| seen.insert(s.name.clone())).cloned().collect();
    let queue = Mutex::new(queue);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build().expect("thread pool");
                loop {
                    let Some(spec) = queue.lock().unwrap().pop_front() else { break };
                    let dir = runs.join(&spec.name);
                    let outcome = pool.install(|| run_one(&spec, configs, &dir, progress));
                    done.lock().unwrap().push(outcome);
                }
            });
        }
    });
    let mut out = done.into_inner().unwrap();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `<runs>/<name>.lock`, holding the pid of the process training the run: two `replicate`
/// processes sharing a runs directory must never train the same run at once.
struct RunLock(PathBuf);

impl RunLock {
    fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.with_extension("lock");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        for _ in 0..2 {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write;
                    write!(f, "{}", std::process::id()).map_err(|e| Error::io(&path, e))?;
                    return Ok(RunLock(path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid = std::fs::read_to_string(&path).unwrap_or_default();
                    let alive = !pid.trim().is_empty() && Path::new("/proc").join(pid.trim()).exists();
                    if alive {
                        return Err(Error::other(format!(
                            "{} is being trained by process {} ({}); wait for it or stop it",
                            dir.display(),
                            pid.trim(),
                            path.display()
                        )));
                    }
                    // Left by a process that died: take it over.
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::other(format!("could not lock {}", path.display())))
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run_one(spec: &RunSpec, configs: &Path, dir: &Path, progress: &ProgressFactory<'_>) -> Done {
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
    let open = match status(dir, &cfg) {
        Status::Complete => return mk(read_summary(dir), true),
        Status::Mismatch(m) => {
            return mk(Err(Error::other(format!("{m}; delete the directory or choose another --out"))), false);
        }
        Status::Incomplete => Open::Resume,
        Status::Missing => Open::Create { force: true },
    };
    mk(run_session_dtype(cfg, "f32", dir, open, progress(&spec.name)), false)
}

pub fn read_summary(dir: &Path) -> Result<Summary> {
    let p = dir.join("summary.json");
    let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::format(&p, e.to_string()))
}
