//! Replication of the paper's claims: suites of runs, running them, and their analysis into a
//! claims report.

pub mod asymmetry;
pub mod batch;
pub mod ci;
pub mod claims;
pub mod configs;
pub mod d_scaling;
pub mod dynamics;
pub mod estimate;
pub mod hessian_claims;
pub mod linear_claims;
pub mod paper;
pub mod plan;
pub mod probe_claims;
pub mod provenance;
pub mod report;
pub mod runner;
pub mod scaling;
pub mod seed_range;
pub mod seeds;
pub mod slurm;
pub mod stats;
pub mod suites;
pub mod sweeps;
pub mod verdict;
pub mod waiting_times;
