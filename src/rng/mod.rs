//! Random number generation. Two families, never mixed:
//! - [`pyrandom`]: CPython's Mersenne Twister, bit-exact, for the author's data generator and the
//!   evaluations that the author seeded with `random.Random(...)`;
//! - [`stream`]: windtunnel's own ChaCha20 streams for everything the author drew from torch's
//!   generator (init, batch order, z-shuffles, probe subsets), which cannot be reproduced
//!   bit-for-bit (spec §5.4); replay files cover exact comparison with a PyTorch run.

pub mod pyrandom;
pub mod stream;

pub use pyrandom::PyRandom;
pub use stream::{Purpose, Stream};
