//! Files: golden hashes (and, later, safetensors, checkpoints and metrics).

pub mod golden;
