use super::Outcome;
use crate::error::{Error, Result};
use crate::experiments::claims::Suite;
use crate::experiments::configs::Configs;
use crate::experiments::plan::{Plan, State, shell_line};
use crate::experiments::run_key::Scale;
use crate::experiments::runner::{Done, Execution, ProbeJob, execute};
use crate::experiments::slurm::{self, SlurmOptions};
use crate::experiments::suites::{SUITES, suite};
use crate::train::progress::Progress;
use crate::train::record::Record;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Suites to run (or `all`): plateau, fixed-d, d-scaling, lr, batch, snap, ablation, hessian,
    /// displacement, dz-lead, asymmetry, z-sharing, linear.
    suites: Vec<String>,
    /// `ci` (reduced, minutes) or `paper` (the paper's configurations, hours).
    #[arg(long, default_value = "ci")]
    scale: String,
    /// Output directory; runs go to <out>/<scale>/runs/<name>.
    #[arg(long, default_value = "runs/replicate")]
    out: PathBuf,
    /// Init/batch-order seeds per configuration: seed 0 is the author's (42), seed s ≥ 1 trains
    /// `<run>_s<s>` with seeds 42 + s. The report adds the spread across seeds. Default: 3 at
    /// paper scale for the fits (d-scaling and dz-lead to K = 20, fixed-d at D = 10k) and the
    /// suites that differed at seed 0 (plateau, lr, batch, snap, ablation, hessian, displacement,
    /// asymmetry, linear), else 1.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    seeds: Option<u32>,
    /// Read the suites' config files from this directory instead of the built-in copies.
    #[arg(long)]
    configs: Option<PathBuf>,
    /// `local` (train here) or `slurm` (submit job arrays with sbatch; the results directory
    /// must be on a filesystem all nodes share).
    #[arg(long, default_value = "local", value_parser = ["local", "slurm"])]
    executor: String,
    /// Runs trained at once, each probe taking a run's place after its run (local; default: 2
    /// when there are several runs, each on 1 thread — measured faster than one run on 2
    /// threads; see docs/PERFORMANCE.md).
    #[arg(long)]
    jobs: Option<usize>,
    /// Threads per run or probe (default: the cores divided among --jobs; RAYON_NUM_THREADS when set).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Only train (or resume) the runs; skip the analysis and report.
    #[arg(long)]
    runs_only: bool,
    /// Only compute the missing probe results of complete runs (with --only: of those runs);
    /// write no report.
    #[arg(long, conflicts_with_all = ["runs_only", "report_only"])]
    probes_only: bool,
    /// Show every unit of work (training runs and probes) and its state, then exit: finished,
    /// training (step and last metrics), failed (the error), interrupted, not started, mismatched
    /// (the directory holds another run or cannot be read; why).
    #[arg(long, visible_alias = "status")]
    list: bool,
    /// Print one command line per unfinished unit of work (for GNU parallel or any scheduler), then exit.
    #[arg(long)]
    list_commands: bool,
    /// Write the report from the runs and probe results on disk: train nothing, probe nothing
    /// (missing results are reported as incomplete). Safe while another process trains.
    #[arg(long, conflicts_with = "runs_only")]
    report_only: bool,
    /// Only these units, comma-separated names as `--list` shows them: locally, train these runs
    /// in the order given (implies --runs-only; for putting the runs a claim needs most first);
    /// with --probes-only, probe these runs; with --list or --executor slurm, list or submit
    /// only these runs and the probes on them.
    #[arg(long, value_delimiter = ',', conflicts_with = "report_only")]
    only: Vec<String>,
    /// Write the report even when its runs were trained under different arithmetic versions
    /// (it says so); by default such a report is refused.
    #[arg(long)]
    allow_mixed_arithmetic: bool,
    /// Resume runs that another revision trained so far (each run's manifest records the
    /// segment every revision trained); by default such a run is refused.
    #[arg(long)]
    allow_other_revision: bool,
    #[command(flatten)]
    slurm: SlurmArgs,
    /// `--json`: with --list, each unit, its command, state and steps; otherwise the report.json
    /// written. `--quiet`: no progress, only failures.
    #[command(flatten)]
    output: super::Output,
}

/// Options of `--executor slurm`.
#[derive(clap::Args)]
struct SlurmArgs {
    /// Slurm partition (default: the cluster's default partition).
    #[arg(long)]
    partition: Option<String>,
    /// Time limit per task (sbatch --time, e.g. 04:00:00). A task that hits it is resubmitted by
    /// running the same command again and resumes from its last checkpoint.
    #[arg(long, default_value = "24:00:00")]
    time: String,
    /// CPUs per task (sbatch --cpus-per-task; each task trains on that many threads).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    cpus_per_task: u32,
    /// Memory per task (sbatch --mem, e.g. 2G).
    #[arg(long, default_value = "2G")]
    mem: String,
    /// Extra sbatch arguments, repeatable (e.g. --sbatch-arg=--account=abc).
    #[arg(long, allow_hyphen_values = true)]
    sbatch_arg: Vec<String>,
    /// Print the job scripts and the sbatch commands; submit nothing.
    #[arg(long)]
    dry_run: bool,
    /// Wait for the submitted jobs to end, then report every failed task by name, log, host and exit code.
    #[arg(long)]
    wait: bool,
}

fn parse_scale(s: &str) -> Result<Scale> {
    match s {
        "ci" => Ok(Scale::Ci),
        "paper" => Ok(Scale::Paper),
        s => Err(Error::config("--scale", format!("{s:?} (allowed ci, paper)"))),
    }
}

fn parse_suites(names: &[String]) -> Result<Vec<&'static Suite>> {
    if names.is_empty() {
        let known: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
        return Err(Error::config("SUITES", format!("none given (allowed: all, {})", known.join(", "))));
    }
    if names.iter().any(|s| s == "all") {
        return Ok(SUITES.iter().collect());
    }
    names.iter().map(|s| suite(s)).collect()
}

fn exe() -> Result<PathBuf> {
    std::env::current_exe().map_err(|e| Error::other(format!("cannot locate the windtunnel binary: {e}")))
}

pub fn run(a: Args) -> Result<Outcome> {
    let plan = Plan {
        suites: parse_suites(&a.suites)?,
        scale: parse_scale(&a.scale)?,
        out: a.out.clone(),
        configs: Configs::from_arg(a.configs.clone()),
        seeds: a.seeds,
        only: a.only.clone(),
        allow_mixed_arithmetic: a.allow_mixed_arithmetic,
        allow_other_revision: a.allow_other_revision,
    };
    if !a.only.is_empty() && !a.probes_only {
        check_only(&a.only, plan.unit_names(), "runs of the suites and the runs their probes read")?;
    }
    if a.list || a.list_commands {
        return list(&plan, &a);
    }
    if a.report_only {
        let runs = plan.runs_dir();
        if !runs.is_dir() {
            let why = "no runs here to report on (--report-only reads the runs of an earlier `replicate`; check --out and --scale)";
            return Err(Error::io(&runs, std::io::Error::new(std::io::ErrorKind::NotFound, why)));
        }
        let path = crate::experiments::report::write_report(&plan, false)?;
        return reported(&path, a.output);
    }
    if a.probes_only {
        check_only(&a.only, plan.probe_pairs().into_iter().map(|(_, n)| n).collect(), "probe units")?;
        crate::experiments::report::probes_only(&plan, a.only.clone())?;
        return Ok(Outcome::Ok);
    }
    if a.executor == "slurm" {
        return submit(plan, &a);
    }
    run_local(&plan, &a)
}

fn check_only(only: &[String], names: Vec<String>, what: &str) -> Result<()> {
    match only.iter().find(|n| !names.contains(n)) {
        Some(bad) => Err(Error::config("--only", format!("{bad:?} (allowed: {what}: {})", names.join(", ")))),
        None => Ok(()),
    }
}

fn list(plan: &Plan, a: &Args) -> Result<Outcome> {
    let bin = exe()?;
    let mut units = plan.train_units(&bin)?;
    units.extend(plan.probe_units(&bin));
    if a.list_commands {
        for u in units.iter().filter(|u| u.state != State::Finished) {
            println!("{}", shell_line(&u.command));
        }
        return Ok(Outcome::Ok);
    }
    if a.output.json {
        a.output.emit(&serde_json::json!({ "units": units }));
        return Ok(Outcome::Ok);
    }
    for u in &units {
        let eta = match (u.state, u.hours_left) {
            (State::Finished, _) | (_, None) => String::new(),
            (_, Some(h)) => format!("≈ {h:.1} h ({})", u.estimate),
        };
        // One line per unit: a multi-line error (a TOML parse error) is joined.
        let detail = u.detail.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        println!("{:<13} {:<26} {:<12} {:<24} {}", u.kind, u.name, format!("{:?}", u.state), eta, detail);
    }
    let count = |s: State| units.iter().filter(|u| u.state == s).count();
    println!(
        "{} units: {} finished, {} training, {} failed, {} interrupted, {} not started, {} mismatched \
         (holding another run or unreadable: replicate leaves them alone)",
        units.len(),
        count(State::Finished),
        count(State::Training),
        count(State::Failed),
        count(State::Interrupted),
        count(State::NotStarted),
        count(State::Mismatch)
    );
    // A mismatched directory is the user's to sort out: no estimate of training counts it.
    let open: Vec<&_> =
        units.iter().filter(|u| u.kind == "train" && !matches!(u.state, State::Finished | State::Mismatch)).collect();
    if !open.is_empty() {
        println!("training left: {}", hours_left(&open.iter().map(|u| u.hours_left).collect::<Vec<_>>()));
    }
    Ok(Outcome::Ok)
}

fn submit(plan: Plan, a: &Args) -> Result<Outcome> {
    let s = &a.slurm;
    let opts = SlurmOptions {
        partition: s.partition.clone(),
        time: s.time.clone(),
        cpus_per_task: s.cpus_per_task,
        mem: s.mem.clone(),
        extra: s.sbatch_arg.clone(),
        dry_run: s.dry_run,
        wait: s.wait,
    };
    let failed = slurm::submit(plan, &opts, &exe()?)?;
    Ok(if failed.is_empty() { Outcome::Ok } else { Outcome::CheckFailed })
}

fn run_local(plan: &Plan, a: &Args) -> Result<Outcome> {
    let mut specs = plan.specs();
    if !a.only.is_empty() {
        specs = a.only.iter().filter_map(|n| specs.iter().find(|s| &s.name == n).cloned()).collect();
    }
    let runs_dir = plan.runs_dir();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let n_runs = specs.len();
    let jobs = a.jobs.unwrap_or(if n_runs >= 2 { cores.min(2) } else { 1 }).clamp(1, n_runs.max(1));
    let env_threads = std::env::var("RAYON_NUM_THREADS").ok().and_then(|t| t.parse::<usize>().ok());
    let threads = a.threads.map(|t| t as usize).or(env_threads).unwrap_or((cores / jobs).max(1));
    let out = a.output;
    out.note(format!(
        "{} runs for {} at {} scale → {} ({jobs} at a time, {threads} thread(s) each)",
        n_runs,
        plan.suites.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        plan.scale.name(),
        runs_dir.display()
    ));
    let t0 = Instant::now();
    super::train::stop_on_ctrl_c();
    let how = Execution { jobs, threads, other_revision: plan.allow_other_revision };
    // Probes run beside the training (each after its run) unless only training was asked for.
    let probes = if a.runs_only || !a.only.is_empty() { vec![] } else { probe_jobs(plan)? };
    let done = execute(&specs, probes, &plan.configs, &runs_dir, how, &|name| Box::new(Lines::new(name, out.quiet)));
    let failed = report_runs(&done, out);
    out.note(format!("runs (and the probes beside them) finished in {:.0} s", t0.elapsed().as_secs_f64()));
    if a.runs_only || !a.only.is_empty() {
        return Ok(if failed == 0 { Outcome::Ok } else { Outcome::CheckFailed });
    }
    // Stopped by Ctrl-C or SIGTERM: no report, which would compute the missing probes here.
    if crate::train::progress::interrupted() {
        out.note("interrupted: no report written; the same command resumes the runs and probes left");
        return Ok(Outcome::CheckFailed);
    }
    let t1 = Instant::now();
    let path = crate::experiments::report::write_report(plan, true)?;
    out.note(format!("analysis (and any probe still missing): {:.0} s", t1.elapsed().as_secs_f64()));
    reported(&path, out)?;
    Ok(if failed == 0 { Outcome::Ok } else { Outcome::CheckFailed })
}

/// The plan's probes whose results are missing, as commands a worker runs after their run.
fn probe_jobs(plan: &Plan) -> Result<Vec<ProbeJob>> {
    let units = plan.probe_units(&exe()?).into_iter().filter(|u| u.state != State::Finished);
    Ok(units.map(|u| ProbeJob { run: u.name, command: u.command }).collect())
}

/// Where the report went (text), or the report.json written (`--json`).
fn reported(md: &std::path::Path, out: super::Output) -> Result<Outcome> {
    if out.json {
        let path = md.with_file_name("report.json");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        println!("{}", text.trim_end());
    }
    out.note(format!("report → {}", md.display()));
    Ok(Outcome::Ok)
}

fn report_runs(done: &[Done], out: super::Output) -> usize {
    let mut failed = 0;
    for d in done {
        match &d.result {
            Ok(_) if out.quiet => {}
            Ok(s) => eprintln!(
                "  {:<24} {} {:>6} steps  T1 {:>6}  {}",
                d.name,
                if d.skipped { "(done)" } else { "      " },
                s.steps,
                s.taus.t1.map_or("–".into(), |t| t.to_string()),
                s.stopped.clone().unwrap_or_default()
            ),
            Err(e @ crate::error::Error::Interrupted { .. }) => {
                failed += 1;
                eprintln!("  {:<24} interrupted: {e}", d.name);
            }
            // Not this process's to train: said so, and still not finished by this command.
            Err(e @ crate::error::Error::Locked(_)) => {
                failed += 1;
                eprintln!("  {:<24} being trained by another process: {e}", d.name);
            }
            Err(e) => {
                failed += 1;
                eprintln!("  {:<24} FAILED: {e}", d.name);
            }
        }
    }
    failed
}

/// Plain progress lines: the start and every 1000 steps (none with --quiet).
struct Lines {
    name: String,
    t0: Instant,
    last: u64,
    quiet: bool,
}

impl Lines {
    fn new(name: &str, quiet: bool) -> Self {
        Lines { name: name.to_string(), t0: Instant::now(), last: 0, quiet }
    }
}

impl Progress for Lines {
    fn start(&mut self, step: u64, max_steps: u64) {
        if self.quiet {
            return;
        }
        eprintln!(
            "[{}] {} at step {step} of at most {max_steps}",
            self.name,
            if step > 0 { "resuming" } else { "starting" }
        );
        self.last = step;
    }
    fn record(&mut self, r: &Record) {
        let cand = r.candidate_loss.unwrap_or(f64::NAN);
        if r.step >= self.last + 1000 && !self.quiet {
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
    }
}

/// The training left in core-hours, from the runs' estimates (`None`: no measured rate yet).
fn hours_left(estimates: &[Option<f64>]) -> String {
    let known: Vec<f64> = estimates.iter().flatten().copied().collect();
    let unknown = estimates.len() - known.len();
    let rest = format!("{unknown} runs with no measured rate to go by (no finished run of their kind yet)");
    if known.is_empty() {
        return rest;
    }
    // Only a non-empty sum: an empty f64 sum is −0, and "≈ -0.0 core-hours" reads as a bug.
    let total: f64 = known.iter().sum();
    let tail = if unknown > 0 { format!(", and {rest}") } else { String::new() };
    format!("≈ {total:.1} core-hours (one thread per run, at the steps/s each run measured, or its kind's){tail}")
}

#[cfg(test)]
mod tests {
    use super::hours_left;

    #[test]
    fn hours_left_says_when_no_run_has_a_rate() {
        assert_eq!(
            hours_left(&[None, None]),
            "2 runs with no measured rate to go by (no finished run of their kind yet)"
        );
        assert!(hours_left(&[Some(1.25), None]).starts_with("≈ 1.2 core-hours"), "{}", hours_left(&[Some(1.25), None]));
        assert!(
            hours_left(&[Some(1.25), None])
                .ends_with("and 1 runs with no measured rate to go by (no finished run of their kind yet)")
        );
        assert!(!hours_left(&[Some(2.0)]).contains("no measured rate"));
    }
}
