//! The `ci` scale: reduced configurations that show the same phenomena in minutes (calibrated in
//! docs/REPLICATION.md). Placeholder until calibrated: no runs.

use super::runner::RunSpec;

pub fn ci_runs(_suite: &str) -> Vec<RunSpec> {
    vec![]
}
