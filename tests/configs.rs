//! Every file in configs/ parses, validates, cites its spec row, and generates its data.

use windtunnel::config::RunConfig;
use windtunnel::task::{generate, train_split};

#[test]
fn every_config_is_valid_and_cites_the_spec() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("spec §") || text.contains("anchors §"), "{} cites no spec row", p.display());
        let cfg = RunConfig::load(Some(&p), &[]).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let m = generate(&cfg.data).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(train_split(&m).len(), cfg.data.k * cfg.data.n_b);
        n += 1;
    }
    assert_eq!(n, 52, "49 paper configs and the three a_to_b asymmetry runs");
    let k10 = RunConfig::load(Some(&dir.join("canonical_k10.toml")), &[]).unwrap();
    assert_eq!(k10, RunConfig::default(), "canonical_k10.toml is the canonical run");
}
