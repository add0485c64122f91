use super::Outcome;
use crate::error::{Error, Result};
use crate::experiments::runner::{Done, execute};
use crate::experiments::suites::{SUITES, Scale, runs};
use crate::train::record::Record;
use crate::train::session::Progress;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Suites to run (or `all`): plateau, fixed-d, d-scaling, lr, batch, snap, ablation, hessian,
    /// displacement, dz-lead, asymmetry, z-sharing, linear.
    #[arg(required = true)]
    suites: Vec<String>,
    /// `ci` (reduced, minutes) or `paper` (the paper's configurations, hours).
    #[arg(long, default_value = "ci")]
    scale: String,
    /// Output directory; runs go to <out>/<scale>/runs/<name>.
    #[arg(long, default_value = "runs/replicate")]
    out: PathBuf,
    /// Runs trained at once (default: 2 when there are several runs, each on 1 thread — measured
    /// faster than one run on 2 threads; see docs/PERFORMANCE.md).
    #[arg(long)]
    jobs: Option<usize>,
    /// Only train (or resume) the runs; skip the analysis and report.
    #[arg(long)]
    runs_only: bool,
    /// List the runs of the suites and their state, then exit.
    #[arg(long)]
    list: bool,
    /// Write the report from the runs and probe results on disk: train nothing, probe nothing
    /// (missing results are reported as incomplete). Safe while another process trains.
    #[arg(long, conflicts_with = "runs_only")]
    report_only: bool,
    /// Train (or list) only these runs of the suites, comma-separated names as `--list` shows
    /// them, trained in the order given; implies --runs-only. For putting the runs a claim needs
    /// most first.
    #[arg(long, value_delimiter = ',', conflicts_with = "report_only")]
    only: Vec<String>,
}

pub fn run(a: Args) -> Result<Outcome> {
    let scale = match a.scale.as_str() {
        "ci" => Scale::Ci,
        "paper" => Scale::Paper,
        s => return Err(Error::config("--scale", format!("{s:?} (allowed ci, paper)"))),
    };
    let suites: Vec<&str> = if a.suites.iter().any(|s| s == "all") {
        SUITES.to_vec()
    } else {
        for s in &a.suites {
            if !SUITES.contains(&s.as_str()) {
                return Err(Error::config("suite", format!("{s:?} (allowed: all, {})", SUITES.join(", "))));
            }
        }
        a.suites.iter().map(|s| s.as_str()).collect()
    };
    let mut specs: Vec<_> = suites.iter().flat_map(|s| runs(s, scale)).collect();
    if !a.only.is_empty() {
        if let Some(bad) = a.only.iter().find(|n| !specs.iter().any(|s| &&s.name == n)) {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::config(
                "--only",
                format!("{bad:?} (allowed: runs of the suites: {})", names.join(", ")),
            ));
        }
        specs = a.only.iter().filter_map(|n| specs.iter().find(|s| &s.name == n).cloned()).collect();
    }
    let configs = Path::new("configs");
    let runs_dir = a.out.join(scale.name()).join("runs");
    if a.list {
        let mut seen = std::collections::BTreeSet::new();
        for s in specs.iter().filter(|s| seen.insert(s.name.clone())) {
            let cfg = s.resolve(configs)?;
            let st = crate::experiments::runner::status(&runs_dir.join(&s.name), &cfg);
            println!("{:<24} {:<28} {:?}  {}", s.name, s.config, st, s.overrides.join(" "));
        }
        return Ok(Outcome::Ok);
    }
    if a.report_only {
        let path = crate::experiments::report::write_report(&suites, scale, &a.out, false)?;
        eprintln!("report → {}", path.display());
        return Ok(Outcome::Ok);
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let n_runs = specs.iter().map(|s| &s.name).collect::<std::collections::BTreeSet<_>>().len();
    let jobs = a.jobs.unwrap_or(if n_runs >= 2 { cores.min(2) } else { 1 }).clamp(1, n_runs.max(1));
    let threads = (cores / jobs).max(1);
    eprintln!(
        "{} runs for {} at {} scale → {} ({jobs} at a time, {threads} thread(s) each)",
        n_runs,
        suites.join(", "),
        scale.name(),
        runs_dir.display()
    );
    let t0 = Instant::now();
    let done = execute(&specs, configs, &runs_dir, jobs, threads, &|name| Box::new(Lines::new(name)));
    let failed = report_runs(&done);
    eprintln!("runs finished in {:.0} s", t0.elapsed().as_secs_f64());
    if a.runs_only || !a.only.is_empty() {
        return Ok(if failed == 0 { Outcome::Ok } else { Outcome::CheckFailed });
    }
    let t1 = Instant::now();
    let path = crate::experiments::report::write_report(&suites, scale, &a.out, true)?;
    eprintln!("analysis and probes: {:.0} s; report → {}", t1.elapsed().as_secs_f64(), path.display());
    Ok(if failed == 0 { Outcome::Ok } else { Outcome::CheckFailed })
}

fn report_runs(done: &[Done]) -> usize {
    let mut failed = 0;
    for d in done {
        match &d.result {
            Ok(s) => eprintln!(
                "  {:<24} {} {:>6} steps  T1 {:>6}  {}",
                d.name,
                if d.skipped { "(done)" } else { "      " },
                s.steps,
                s.taus.t1.map_or("–".into(), |t| t.to_string()),
                s.stopped.clone().unwrap_or_default()
            ),
            Err(e) => {
                failed += 1;
                eprintln!("  {:<24} FAILED: {e}", d.name);
            }
        }
    }
    failed
}

/// Plain progress lines: start, every 1000 steps, and the step where T1 is crossed.
struct Lines {
    name: String,
    t0: Instant,
    last: u64,
    t1_seen: bool,
}

impl Lines {
    fn new(name: &str) -> Self {
        Lines { name: name.to_string(), t0: Instant::now(), last: 0, t1_seen: false }
    }
}

impl Progress for Lines {
    fn start(&mut self, step: u64, max_steps: u64) {
        eprintln!(
            "[{}] {} at step {step} of at most {max_steps}",
            self.name,
            if step > 0 { "resuming" } else { "starting" }
        );
        self.last = step;
    }
    fn record(&mut self, r: &Record) {
        let cand = r.candidate_loss.unwrap_or(f64::NAN);
        if r.step >= self.last + 1000 {
            self.last = r.step;
            eprintln!(
                "[{}] step {:>6}  loss {:.3}  cand {:.3}  Δz {:+.3}  ({:.0} s)",
                self.name,
                r.step,
                r.train_loss,
                cand,
                r.dz_paper.unwrap_or(f64::NAN),
                self.t0.elapsed().as_secs_f64()
            );
        }
        let _ = &mut self.t1_seen;
    }
}
