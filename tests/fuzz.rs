//! Bounded fuzzing of what reads user input: the safetensors reader (random bytes, and valid
//! files with bytes flipped or cut), the config parser and `--set`, `verify --rename` files and
//! `replicate --configs` directories. Every input gives Ok or a
//! clear error; none panics (proptest reports a panic as a failure, with the shrunk input).

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::path::PathBuf;
use windtunnel::check::names::read_rename;
use windtunnel::config::RunConfig;
use windtunnel::experiments::configs::Configs;
use windtunnel::io::tensors::{self, Tensor};

/// A file name no other test thread uses.
fn scratch(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("wt-fuzz-{}-{n}-{name}", std::process::id()))
}

/// A small valid file: two tensors of different dtypes and metadata.
fn valid_file() -> Vec<u8> {
    let p = scratch("valid.safetensors");
    let ts = vec![
        Tensor::i64("labels", vec![2, 3], vec![1, -100, 3, 4, 5, 6]),
        Tensor::from_scalars("w", vec![2], &[1.5f32, -2.0]),
    ];
    tensors::write(&p, &ts, Some("{\"kind\":\"fuzz\"}")).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    std::fs::remove_file(&p).ok();
    bytes
}

fn read_bytes(name: &str, bytes: &[u8]) -> Result<(), String> {
    let p = scratch(name);
    std::fs::write(&p, bytes).unwrap();
    let r = tensors::read(&p).map(|_| ()).map_err(|e| e.to_string());
    std::fs::remove_file(&p).ok();
    r
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512, failure_persistence: None, rng_seed: RngSeed::Fixed(38), ..ProptestConfig::default()
    })]

    #[test]
    fn random_bytes_never_panic_the_safetensors_reader(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = read_bytes("random", &bytes);
    }

    #[test]
    fn a_damaged_valid_file_is_read_or_refused_without_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut b = valid_file();
        for (i, x) in flips {
            let i = i.index(b.len());
            b[i] = x;
        }
        if truncate {
            b.truncate(cut.index(b.len()));
        }
        let _ = read_bytes("damaged", &b);
    }

    #[test]
    fn random_config_text_gives_a_config_or_an_error(text in "(\\[(model|data|train)\\]\n|[a-z_]{1,14} = [-0-9a-z.e\"]{0,10}\n|[ -~]{0,20}\n){0,12}") {
        let p = scratch("config.toml");
        std::fs::write(&p, &text).unwrap();
        let r = RunConfig::load(Some(&p), &[]);
        std::fs::remove_file(&p).ok();
        if let Err(e) = r {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn random_set_overrides_give_a_config_or_an_error(
        key in "(model|data|train|x)?\\.?[a-z_]{0,16}",
        value in "[ -~]{0,16}",
    ) {
        let r = RunConfig::load(None, &[format!("{key}={value}")]);
        if let Err(e) = r {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn random_rename_files_give_pairs_or_an_error_naming_the_line(
        bytes in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), Just(b'#'), Just(b'.'), 97u8..123, any::<u8>()], 0..200),
    ) {
        let p = scratch("rename.txt");
        std::fs::write(&p, &bytes).unwrap();
        let r = read_rename(&p);
        std::fs::remove_file(&p).ok();
        match r {
            Ok(pairs) => prop_assert!(pairs.iter().all(|(a, b)| !a.is_empty() && !b.is_empty())),
            Err(e) => prop_assert!(e.to_string().contains("rename.txt")),
        }
    }

    #[test]
    fn a_configs_directory_of_random_text_gives_a_config_or_an_error(
        text in "(\\[(model|data|train)\\]\n|(k|n_b|lr|batch_size|max_steps|d_model|seed) = [-0-9a-z.e\"]{0,8}\n|[ -~]{0,16}\n){0,10}",
    ) {
        let dir = scratch("configs");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("canonical_k10.toml"), &text).unwrap();
        let r = Configs::from_arg(Some(dir.clone())).resolve("canonical_k10.toml", &["train.max_steps=10".into()]);
        std::fs::remove_dir_all(&dir).ok();
        if let Err(e) = r {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

#[test]
fn the_valid_file_reads_back() {
    assert_eq!(read_bytes("intact", &valid_file()), Ok(()));
}
