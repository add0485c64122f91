//! Hessian spectra: exact Hessian-vector products (dual numbers) and eigen-solvers.

pub mod eigen;
pub mod hvp;
pub mod vec;

pub use eigen::{LanczosResult, LinOp, PowerResult, lanczos, power_iteration};
pub use hvp::Hvp;
