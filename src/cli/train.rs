use super::{Dtype, Outcome};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::numerics::Scalar;
use crate::train::progress::Progress;
use crate::train::record::Record;
use crate::train::rundir::RunDir;
use crate::train::session::{Open, run_session};
use crate::train::{stopping, tau};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The run to train: a config file and overrides, or the canonical run (shared with `horizon`).
#[derive(clap::Args)]
pub struct RunArgs {
    /// Run config (TOML with [model], [data], [train]; see configs/). Without it: the canonical
    /// K=10 run, stopped 1000 steps after T1.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config value, e.g. --set train.lr=2e-3 --set data.k=20 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl RunArgs {
    /// The resolved config; without --config, the canonical run stops DEFAULT_MARGIN steps after T1.
    pub fn load(&self) -> Result<RunConfig> {
        let mut overrides = self.set.clone();
        if self.config.is_none() && !overrides.iter().any(|s| s.starts_with("train.stop_after_t1")) {
            overrides.insert(0, format!("train.stop_after_t1={DEFAULT_MARGIN}"));
        }
        RunConfig::load(self.config.as_deref(), &overrides)
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// Run directory (default: runs/<config name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// f32 (default) or f64; a resumed run keeps the dtype it was started with.
    #[arg(long, value_parser = super::dtype_parser())]
    dtype: Option<Dtype>,
    /// Continue the run in this directory bit-exactly from its last checkpoint.
    #[arg(long, conflicts_with_all = ["config", "set", "out", "force"])]
    resume: Option<PathBuf>,
    /// Delete an existing run directory and start over.
    #[arg(long)]
    force: bool,
    /// With --resume: continue a run another revision trained so far (the manifest records the
    /// segment each revision trained); by default that is refused.
    #[arg(long)]
    allow_other_revision: bool,
    #[command(flatten)]
    output: super::Output,
}

/// Steps after T1 at which the default run (no --config) stops.
pub const DEFAULT_MARGIN: u64 = 1000;

pub fn run(a: Args) -> Result<Outcome> {
    if a.allow_other_revision && a.resume.is_none() {
        return Err(Error::config("--allow-other-revision", "only with --resume <run directory>"));
    }
    if let Some(dir) = &a.resume {
        let (cfg, dtype) = RunDir::read_config(dir)?;
        let dtype = dtype.parse::<Dtype>().map_err(|e| Error::format(dir, format!("manifest: {e}")))?;
        if let Some(asked) = a.dtype.filter(|d| *d != dtype) {
            return Err(Error::refused(format!(
                "{} was trained in {}; --dtype {} cannot change a resumed run (leave --dtype out)",
                dir.display(),
                dtype.name(),
                asked.name()
            )));
        }
        let open = Open::Resume { other_revision: a.allow_other_revision };
        return crate::with_scalar!(dtype, S => train::<S>(cfg, dir, open, a.output));
    }
    let cfg = a.run.load()?;
    let name = match &a.run.config {
        Some(p) => p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into()),
        None => format!("canonical-k{}", cfg.data.k),
    };
    let out = a.out.clone().unwrap_or_else(|| Path::new("runs").join(name));
    let open = Open::Create { force: a.force };
    crate::with_scalar!(a.dtype.unwrap_or(Dtype::F32), S => train::<S>(cfg, &out, open, a.output))
}

fn train<S: Scalar>(cfg: RunConfig, dir: &Path, open: Open, out: super::Output) -> Result<Outcome> {
    let tc = &cfg.train;
    let resume = matches!(open, Open::Resume { .. });
    let verb = match resume {
        // Killed before its first resume state, or the state was deleted: the same bits again from 0.
        true if !crate::train::layout::resume(dir).exists() => {
            "no resume state (resume.safetensors) to continue from: training again from step 0 (the same bits)"
        }
        true => "resuming",
        false => "training",
    };
    out.note(format!(
        "{} {} K={} ({}; n_b={}, batch {}, lr {:e}, {:?}{}) → {}",
        verb,
        cfg.data.task.name(),
        cfg.data.k,
        S::NAME,
        cfg.data.n_b,
        tc.batch_size,
        tc.lr,
        tc.schedule,
        tc.grad_clip.map(|c| format!(", clip {c}")).unwrap_or_default(),
        dir.display()
    ));
    let quiet = !out.text();
    let interactive = !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    let progress = Bar::new(interactive, quiet, &cfg);
    let bar = progress.bar.clone();
    // The one writer of the run (the lock `replicate` and Slurm tasks take too).
    let _lock = crate::train::lock::RunLock::acquire(dir)?;
    stop_on_ctrl_c();
    let result = run_session::<S>(cfg, dir, open, Box::new(progress));
    bar.finish_and_clear();
    let summary = result?;
    out.emit(&serde_json::json!({ "run": dir, "summary": summary }));
    if out.text() {
        print!("{}", summary.text(dir));
    }
    Ok(Outcome::Ok)
}

/// Ctrl-C, SIGTERM (Slurm's scancel and time limit) or SIGHUP ends the run after the step in
/// progress, its resume state saved and its lock released (the error says how to continue); a
/// second one ends the process at once.
pub(crate) fn stop_on_ctrl_c() {
    use std::sync::atomic::Ordering;
    // Fails only when a handler is already set (a second run in one process): that one serves.
    let _ = ctrlc::set_handler(|| {
        if crate::train::progress::INTERRUPT.swap(true, Ordering::Relaxed) {
            std::process::exit(crate::error::EXIT_INTERRUPTED.into());
        }
    });
}

/// Progress display: an indicatif bar on a terminal, plain lines about every 1000 steps otherwise.
/// The bar runs to the expected stop, not to `max_steps`: before T1 it says the stop waits for T1
/// (and shows no ETA), after T1 it runs to the stopping rule's step.
pub struct Bar {
    pub bar: ProgressBar,
    interactive: bool,
    quiet: bool,
    ln_k: f64,
    plain_every: u64,
    n_records: u64,
    cfg: RunConfig,
    t1: Option<u64>,
}

const WITH_ETA: &str = "{bar:30} {pos}/{len} steps {msg} · {per_sec} · ETA {eta}";

impl Bar {
    pub fn new(interactive: bool, quiet: bool, cfg: &RunConfig) -> Self {
        let bar = ProgressBar::new(0);
        if !interactive {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        let ln_k = tau::Thresholds::new(cfg.data.k).ln_k;
        let plain_every = (1000 / cfg.train.eval_every).max(1);
        let mut b = Bar { bar, interactive, quiet, ln_k, plain_every, n_records: 0, cfg: cfg.clone(), t1: None };
        b.set_style();
        b
    }

    fn set_style(&mut self) {
        let template = match (self.t1, stopping::stops_after_t1(&self.cfg)) {
            (None, true) => "{spinner} step {pos} {msg} · {per_sec} · stops after T1 (not yet reached)".to_string(),
            _ => WITH_ETA.to_string(),
        };
        self.bar.set_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("█▌ "));
        let stop = self.t1.map_or(self.cfg.train.max_steps, |t1| stopping::expected_stop(&self.cfg, t1));
        self.bar.set_length(stop);
    }
}

impl Progress for Bar {
    fn start(&mut self, step: u64, _max_steps: u64) {
        self.bar.set_position(step);
        self.bar.reset_eta();
    }
    fn step(&mut self, step: u64) {
        self.bar.set_position(step);
    }
    fn record(&mut self, r: &Record) {
        let msg = format!(
            "loss {:.3} · cand {} (ln K {:.3}) · Δz {}",
            r.train_loss,
            r.candidate_loss.map_or("–".into(), |c| format!("{c:.3}")),
            self.ln_k,
            r.dz_paper.map_or("–".into(), |d| format!("{d:+.3}"))
        );
        self.bar.set_message(msg.clone());
        if self.t1.is_none() && r.candidate_loss.is_some_and(|c| c < tau::Thresholds::T1 * self.ln_k) {
            self.t1 = Some(r.step);
            self.set_style();
            self.bar.reset_eta();
        }
        self.n_records += 1;
        if !self.interactive && !self.quiet && self.n_records.is_multiple_of(self.plain_every) {
            eprintln!("step {:>7}  {msg}  ({:.1} steps/s)", r.step, r.steps_per_s);
        }
    }
}
