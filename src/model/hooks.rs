//! The activation cache under TransformerLens hook names and shapes (TL 3.x semantics:
//! `hook_normalized` is the normalised input *before* the affine step).

use super::transformer::Model;
use super::workspace::Workspace;
use crate::numerics::Scalar;
use crate::task::Batch;

/// One cached activation: TL hook name, TL shape, row-major values.
#[derive(Clone, Debug)]
pub struct Hook<S> {
    pub name: String,
    pub shape: Vec<usize>,
    pub data: Vec<S>,
}

impl<S: Scalar> Model<S> {
    /// All hook activations of the last [`Model::forward`] on `batch` (same workspace), in TL's
    /// module order.
    pub fn hook_cache(&self, ws: &Workspace<S>, batch: &Batch) -> Vec<Hook<S>> {
        assert!(ws.is_full(), "hook_cache needs Model::forward (all positions), not forward_scored");
        let cfg = &self.cfg;
        let (b, t, c, f, h, dh) = (ws.batch, ws.t_run, cfg.d_model, cfg.d_mlp, cfg.n_heads, cfg.d_head);
        let n = b * t;
        let hd = h * dh;
        let mut out = Vec::new();
        let mut push = |name: String, shape: Vec<usize>, data: Vec<S>| {
            debug_assert_eq!(shape.iter().product::<usize>(), data.len(), "{name}");
            out.push(Hook { name, shape, data });
        };
        let w_e = self.layout.view(&self.params, self.layout.w_e);
        let w_pos = self.layout.view(&self.params, self.layout.w_pos);
        let embed: Vec<S> =
            batch.tokens.iter().flat_map(|&tok| w_e[tok as usize * c..(tok as usize + 1) * c].to_vec()).collect();
        let pos: Vec<S> = (0..n).flat_map(|r| w_pos[(r % t) * c..(r % t + 1) * c].to_vec()).collect();
        push("hook_embed".into(), vec![b, t, c], embed);
        push("hook_pos_embed".into(), vec![b, t, c], pos);
        let btc = vec![b, t, c];
        for (l, a) in ws.layers.iter().enumerate() {
            let p = |s: &str| format!("blocks.{l}.{s}");
            push(p("hook_resid_pre"), btc.clone(), ws.resid[l][..n * c].to_vec());
            push(p("ln1.hook_scale"), vec![b, t, 1], a.ln1.scale[..n].to_vec());
            push(p("ln1.hook_normalized"), btc.clone(), a.ln1.xn[..n * c].to_vec());
            for (s, hook) in ["attn.hook_q", "attn.hook_k", "attn.hook_v"].iter().enumerate() {
                let data: Vec<S> =
                    (0..n).flat_map(|r| a.qkv[r * 3 * hd + s * hd..r * 3 * hd + (s + 1) * hd].to_vec()).collect();
                push(p(hook), vec![b, t, h, dh], data);
            }
            push(p("attn.hook_attn_scores"), vec![b, h, t, t], a.scores[..b * h * t * t].to_vec());
            push(p("attn.hook_pattern"), vec![b, h, t, t], a.pattern[..b * h * t * t].to_vec());
            push(p("attn.hook_z"), vec![b, t, h, dh], a.z[..n * hd].to_vec());
            push(p("hook_attn_out"), btc.clone(), a.attn_out[..n * c].to_vec());
            push(p("hook_resid_mid"), btc.clone(), a.resid_mid[..n * c].to_vec());
            push(p("ln2.hook_scale"), vec![b, t, 1], a.ln2.scale[..n].to_vec());
            push(p("ln2.hook_normalized"), btc.clone(), a.ln2.xn[..n * c].to_vec());
            push(p("mlp.hook_pre"), vec![b, t, f], a.mlp_pre[..n * f].to_vec());
            push(p("mlp.hook_post"), vec![b, t, f], a.mlp_post[..n * f].to_vec());
            push(p("hook_mlp_out"), btc.clone(), a.mlp_out[..n * c].to_vec());
            push(p("hook_resid_post"), btc.clone(), ws.resid[l + 1][..n * c].to_vec());
        }
        push("ln_final.hook_scale".into(), vec![b, t, 1], ws.lnf.scale[..n].to_vec());
        push("ln_final.hook_normalized".into(), btc.clone(), ws.lnf.xn[..n * c].to_vec());
        push("unembed.hook_in".into(), btc, ws.lnf_out[..n * c].to_vec());
        push("unembed.hook_out".into(), vec![b, t, cfg.d_vocab], ws.logits[..n * cfg.d_vocab].to_vec());
        out
    }
}
