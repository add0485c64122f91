//! One flat parameter buffer with a table of `(TL name, shape, offset)` in TransformerLens
//! registration order (`named_parameters()`). Gradients and optimizer moments use the same
//! layout, so every per-parameter loop is a loop over one slice.

use super::config::ModelConfig;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamEntry {
    /// TransformerLens name, e.g. `blocks.0.attn.W_Q`.
    pub name: String,
    /// TransformerLens shape, e.g. `[4, 128, 32]`.
    pub shape: Vec<usize>,
    pub offset: usize,
    pub len: usize,
}

/// Entry indices of one transformer block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockParams {
    pub ln1_w: usize,
    pub ln1_b: usize,
    pub ln2_w: usize,
    pub ln2_b: usize,
    pub w_q: usize,
    pub w_o: usize,
    pub b_q: usize,
    pub b_o: usize,
    pub w_k: usize,
    pub w_v: usize,
    pub b_k: usize,
    pub b_v: usize,
    pub w_in: usize,
    pub b_in: usize,
    pub w_out: usize,
    pub b_out: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub entries: Vec<ParamEntry>,
    pub w_e: usize,
    pub w_pos: usize,
    pub blocks: Vec<BlockParams>,
    pub lnf_w: usize,
    pub lnf_b: usize,
    pub w_u: usize,
    pub b_u: usize,
    pub total: usize,
}

impl ModelConfig {
    /// Total number of parameters (807,720 for the canonical config).
    pub fn n_params(&self) -> usize {
        Layout::new(self).total
    }
}

impl Layout {
    pub fn new(cfg: &ModelConfig) -> Self {
        let (c, h, dh, f, v) = (cfg.d_model, cfg.n_heads, cfg.d_head, cfg.d_mlp, cfg.d_vocab);
        let mut entries = Vec::new();
        let mut add = |name: String, shape: Vec<usize>| {
            let offset = entries.last().map_or(0, |e: &ParamEntry| e.offset + e.len);
            let len = shape.iter().product();
            entries.push(ParamEntry { name, shape, offset, len });
            entries.len() - 1
        };
        let w_e = add("embed.W_E".into(), vec![v, c]);
        let w_pos = add("pos_embed.W_pos".into(), vec![cfg.n_ctx, c]);
        let mut blocks = Vec::new();
        for l in 0..cfg.n_layers {
            let p = |s: &str| format!("blocks.{l}.{s}");
            // AbstractAttention registers W_Q, W_O, b_Q, b_O; Attention then adds W_K, W_V, b_K, b_V.
            blocks.push(BlockParams {
                ln1_w: add(p("ln1.w"), vec![c]),
                ln1_b: add(p("ln1.b"), vec![c]),
                ln2_w: add(p("ln2.w"), vec![c]),
                ln2_b: add(p("ln2.b"), vec![c]),
                w_q: add(p("attn.W_Q"), vec![h, c, dh]),
                w_o: add(p("attn.W_O"), vec![h, dh, c]),
                b_q: add(p("attn.b_Q"), vec![h, dh]),
                b_o: add(p("attn.b_O"), vec![c]),
                w_k: add(p("attn.W_K"), vec![h, c, dh]),
                w_v: add(p("attn.W_V"), vec![h, c, dh]),
                b_k: add(p("attn.b_K"), vec![h, dh]),
                b_v: add(p("attn.b_V"), vec![h, dh]),
                w_in: add(p("mlp.W_in"), vec![c, f]),
                b_in: add(p("mlp.b_in"), vec![f]),
                w_out: add(p("mlp.W_out"), vec![f, c]),
                b_out: add(p("mlp.b_out"), vec![c]),
            });
        }
        let lnf_w = add("ln_final.w".into(), vec![c]);
        let lnf_b = add("ln_final.b".into(), vec![c]);
        let w_u = add("unembed.W_U".into(), vec![c, v]);
        let b_u = add("unembed.b_U".into(), vec![v]);
        let total = entries.last().map_or(0, |e| e.offset + e.len);
        Layout { entries, w_e, w_pos, blocks, lnf_w, lnf_b, w_u, b_u, total }
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// The slice of entry `i` in a buffer of this layout.
    #[inline]
    pub fn view<'a, S>(&self, buf: &'a [S], i: usize) -> &'a [S] {
        let e = &self.entries[i];
        &buf[e.offset..e.offset + e.len]
    }

    #[inline]
    pub fn view_mut<'a, S>(&self, buf: &'a mut [S], i: usize) -> &'a mut [S] {
        let e = &self.entries[i];
        &mut buf[e.offset..e.offset + e.len]
    }

    /// Two distinct entries mutably at once (e.g. a weight and its bias gradient).
    pub fn view2_mut<'a, S>(&self, buf: &'a mut [S], i: usize, j: usize) -> (&'a mut [S], &'a mut [S]) {
        assert_ne!(i, j);
        let (ei, ej) = (&self.entries[i], &self.entries[j]);
        if ei.offset < ej.offset {
            let (lo, hi) = buf.split_at_mut(ej.offset);
            (&mut lo[ei.offset..ei.offset + ei.len], &mut hi[..ej.len])
        } else {
            let (lo, hi) = buf.split_at_mut(ei.offset);
            (&mut hi[..ei.len], &mut lo[ej.offset..ej.offset + ej.len])
        }
    }

    /// Whether TL's gpt2 init draws this tensor (`"W_" in name`).
    pub fn is_weight(&self, i: usize) -> bool {
        self.entries[i].name.contains("W_")
    }

    /// Component of an entry for per-component norms: `embed`, `attn`, `mlp`, `ln` or `unembed`.
    pub fn component(&self, i: usize) -> &'static str {
        let n = &self.entries[i].name;
        if n.starts_with("embed") || n.starts_with("pos_embed") {
            "embed"
        } else if n.contains(".attn.") {
            "attn"
        } else if n.contains(".mlp.") {
            "mlp"
        } else if n.starts_with("unembed") {
            "unembed"
        } else {
            "ln"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_layout_has_807720_params_in_70_tensors_tl_order() {
        let l = Layout::new(&ModelConfig::canonical());
        assert_eq!(l.total, 807_720);
        assert_eq!(l.entries.len(), 70);
        let names: Vec<&str> = l.entries.iter().take(12).map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "embed.W_E",
                "pos_embed.W_pos",
                "blocks.0.ln1.w",
                "blocks.0.ln1.b",
                "blocks.0.ln2.w",
                "blocks.0.ln2.b",
                "blocks.0.attn.W_Q",
                "blocks.0.attn.W_O",
                "blocks.0.attn.b_Q",
                "blocks.0.attn.b_O",
                "blocks.0.attn.W_K",
                "blocks.0.attn.W_V"
            ]
        );
        assert_eq!(l.entries.last().unwrap().name, "unembed.b_U");
        assert_eq!(l.entries[l.blocks[0].w_o].shape, vec![4, 32, 128]);
    }
}
