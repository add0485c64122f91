//! The matrix kernel's register tilings: every one compiled, the one tuned per CPU, and the one
//! forced by tests and `bench --tiling`. A speed choice only: every tiling gives the same bits
//! (`gemm`).

use super::simd::{self, Level, Uarch};
use std::sync::atomic::{AtomicU8, Ordering};

/// A register tile: `rows × cols` outputs kept in vector registers while `p` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    pub rows: usize,
    pub cols: usize,
}

/// Every tiling the kernel is compiled for (tests force each one).
pub const TILINGS: [Tiling; 7] = [
    Tiling { rows: 4, cols: 8 },
    Tiling { rows: 6, cols: 8 },
    Tiling { rows: 6, cols: 16 },
    Tiling { rows: 8, cols: 16 },
    Tiling { rows: 8, cols: 32 },
    Tiling { rows: 12, cols: 16 },
    Tiling { rows: 12, cols: 32 },
];

impl Tiling {
    pub fn name(self) -> String {
        format!("{}x{}", self.rows, self.cols)
    }

    /// Inner-dimension block: the `kc × cols` panel of `b` stays within 16 KiB of L1.
    pub(crate) fn kc(self, elem_bytes: usize) -> usize {
        (16 * 1024 / (self.cols * elem_bytes)).max(64)
    }
}

/// Tiling forced by [`force_tiling`] (index + 1; 0 = the per-CPU choice).
static FORCED: AtomicU8 = AtomicU8::new(0);

/// Force one tiling for the whole process (tests and benchmarks), or `None` for the CPU's own.
pub fn force_tiling(t: Option<Tiling>) {
    let code = t.map_or(0, |t| 1 + TILINGS.iter().position(|&x| x == t).expect("tiling not in TILINGS") as u8);
    FORCED.store(code, Ordering::SeqCst);
}

/// The tiling used for `elem_bytes`-wide elements at `level`: forced, or tuned per CPU.
pub fn tiling(level: Level, elem_bytes: usize) -> Tiling {
    match FORCED.load(Ordering::Relaxed) {
        0 => tuned(level, simd::uarch(), elem_bytes),
        i => TILINGS[i as usize - 1],
    }
}

/// Register budget per level and core (docs/PERFORMANCE.md): AVX2 has 16 ymm registers, so
/// 12 accumulators + 2 `b` vectors + a broadcast; AVX-512 has 32 zmm. Cores with two full-width
/// FMA pipes of latency 4 (Intel server, Zen 5) need ≥ 8 independent accumulators to stay busy,
/// and get 24; Zen 4's double-pumped pipes are fed by 16.
fn tuned(level: Level, uarch: Uarch, elem_bytes: usize) -> Tiling {
    let lanes = |bytes_per_vec: usize| bytes_per_vec / elem_bytes;
    let (rows, vecs_per_row, vec_bytes) = match (level, uarch) {
        (Level::Scalar, _) => return Tiling { rows: 4, cols: 8 },
        (Level::Avx2, _) => (6, 2, 32),
        (Level::Avx512, Uarch::Zen4) => (8, 2, 64),
        (Level::Avx512, _) => (12, 2, 64),
    };
    let t = Tiling { rows, cols: vecs_per_row * lanes(vec_bytes) };
    debug_assert!(TILINGS.contains(&t));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tuned_tiling_is_compiled_and_fits_the_registers() {
        for level in Level::ALL {
            for uarch in [Uarch::IntelAvx512, Uarch::Zen4, Uarch::Zen5, Uarch::Other] {
                for bytes in [4, 8] {
                    let t = tuned(level, uarch, bytes);
                    assert!(TILINGS.contains(&t), "{level:?} {uarch:?} {bytes}: {t:?} is not compiled");
                    let (regs, lanes) = match level {
                        Level::Avx512 => (32, 64 / bytes),
                        _ => (16, 32 / bytes),
                    };
                    let accumulators = t.rows * t.cols.div_ceil(lanes);
                    assert!(
                        level == Level::Scalar || accumulators + 3 <= regs,
                        "{level:?} {t:?}: {accumulators} accumulators"
                    );
                }
            }
        }
    }
}
