//! The HookedTransformer: parameters plus `forward` / `backward` over a [`Workspace`].
//!
//! Forward (TL semantics, spec §5.2), per block `l` with `x = resid[l]`:
//! `ln1 → qkv = ln1·[W_Q|W_K|W_V] + [b_Q|b_K|b_V] → attention → attn_out = z·W_O + b_O →
//! resid_mid = x + attn_out → ln2 → mlp_pre = ln2·W_in + b_in → act → mlp_out = post·W_out + b_out
//! → resid[l+1] = resid_mid + mlp_out`; then `ln_final` and `logits = ln_final·W_U + b_U`.
//!
//! Backward mirrors it in reverse with accumulate semantics on the gradient buffer (zero it
//! with [`Model::zero_grad`] once per step).

use super::activation::{act_backward, act_forward};
use super::attention::{AttnShape, attention_backward, attention_forward};
use super::config::ModelConfig;
use super::embed::{embed_backward, embed_forward};
use super::layer_norm::{layernorm_backward, layernorm_forward};
use super::loss::{crossentropy_backward, crossentropy_forward, shifted_targets};
use super::params::Layout;
use super::workspace::Workspace;
use crate::error::{Error, Result};
use crate::numerics::Scalar;
use crate::numerics::matmul::{Accum, matmul_nn, matmul_tn, sum_rows_into, transpose};
use crate::rng::{Purpose, Stream};
use crate::task::Batch;
use rayon::prelude::*;

/// Elements per task for elementwise residual additions (fixed).
const ADD_CHUNK: usize = 8192;

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

    fn p(&self, i: usize) -> &[S] {
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
            return Err(Error::other(format!(
                "sequence length {} outside 2..={} (n_ctx)",
                batch.seq_len, self.cfg.n_ctx
            )));
        }
        if let Some(&bad) = batch.tokens.iter().find(|&&t| t as usize >= self.cfg.d_vocab) {
            return Err(Error::other(format!("token id {bad} ≥ d_vocab {}", self.cfg.d_vocab)));
        }
        if let Some(&bad) = batch.labels.iter().find(|&&l| l != -100 && (l < 0 || l as usize >= self.cfg.d_vocab)) {
            return Err(Error::other(format!("label {bad} is neither −100 nor a token id < {}", self.cfg.d_vocab)));
        }
        Ok(())
    }

    /// Forward pass at every position: fills the workspace (logits everywhere, per-position
    /// losses, the TL hook activations) and returns the mean loss over scored positions. Panics
    /// if the batch does not fit (use [`Model::check_batch`] on untrusted input).
    pub fn forward(&self, ws: &mut Workspace<S>, batch: &Batch) -> S {
        self.forward_positions(ws, batch, batch.seq_len)
    }

    /// Forward pass over only the positions the loss needs: `0..=p` where `p` is the last
    /// position whose next token is scored. Later positions feed nothing (no label, and causal
    /// attention never looks ahead), so the loss, every scored row and every gradient of the
    /// following [`Model::backward`] are bit-identical to the full pass (tests/scored_positions.rs).
    pub fn forward_scored(&self, ws: &mut Workspace<S>, batch: &Batch) -> S {
        let t = batch.seq_len;
        let last = (0..batch.batch_size)
            .filter_map(|b| {
                batch.labels[b * t + 1..(b + 1) * t].iter().rposition(|&l| l != crate::task::tokenizer::IGNORE)
            })
            .max()
            .map_or(1, |p| p + 1);
        self.forward_positions(ws, batch, last)
    }

    fn forward_positions(&self, ws: &mut Workspace<S>, batch: &Batch, t_run: usize) -> S {
        assert!(batch.batch_size <= ws.max_batch && batch.seq_len == ws.t, "batch does not fit workspace");
        assert!((1..=batch.seq_len).contains(&t_run));
        let cfg = &self.cfg;
        let (t, c, f, v, hd) = (t_run, cfg.d_model, cfg.d_mlp, cfg.d_vocab, cfg.d_attn());
        ws.batch = batch.batch_size;
        ws.t_run = t_run;
        let n = ws.rows();
        let sh = AttnShape { b: batch.batch_size, t, h: cfg.n_heads, dh: cfg.d_head };
        let lay = &self.layout;

        embed_forward(
            &mut ws.resid[0][..n * c],
            &batch.tokens,
            batch.seq_len,
            self.p(lay.w_e),
            self.p(lay.w_pos),
            t,
            c,
        );
        for l in 0..cfg.n_layers {
            let bp = lay.blocks[l];
            pack_qkv(&mut ws.w_qkv, &mut ws.b_qkv, self, l);
            let (before, after) = ws.resid.split_at_mut(l + 1);
            let x = &before[l][..n * c];
            let out = &mut after[0][..n * c];
            let a = &mut ws.layers[l];
            layernorm_forward(&mut a.ln1_out[..n * c], &mut a.ln1, x, self.p(bp.ln1_w), self.p(bp.ln1_b), c, cfg.eps);
            matmul_nn(
                &mut a.qkv[..n * 3 * hd],
                &a.ln1_out[..n * c],
                &ws.w_qkv,
                Some(&ws.b_qkv),
                n,
                c,
                3 * hd,
                Accum::Set,
            );
            let att = batch.batch_size * cfg.n_heads * t * t;
            attention_forward(
                &mut a.z[..n * hd],
                &mut a.scores[..att],
                &mut a.pattern[..att],
                &a.qkv[..n * 3 * hd],
                sh,
            );
            matmul_nn(
                &mut a.attn_out[..n * c],
                &a.z[..n * hd],
                self.p(bp.w_o),
                Some(self.p(bp.b_o)),
                n,
                hd,
                c,
                Accum::Set,
            );
            add(&mut a.resid_mid[..n * c], x, &a.attn_out[..n * c]);
            layernorm_forward(
                &mut a.ln2_out[..n * c],
                &mut a.ln2,
                &a.resid_mid[..n * c],
                self.p(bp.ln2_w),
                self.p(bp.ln2_b),
                c,
                cfg.eps,
            );
            matmul_nn(
                &mut a.mlp_pre[..n * f],
                &a.ln2_out[..n * c],
                self.p(bp.w_in),
                Some(self.p(bp.b_in)),
                n,
                c,
                f,
                Accum::Set,
            );
            act_forward(cfg.act_fn, &mut a.mlp_post[..n * f], &a.mlp_pre[..n * f]);
            matmul_nn(
                &mut a.mlp_out[..n * c],
                &a.mlp_post[..n * f],
                self.p(bp.w_out),
                Some(self.p(bp.b_out)),
                n,
                f,
                c,
                Accum::Set,
            );
            add(out, &a.resid_mid[..n * c], &a.mlp_out[..n * c]);
        }
        let last = &ws.resid[cfg.n_layers][..n * c];
        layernorm_forward(
            &mut ws.lnf_out[..n * c],
            &mut ws.lnf,
            last,
            self.p(lay.lnf_w),
            self.p(lay.lnf_b),
            c,
            cfg.eps,
        );
        matmul_nn(
            &mut ws.logits[..n * v],
            &ws.lnf_out[..n * c],
            self.p(lay.w_u),
            Some(self.p(lay.b_u)),
            n,
            c,
            v,
            Accum::Set,
        );

        ws.targets[..n].copy_from_slice(&shifted_targets(&batch.labels, batch.seq_len, t));
        let (loss, count) = crossentropy_forward(&mut ws.losses[..n], &ws.logits[..n * v], &ws.targets[..n], v);
        ws.n_scored = count;
        loss
    }

    /// Backward pass of the loss of the last [`Model::forward`] on the same batch and
    /// workspace; gradients are *added* to `grads` (same layout as the parameters).
    pub fn backward(&self, ws: &mut Workspace<S>, batch: &Batch, grads: &mut [S]) {
        assert_eq!(grads.len(), self.layout.total);
        let cfg = &self.cfg;
        let (t, c, f, v, hd) = (ws.t_run, cfg.d_model, cfg.d_mlp, cfg.d_vocab, cfg.d_attn());
        let n = ws.rows();
        let sh = AttnShape { b: batch.batch_size, t, h: cfg.n_heads, dh: cfg.d_head };
        let lay = &self.layout;

        // Loss and unembed.
        crossentropy_backward(&mut ws.d_logits[..n * v], &ws.logits[..n * v], &ws.targets[..n], v, ws.n_scored);
        let (dw_u, db_u) = lay.view2_mut(grads, lay.w_u, lay.b_u);
        matmul_tn(dw_u, &ws.lnf_out[..n * c], &ws.d_logits[..n * v], c, n, v, Accum::Add);
        sum_rows_into(db_u, &ws.d_logits[..n * v], n, v);
        transpose(&mut ws.w_t[..c * v], self.p(lay.w_u), c, v);
        matmul_nn(&mut ws.d_c[..n * c], &ws.d_logits[..n * v], &ws.w_t[..c * v], None, n, v, c, Accum::Set);
        ws.d_resid[..n * c].fill(S::zero());
        let (dw, db) = lay.view2_mut(grads, lay.lnf_w, lay.lnf_b);
        layernorm_backward(&mut ws.d_resid[..n * c], dw, db, &ws.d_c[..n * c], &ws.lnf, self.p(lay.lnf_w), c);

        for l in (0..cfg.n_layers).rev() {
            let bp = lay.blocks[l];
            let a = &ws.layers[l];
            // MLP: resid[l+1] = resid_mid + mlp_out.
            let (dw, db) = lay.view2_mut(grads, bp.w_out, bp.b_out);
            matmul_tn(dw, &a.mlp_post[..n * f], &ws.d_resid[..n * c], f, n, c, Accum::Add);
            sum_rows_into(db, &ws.d_resid[..n * c], n, c);
            transpose(&mut ws.w_t[..f * c], self.p(bp.w_out), f, c);
            matmul_nn(&mut ws.d_f[..n * f], &ws.d_resid[..n * c], &ws.w_t[..f * c], None, n, c, f, Accum::Set);
            act_backward(cfg.act_fn, &mut ws.d_f2[..n * f], &ws.d_f[..n * f], &a.mlp_pre[..n * f]);
            let (dw, db) = lay.view2_mut(grads, bp.w_in, bp.b_in);
            matmul_tn(dw, &a.ln2_out[..n * c], &ws.d_f2[..n * f], c, n, f, Accum::Add);
            sum_rows_into(db, &ws.d_f2[..n * f], n, f);
            transpose(&mut ws.w_t[..c * f], self.p(bp.w_in), c, f);
            matmul_nn(&mut ws.d_c[..n * c], &ws.d_f2[..n * f], &ws.w_t[..c * f], None, n, f, c, Accum::Set);
            let (dw, db) = lay.view2_mut(grads, bp.ln2_w, bp.ln2_b);
            layernorm_backward(&mut ws.d_resid[..n * c], dw, db, &ws.d_c[..n * c], &a.ln2, self.p(bp.ln2_w), c);

            // Attention: resid_mid = resid[l] + attn_out.
            let (dw, db) = lay.view2_mut(grads, bp.w_o, bp.b_o);
            matmul_tn(dw, &a.z[..n * hd], &ws.d_resid[..n * c], hd, n, c, Accum::Add);
            sum_rows_into(db, &ws.d_resid[..n * c], n, c);
            transpose(&mut ws.w_t[..hd * c], self.p(bp.w_o), hd, c);
            matmul_nn(&mut ws.d_z[..n * hd], &ws.d_resid[..n * c], &ws.w_t[..hd * c], None, n, c, hd, Accum::Set);
            attention_backward(&mut ws.d_qkv[..n * 3 * hd], &ws.d_z[..n * hd], &a.pattern, &a.qkv[..n * 3 * hd], sh);
            matmul_tn(&mut ws.dw_qkv, &a.ln1_out[..n * c], &ws.d_qkv[..n * 3 * hd], c, n, 3 * hd, Accum::Set);
            ws.db_qkv.fill(S::zero());
            sum_rows_into(&mut ws.db_qkv, &ws.d_qkv[..n * 3 * hd], n, 3 * hd);
            unpack_qkv_grads(grads, &ws.dw_qkv, &ws.db_qkv, self, l);
            pack_qkv(&mut ws.w_qkv, &mut ws.b_qkv, self, l);
            transpose(&mut ws.w_t[..c * 3 * hd], &ws.w_qkv, c, 3 * hd);
            matmul_nn(
                &mut ws.d_c[..n * c],
                &ws.d_qkv[..n * 3 * hd],
                &ws.w_t[..c * 3 * hd],
                None,
                n,
                3 * hd,
                c,
                Accum::Set,
            );
            let (dw, db) = lay.view2_mut(grads, bp.ln1_w, bp.ln1_b);
            layernorm_backward(&mut ws.d_resid[..n * c], dw, db, &ws.d_c[..n * c], &a.ln1, self.p(bp.ln1_w), c);
        }
        let (dw_e, dw_pos) = lay.view2_mut(grads, lay.w_e, lay.w_pos);
        embed_backward(dw_e, dw_pos, &ws.d_resid[..n * c], &batch.tokens, batch.seq_len, t, c);
    }

    /// Forward (scored positions only) and backward in one call: zeroes `grads`, returns the loss.
    pub fn loss_and_grad(&self, ws: &mut Workspace<S>, batch: &Batch, grads: &mut [S]) -> S {
        Self::zero_grad(grads);
        let loss = self.forward_scored(ws, batch);
        self.backward(ws, batch, grads);
        loss
    }
}

/// out = x + y elementwise (residual stream).
fn add<S: Scalar>(out: &mut [S], x: &[S], y: &[S]) {
    out.par_chunks_mut(ADD_CHUNK).zip(x.par_chunks(ADD_CHUNK)).zip(y.par_chunks(ADD_CHUNK)).for_each(|((o, x), y)| {
        for i in 0..o.len() {
            o[i] = x[i] + y[i];
        }
    });
}

/// w_qkv (C, 3·H·dh) = [W_Q | W_K | W_V] with `w[c, s·HD + h·dh + d] = W_s[h, c, d]`, and the
/// matching bias (a copy; no arithmetic).
fn pack_qkv<S: Scalar>(w_qkv: &mut [S], b_qkv: &mut [S], m: &Model<S>, l: usize) {
    let (c, h, dh) = (m.cfg.d_model, m.cfg.n_heads, m.cfg.d_head);
    let hd = h * dh;
    let bp = m.layout.blocks[l];
    for (s, (wi, bi)) in [(bp.w_q, bp.b_q), (bp.w_k, bp.b_k), (bp.w_v, bp.b_v)].into_iter().enumerate() {
        let w = m.p(wi);
        for hh in 0..h {
            for ci in 0..c {
                let src = &w[(hh * c + ci) * dh..(hh * c + ci + 1) * dh];
                let dst = ci * 3 * hd + s * hd + hh * dh;
                w_qkv[dst..dst + dh].copy_from_slice(src);
            }
        }
        b_qkv[s * hd..(s + 1) * hd].copy_from_slice(m.p(bi));
    }
}

/// Add packed QKV weight/bias gradients into the per-head TL tensors.
fn unpack_qkv_grads<S: Scalar>(grads: &mut [S], dw_qkv: &[S], db_qkv: &[S], m: &Model<S>, l: usize) {
    let (c, h, dh) = (m.cfg.d_model, m.cfg.n_heads, m.cfg.d_head);
    let hd = h * dh;
    let bp = m.layout.blocks[l];
    for (s, (wi, bi)) in [(bp.w_q, bp.b_q), (bp.w_k, bp.b_k), (bp.w_v, bp.b_v)].into_iter().enumerate() {
        let (gw, gb) = m.layout.view2_mut(grads, wi, bi);
        for hh in 0..h {
            for ci in 0..c {
                let src = &dw_qkv[ci * 3 * hd + s * hd + hh * dh..][..dh];
                let dst = &mut gw[(hh * c + ci) * dh..(hh * c + ci + 1) * dh];
                for d in 0..dh {
                    dst[d] += src[d];
                }
            }
        }
        for (g, &d) in gb.iter_mut().zip(&db_qkv[s * hd..(s + 1) * hd]) {
            *g += d;
        }
    }
}
