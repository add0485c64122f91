//! Files: safetensors tensors and TL-named weights, golden hashes.

pub mod export;
pub mod golden;
pub mod tensors;
pub mod weights;
