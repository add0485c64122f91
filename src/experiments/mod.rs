//! Replication of the paper's claims: suites of runs, running them, and (later) their analysis.

pub mod ci;
pub mod report;
pub mod runner;
pub mod suites;
