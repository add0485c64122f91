//! What a training loop reports as it goes, and the Ctrl-C flag it checks.

use super::record::Record;

/// What to report while a run trains.
pub trait Progress: Send {
    /// The run starts (or resumes) at `step` of at most `max_steps`.
    fn start(&mut self, _step: u64, _max_steps: u64) {}
    fn step(&mut self, _step: u64) {}
    fn record(&mut self, _record: &Record) {}
}

/// Set by a Ctrl-C handler (`windtunnel train` installs one): the trainer saves its resume state
/// after the step in progress and returns [`crate::Error::Interrupted`].
pub static INTERRUPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether training was asked to stop.
pub fn interrupted() -> bool {
    INTERRUPT.load(std::sync::atomic::Ordering::Relaxed)
}

/// No display.
pub struct Silent;
impl Progress for Silent {}
