//! One error type for the crate. Every message says what was wrong and, for configuration
//! errors, which field and what range is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum Error {
    /// A configuration value out of range or of the wrong kind.
    Config { field: String, message: String },
    /// A file that could not be read or written.
    Io { path: PathBuf, source: std::io::Error },
    /// A file whose contents are not what was expected (truncated, corrupt, wrong config …).
    Format { path: PathBuf, message: String },
    /// Stopped by Ctrl-C after `step`; for a training run, its resume state is saved in `run`.
    Interrupted { step: u64, run: Option<PathBuf> },
    /// Refused before allocating: `what` would need about `needs` bytes and `available` are.
    Memory { what: String, needs: u128, available: u128 },
    /// The run is held by another process (its lock), with who holds it and what to do.
    Locked(String),
    /// Training stopped at `step`: a non-finite loss or gradient.
    Diverged { step: u64, message: String },
    /// Refused because it would lose or mix results (resuming under another config, input,
    /// revision or arithmetic; `--force` on a directory that is not a run; an existing run; mixed
    /// arithmetic in one report): the message says what to do instead.
    Refused(String),
    /// Slurm (`sinfo`, `sbatch`, `squeue`) failed or refused a job.
    Slurm(String),
    /// Anything else, with a complete sentence.
    Other(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn config(field: &str, message: impl Into<String>) -> Self {
        Error::Config { field: field.to_string(), message: message.into() }
    }
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io { path: path.to_path_buf(), source }
    }
    pub fn format(path: &Path, message: impl Into<String>) -> Self {
        Error::Format { path: path.to_path_buf(), message: message.into() }
    }
    pub fn other(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
    pub fn refused(message: impl Into<String>) -> Self {
        Error::Refused(message.into())
    }
    pub fn slurm(message: impl Into<String>) -> Self {
        Error::Slurm(message.into())
    }

    /// The process exit code for this error (1 is a failed check, not an error): 2 bad usage (an
    /// argument or a config value), 3 a file that could not be read, written or parsed, 4 refused
    /// or failed for another reason (a run locked by another process, an existing run, sbatch …).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config { .. } => EXIT_USAGE,
            Error::Io { .. } | Error::Format { .. } => EXIT_FILE,
            Error::Other(_)
            | Error::Memory { .. }
            | Error::Locked(_)
            | Error::Diverged { .. }
            | Error::Refused(_)
            | Error::Slurm(_) => EXIT_OTHER,
            Error::Interrupted { .. } => EXIT_INTERRUPTED,
        }
    }
}

/// Exit code of a failed check (`verify` found differences, `gradcheck` above tolerance …).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code of bad usage: clap's own errors and invalid config values.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of an I/O or file-format error.
pub const EXIT_FILE: u8 = 3;
/// Exit code of any other failure.
pub const EXIT_OTHER: u8 = 4;
/// Exit code after Ctrl-C (128 + SIGINT, as a shell reports a process SIGINT ended).
pub const EXIT_INTERRUPTED: u8 = 130;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { field, message } => write!(f, "invalid `{field}`: {message}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Format { path, message } => write!(f, "{}: {message}", path.display()),
            Error::Other(m)
            | Error::Locked(m)
            | Error::Refused(m)
            | Error::Slurm(m)
            | Error::Diverged { message: m, .. } => write!(f, "{m}"),
            Error::Memory { what, needs, available } => write!(
                f,
                "{what} needs about {} of memory (estimated before allocating) and {} is available; use a smaller \
                 model, batch or dataset, or set WINDTUNNEL_MAX_MEMORY (e.g. 64G) if the estimate is wrong for this machine",
                bytes_text(*needs),
                bytes_text(*available)
            ),
            Error::Interrupted { step, run: None } => write!(f, "interrupted at step {step}"),
            Error::Interrupted { step, run: Some(run) } => write!(
                f,
                "interrupted at step {step}; continue with `windtunnel train --resume {}` (bit-exactly from there)",
                run.display()
            ),
        }
    }
}

/// "2.5 MB", "17.6 GB".
fn bytes_text(bytes: u128) -> String {
    match bytes as f64 {
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b => format!("{:.1} MB", b / 1e6),
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_and_scheduler_failures_are_their_own_variants_with_exit_code_4() {
        for e in [Error::refused("kept the run"), Error::slurm("sbatch: no partition")] {
            assert_eq!(e.exit_code(), EXIT_OTHER);
            assert!(!e.to_string().is_empty() && !matches!(e, Error::Other(_)), "{e:?}");
        }
        assert_eq!(Error::slurm("sbatch: no partition").to_string(), "sbatch: no partition");
        assert_eq!(Error::config("x", "y").exit_code(), EXIT_USAGE);
    }
}
