//! The `windtunnel` command line: one clap subcommand per job.

mod bench;
mod data;
mod export;
mod gradcheck;
mod hashes;
mod horizon;
mod output;
mod probe;
mod replicate;
mod train;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "windtunnel",
    version = VERSION.as_str(),
    about = "Bit-reproducible CPU reference for 'Marginals Before Conditionals' (arXiv 2603.10074)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--version`: the crate version, the git revision it was built from and the arithmetic version
/// (docs/determinism.md, "Versions"): the three things a run's bits depend on.
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (revision {}, arithmetic {})",
        env!("CARGO_PKG_VERSION"),
        env!("WINDTUNNEL_GIT_REV"),
        crate::numerics::ARITHMETIC
    )
});

#[derive(Subcommand)]
enum Command {
    /// Train a model (default: the canonical K=10 run to its transition) and summarise the run.
    Train(train::Args),
    /// Mechanism probes on a run's checkpoints: snap, attention, ablate, hessian, displacement, linear.
    Probe(probe::Args),
    /// Run the paper's experiments (suites of runs) and write the claims report.
    Replicate(replicate::Args),
    /// Generate the author's task data and print its hashes (spec §2.4).
    Data(data::Args),
    /// Check analytic gradients against f64 finite differences.
    Gradcheck(gradcheck::Args),
    /// Write weights, a batch, logits, loss and gradients (TL names) to one safetensors file.
    Export(export::Args),
    /// Compare two safetensors files tensor by tensor (e.g. your port's export against windtunnel's).
    Verify(verify::Args),
    /// How far a per-step trajectory comparison holds: a run trained twice, one parameter one ulp apart.
    Horizon(horizon::Args),
    /// Time full training steps (forward, backward, AdamW, periodic eval).
    Bench(bench::Args),
    /// Print the golden tensor-bit hashes of the canonical fixture (logits, loss, gradients).
    Hashes(hashes::Args),
    /// Print a shell completion script: `windtunnel completions bash > ~/.local/share/bash-completion/completions/windtunnel`.
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
}

/// Outcome of a subcommand that ran to completion: success, or a check that failed.
pub enum Outcome {
    Ok,
    CheckFailed,
}

/// A closed stdout (`windtunnel verify … | head`) ends the program as it ends any Unix tool,
/// quietly with the status of SIGPIPE, not with a panic message.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or("");
        if msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info)
    }));
}

/// Every argument as UTF-8: runs record their command line and paths in JSON (manifest,
/// summaries, reports), which cannot hold other bytes; refused here, before anything is written.
fn utf8_arguments(args: &[std::ffi::OsString]) -> crate::error::Result<()> {
    match args.iter().position(|a| a.to_str().is_none()) {
        None => Ok(()),
        Some(i) => {
            let flag = args[..i].iter().rev().find_map(|a| a.to_str().filter(|a| a.starts_with("--")));
            Err(crate::error::Error::config(
                flag.unwrap_or("argument"),
                format!(
                    "{} is not valid UTF-8 (allowed UTF-8 paths and values: runs record them in JSON)",
                    args[i].to_string_lossy()
                ),
            ))
        }
    }
}

/// `f` on a worker of a thread pool (RAYON_NUM_THREADS threads, else one per core): every
/// parallel loop inside then starts on a worker, where from the main thread each one would be
/// handed over to the pool and the main thread put to sleep until it ended — a futex wake and
/// wait per loop, hundreds per training step. Which thread runs a task never changes its bits.
fn on_pool_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // The main thread's stack size: a worker's default (2 MiB) is smaller.
    match rayon::ThreadPoolBuilder::new().stack_size(8 << 20).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

pub fn main() -> ExitCode {
    quiet_broken_pipe();
    ExitCode::from(run(std::env::args_os().collect()))
}

/// The command line `args` (program name first) run to its exit code: the binary's `main`, and
/// `python -m windtunnel` in the Python package's process.
pub fn run(args: Vec<std::ffi::OsString>) -> u8 {
    if let Err(e) = utf8_arguments(&args) {
        eprintln!("error: {e}");
        return e.exit_code();
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code() as u8;
        }
    };
    if let Err(e) = crate::config::check_environment() {
        eprintln!("error: {e}");
        return e.exit_code();
    }
    let result = on_pool_worker(|| match cli.command {
        Command::Data(a) => data::run(a),
        Command::Train(a) => train::run(a),
        Command::Replicate(a) => replicate::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Gradcheck(a) => gradcheck::run(a),
        Command::Hashes(a) => hashes::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Export(a) => export::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Horizon(a) => horizon::run(a),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "windtunnel", &mut std::io::stdout());
            Ok(Outcome::Ok)
        }
    });
    match result {
        Ok(Outcome::Ok) => 0,
        Ok(Outcome::CheckFailed) => crate::error::EXIT_CHECK_FAILED,
        // Not an error: what the user asked for, and how to go on.
        Err(e @ crate::error::Error::Interrupted { .. }) => {
            eprintln!("{e}");
            e.exit_code()
        }
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

pub use crate::numerics::Dtype;
pub use output::Output;
pub use train::{DEFAULT_MARGIN, RunArgs};

/// A count that must be at least 1 (`--groups 0` or `--batch-size 0` would index or divide by nothing).
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("must be at least 1".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `--dtype`: parsed into [`Dtype`], its possible values listed in `--help`.
fn dtype_parser() -> impl clap::builder::TypedValueParser<Value = Dtype> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Dtype::ALL.map(Dtype::name))
        .map(|s| s.parse::<Dtype>().expect("a listed value"))
}

#[cfg(test)]
mod tests {
    use super::on_pool_worker;

    /// A command runs on a pool worker, so its parallel loops start there (not handed over from
    /// a sleeping main thread).
    #[test]
    fn commands_run_on_a_pool_worker() {
        assert_eq!(rayon::current_thread_index(), None, "the test itself is not on a worker");
        assert!(on_pool_worker(rayon::current_thread_index).is_some());
    }
}
