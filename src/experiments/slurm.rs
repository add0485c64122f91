//! `replicate --executor slurm`: the plan's unfinished units as Slurm job arrays — one task per
//! training run, then one per (probe suite, run) after them, then the report after both
//! (`--dependency=afterany`). Slurm schedules, retries and accounts; windtunnel only writes
//! the scripts, submits them with `sbatch`, and reads the results from the shared directory.
//! Each task runs this same binary on one unit (`replicate … --only <run>`), which takes the
//! run's lock, resumes from its checkpoint and trains bit-identically to a local run.

use super::plan::{Plan, State, Unit, shell_line};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct SlurmOptions {
    pub partition: Option<String>,
    pub time: String,
    pub cpus_per_task: u32,
    pub mem: String,
    pub extra: Vec<String>,
    pub dry_run: bool,
    pub wait: bool,
}

/// `<out>/<scale>/slurm`: scripts, `jobs.txt` (the last submission) and `logs/`.
fn slurm_dir(plan: &Plan) -> PathBuf {
    plan.out.join(plan.scale.name()).join("slurm")
}

/// A unit's own log (the task's output from its first line on).
pub fn log_path(plan: &Plan, u: &Unit) -> PathBuf {
    let kind = if u.kind == "train" { "train".to_string() } else { format!("probe-{}", u.kind) };
    slurm_dir(plan).join("logs").join(format!("{kind}-{}.log", u.name))
}

/// Submit the plan's unfinished units; with `wait`, the names of the units that did not finish.
pub fn submit(mut plan: Plan, o: &SlurmOptions, bin: &Path) -> Result<Vec<String>> {
    plan.out = absolute_results_dir(&plan.out)?;
    let dir = slurm_dir(&plan);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    if !o.dry_run {
        check_slurm(o.partition.as_deref())?;
        check_fits_a_node(o)?;
        check_previous_jobs(&dir)?;
    }
    let marker = dir.join("shared-filesystem-check");
    crate::io::tensors::write_atomic(&marker, crate::train::lock::host_name().as_bytes())?;
    let train = plan.train_units(bin)?;
    if let Some(m) = train.iter().find(|u| u.state == State::Mismatch) {
        return Err(Error::slurm(format!("{}: {}; nothing submitted, nothing deleted", m.name, m.detail.trim())));
    }
    let busy: Vec<&Unit> = train.iter().filter(|u| u.state == State::Training).collect();
    for u in &busy {
        eprintln!("  {} is being trained{}: not submitted", u.name, u.detail);
    }
    let todo: Vec<&Unit> = train.iter().filter(|u| !matches!(u.state, State::Finished | State::Training)).collect();
    let probes = plan.probe_units(bin);
    let probes: Vec<&Unit> = probes.iter().filter(|u| u.state != State::Finished).collect();
    let mut report = plan.args(bin);
    report.push("--report-only".into());
    let ctx = Script { plan: &plan, o, bin, marker: &marker };
    let mut ids = vec![];
    let train_id = ctx.array("wt-train", "train.sh", &todo, &[], &mut ids)?;
    let probe_id =
        ctx.array("wt-probes", "probes.sh", &probes, &train_id.iter().cloned().collect::<Vec<_>>(), &mut ids)?;
    let after: Vec<String> = train_id.iter().chain(&probe_id).cloned().collect();
    let report_unit = Unit {
        kind: "report".into(),
        name: "report".into(),
        state: State::NotStarted,
        step: 0,
        max_steps: 0,
        detail: String::new(),
        command: report,
        hours_left: None,
        estimate: String::new(),
    };
    ctx.array("wt-report", "report.sh", &[&report_unit], &after, &mut ids)?;
    eprintln!(
        "{} training task(s), {} probe task(s) and the report → {}\n  logs: {}\n  watch: {} --status",
        todo.len(),
        probes.len(),
        if o.dry_run { "not submitted (--dry-run)".to_string() } else { format!("Slurm jobs {}", ids.join(", ")) },
        logs.display(),
        shell_line(&plan.args(bin))
    );
    if o.dry_run {
        return Ok(vec![]);
    }
    crate::io::tensors::write_atomic(&dir.join("jobs.txt"), (ids.join("\n") + "\n").as_bytes())?;
    if !o.wait {
        return Ok(vec![]);
    }
    wait_for(&ids)?;
    let arrays = [(train_id, todo.as_slice()), (probe_id, probes.as_slice())];
    failures(&plan, bin, &arrays)
}

/// The results directory, created and made absolute (tasks run elsewhere); refused when it
/// cannot be written.
fn absolute_results_dir(out: &Path) -> Result<PathBuf> {
    let says = |what: &str, e: std::io::Error| std::io::Error::new(e.kind(), format!("results directory {what}: {e}"));
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, says("cannot be created", e)))?;
    let abs = std::fs::canonicalize(out).map_err(|e| Error::io(out, e))?;
    let probe = abs.join(format!(".write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| Error::io(&abs, says("is not writable", e)))?;
    let _ = std::fs::remove_file(&probe);
    Ok(abs)
}

/// `sbatch` on PATH, and the partition (when given) known to Slurm.
fn check_slurm(partition: Option<&str>) -> Result<()> {
    let ok = Command::new("sbatch").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        return Err(Error::slurm(
            "--executor slurm: `sbatch` is not on PATH (install a Slurm client, e.g. Debian's slurm-client, or use \
             --executor local, or --list-commands for another scheduler)",
        ));
    }
    let Some(p) = partition else { return Ok(()) };
    let out =
        Command::new("sinfo").args(["-h", "-o", "%R"]).output().map_err(|e| Error::slurm(format!("sinfo: {e}")))?;
    let known: Vec<String> = String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect();
    if known.iter().any(|k| k == p) {
        Ok(())
    } else {
        Err(Error::config("--partition", format!("{p:?} does not exist (partitions: {})", known.join(", "))))
    }
}

/// Refuse a task larger than every node (of the partition, when given): Slurm may accept it
/// and leave it pending for ever.
fn check_fits_a_node(o: &SlurmOptions) -> Result<()> {
    let mut args = vec!["-h", "-N", "-o", "%c %m"];
    if let Some(p) = &o.partition {
        args.extend(["-p", p]);
    }
    let out = Command::new("sinfo").args(&args).output().map_err(|e| Error::slurm(format!("sinfo: {e}")))?;
    let Some((cpus, mem_mb)) = largest_node(&String::from_utf8_lossy(&out.stdout)) else { return Ok(()) };
    let need_mb = mem_megabytes(&o.mem).ok_or_else(|| {
        Error::config("--mem", format!("{:?} (allowed a size as sbatch takes it: 4G, 500M, 4096 = megabytes)", o.mem))
    })?;
    fits(o.cpus_per_task, need_mb, cpus, mem_mb)
}

/// The largest CPU count and memory (MB) of `sinfo -N -o "%c %m"` lines (None: no node listed).
fn largest_node(sinfo: &str) -> Option<(u32, u64)> {
    let nodes: Vec<(u32, u64)> = sinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpus = f.next()?.trim_end_matches('+').parse().ok()?;
            Some((cpus, f.next()?.trim_end_matches('+').parse().ok()?))
        })
        .collect();
    Some((nodes.iter().map(|n| n.0).max()?, nodes.iter().map(|n| n.1).max()?))
}

/// sbatch's `--mem` in megabytes: a bare number is megabytes (sbatch's unit), a K/M/G/T suffix
/// is read by the one size parser (`WINDTUNNEL_MAX_MEMORY`'s).
fn mem_megabytes(mem: &str) -> Option<u64> {
    let m = mem.trim();
    let bytes = if m.ends_with(|c: char| c.is_ascii_digit()) {
        m.parse::<u128>().ok()? << 20
    } else {
        crate::memory::parse_size(m)?
    };
    u64::try_from(bytes.div_ceil(1 << 20)).ok()
}

fn fits(cpus: u32, mem_mb: u64, node_cpus: u32, node_mem_mb: u64) -> Result<()> {
    if cpus > node_cpus {
        return Err(Error::config(
            "--cpus-per-task",
            format!("{cpus} is more than any node has (largest: {node_cpus} CPUs); the tasks could never start"),
        ));
    }
    if mem_mb > node_mem_mb {
        return Err(Error::config(
            "--mem",
            format!("{mem_mb} MB is more than any node has (largest: {node_mem_mb} MB); the tasks could never start"),
        ));
    }
    Ok(())
}

/// Refuse while jobs of the last submission are still queued or running: resubmitting would
/// queue the same runs twice.
fn check_previous_jobs(dir: &Path) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(dir.join("jobs.txt")) else { return Ok(()) };
    let ids: Vec<&str> = text.split_whitespace().collect();
    let live = queued(&ids);
    if live.is_empty() {
        return Ok(());
    }
    Err(Error::slurm(format!(
        "Slurm jobs {} of the last submission to this results directory are still queued or running; wait for them \
         (squeue -j {}) or cancel them (scancel {}) before submitting again",
        live.join(", "),
        live.join(","),
        live.join(" ")
    )))
}

/// Which of the job ids are still in `squeue`.
fn queued(ids: &[impl AsRef<str>]) -> Vec<String> {
    if ids.is_empty() {
        return vec![];
    }
    let list = ids.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(",");
    let out = Command::new("squeue").args(["-h", "-o", "%F", "-j", &list]).output();
    let mut v: Vec<String> = out
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    v.sort();
    v.dedup();
    v
}

/// Wait until no job is queued; an error when one is pending for a reason that never clears.
fn wait_for(ids: &[String]) -> Result<()> {
    eprintln!("waiting for Slurm jobs {} …", ids.join(", "));
    loop {
        let list = ids.join(",");
        let out = Command::new("squeue").args(["-h", "-o", "%i %T %r", "-j", &list]).output();
        let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
        if let Some((job, reason)) = stuck(&text) {
            return Err(Error::slurm(format!(
                "Slurm job {job} is pending for a reason that never clears ({reason}); cancel the submission \
                 (scancel {}) and submit again with what the cluster has (sinfo -N -o \"%N %c %m %P\")",
                ids.join(" ")
            )));
        }
        if queued(ids).is_empty() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
}

/// A pending job whose reason means it can never run, from `squeue -o "%i %T %r"` lines.
fn stuck(squeue: &str) -> Option<(String, String)> {
    const NEVER: [&str; 7] = [
        "PartitionConfig",
        "BadConstraints",
        "PartitionNodeLimit",
        "DependencyNeverSatisfied",
        "InvalidQOS",
        "InvalidAccount",
        "QOSMaxCpuPerJobLimit",
    ];
    squeue.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 3 && f[1] == "PENDING" && NEVER.contains(&f[2])).then(|| (f[0].to_string(), f[2].to_string()))
    })
}

/// The submitted units that did not finish, each reported with its log and, while Slurm
/// still remembers the task, where it ran and how it ended.
fn failures(plan: &Plan, bin: &Path, arrays: &[(Option<String>, &[&Unit])]) -> Result<Vec<String>> {
    let now_train = plan.train_units(bin)?;
    let now_probes = plan.probe_units(bin);
    let mut failed = vec![];
    for (job, units) in arrays {
        for (i, u) in units.iter().enumerate() {
            let now = now_train.iter().chain(&now_probes).find(|n| n.kind == u.kind && n.name == u.name);
            if now.is_none_or(|n| n.state == State::Finished) {
                continue;
            }
            let how = job.as_ref().and_then(|j| task_end(&format!("{j}_{i}"))).map(|t| format!(" ({t})"));
            eprintln!("  FAILED {} {}: see {}{}", u.kind, u.name, log_path(plan, u).display(), how.unwrap_or_default());
            failed.push(u.name.clone());
        }
    }
    let report = plan.out.join(plan.scale.name()).join("report.md");
    eprintln!("{} unit(s) did not finish; report → {}", failed.len(), report.display());
    Ok(failed)
}

/// How array task `id` ended, from `scontrol -o show job` (Slurm keeps a finished job for
/// `MinJobAge`, 300 s by default): "FAILED on wt-b, exit 3:0: …".
fn task_end(id: &str) -> Option<String> {
    let out = Command::new("scontrol").args(["-o", "show", "job", id]).output().ok()?;
    describe_end(&String::from_utf8_lossy(&out.stdout))
}

/// The state, batch host and exit code of one `scontrol -o show job` line, with what the exit
/// codes that windtunnel's task scripts and Slurm give for an unshared directory mean.
fn describe_end(line: &str) -> Option<String> {
    let field = |k: &str| line.split_whitespace().find_map(|w| w.strip_prefix(k)).map(str::to_string);
    let (state, exit) = (field("JobState=")?, field("ExitCode=")?);
    let host = field("BatchHost=").filter(|h| !h.is_empty() && h != "(null)").unwrap_or_else(|| "no host".into());
    let why = match exit.as_str() {
        "3:0" => format!(
            ": the results directory or the binary is not visible on {host} (they must be on a filesystem every \
             node shares); the task's log stayed on {host}, if it was written at all"
        ),
        "0:53" => format!(": Slurm could not open the task's log on {host} (is the results directory writable there?)"),
        _ => String::new(),
    };
    Some(format!("{state} on {host}, exit {exit}{why}"))
}

struct Script<'a> {
    plan: &'a Plan,
    o: &'a SlurmOptions,
    bin: &'a Path,
    marker: &'a Path,
}

impl Script<'_> {
    /// Write `<slurm>/<file>` for `units` and submit it as an array after `after`; the job id.
    fn array(
        &self,
        name: &str,
        file: &str,
        units: &[&Unit],
        after: &[String],
        ids: &mut Vec<String>,
    ) -> Result<Option<String>> {
        if units.is_empty() {
            return Ok(None);
        }
        let path = slurm_dir(self.plan).join(file);
        let text = self.text(name, units);
        crate::io::tensors::write_atomic(&path, text.as_bytes())?;
        let logs = slurm_dir(self.plan).join("logs");
        let mut args: Vec<String> = vec!["--parsable".into(), format!("--output={}/slurm-%A_%a.out", logs.display())];
        if !after.is_empty() {
            args.push(format!("--dependency=afterany:{}", after.join(":")));
        }
        args.extend(self.o.extra.iter().cloned());
        args.push(path.display().to_string());
        if self.o.dry_run {
            println!("# {}\n{text}\n$ sbatch {}\n", path.display(), shell_line(&args));
            ids.push(format!("<{name}>"));
            return Ok(Some(format!("<{name}>")));
        }
        let out = Command::new("sbatch").args(&args).output().map_err(|e| Error::slurm(format!("sbatch: {e}")))?;
        if !out.status.success() {
            return Err(Error::slurm(format!(
                "sbatch {} failed: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap_or("").to_string();
        ids.push(id.clone());
        Ok(Some(id))
    }

    fn text(&self, name: &str, units: &[&Unit]) -> String {
        let o = self.o;
        let logs = slurm_dir(self.plan).join("logs");
        let mut s = format!("#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --array=0-{}\n", units.len() - 1);
        // --output is given on sbatch's command line (one argv element): an #SBATCH line is split
        // at spaces, and the results directory may have one.
        s += &format!(
            "#SBATCH --time={}\n#SBATCH --cpus-per-task={}\n#SBATCH --mem={}\n",
            o.time, o.cpus_per_task, o.mem
        );
        if let Some(p) = &o.partition {
            s += &format!("#SBATCH --partition={p}\n");
        }
        s += "set -u\n";
        s += &format!(
            "if [ ! -f {m} ]; then echo \"windtunnel: {m} is not visible on $(hostname): the results directory must be on a \
             filesystem shared by every node\" >&2; exit 3; fi\n",
            m = shell_line(&[self.marker.display().to_string()])
        );
        s += &format!(
            "if [ ! -x {b} ]; then echo \"windtunnel: {b} is not visible on $(hostname): install it on a shared path\" >&2; \
             exit 3; fi\n",
            b = shell_line(&[self.bin.display().to_string()])
        );
        s += "export RAYON_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-1}\"\ncase \"$SLURM_ARRAY_TASK_ID\" in\n";
        for (i, u) in units.iter().enumerate() {
            let log = if u.kind == "report" { logs.join("report.log") } else { log_path(self.plan, u) };
            let mut cmd = u.command.clone();
            if u.kind == "train" {
                cmd.extend(["--threads".into(), "$RAYON_NUM_THREADS".into()]);
            }
            let line = shell_line(&cmd).replace("'$RAYON_NUM_THREADS'", "\"$RAYON_NUM_THREADS\"");
            let log = shell_line(&[log.display().to_string()]);
            // Each attempt says where it ran (a requeued task runs again, maybe elsewhere).
            let who = format!("windtunnel: {} {} on $(hostname), Slurm job ${{SLURM_JOB_ID}}", u.kind, u.name);
            s += &format!("  {i}) echo \"{who}\" >> {log}; exec {line} >> {log} 2>&1 ;;\n");
        }
        s += "  *) echo \"windtunnel: no unit $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n";
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_larger_than_every_node_is_refused_by_its_flag() {
        assert_eq!(largest_node("2 7900\n8 64000\n4+ 16000\n"), Some((8, 64000)));
        assert_eq!(largest_node(""), None);
        assert_eq!(mem_megabytes("1G"), Some(1024));
        assert_eq!(mem_megabytes("4096"), Some(4096));
        assert_eq!(mem_megabytes("lots"), None);
        assert_eq!(
            (mem_megabytes("500M"), mem_megabytes("512K"), mem_megabytes("2T")),
            (Some(500), Some(1), Some(2 << 20))
        );
        assert!(fits(8, 64000, 8, 64000).is_ok());
        let e = fits(9, 1, 8, 64000).unwrap_err().to_string();
        assert!(e.contains("--cpus-per-task") && e.contains("largest: 8 CPUs"), "{e}");
        let e = fits(1, 64001, 8, 64000).unwrap_err().to_string();
        assert!(e.contains("--mem") && e.contains("64000 MB"), "{e}");
    }

    #[test]
    fn a_failed_task_says_where_it_ran_and_what_its_exit_code_means() {
        let line = |state: &str, exit: &str, host: &str| {
            format!(
                "JobId=12 ArrayJobId=11 ArrayTaskId=1 JobName=wt-train JobState={state} Reason=NonZeroExitCode \
                     Requeue=1 Restarts=0 ExitCode={exit} RunTime=00:00:01 NodeList={host} BatchHost={host} NumNodes=1"
            )
        };
        let d = describe_end(&line("FAILED", "3:0", "wt-b")).unwrap();
        assert!(
            d.starts_with("FAILED on wt-b, exit 3:0: the results directory or the binary is not visible on wt-b"),
            "{d}"
        );
        let d = describe_end(&line("FAILED", "0:53", "wt-b")).unwrap();
        assert!(d.contains("could not open the task's log on wt-b"), "{d}");
        assert_eq!(describe_end(&line("CANCELLED", "0:15", "wt-a")).unwrap(), "CANCELLED on wt-a, exit 0:15");
        assert_eq!(describe_end(&line("FAILED", "1:0", "(null)")).unwrap(), "FAILED on no host, exit 1:0");
        assert_eq!(describe_end("slurm_load_jobs error: Invalid job id specified"), None);
    }

    #[test]
    fn only_reasons_that_never_clear_stop_the_wait() {
        assert_eq!(stuck("12_[0-3] PENDING Resources\n13 PENDING Dependency\n"), None);
        assert_eq!(stuck("12 RUNNING None\n"), None);
        assert_eq!(
            stuck("12 RUNNING None\n13 PENDING DependencyNeverSatisfied\n"),
            Some(("13".into(), "DependencyNeverSatisfied".into()))
        );
        assert_eq!(stuck("14_[1] PENDING PartitionConfig"), Some(("14_[1]".into(), "PartitionConfig".into())));
    }
}
