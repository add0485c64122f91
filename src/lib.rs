//! # windtunnel
//!
//! A pure-CPU, fully seeded, bit-reproducible reference implementation of the experiments of
//! *Marginals Before Conditionals: Staged Disambiguation in Gradient-Trained Transformers*
//! (arXiv 2603.10074).
//!
//! ## The determinism contract
//!
//! For one source revision, every float windtunnel produces — logits, losses, gradients,
//! parameters after any number of steps, metrics — is the same bit pattern
//! - at any rayon thread count,
//! - at any x86-64 SIMD level (`-C target-cpu=x86-64` … `native`),
//! - after an interrupted run is resumed.
//!
//! It holds because of five rules, enforced by tests and lints (`docs/determinism.md`):
//! 1. every float output is produced by exactly one task in a fixed order: work is split by
//!    output ownership, from shapes only, and floats are never reduced across threads;
//! 2. arithmetic v2: every sum of products is a chain of correctly rounded FMAs in a fixed order
//!    (hardware or `libm`'s software FMA, same bits), reached only through [`numerics::fused`];
//!    no reassociation, no fast-math; SIMD runs only across independent outputs;
//! 3. transcendentals only through [`numerics::math`] (the pure-Rust `libm` crate);
//! 4. no hash-map order reaches an output;
//! 5. random streams are in-crate ([`rng`]) or pinned with test vectors.
//!
//! Against PyTorch/TransformerLens the agreement is within documented tolerances, not bits.

pub mod check;
pub mod cli;
pub mod config;
pub mod error;
pub mod experiments;
pub mod hessian;
pub mod io;
pub mod memory;
pub mod model;
pub mod numerics;
pub mod optim;
pub mod plot;
pub mod probes;
pub mod rng;
pub mod task;
pub mod train;

pub use error::{Error, Result};
