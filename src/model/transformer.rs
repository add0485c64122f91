//! The HookedTransformer: parameters plus `forward` / `backward` over a [`Workspace`].
//!
//! Forward (TL semantics, spec §5.2), per block `l` with `x = resid[l]`:
//! `ln1 → qkv = ln1·[W_Q|W_K|W_V] + [b_Q|b_K|b_V] → attention → attn_out = z·W_O + b_O →
//! resid_mid = x + attn_out → ln2 → mlp_pre = ln2·W_in + b_in → act → mlp_out = post·W_out + b_out
//! → resid[l+1] = resid_mid + mlp_out`; then `ln_final` and `logits = ln_final·W_U + b_U`.
//!
//! Backward mirrors it in reverse with accumulate semantics on the gradient buffer (zero it
//! with [`Model::zero_grad`] once per step).

use super::config::ModelConfig;
use super::loss::{scored_positions, shifted_targets};
use super::params::Layout;
use super::workspace::Workspace;
use crate::error::{Error, Result};
use crate::numerics::Scalar;
use crate::rng::{Purpose, Stream};
use crate::task::Batch;

#[derive(Clone, Debug)]
pub struct Model<S: Scalar> {
    pub cfg: ModelConfig,
    pub layout: Layout,
    /// All parameters, flat, in TL registration order.
    pub params: Vec<S>,
}

impl<S: Scalar> Model<S> {
    /// All-zero parameters (LN weights too); use [`Model::init`] for a trained-from-scratch model.
    pub fn zeros(cfg: &ModelConfig) -> Self {
        let layout = Layout::new(cfg);
        let params = vec![S::zero(); layout.total];
        Model { cfg: cfg.clone(), layout, params }
    }

    /// TL's gpt2 init with windtunnel's RNG: every tensor whose name contains `W_` gets
    /// N(0, σ²) draws from `Stream(seed, Init, 0)` in registration order (drawn in f64, rounded
    /// once to S); biases 0; LN weights 1.
    pub fn init(cfg: &ModelConfig, seed: u64) -> Self {
        let mut m = Self::zeros(cfg);
        let std = cfg.init_std();
        let mut rng = Stream::new(seed, Purpose::Init, 0);
        for i in 0..m.layout.entries.len() {
            let name = m.layout.entries[i].name.clone();
            let view = m.layout.view_mut(&mut m.params, i);
            if name.contains("W_") {
                for p in view.iter_mut() {
                    *p = S::from_f64(rng.normal() * std);
                }
            } else if name.ends_with(".w") {
                view.fill(S::one());
            }
        }
        m
    }

    /// Same parameters in another scalar type (f32 → f64 widening is exact).
    pub fn cast<T: Scalar>(&self) -> Model<T> {
        Model {
            cfg: self.cfg.clone(),
            layout: self.layout.clone(),
            params: self.params.iter().map(|p| T::from_f64(p.value())).collect(),
        }
    }

    pub fn new_grads(&self) -> Vec<S> {
        vec![S::zero(); self.layout.total]
    }

    pub fn zero_grad(grads: &mut [S]) {
        grads.fill(S::zero());
    }

    pub fn workspace(&self, max_batch: usize, t: usize) -> Workspace<S> {
        Workspace::new(&self.cfg, max_batch, t)
    }

    pub(crate) fn p(&self, i: usize) -> &[S] {
        self.layout.view(&self.params, i)
    }

    /// Check that a batch fits this model and workspace.
    pub fn check_batch(&self, ws: &Workspace<S>, batch: &Batch) -> Result<()> {
        if batch.seq_len != ws.t || batch.batch_size > ws.max_batch || batch.batch_size == 0 {
            return Err(Error::other(format!(
                "batch of {}×{} does not fit a workspace of at most {}×{}",
                batch.batch_size, batch.seq_len, ws.max_batch, ws.t
            )));
        }
        if batch.seq_len > self.cfg.n_ctx || batch.seq_len < 2 {
            return Err(Error::config(
                "tokens",
                format!("sequence length {} (allowed 2..={}, the model's n_ctx)", batch.seq_len, self.cfg.n_ctx),
            ));
        }
        if let Some(&bad) = batch.tokens.iter().find(|&&t| t as usize >= self.cfg.d_vocab) {
            return Err(Error::config("tokens", format!("token id {bad} (allowed 0..{}, d_vocab)", self.cfg.d_vocab)));
        }
        if let Some(&bad) = batch.labels.iter().find(|&&l| l != -100 && (l < 0 || l as usize >= self.cfg.d_vocab)) {
            return Err(Error::config(
                "labels",
                format!("{bad} (allowed −100 to skip a position, or a token id 0..{})", self.cfg.d_vocab),
            ));
        }
        Ok(())
    }

    /// Forward pass at every position: fills the workspace (logits everywhere, per-position
    /// losses, the TL hook activations) and returns the mean loss over scored positions. Panics
    /// if the batch does not fit (use [`Model::check_batch`] on untrusted input).
    pub fn forward(&self, ws: &mut Workspace<S>, batch: &Batch) -> S {
        let t = batch.seq_len;
        self.run_forward(ws, batch, t, (0..t).collect())
    }

    /// Forward pass over only what the loss reads: positions up to the last one whose next token
    /// is scored, and in the last block (and the head) only the scored positions. The loss, the
    /// scored rows and every gradient of the following [`Model::backward`] are bit-identical to
    /// the full pass (tests/scored_positions.rs). Output rows are `b·|out_pos| + j` for position
    /// `ws.out_pos[j]` (see [`Workspace::out_row`]).
    pub fn forward_scored(&self, ws: &mut Workspace<S>, batch: &Batch) -> S {
        let t = batch.seq_len;
        let full = shifted_targets(&batch.labels, t, t);
        let pos = scored_positions(&full, batch.batch_size, t);
        match pos.last() {
            Some(&last) => self.run_forward(ws, batch, last + 1, pos),
            None => self.run_forward(ws, batch, t, (0..t).collect()),
        }
    }

    /// Forward (scored positions only) and backward in one call: zeroes `grads`, returns the loss.
    pub fn loss_and_grad(&self, ws: &mut Workspace<S>, batch: &Batch, grads: &mut [S]) -> S {
        Self::zero_grad(grads);
        let loss = self.forward_scored(ws, batch);
        self.backward(ws, batch, grads);
        loss
    }
}
