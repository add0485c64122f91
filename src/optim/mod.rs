//! Optimisation: AdamW, the LR schedules and gradient clipping, each mirroring PyTorch.

pub mod adamw;
pub mod clip;
pub mod schedule;

pub use adamw::{AdamW, AdamWParams};
pub use schedule::lr_multiplier;
