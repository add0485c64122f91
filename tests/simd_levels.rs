//! Every SIMD copy of every kernel computes the same bits: the golden fixture (forward, backward,
//! three training steps) and randomized matrix products in both layouts — including the shapes
//! that select each level's different tile sizes — at every level this CPU supports, in one
//! process. One test only, because the level cap is process-wide.

use windtunnel::io::golden::{fixture_hashes, parse};
use windtunnel::numerics::matmul::{Accum, matmul_nn, matmul_reference, matmul_tn};
use windtunnel::numerics::simd::{self, Level};
use windtunnel::rng::{Purpose, Stream};

fn random(n: usize, s: &mut Stream) -> Vec<f32> {
    (0..n).map(|_| s.normal() as f32).collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn all_levels_give_identical_bits() {
    let levels: Vec<Level> =
        [Level::Baseline, Level::Avx2, Level::Avx512].into_iter().filter(|&l| l <= simd::detected()).collect();
    let golden32 =
        parse(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/golden/canonical_f32.txt")).unwrap());
    let golden64 =
        parse(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/golden/canonical_f64.txt")).unwrap());
    let mut s = Stream::new(5, Purpose::Fixture, 99);
    let shapes = [(1, 1, 1), (13, 7, 17), (25, 33, 130), (37, 65, 200), (12, 16, 16), (50, 9, 513), (7, 300, 64)];
    for level in levels {
        simd::set_cap(Some(level));
        assert_eq!(simd::level(), level);
        assert_eq!(fixture_hashes::<f32>(), golden32, "f32 fixture at {level:?}");
        assert_eq!(fixture_hashes::<f64>(), golden64, "f64 fixture at {level:?}");
        for &(m, k, n) in &shapes {
            let (a, at, b) = (random(m * k, &mut s), random(k * m, &mut s), random(k * n, &mut s));
            let (mut got, mut want) = (vec![0.0; m * n], vec![0.0; m * n]);
            matmul_nn(&mut got, &a, &b, None, m, k, n, Accum::Set);
            matmul_reference(&mut want, |i, p| a[i * k + p], &b, None, m, k, n, Accum::Set);
            assert_eq!(bits(&got), bits(&want), "nn {m}x{k}x{n} at {level:?}");
            let init = random(m * n, &mut s);
            let (mut got, mut want) = (init.clone(), init);
            matmul_tn(&mut got, &at, &b, m, k, n, Accum::Add);
            matmul_reference(&mut want, |i, p| at[p * m + i], &b, None, m, k, n, Accum::Add);
            assert_eq!(bits(&got), bits(&want), "tn {m}x{k}x{n} at {level:?}");
        }
    }
    simd::set_cap(None);
}
