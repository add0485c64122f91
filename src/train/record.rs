//! One line of `metrics.jsonl` per eval, and the running window sums behind it.
//!
//! Field order is fixed by the struct. Every field is a deterministic function of the config and
//! the step, except `wall_time_s` and `steps_per_s`.

use super::eval::BatchStats;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Optimizer steps completed.
    pub step: u64,
    pub epoch: u64,
    pub examples_seen: u64,
    pub tokens_seen: u64,
    /// Learning rate of the last update in the window.
    pub lr: f64,
    /// Window means (unweighted over batches, as the author) of pre-update per-batch values.
    pub train_loss: f64,
    pub train_accuracy: f64,
    pub first_target_loss: f64,
    /// Pre-clip Σ‖∇p‖², window mean.
    pub grad_norm_sq: f64,
    pub grad_norm_sq_clipped: f64,
    /// Fraction of the window's steps where clipping reduced the norm (the author's 0.999 test).
    pub clipping_active: f64,
    /// Candidate-normalised loss / accuracy over `candidate_groups` groups (`Random(step)`).
    pub candidate_loss: Option<f64>,
    pub candidate_accuracy: Option<f64>,
    pub candidate_top3: Option<f64>,
    /// First-target CE on the window's last batch after the update, z shuffled.
    pub loss_z_shuffled: Option<f64>,
    /// Paper-compatible Δz = loss_z_shuffled − first_target_loss (window mean).
    pub dz_paper: Option<f64>,
    /// Same-batch variant: first-target CE of that batch unshuffled, and Δz against it.
    pub first_target_loss_eval: Option<f64>,
    pub dz_clean: Option<f64>,
    /// All-target (A + EOS) CE of that batch clean / shuffled, and their difference.
    pub all_target_loss_eval: Option<f64>,
    pub all_target_loss_z_shuffled: Option<f64>,
    pub dz_all_clean: Option<f64>,
    pub wall_time_s: f64,
    pub steps_per_s: f64,
}

/// Running sums over the current eval window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub n: u64,
    pub loss: f64,
    pub accuracy: f64,
    pub first_target_loss: f64,
    pub grad_norm_sq: f64,
    pub grad_norm_sq_clipped: f64,
    pub clipped: u64,
}

impl Window {
    pub fn add(&mut self, s: &BatchStats, gn2: f64, gn2_clipped: f64, clipped: bool) {
        self.n += 1;
        self.loss += s.loss;
        self.accuracy += s.accuracy;
        self.first_target_loss += s.first_target_loss;
        self.grad_norm_sq += gn2;
        self.grad_norm_sq_clipped += gn2_clipped;
        self.clipped += clipped as u64;
    }

    /// Fill the window-mean fields of a record.
    pub fn fill(&self, r: &mut Record) {
        let n = self.n.max(1) as f64;
        r.train_loss = self.loss / n;
        r.train_accuracy = self.accuracy / n;
        r.first_target_loss = self.first_target_loss / n;
        r.grad_norm_sq = self.grad_norm_sq / n;
        r.grad_norm_sq_clipped = self.grad_norm_sq_clipped / n;
        r.clipping_active = self.clipped as f64 / n;
    }
}

/// The deterministic part of a record, for comparing runs (wall-clock fields zeroed).
pub fn without_timing(r: &Record) -> Record {
    Record { wall_time_s: 0.0, steps_per_s: 0.0, ..r.clone() }
}
