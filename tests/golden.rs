//! The determinism contract, enforced: the canonical fixture's logits, loss and all 70 gradients
//! hash to the committed golden values in f32 and f64, at 1, 2, 3 and 4 rayon threads in one
//! process. (`scripts/simd-invariance.sh` checks the same hashes under two `-C target-cpu` builds.)
//!
//! The files declare the arithmetic version they were made under; a file of another version fails.
//! Regenerate only with a *documented* change of arithmetic (a new `numerics::ARITHMETIC`,
//! docs/determinism.md) with `UPDATE_GOLDEN=1 cargo test --release --test golden`.

use windtunnel::check::golden::{declared_arithmetic, fixture_hashes, parse, render};
use windtunnel::numerics::Scalar;

fn golden_path(dtype: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("golden/canonical_{dtype}.txt"))
}

fn at_threads<S: Scalar>(threads: usize) -> Vec<(String, String)> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(fixture_hashes::<S>)
}

fn check<S: Scalar>() {
    let path = golden_path(S::NAME);
    let one = at_threads::<S>(1);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, render(&one)).unwrap();
    }
    let text = std::fs::read_to_string(&path).expect("golden file missing");
    assert_eq!(
        declared_arithmetic(&text),
        windtunnel::numerics::ARITHMETIC,
        "{} holds hashes of another arithmetic version",
        path.display()
    );
    let golden = parse(&text);
    assert_eq!(golden.len(), 78, "init + logits + losses + loss + 70 gradients + 4 training hashes");
    for (want, got) in golden.iter().zip(&one) {
        assert_eq!(want, got, "{}: 1 thread differs from golden {}", want.0, path.display());
    }
    for threads in [2, 3, 4] {
        let many = at_threads::<S>(threads);
        for (a, b) in one.iter().zip(&many) {
            assert_eq!(a, b, "{}: {threads} threads differ from 1 thread", a.0);
        }
    }
}

#[test]
fn golden_hashes_f32_at_1_2_3_4_threads() {
    check::<f32>();
}

#[test]
fn golden_hashes_f64_at_1_2_3_4_threads() {
    check::<f64>();
}
