//! The paper's mechanism diagnostics, computed from a run's checkpoints (spec §7.5–§7.10): per-group
//! snap, attention to z, head ablation, exact Hessian spectra, weight displacement, and the
//! linear baseline. Each writes JSON (and CSV/SVG) into `<run>/probes/`.

pub mod ablation;
pub mod attention;
pub mod displacement;
pub mod hessian;
pub mod linear;
pub mod run;
pub mod snap;

pub use run::RunView;
