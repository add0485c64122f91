//! `numerics::vmath::{expf, erff, erff_in_place}` equal `libm::{expf, erff}` bit for bit.
//! CI checks every 61st f32 bit pattern (≈70 million inputs); the full 2³² sweep is
//! `cargo test --release --test vmath_exhaustive -- --ignored` (run for every change to vmath.rs;
//! last run recorded in docs/determinism.md).

use rayon::prelude::*;
use windtunnel::numerics::vmath;

fn mismatches(stride: u64) -> Vec<(u32, &'static str)> {
    let chunks: Vec<Vec<(u32, &'static str)>> = (0..1u64 << 8)
        .into_par_iter()
        .map(|c| c << 24)
        .map(|start| {
            let mut bad = vec![];
            let mut b = start;
            while b < (start + (1 << 24)).min(1 << 32) {
                let x = f32::from_bits(b as u32);
                let (e, le) = (vmath::expf(x), libm::expf(x));
                if e.to_bits() != le.to_bits() && !(e.is_nan() && le.is_nan()) {
                    bad.push((b as u32, "expf"));
                }
                let (r, lr) = (vmath::erff(x), libm::erff(x));
                if r.to_bits() != lr.to_bits() && !(r.is_nan() && lr.is_nan()) {
                    bad.push((b as u32, "erff"));
                }
                b += stride;
            }
            // The slice form over the same inputs, as GELU calls it (its own sorting of branches).
            let xs: Vec<f32> = (start..(start + (1 << 24)).min(1 << 32))
                .step_by(stride as usize)
                .map(|b| f32::from_bits(b as u32))
                .collect();
            let mut ys = xs.clone();
            vmath::erff_in_place(&mut ys, &mut vmath::ErfScratch::default());
            for (x, y) in xs.iter().zip(&ys) {
                let l = libm::erff(*x);
                if y.to_bits() != l.to_bits() && !(y.is_nan() && l.is_nan()) {
                    bad.push((x.to_bits(), "erff_in_place"));
                }
            }
            bad
        })
        .collect();
    chunks.into_iter().flatten().take(10).collect()
}

#[test]
fn every_61st_input_matches_libm() {
    let bad = mismatches(61);
    assert!(bad.is_empty(), "first mismatches: {bad:x?}");
}

#[test]
#[ignore = "exhaustive: 2^32 inputs, about a minute on 2 cores"]
fn every_input_matches_libm() {
    let bad = mismatches(1);
    assert!(bad.is_empty(), "first mismatches: {bad:x?}");
}
