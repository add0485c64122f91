//! Activation and scratch buffers, allocated once for a maximum batch size and reused every step
//! (a shorter batch uses a prefix of each buffer).

use super::config::ModelConfig;
use super::layer_norm::LnCache;
use crate::numerics::Scalar;

/// Activations of one block that backward (or the TL hook cache) needs.
#[derive(Clone, Debug)]
pub struct LayerActs<S> {
    pub ln1: LnCache<S>,
    /// (N, C)
    pub ln1_out: Vec<S>,
    /// (N, 3·H·dh): Q heads, K heads, V heads.
    pub qkv: Vec<S>,
    /// (B, H, T, T), −inf above the diagonal.
    pub scores: Vec<S>,
    /// (B, H, T, T)
    pub pattern: Vec<S>,
    /// (N, H·dh) = TL hook_z.
    pub z: Vec<S>,
    /// (N, C) attention output (TL hook_attn_out).
    pub attn_out: Vec<S>,
    /// (N, C) residual after attention (TL hook_resid_mid).
    pub resid_mid: Vec<S>,
    pub ln2: LnCache<S>,
    /// (N, C)
    pub ln2_out: Vec<S>,
    /// (N, F) before / after the activation (TL mlp.hook_pre / hook_post).
    pub mlp_pre: Vec<S>,
    pub mlp_post: Vec<S>,
    /// (N, F) `erf(pre/√2)` from the GELU forward, reused by its backward.
    pub mlp_erf: Vec<S>,
    /// (N, C) (TL hook_mlp_out).
    pub mlp_out: Vec<S>,
}

/// Replace one head's `hook_z` (its attention output before `W_O`) at every position: with zeros,
/// or with a fixed `d_head` vector (mean ablation). Forward only.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadPatch<S> {
    pub layer: usize,
    pub head: usize,
    /// `None` = zero ablation.
    pub value: Option<Vec<S>>,
}

#[derive(Clone, Debug)]
pub struct Workspace<S> {
    pub max_batch: usize,
    /// Sequence length of the batches (allocated positions per example).
    pub t: usize,
    /// Current batch size.
    pub batch: usize,
    /// Positions per example computed by the last forward: `t` for [`Model::forward`], fewer for
    /// [`Model::forward_scored`]. Activation rows are `b·t_run + pos`.
    ///
    /// [`Model::forward`]: super::Model::forward
    /// [`Model::forward_scored`]: super::Model::forward_scored
    pub t_run: usize,
    /// Positions (ascending) whose outputs the last block and the head computed: all of
    /// `0..t_run` after [`Model::forward`], the scored ones after [`Model::forward_scored`].
    /// Rows of `logits`, `losses`, `targets` and `lnf*` are `b·out_pos.len() + j`.
    ///
    /// [`Model::forward`]: super::Model::forward
    /// [`Model::forward_scored`]: super::Model::forward_scored
    pub out_pos: Vec<usize>,
    /// `resid[l]` is the input of block `l` (TL blocks.l.hook_resid_pre); `resid[L]` is the
    /// final residual stream. Each (N, C).
    pub resid: Vec<Vec<S>>,
    pub layers: Vec<LayerActs<S>>,
    pub lnf: LnCache<S>,
    /// (N, C)
    pub lnf_out: Vec<S>,
    /// (N, V)
    pub logits: Vec<S>,
    /// (N) per-position loss, 0 where not scored.
    pub losses: Vec<S>,
    /// (N) shifted next-token targets, −100 where not scored.
    pub targets: Vec<i32>,
    pub n_scored: usize,
    /// Head ablations applied by the forward pass (probes); must be empty for backward.
    pub head_patches: Vec<HeadPatch<S>>,
    // Scratch for backward and packed weights.
    pub(crate) w_qkv: Vec<S>,
    pub(crate) b_qkv: Vec<S>,
    pub(crate) w_t: Vec<S>,
    pub(crate) d_resid: Vec<S>,
    pub(crate) d_resid2: Vec<S>,
    pub(crate) d_c: Vec<S>,
    pub(crate) d_f: Vec<S>,
    pub(crate) d_f2: Vec<S>,
    pub(crate) d_qkv: Vec<S>,
    pub(crate) d_z: Vec<S>,
    pub(crate) d_logits: Vec<S>,
    pub(crate) dw_qkv: Vec<S>,
    pub(crate) db_qkv: Vec<S>,
}

impl<S: Scalar> Workspace<S> {
    pub fn new(cfg: &ModelConfig, max_batch: usize, t: usize) -> Self {
        let n = max_batch * t;
        let (c, f, v, hd, h) = (cfg.d_model, cfg.d_mlp, cfg.d_vocab, cfg.d_attn(), cfg.n_heads);
        let z = |len: usize| vec![S::zero(); len];
        let layer = || LayerActs {
            ln1: LnCache::new(n, c),
            ln1_out: z(n * c),
            qkv: z(n * 3 * hd),
            scores: z(max_batch * h * t * t),
            pattern: z(max_batch * h * t * t),
            z: z(n * hd),
            attn_out: z(n * c),
            resid_mid: z(n * c),
            ln2: LnCache::new(n, c),
            ln2_out: z(n * c),
            mlp_pre: z(n * f),
            mlp_post: z(n * f),
            mlp_erf: z(n * f),
            mlp_out: z(n * c),
        };
        let wt_len = (c * f).max(c * v).max(c * 3 * hd).max(hd * c);
        Workspace {
            max_batch,
            t,
            batch: 0,
            t_run: t,
            out_pos: (0..t).collect(),
            resid: (0..=cfg.n_layers).map(|_| z(n * c)).collect(),
            layers: (0..cfg.n_layers).map(|_| layer()).collect(),
            lnf: LnCache::new(n, c),
            lnf_out: z(n * c),
            logits: z(n * v),
            losses: z(n),
            targets: vec![0; n],
            n_scored: 0,
            head_patches: vec![],
            w_qkv: z(c * 3 * hd),
            b_qkv: z(3 * hd),
            w_t: z(wt_len),
            d_resid: z(n * c),
            d_resid2: z(n * c),
            d_c: z(n * c),
            d_f: z(n * f),
            d_f2: z(n * f),
            d_qkv: z(n * 3 * hd),
            d_z: z(n * hd),
            d_logits: z(n * v),
            dw_qkv: z(c * 3 * hd),
            db_qkv: z(3 * hd),
        }
    }

    /// Rows (B·t_run) of the current batch in the blocks.
    pub fn rows(&self) -> usize {
        self.batch * self.t_run
    }

    /// Output rows (B·|out_pos|): rows of logits, losses and targets.
    pub fn n_out(&self) -> usize {
        self.batch * self.out_pos.len()
    }

    /// The output row of example `b` at position `pos`, if that position was computed.
    pub fn out_row(&self, b: usize, pos: usize) -> Option<usize> {
        self.out_pos.binary_search(&pos).ok().map(|j| b * self.out_pos.len() + j)
    }

    /// Whether the last forward computed every position (required by the hook cache).
    pub fn is_full(&self) -> bool {
        self.t_run == self.t && self.out_pos.len() == self.t
    }
}
