//! Golden hashes of tensor *bits* (not file bytes) and the fixed computation they guard.
//!
//! A tensor hash is the first 16 hex characters of sha256 over the little-endian bit patterns of
//! its elements (u32 for f32, u64 for f64), with every NaN canonicalised to one pattern.
//! `golden/canonical_{f32,f64}.txt` hold one `<key> <hash>` line per tensor of
//! [`fixture_hashes`] after a `# arithmetic N` header line (the arithmetic version, crate version
//! and git revision that produced them); `UPDATE_GOLDEN=1 cargo test --release --test golden`
//! rewrites them — only as a documented change (docs/determinism.md, "Versions").

use crate::model::{Model, ModelConfig};
use crate::numerics::{Dtype, Scalar};
use crate::task::{Batch, DataConfig, generate, train_split};
use sha2::{Digest, Sha256};

/// Hash of a tensor's bit pattern.
pub fn tensor_hash<S: Scalar>(xs: &[S]) -> String {
    let mut h = Sha256::new();
    for &x in xs {
        let v = x.value();
        match S::DTYPE {
            Dtype::F32 => {
                let b = if v.is_nan() { 0x7fc0_0000u32 } else { x.bits() as u32 };
                h.update(b.to_le_bytes());
            }
            Dtype::F64 => {
                let b = if v.is_nan() { 0x7ff8_0000_0000_0000u64 } else { x.bits() };
                h.update(b.to_le_bytes());
            }
        }
    }
    hex16(&h.finalize())
}

fn hex16(d: &[u8]) -> String {
    d.iter().take(8).map(|x| format!("{x:02x}")).collect()
}

/// Seed of the golden model's init.
pub const FIXTURE_SEED: u64 = 42;
/// Examples in the golden batch: the first 64 of the canonical K=10 train order.
pub const FIXTURE_BATCH: usize = 64;

/// The golden batch.
pub fn fixture_batch() -> Batch {
    let m = generate(&DataConfig::default()).expect("canonical data config is valid");
    let t = train_split(&m);
    Batch::gather(&t, &(0..FIXTURE_BATCH).collect::<Vec<_>>())
}

/// `(key, hash)` for the canonical model at `init(42)` on the golden batch: the initial
/// parameters, logits, per-position losses, the loss, every gradient in TL order, and three
/// training steps ([`training_hashes`]).
pub fn fixture_hashes<S: Scalar>() -> Vec<(String, String)> {
    let model = Model::<S>::init(&ModelConfig::canonical(), FIXTURE_SEED);
    let batch = fixture_batch();
    let mut ws = model.workspace(batch.batch_size, batch.seq_len);
    let mut grads = model.new_grads();
    let loss = model.forward(&mut ws, &batch);
    model.backward(&mut ws, &batch, &mut grads);
    let n = ws.rows();
    let mut out = vec![
        ("init.params".to_string(), tensor_hash(&model.params)),
        ("logits".to_string(), tensor_hash(&ws.logits[..n * model.cfg.d_vocab])),
        ("losses".to_string(), tensor_hash(&ws.losses[..n])),
        ("loss".to_string(), tensor_hash(&[loss])),
    ];
    for (i, e) in model.layout.entries.iter().enumerate() {
        out.push((format!("grad.{}", e.name), tensor_hash(model.layout.view(&grads, i))));
    }
    out.extend(training_hashes::<S>());
    out
}

/// Three steps of the canonical trainer at batch 32 with an eval at step 3: the parameters, the
/// Adam moments and the eval record (wall-clock fields zeroed).
pub fn training_hashes<S: Scalar>() -> Vec<(String, String)> {
    use crate::config::RunConfig;
    use crate::train::{MemorySink, Trainer};
    let ov = ["train.batch_size=32", "train.max_steps=3", "train.eval_every=3"].map(String::from);
    let cfg = RunConfig::load(None, &ov).expect("valid fixture config");
    let model = Model::<S>::init(&cfg.model, FIXTURE_SEED);
    let mut tr = Trainer::new(cfg, model, std::path::Path::new(".")).expect("fixture trainer");
    let mut sink = MemorySink::default();
    tr.run(&mut sink).expect("fixture training");
    let rec = crate::train::record::without_timing(&sink.records[0]);
    let mut h = Sha256::new();
    h.update(serde_json::to_string(&rec).expect("record serialises").as_bytes());
    vec![
        ("train3.params".to_string(), tensor_hash(&tr.model.params)),
        ("train3.adam_m".to_string(), tensor_hash(&tr.opt.m)),
        ("train3.adam_v".to_string(), tensor_hash(&tr.opt.v)),
        ("train3.record".to_string(), hex16(&h.finalize())),
    ]
}

/// Render `(key, hash)` pairs as the golden file format.
pub fn render(rows: &[(String, String)]) -> String {
    let header = format!(
        "# arithmetic {} · windtunnel {} at {}\n",
        crate::numerics::ARITHMETIC,
        env!("CARGO_PKG_VERSION"),
        env!("WINDTUNNEL_GIT_REV")
    );
    header + &rows.iter().map(|(k, h)| format!("{k} {h}\n")).collect::<String>()
}

/// The arithmetic version a golden file declares (`# arithmetic N …`); files before v2 have none.
pub fn declared_arithmetic(text: &str) -> u32 {
    text.lines()
        .filter_map(|l| l.strip_prefix("# arithmetic "))
        .find_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(1)
}

/// Parse the golden file format.
pub fn parse(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' ').map(|(k, h)| (k.to_string(), h.trim().to_string())))
        .collect()
}

/// What differs between a golden file's text and freshly computed hashes, one line per
/// difference (empty: identical). The header's revision is not compared; its arithmetic version is.
pub fn differences(golden_text: &str, rows: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let declared = declared_arithmetic(golden_text);
    if declared != crate::numerics::ARITHMETIC {
        out.push(format!(
            "the file declares arithmetic {declared}, this build computes arithmetic {}",
            crate::numerics::ARITHMETIC
        ));
    }
    let golden = parse(golden_text);
    for (key, hash) in rows {
        match golden.iter().find(|(k, _)| k == key) {
            Some((_, want)) if want == hash => {}
            Some((_, want)) => out.push(format!("{key}: {hash}, golden {want}")),
            None => out.push(format!("{key}: not in the file")),
        }
    }
    for (key, _) in golden.iter().filter(|(k, _)| !rows.iter().any(|(r, _)| r == k)) {
        out.push(format!("{key}: in the file, not computed"));
    }
    out
}
