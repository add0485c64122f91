//! `-q/--quiet` and `--json`: the same two flags, with the same meaning, on every command that
//! prints results. Results go to stdout; progress, notes and errors to stderr.

use serde::Serialize;

#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Output {
    /// Print only what failed (errors go to stderr); no tables, no progress. The exit code says
    /// whether the command succeeded (0), a check failed (1), or it could not run (2–4).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print the results as one JSON document on stdout (progress and notes still go to stderr).
    #[arg(long, global = true, conflicts_with = "quiet")]
    pub json: bool,
}

impl Output {
    /// Whether to print the human-readable results.
    pub fn text(self) -> bool {
        !self.quiet && !self.json
    }

    /// Print `value` as the command's JSON document, when `--json`.
    pub fn emit(self, value: &impl Serialize) {
        if self.json {
            println!("{}", serde_json::to_string_pretty(value).expect("results serialise to JSON"));
        }
    }

    /// A note on stderr (what was written where, what was adjusted), silenced by `--quiet`.
    pub fn note(self, message: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{message}");
        }
    }
}
