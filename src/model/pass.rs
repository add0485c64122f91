//! Forward and backward passes (llm.c style: one call per layer, shapes in comments).
//!
//! Every block computes LayerNorm 1, Q, K and V at all `n = B·t` rows (t = positions run). The
//! blocks before the last compute attention, `W_O`, LayerNorm 2 and the MLP at all positions; the
//! last block computes them only at the *output positions* `ws.out_pos` (all positions for
//! [`Model::forward`], the scored ones for [`Model::forward_scored`]), and so do the final
//! LayerNorm, the unembed and the loss. Rows a position set leaves out contribute exact zeros to
//! every gradient sum in the full pass, so the results are bit-identical.

use super::activation::{act_backward, act_forward};
use super::attention::{AttnShape, attention_backward, attention_forward};
use super::embed::{embed_backward, embed_forward};
use super::layer_norm::{layernorm_backward, layernorm_forward};
use super::linear::{Linear, linear_backward, linear_forward};
use super::loss::{crossentropy_backward, crossentropy_forward, shifted_targets};
use super::qkv::{pack_qkv, unpack_qkv_grads};
use super::residual::{add, gather_rows, scatter_rows};
use super::transformer::Model;
use super::workspace::{HeadPatch, Workspace};
use crate::numerics::Scalar;
use crate::task::Batch;

impl<S: Scalar> Model<S> {
    /// Forward pass over positions `0..t_run`; the last block and the head only at `out_pos`.
    pub(crate) fn run_forward(&self, ws: &mut Workspace<S>, batch: &Batch, t_run: usize, out_pos: Vec<usize>) -> S {
        assert!(batch.batch_size <= ws.max_batch && batch.seq_len == ws.t, "batch does not fit workspace");
        assert!((1..=batch.seq_len).contains(&t_run) && !out_pos.is_empty());
        let (cfg, lay, c) = (&self.cfg, &self.layout, self.cfg.d_model);
        (ws.batch, ws.t_run, ws.out_pos) = (batch.batch_size, t_run, out_pos);
        let n = ws.rows();
        // x = W_E[tokens] + W_pos: (n, C)
        let (w_e, w_pos) = (self.p(lay.w_e), self.p(lay.w_pos));
        embed_forward(&mut ws.resid[0][..n * c], &batch.tokens, batch.seq_len, w_e, w_pos, t_run, c);
        for l in 0..cfg.n_layers {
            self.block_forward(ws, l);
        }
        self.head_forward(ws);
        self.loss_forward(ws, batch)
    }

    /// The query rows of block `l`: every position, or the output positions in the last block.
    fn block_positions(&self, ws: &Workspace<S>, l: usize) -> Vec<usize> {
        if l + 1 == self.cfg.n_layers { ws.out_pos.clone() } else { (0..ws.t_run).collect() }
    }

    fn shape(&self, ws: &Workspace<S>) -> AttnShape {
        AttnShape { b: ws.batch, t: ws.t_run, h: self.cfg.n_heads, dh: self.cfg.d_head }
    }

    /// Block `l`: resid[l] (n, C) → resid[l + 1] (nq, C) at the rows `qs`.
    fn block_forward(&self, ws: &mut Workspace<S>, l: usize) {
        let (cfg, bp) = (&self.cfg, self.layout.blocks[l]);
        let (c, f, hd) = (cfg.d_model, cfg.d_mlp, cfg.d_attn());
        let (qs, sh) = (self.block_positions(ws, l), self.shape(ws));
        let (n, nq, t) = (ws.rows(), sh.b * qs.len(), sh.t);
        pack_qkv(&mut ws.w_qkv, &mut ws.b_qkv, self, l);
        let (before, after) = ws.resid.split_at_mut(l + 1);
        let (x, out) = (&before[l][..n * c], &mut after[0][..nq * c]);
        let a = &mut ws.layers[l];
        // ln1: (n, C); qkv = ln1·[W_Q|W_K|W_V] + b: (n, 3·HD)
        layernorm_forward(&mut a.ln1_out[..n * c], &mut a.ln1, x, self.p(bp.ln1_w), self.p(bp.ln1_b), c, cfg.eps);
        let qkv = Linear { w: &ws.w_qkv, b: &ws.b_qkv, d_in: c, d_out: 3 * hd };
        linear_forward(&mut a.qkv[..n * 3 * hd], &a.ln1_out[..n * c], qkv, n);
        // z: (nq, HD) for the query positions qs; scores, pattern: (B, H, |qs|, t)
        let att = sh.b * sh.h * qs.len() * t;
        let (z, qkv) = (&mut a.z[..nq * hd], &a.qkv[..n * 3 * hd]);
        attention_forward(z, &mut a.scores[..att], &mut a.pattern[..att], qkv, sh, &qs);
        patch_heads(&mut a.z[..nq * hd], ws.head_patches.iter().filter(|p| p.layer == l), hd, sh.dh);
        // attn_out = z·W_O + b_O: (nq, C); resid_mid = x[qs] + attn_out
        linear_forward(&mut a.attn_out[..nq * c], &a.z[..nq * hd], self.linear(bp.w_o, bp.b_o, hd, c), nq);
        let x_qs = if qs.len() == t {
            x
        } else {
            gather_rows(&mut ws.d_c[..nq * c], x, &qs, t, c);
            &ws.d_c[..nq * c]
        };
        add(&mut a.resid_mid[..nq * c], x_qs, &a.attn_out[..nq * c]);
        // MLP: ln2 (nq, C) → W_in (nq, F) → act → W_out (nq, C); out = resid_mid + mlp_out
        let (ln2_w, ln2_b) = (self.p(bp.ln2_w), self.p(bp.ln2_b));
        layernorm_forward(&mut a.ln2_out[..nq * c], &mut a.ln2, &a.resid_mid[..nq * c], ln2_w, ln2_b, c, cfg.eps);
        linear_forward(&mut a.mlp_pre[..nq * f], &a.ln2_out[..nq * c], self.linear(bp.w_in, bp.b_in, c, f), nq);
        act_forward(cfg.act_fn, &mut a.mlp_post[..nq * f], &mut a.mlp_erf[..nq * f], &a.mlp_pre[..nq * f]);
        linear_forward(&mut a.mlp_out[..nq * c], &a.mlp_post[..nq * f], self.linear(bp.w_out, bp.b_out, f, c), nq);
        add(out, &a.resid_mid[..nq * c], &a.mlp_out[..nq * c]);
    }

    /// Final LayerNorm and unembed at the output rows: (no, C) → (no, V)
    fn head_forward(&self, ws: &mut Workspace<S>) {
        let (lay, c, v, no) = (&self.layout, self.cfg.d_model, self.cfg.d_vocab, ws.n_out());
        let last = &ws.resid[self.cfg.n_layers][..no * c];
        let (w, b) = (self.p(lay.lnf_w), self.p(lay.lnf_b));
        layernorm_forward(&mut ws.lnf_out[..no * c], &mut ws.lnf, last, w, b, c, self.cfg.eps);
        linear_forward(&mut ws.logits[..no * v], &ws.lnf_out[..no * c], self.linear(lay.w_u, lay.b_u, c, v), no);
    }

    /// Mean cross-entropy over the scored output rows (targets gathered at `out_pos`).
    fn loss_forward(&self, ws: &mut Workspace<S>, batch: &Batch) -> S {
        let (t, v, no, nout) = (ws.t_run, self.cfg.d_vocab, ws.n_out(), ws.out_pos.len());
        let full = shifted_targets(&batch.labels, batch.seq_len, t);
        for bi in 0..ws.batch {
            for (j, &p) in ws.out_pos.iter().enumerate() {
                ws.targets[bi * nout + j] = full[bi * t + p];
            }
        }
        let (loss, count) = crossentropy_forward(&mut ws.losses[..no], &ws.logits[..no * v], &ws.targets[..no], v);
        ws.n_scored = count;
        loss
    }

    /// Backward pass of the loss of the last forward on the same batch and workspace; gradients
    /// are *added* to `grads` (same layout as the parameters).
    pub fn backward(&self, ws: &mut Workspace<S>, batch: &Batch, grads: &mut [S]) {
        assert_eq!(grads.len(), self.layout.total);
        assert!(ws.head_patches.is_empty(), "backward through head ablations is not supported");
        let (lay, c, n) = (&self.layout, self.cfg.d_model, ws.rows());
        self.head_backward(ws, grads);
        for l in (0..self.cfg.n_layers).rev() {
            self.block_backward(ws, l, grads);
        }
        let (dw_e, dw_pos) = lay.view2_mut(grads, lay.w_e, lay.w_pos);
        embed_backward(dw_e, dw_pos, &ws.d_resid[..n * c], &batch.tokens, batch.seq_len, ws.t_run, c);
    }

    /// Loss and head: dlogits (no, V) → dW_U, db_U, d(lnf_out) (no, C) → d_resid (no, C)
    fn head_backward(&self, ws: &mut Workspace<S>, grads: &mut [S]) {
        let (lay, c, v, no) = (&self.layout, self.cfg.d_model, self.cfg.d_vocab, ws.n_out());
        crossentropy_backward(&mut ws.d_logits[..no * v], &ws.logits[..no * v], &ws.targets[..no], v, ws.n_scored);
        let (dw, db) = lay.view2_mut(grads, lay.w_u, lay.b_u);
        let unembed = self.linear(lay.w_u, lay.b_u, c, v);
        linear_backward(&mut ws.d_c, dw, db, &ws.d_logits, &ws.lnf_out, unembed, no, &mut ws.w_t);
        ws.d_resid[..no * c].fill(S::zero());
        let (dw, db) = lay.view2_mut(grads, lay.lnf_w, lay.lnf_b);
        layernorm_backward(&mut ws.d_resid[..no * c], dw, db, &ws.d_c[..no * c], &ws.lnf, self.p(lay.lnf_w), c);
    }

    /// Block `l` backward: d_resid at the rows qs (nq, C) → d_resid at every row (n, C).
    fn block_backward(&self, ws: &mut Workspace<S>, l: usize, grads: &mut [S]) {
        let (cfg, lay, bp) = (&self.cfg, &self.layout, self.layout.blocks[l]);
        let (c, f, hd) = (cfg.d_model, cfg.d_mlp, cfg.d_attn());
        let (qs, sh) = (self.block_positions(ws, l), self.shape(ws));
        let (n, nq, t) = (ws.rows(), sh.b * qs.len(), sh.t);
        let a = &ws.layers[l];
        // MLP: resid_out = resid_mid + mlp_out, all (nq, ·)
        let (dw, db) = lay.view2_mut(grads, bp.w_out, bp.b_out);
        let w_out = self.linear(bp.w_out, bp.b_out, f, c);
        linear_backward(&mut ws.d_f, dw, db, &ws.d_resid, &a.mlp_post, w_out, nq, &mut ws.w_t);
        let (d_post, pre, erf) = (&ws.d_f[..nq * f], &a.mlp_pre[..nq * f], &a.mlp_erf[..nq * f]);
        act_backward(cfg.act_fn, &mut ws.d_f2[..nq * f], d_post, pre, erf);
        let (dw, db) = lay.view2_mut(grads, bp.w_in, bp.b_in);
        let w_in = self.linear(bp.w_in, bp.b_in, c, f);
        linear_backward(&mut ws.d_c, dw, db, &ws.d_f2, &a.ln2_out, w_in, nq, &mut ws.w_t);
        let (dw, db) = lay.view2_mut(grads, bp.ln2_w, bp.ln2_b);
        layernorm_backward(&mut ws.d_resid[..nq * c], dw, db, &ws.d_c[..nq * c], &a.ln2, self.p(bp.ln2_w), c);

        // Attention: resid_mid = x[qs] + z·W_O + b_O; dz (nq, HD) → dqkv (n, 3·HD)
        let (dw, db) = lay.view2_mut(grads, bp.w_o, bp.b_o);
        let w_o = self.linear(bp.w_o, bp.b_o, hd, c);
        linear_backward(&mut ws.d_z, dw, db, &ws.d_resid, &a.z, w_o, nq, &mut ws.w_t);
        let att = sh.b * sh.h * qs.len() * t;
        let (dz, pattern, qkv) = (&ws.d_z[..nq * hd], &a.pattern[..att], &a.qkv[..n * 3 * hd]);
        attention_backward(&mut ws.d_qkv[..n * 3 * hd], dz, pattern, qkv, sh, &qs);
        // The packed [W_Q|W_K|W_V] gradient starts from zero, then is added into the TL tensors.
        ws.dw_qkv.fill(S::zero());
        ws.db_qkv.fill(S::zero());
        pack_qkv(&mut ws.w_qkv, &mut ws.b_qkv, self, l);
        let qkv = Linear { w: &ws.w_qkv, b: &ws.b_qkv, d_in: c, d_out: 3 * hd };
        linear_backward(&mut ws.d_c, &mut ws.dw_qkv, &mut ws.db_qkv, &ws.d_qkv, &a.ln1_out, qkv, n, &mut ws.w_t);
        unpack_qkv_grads(grads, &ws.dw_qkv, &ws.db_qkv, self, l);
        // The residual gradient of the block input: d(resid_mid) at the rows qs (zero
        // elsewhere), plus LayerNorm 1's backward at every row.
        if qs.len() != t {
            scatter_rows(&mut ws.d_resid2[..n * c], &ws.d_resid[..nq * c], &qs, t, c);
            std::mem::swap(&mut ws.d_resid, &mut ws.d_resid2);
        }
        let (dw, db) = lay.view2_mut(grads, bp.ln1_w, bp.ln1_b);
        layernorm_backward(&mut ws.d_resid[..n * c], dw, db, &ws.d_c[..n * c], &a.ln1, self.p(bp.ln1_w), c);
    }
}

/// Probes: ablate heads by overwriting their slice of hook_z (rows of `hd` = H·dh) at every row.
fn patch_heads<'a, S: Scalar + 'a>(z: &mut [S], patches: impl Iterator<Item = &'a HeadPatch<S>>, hd: usize, dh: usize) {
    for patch in patches {
        for row in z.chunks_exact_mut(hd) {
            let zh = &mut row[patch.head * dh..(patch.head + 1) * dh];
            match &patch.value {
                None => zh.fill(S::zero()),
                Some(v) => zh.copy_from_slice(v),
            }
        }
    }
}

impl<S: Scalar> Model<S> {
    /// The linear layer of weight `w` and bias `b` (parameter indices), `d_in → d_out`.
    fn linear(&self, w: usize, b: usize, d_in: usize, d_out: usize) -> Linear<'_, S> {
        Linear { w: self.p(w), b: self.p(b), d_in, d_out }
    }
}
