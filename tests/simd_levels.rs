//! Every SIMD copy of every kernel, at every register tiling, computes the same bits: the golden
//! fixture (forward, backward, three training steps) at every level this CPU supports and every
//! tiling of the matrix kernel, and randomized matrix products in both layouts — shapes with
//! ragged edges, inner dimensions long enough to carry partial sums between blocks, and a weight
//! gradient large enough to be split among tasks by columns instead of rows, and one run as its
//! transpose —
//! against the plain triple loop with `libm`'s software FMA. One test only, because the level
//! cap and the forced tiling are process-wide.

use windtunnel::check::golden::{fixture_hashes, parse};
use windtunnel::numerics::Scalar;
use windtunnel::numerics::gemm::{TILINGS, Tiling, force_tiling};
use windtunnel::numerics::matmul::{Accum, matmul_nn, matmul_reference, matmul_tn};
use windtunnel::numerics::simd::{self, Level};
use windtunnel::rng::{Purpose, Stream};

fn random<S: Scalar>(n: usize, s: &mut Stream) -> Vec<S> {
    (0..n).map(|_| S::from_f64(s.normal())).collect()
}

fn bits<S: Scalar>(v: &[S]) -> Vec<u64> {
    v.iter().map(|x| x.bits()).collect()
}

fn golden(dtype: &str) -> Vec<(String, String)> {
    let path = format!("{}/golden/canonical_{dtype}.txt", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(path).unwrap())
}

/// Both layouts, with bias and with accumulation, against the reference.
fn products_match_reference<S: Scalar>(what: &str, s: &mut Stream) {
    // (20, 4100, 520): a weight-gradient shape large enough to split by columns (gemm::split);
    // (24, 300, 520): one that runs transposed, over several row tasks, more than one `kc` block
    // and a stored `dY` row of ≥ 2 KiB (packed); (520, 150, 40) and (300, 150, 24): a transposed
    // `a` whose stored rows are ≥ 2 KiB (packed: f32 and f64, f64 only), over more than one `kc` block.
    let shapes = [
        (24, 300, 520),
        (520, 150, 40),
        (300, 150, 24),
        (1, 1, 1),
        (13, 7, 17),
        (25, 33, 130),
        (37, 65, 200),
        (12, 16, 16),
        (50, 9, 513),
        (7, 700, 40),
        (20, 4100, 520),
    ];
    for &(m, k, n) in &shapes {
        let (a, at, b, bias) = (random::<S>(m * k, s), random::<S>(k * m, s), random::<S>(k * n, s), random::<S>(n, s));
        let (mut got, mut want) = (vec![S::zero(); m * n], vec![S::zero(); m * n]);
        matmul_nn(&mut got, &a, &b, Some(&bias), m, k, n, Accum::Set);
        matmul_reference(&mut want, |i, p| a[i * k + p], &b, Some(&bias), m, k, n, Accum::Set);
        assert_eq!(bits(&got), bits(&want), "{} nn {m}x{k}x{n} at {what}", S::NAME);
        let init = random::<S>(m * n, s);
        let (mut got, mut want) = (init.clone(), init);
        matmul_tn(&mut got, &at, &b, m, k, n, Accum::Add);
        matmul_reference(&mut want, |i, p| at[p * m + i], &b, None, m, k, n, Accum::Add);
        assert_eq!(bits(&got), bits(&want), "{} tn {m}x{k}x{n} at {what}", S::NAME);
    }
}

#[test]
fn all_levels_and_tilings_give_identical_bits() {
    let levels: Vec<Level> = Level::ALL.into_iter().filter(|&l| l <= simd::detected()).collect();
    assert!(levels.contains(&Level::Scalar));
    let (golden32, golden64) = (golden("f32"), golden("f64"));
    let mut s = Stream::new(5, Purpose::Fixture, 99);
    for level in levels {
        simd::set_cap(Some(level));
        assert_eq!(simd::level(), level);
        let tilings: Vec<Option<Tiling>> = std::iter::once(None).chain(TILINGS.map(Some)).collect();
        for tiling in tilings {
            force_tiling(tiling);
            let what = format!("{} with tiling {}", level.name(), tiling.map_or("tuned".into(), |t| t.name()));
            products_match_reference::<f32>(&what, &mut s);
            products_match_reference::<f64>(&what, &mut s);
            // The whole fixture per tiling at the vector levels; at the scalar level (software
            // FMA, slow) with the tuned tiling only — scripts/simd-invariance.sh runs it too.
            if level != Level::Scalar || tiling.is_none() {
                assert_eq!(fixture_hashes::<f32>(), golden32, "f32 fixture at {what}");
            }
            if tiling.is_none() || tiling == Some(TILINGS[0]) {
                assert_eq!(fixture_hashes::<f64>(), golden64, "f64 fixture at {what}");
            }
        }
    }
    force_tiling(None);
    simd::set_cap(None);
}
