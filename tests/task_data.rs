//! The author's data, bit for bit: every `sha_gen` / `sha_train` row of spec §2.4, the first
//! 36 z draws of `Random(42)`, and clear errors for impossible parameters.

use windtunnel::rng::PyRandom;
use windtunnel::task::tokenizer::ALPHABET;
use windtunnel::task::{DataConfig, TaskKind, ZSharing, generate, sha_gen, sha_train, train_split};

fn canon(k: usize, n_b: usize) -> DataConfig {
    DataConfig { k, n_b, ..DataConfig::default() }
}

/// (K, n_b, D, first group B, first three (z, A), first train example, sha_gen, sha_train)
#[allow(clippy::type_complexity)]
const SPEC_ROWS: &[(usize, usize, usize, &str, &[(&str, &str)], (&str, &str, &str), &str, &str)] = &[
    (
        10,
        1000,
        10000,
        "3zmf8m",
        &[("xa", "fqe7"), ("ji", "yckw"), ("0y", "g5ng")],
        ("20oevg", "xa", "gp2g"),
        "d48263b03358a2c6",
        "42266227ef2e6b66",
    ),
    (
        20,
        1000,
        20000,
        "zbikci",
        &[("xa", "gqj7"), ("ji", "yyhl"), ("0y", "r1c3")],
        ("xnrbhf", "xa", "h2r3"),
        "3c6cf62130e4cdbe",
        "4be571a3b4e52622",
    ),
    (
        3,
        1000,
        3000,
        "6dpbhs",
        &[("xa", "bzzp"), ("ji", "9qk5"), ("0y", "m1fp")],
        ("uc87nx", "xa", "2f6d"),
        "48c64c370ccfb2a3",
        "6c1428a3782c109a",
    ),
    (
        36,
        1000,
        36000,
        "5lxo6q",
        &[("xa", "qfaz"), ("ji", "iz81"), ("0y", "psdw")],
        ("yeaquq", "xa", "68y4"),
        "c7eb39a733203e5d",
        "2536c9075edc73a8",
    ),
    (
        5,
        2000,
        10000,
        "hsahxt",
        &[("xa", "ozmf"), ("ji", "28md"), ("0y", "rd4v")],
        ("qhpqpf", "xa", "oex2"),
        "fe9134e45ff8c66d",
        "e8a64287abfd8eed",
    ),
    (20, 500, 10000, "zbikci", &[], ("kupcj8", "xa", "wr8x"), "4835fb276d86cc55", "922cc63f9612c47c"),
    (36, 278, 10008, "5lxo6q", &[], ("fedtee", "xa", "81qu"), "3a99c4e8895c2cf8", "2b10b6ed783508f1"),
    (36, 556, 20016, "5lxo6q", &[], ("7tpwa0", "xa", "c9pa"), "d8904898d6643cac", "d25987ef9fb72fa2"),
];

#[test]
fn all_eight_spec_hash_rows_reproduce() {
    for &(k, n_b, d, b0, pairs, first_train, gen_hash, train_hash) in SPEC_ROWS {
        let m = generate(&canon(k, n_b)).unwrap();
        assert_eq!(m.examples.len(), d, "K={k} n_b={n_b}: D");
        assert_eq!(m.groups[0].b, b0, "K={k} n_b={n_b}: first B");
        for (i, &(z, a)) in pairs.iter().enumerate() {
            assert_eq!((m.groups[0].pairs[i].0.as_str(), m.groups[0].pairs[i].1.as_str()), (z, a));
        }
        let zs: Vec<&str> = m.groups[0].pairs.iter().take(5.min(k)).map(|p| p.0.as_str()).collect();
        assert_eq!(zs, ["xa", "ji", "0y", "6d", "pb"][..5.min(k)]);
        let train = train_split(&m);
        assert_eq!(train.len(), d);
        let e = &train.examples[0];
        assert_eq!((e.b.as_str(), e.z.as_str(), e.a.as_str()), first_train, "K={k} n_b={n_b}: first train example");
        assert_eq!(sha_gen(&m), gen_hash, "K={k} n_b={n_b}: sha_gen");
        assert_eq!(sha_train(&train), train_hash, "K={k} n_b={n_b}: sha_train");
    }
}

#[test]
fn first_36_z_draws_of_random_42() {
    let want =
        "xa ji 0y 6d pb hs ah xt hv 3a 3z mf 8m dd 4v 30 t9 nt 3w 5u zb ik ci dk wn nh j7 xv g0 fn 9x uy 41 ib lj h7";
    let mut r = PyRandom::new(42);
    let got: Vec<String> = (0..36).map(|_| String::from_utf8(r.choices(ALPHABET.as_bytes(), 2)).unwrap()).collect();
    assert_eq!(got.join(" "), want);
    // And the generator's K=36 selector set is exactly that list (no repeats among them).
    let m = generate(&canon(36, 10)).unwrap();
    let zs: Vec<&str> = m.groups[0].pairs.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(zs.join(" "), want);
}

#[test]
fn groups_are_unique_and_targets_globally_unique_with_distinct_first_chars() {
    let m = generate(&canon(20, 500)).unwrap();
    let mut bs: Vec<&str> = m.groups.iter().map(|g| g.b.as_str()).collect();
    bs.sort();
    bs.dedup();
    assert_eq!(bs.len(), 500);
    let mut all_a: Vec<&str> = m.examples.iter().map(|e| e.a.as_str()).collect();
    all_a.sort();
    all_a.dedup();
    assert_eq!(all_a.len(), 10_000);
    for g in &m.groups {
        let mut firsts: Vec<u8> = g.pairs.iter().map(|p| p.1.as_bytes()[0]).collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 20);
    }
}

#[test]
fn z_sharing_modes_follow_the_authors_layout() {
    let base = DataConfig { k: 4, n_b: 30, auto_z_length: true, ..DataConfig::default() };
    let private = generate(&DataConfig { z_sharing: ZSharing::Private, ..base.clone() }).unwrap();
    let mut zs: Vec<&str> = private.examples.iter().map(|e| e.z.as_str()).collect();
    zs.sort();
    zs.dedup();
    assert_eq!(zs.len(), 120, "private: every group has its own selectors");
    let sg = generate(&DataConfig { z_sharing: ZSharing::Supergroup, n_supergroups: 3, ..base.clone() }).unwrap();
    for g in 0..30 {
        assert_eq!(sg.groups[g].pairs[0].0, sg.groups[g % 3].pairs[0].0, "group {g} uses supergroup g % 3");
    }
    assert_ne!(sg.groups[0].pairs[0].0, sg.groups[1].pairs[0].0);
    // Private mode at K=20, n_b=1000 needs 40,000 selectors: z lengthened to 3 as upstream.
    let cfg =
        DataConfig { k: 20, n_b: 1000, z_sharing: ZSharing::Private, auto_z_length: true, ..DataConfig::default() };
    assert_eq!(cfg.effective_z_length(), 3);
    assert_eq!(cfg.seq_len(), 17);
}

#[test]
fn other_tasks_and_label_noise() {
    let az = generate(&DataConfig { task: TaskKind::AzToB, k: 5, n_b: 100, ..DataConfig::default() }).unwrap();
    let t = train_split(&az);
    assert_eq!(t.len(), 500);
    assert_eq!(t.seq_len(), 16);
    assert_eq!(t.encoded[0].target_start, 9);
    let bta = generate(&DataConfig { task: TaskKind::BToA, k: 5, n_b: 100, ..DataConfig::default() }).unwrap();
    assert_eq!(train_split(&bta).seq_len(), 13);

    let noisy = DataConfig { k: 10, n_b: 200, label_noise_prob: 0.2, ..DataConfig::default() };
    let m = generate(&noisy).unwrap();
    let t = train_split(&m);
    // Roughly 20% replaced, each by a wrong candidate of the same group.
    assert!((300..500).contains(&t.n_noisy), "n_noisy = {}", t.n_noisy);
    for (e, a) in t.examples.iter().zip(&t.trained_a) {
        if *a != e.a {
            let g = m.groups.iter().find(|g| g.b == e.b).unwrap();
            assert!(g.pairs.iter().any(|p| &p.1 == a));
        }
    }
}

#[test]
fn impossible_parameters_name_the_field_and_range() {
    let err = |cfg: DataConfig| generate(&cfg).unwrap_err().to_string();
    let e = err(DataConfig { k: 37, ..DataConfig::default() });
    assert!(e.contains("data.k") && e.contains("1..=36"), "{e}");
    let e = err(DataConfig { k: 0, ..DataConfig::default() });
    assert!(e.contains("data.k"), "{e}");
    let e = err(DataConfig { n_b: 0, ..DataConfig::default() });
    assert!(e.contains("data.n_b"), "{e}");
    let e = err(DataConfig { b_length: 2, n_b: 2000, ..DataConfig::default() });
    assert!(e.contains("data.n_b") && e.contains("1..=1296"), "{e}");
    let e = err(DataConfig { k: 20, z_length: 1, ..DataConfig::default() });
    assert!(e.contains("data.z_length") && e.contains("auto_z_length"), "{e}");
    let e = err(DataConfig { z_length: 0, ..DataConfig::default() });
    assert!(e.contains("data.z_length") && e.contains("1..=4"), "{e}");
    let e = err(DataConfig { z_sharing: ZSharing::Supergroup, n_supergroups: 0, ..DataConfig::default() });
    assert!(e.contains("data.n_supergroups"), "{e}");
}
