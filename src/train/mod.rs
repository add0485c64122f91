//! Training runs: the author's trainer, its logged metrics, waiting times, checkpoints with exact
//! resume, and the run directory.

pub mod batcher;
pub mod checkpoint;
pub mod eval;
pub mod figure;
pub mod inputs;
pub mod layout;
pub mod lock;
pub mod manifest;
pub mod progress;
pub mod record;
pub mod rundir;
pub mod session;
pub mod stopping;
pub mod summary;
pub mod tau;
pub mod trainer;
pub mod trajectory;

pub use checkpoint::TrainState;
pub use record::Record;
pub use trainer::{MemorySink, Sink, Trainer};
