//! The author's logged quantities (spec §4, §7.2, §7.3), computed from a forward pass.

use crate::model::{Model, Workspace};
use crate::numerics::{Scalar, math};
use crate::rng::{Purpose, PyRandom, Stream};
use crate::task::tokenizer::{self, EOS, IGNORE};
use crate::task::{Batch, Mapping, TaskKind};

/// Statistics of one batch after [`Model::forward`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchStats {
    /// Mean CE over all scored positions (the trained loss).
    pub loss: f64,
    /// Argmax accuracy over scored positions whose label is not EOS.
    pub accuracy: f64,
    /// Mean over examples of the full-vocabulary CE of the first target token.
    pub first_target_loss: f64,
    /// The squared gradient norm of the step (before clipping); 0 for a forward alone.
    pub grad_norm_sq: f64,
}

/// Read the statistics of the last forward on `batch` from the workspace.
pub fn batch_stats<S: Scalar>(model: &Model<S>, ws: &Workspace<S>, batch: &Batch, loss: S) -> BatchStats {
    let v = model.cfg.d_vocab;
    let (mut hit, mut total) = (0usize, 0usize);
    for (n, &y) in ws.targets[..ws.n_out()].iter().enumerate() {
        if y == IGNORE || y as u32 == EOS {
            continue;
        }
        let row = &ws.logits[n * v..(n + 1) * v];
        // torch.argmax: the first index of the maximum.
        let mut best = 0;
        for j in 1..v {
            if row[j].value() > row[best].value() {
                best = j;
            }
        }
        hit += (best == y as usize) as usize;
        total += 1;
    }
    BatchStats {
        loss: loss.value(),
        accuracy: if total > 0 { hit as f64 / total as f64 } else { 0.0 },
        first_target_loss: first_target_loss(ws, batch),
        grad_norm_sq: 0.0,
    }
}

/// Mean over examples of the loss at position `target_start − 1`.
pub fn first_target_loss<S: Scalar>(ws: &Workspace<S>, batch: &Batch) -> f64 {
    let mut sum = 0.0;
    for (b, &ts) in batch.target_start.iter().enumerate() {
        let row = ws.out_row(b, ts - 1).expect("the first target position is scored");
        sum += ws.losses[row].value();
    }
    sum / batch.batch_size as f64
}

/// `shuffle_z_in_batch`: a permutation of the batch from `Stream(seed, ZShuffle, step)` with
/// fixed points removed in order (`perm[i] == i` ⇒ swap with `perm[(i+1) % n]`); example `i`
/// receives the z tokens of example `perm[i]`, B and A unchanged.
pub fn shuffle_z(batch: &Batch, seed: u64, step: u64) -> Batch {
    let n = batch.batch_size;
    let mut perm = Stream::new(seed, Purpose::ZShuffle, step).permutation(n);
    for i in 0..n {
        if perm[i] == i {
            perm.swap(i, (i + 1) % n);
        }
    }
    let t = batch.seq_len;
    let mut out = batch.clone();
    for (i, &src) in perm.iter().enumerate() {
        let (z0, z1) = batch.z_span[i];
        let (s0, _) = batch.z_span[src];
        out.tokens[i * t + z0..i * t + z1].copy_from_slice(&batch.tokens[src * t + s0..src * t + s0 + (z1 - z0)]);
    }
    out
}

/// Candidate-normalised evaluation (spec §7.2).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CandidateStats {
    pub loss: f64,
    pub accuracy: f64,
    pub top3: f64,
}

/// `run_candidate_eval(n_examples, seed)`: `Random(seed).sample(bases, n)` over the bases in
/// generation order, then per base `c = randrange(K)`; each of the K candidate sequences is
/// scored by its summed target log-probability (accumulated in S, positions ascending), the K
/// scores are normalised with a f64 logsumexp, and the loss is `−ℓ[c]`.
pub fn candidate_eval<S: Scalar>(
    model: &Model<S>,
    ws: &mut Workspace<S>,
    mapping: &Mapping,
    n_groups: usize,
    seed: i64,
) -> CandidateStats {
    let task = mapping.config.task;
    let mut rng = PyRandom::new(seed);
    let idx: Vec<usize> = (0..mapping.groups.len()).collect();
    let n = n_groups.min(idx.len());
    let sampled = rng.sample(&idx, n);
    let mut seqs = Vec::new();
    let mut correct = Vec::with_capacity(n);
    for &g in &sampled {
        let group = &mapping.groups[g];
        let c = rng.randrange(group.pairs.len() as u64) as usize;
        correct.push(c);
        let z = &group.pairs[c].0;
        for (_, a) in &group.pairs {
            seqs.push(tokenizer::encode(task, &group.b, z, a));
        }
    }
    let scores = sequence_log_probs(model, ws, &seqs);
    let k = mapping.config.k;
    let (mut loss, mut acc, mut top3) = (0.0, 0.0, 0.0);
    for (i, &c) in correct.iter().enumerate() {
        let s = &scores[i * k..(i + 1) * k];
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + math::log(s.iter().map(|x| math::exp(x - m)).sum::<f64>());
        let norm: Vec<f64> = s.iter().map(|x| x - lse).collect();
        loss += -norm[c];
        let best = (0..k).fold(0, |b, j| if norm[j] > norm[b] { j } else { b });
        acc += (best == c) as u8 as f64;
        let better = norm.iter().filter(|&&x| x > norm[c]).count();
        top3 += (better < 3) as u8 as f64;
    }
    let nf = n as f64;
    CandidateStats { loss: loss / nf, accuracy: acc / nf, top3: top3 / nf }
}

/// Σ over scored positions of `log p(token)` for each sequence, accumulated in S.
pub fn sequence_log_probs<S: Scalar>(model: &Model<S>, ws: &mut Workspace<S>, seqs: &[tokenizer::Encoded]) -> Vec<f64> {
    let mut out = Vec::with_capacity(seqs.len());
    for chunk in seqs.chunks(ws.max_batch) {
        let batch = Batch::from_encoded(chunk.iter());
        model.forward_scored(ws, &batch);
        let no = ws.out_pos.len();
        for b in 0..batch.batch_size {
            let mut total = S::zero();
            for r in b * no..(b + 1) * no {
                if ws.targets[r] != IGNORE {
                    total += -ws.losses[r];
                }
            }
            out.push(total.value());
        }
    }
    out
}

/// The z-shuffle diagnostics on one batch with fixed parameters (spec §7.3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ZShuffleStats {
    /// First-target CE with z shuffled (the author's `loss_z_shuffled`).
    pub first_target_shuffled: f64,
    /// First-target CE of the same batch unshuffled, same parameters.
    pub first_target_clean: f64,
    /// All-target CE (A + EOS) shuffled / clean (the head-ablation probe's variant).
    pub all_target_shuffled: f64,
    pub all_target_clean: f64,
}

pub fn z_shuffle_stats<S: Scalar>(
    model: &Model<S>,
    ws: &mut Workspace<S>,
    batch: &Batch,
    seed: u64,
    step: u64,
) -> ZShuffleStats {
    let clean_loss = model.forward_scored(ws, batch);
    let first_target_clean = first_target_loss(ws, batch);
    let shuffled = shuffle_z(batch, seed, step);
    let shuf_loss = model.forward_scored(ws, &shuffled);
    ZShuffleStats {
        first_target_shuffled: first_target_loss(ws, &shuffled),
        first_target_clean,
        all_target_shuffled: shuf_loss.value(),
        all_target_clean: clean_loss.value(),
    }
}

/// Whether the task has a selector to shuffle.
pub fn has_z(task: TaskKind) -> bool {
    task.has_z()
}
