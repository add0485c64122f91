//! The crate is its test: tests/render.rs.
