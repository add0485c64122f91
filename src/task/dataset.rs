//! The training split (`DisambiguationDataset(split="train")`, spec §2.3), label noise, the
//! dataset hashes of spec §2.4, and batches of encoded examples.

use super::generator::{Example, Mapping};
use super::tokenizer::TaskKind;
use super::tokenizer::{self, Encoded};
use crate::rng::PyRandom;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The training set: examples in train order, with the targets actually trained on (which differ
/// from the clean ones only under label noise).
#[derive(Clone, Debug)]
pub struct TrainSet {
    pub task: TaskKind,
    /// Clean examples in train order.
    pub examples: Vec<Example>,
    /// Target string used for training (equal to `examples[i].a` without label noise).
    pub trained_a: Vec<String>,
    /// Encoded sequences, in train order.
    pub encoded: Vec<Encoded>,
    /// Number of examples whose target label noise replaced.
    pub n_noisy: usize,
}

impl TrainSet {
    pub fn len(&self) -> usize {
        self.examples.len()
    }
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }
    pub fn seq_len(&self) -> usize {
        self.encoded.first().map_or(0, |e| e.tokens.len())
    }
}

/// Build the train split exactly as the author's dataset class (`split_by_base = true`): a fresh
/// `Random(seed)` shuffles the base keys (B for B-first tasks, A otherwise) in insertion order,
/// the first `int(n · probe_fraction)` bases are held out, and the rest contribute their examples
/// group by group. Label noise then uses `Random(seed + 99999)` (B-first tasks only).
pub fn train_split(mapping: &Mapping) -> TrainSet {
    let cfg = &mapping.config;
    let mut rng = PyRandom::new(cfg.seed);
    let key = |e: &Example| {
        if cfg.task.b_first() { e.b.clone() } else { e.a.clone() }
    };
    // Group examples by base key, keeping first-insertion order of keys.
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in mapping.examples.iter().enumerate() {
        let k = key(e);
        groups
            .entry(k.clone())
            .or_insert_with(|| {
                order.push(k);
                Vec::new()
            })
            .push(i);
    }
    rng.shuffle(&mut order);
    let n_probe = (order.len() as f64 * cfg.probe_fraction) as usize;
    let examples: Vec<Example> =
        order[n_probe..].iter().flat_map(|k| groups[k].iter().map(|&i| mapping.examples[i].clone())).collect();

    let mut trained_a: Vec<String> = examples.iter().map(|e| e.a.clone()).collect();
    let mut n_noisy = 0;
    if cfg.label_noise_prob > 0.0 && cfg.task.b_first() {
        let candidates: BTreeMap<&str, Vec<&str>> =
            mapping.groups.iter().map(|g| (g.b.as_str(), g.pairs.iter().map(|(_, a)| a.as_str()).collect())).collect();
        let mut noise = PyRandom::new(cfg.seed + 99_999);
        for (e, t) in examples.iter().zip(trained_a.iter_mut()) {
            if noise.random() < cfg.label_noise_prob {
                let wrong: Vec<&str> = candidates[e.b.as_str()].iter().copied().filter(|&a| a != e.a).collect();
                if !wrong.is_empty() {
                    *t = noise.choice(&wrong).to_string();
                    n_noisy += 1;
                }
            }
        }
    }
    let encoded = examples.iter().zip(&trained_a).map(|(e, a)| tokenizer::encode(cfg.task, &e.b, &e.z, a)).collect();
    TrainSet { task: cfg.task, examples, trained_a, encoded, n_noisy }
}

/// Spec §2.4: first 16 hex characters of sha256 over `"\n".join(f"{b},{z},{a}")`.
pub fn examples_hash<'a>(rows: impl Iterator<Item = (&'a str, &'a str, &'a str)>) -> String {
    let mut h = Sha256::new();
    for (i, (b, z, a)) in rows.enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(format!("{b},{z},{a}").as_bytes());
    }
    let digest = h.finalize();
    digest.iter().take(8).map(|x| format!("{x:02x}")).collect()
}

/// `sha_gen`: hash of the generation-order examples.
pub fn sha_gen(mapping: &Mapping) -> String {
    examples_hash(mapping.examples.iter().map(|e| (e.b.as_str(), e.z.as_str(), e.a.as_str())))
}

/// `sha_train`: hash of the clean examples in train order.
pub fn sha_train(train: &TrainSet) -> String {
    examples_hash(train.examples.iter().map(|e| (e.b.as_str(), e.z.as_str(), e.a.as_str())))
}

/// Hash of the targets actually trained on (differs from `sha_train` only under label noise).
pub fn sha_trained_targets(train: &TrainSet) -> String {
    examples_hash(train.examples.iter().zip(&train.trained_a).map(|(e, a)| (e.b.as_str(), e.z.as_str(), a.as_str())))
}

/// A batch of equal-length sequences: tokens `[B, T]` and labels `[B, T]` (−100 = not scored),
/// with the z span and the first target position of every example.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub batch_size: usize,
    pub seq_len: usize,
    pub tokens: Vec<u32>,
    pub labels: Vec<i32>,
    pub z_span: Vec<(usize, usize)>,
    pub target_start: Vec<usize>,
}

impl Batch {
    /// Stack encoded examples (all of one length).
    pub fn from_encoded<'a>(items: impl IntoIterator<Item = &'a Encoded>) -> Batch {
        let mut b =
            Batch { batch_size: 0, seq_len: 0, tokens: vec![], labels: vec![], z_span: vec![], target_start: vec![] };
        for e in items {
            if b.batch_size == 0 {
                b.seq_len = e.tokens.len();
            }
            assert_eq!(e.tokens.len(), b.seq_len, "batch sequences must have equal length");
            b.tokens.extend_from_slice(&e.tokens);
            b.labels.extend_from_slice(&e.labels);
            b.z_span.push((e.z_start, e.z_end));
            b.target_start.push(e.target_start);
            b.batch_size += 1;
        }
        b
    }

    /// The examples of `train` at `indices`, in that order.
    pub fn gather(train: &TrainSet, indices: &[usize]) -> Batch {
        Batch::from_encoded(indices.iter().map(|&i| &train.encoded[i]))
    }

    /// A batch from raw tokens and labels (e.g. read from a file). The first scored position of
    /// each row is its target start; z spans are unknown (empty).
    pub fn from_raw(batch_size: usize, seq_len: usize, tokens: Vec<u32>, labels: Vec<i32>) -> Batch {
        assert_eq!(tokens.len(), batch_size * seq_len);
        assert_eq!(labels.len(), batch_size * seq_len);
        let target_start = (0..batch_size)
            .map(|b| {
                let row = &labels[b * seq_len..(b + 1) * seq_len];
                row.iter().position(|&l| l != tokenizer::IGNORE).unwrap_or(seq_len)
            })
            .collect();
        Batch { batch_size, seq_len, tokens, labels, z_span: vec![(0, 0); batch_size], target_start }
    }

    /// Number of scored next-token predictions (labels ≠ −100 at positions ≥ 1).
    pub fn n_scored(&self) -> usize {
        (0..self.batch_size)
            .map(|b| {
                let row = &self.labels[b * self.seq_len..(b + 1) * self.seq_len];
                row[1..].iter().filter(|&&l| l != tokenizer::IGNORE).count()
            })
            .sum()
    }
}
