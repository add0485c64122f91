//! The paper's synthetic task: the author's generator, tokenizer, train split and batches.

pub mod dataset;
pub mod generator;
pub mod tokenizer;

pub use dataset::{Batch, TrainSet, sha_gen, sha_train, train_split};
pub use generator::{DataConfig, Example, Group, Mapping, ZSharing, dataset_bytes, generate};
pub use tokenizer::TaskKind;
