//! The order a diagnosis reads tensors in: the forward graph (tokens, embeddings, each block as
//! TransformerLens computes it — a hook before the parameters it feeds — the final LayerNorm,
//! unembedding, logits, loss), then the gradients in backward order. The first tensor that
//! differs in this order is where a port first goes wrong.

/// Within a block, in forward order (prefixes of TL names; `ln1.` covers its weights, which
/// scale the normalized activations).
const BLOCK: [&str; 31] = [
    "hook_resid_pre",
    "ln1.hook_scale",
    "ln1.hook_normalized",
    "ln1.",
    "attn.W_Q",
    "attn.b_Q",
    "attn.W_K",
    "attn.b_K",
    "attn.W_V",
    "attn.b_V",
    "attn.hook_q",
    "attn.hook_k",
    "attn.hook_v",
    "attn.hook_attn_scores",
    "attn.hook_pattern",
    "attn.hook_z",
    "attn.W_O",
    "attn.b_O",
    "hook_attn_out",
    "hook_resid_mid",
    "ln2.hook_scale",
    "ln2.hook_normalized",
    "ln2.",
    "mlp.W_in",
    "mlp.b_in",
    "mlp.hook_pre",
    "mlp.hook_post",
    "mlp.W_out",
    "mlp.b_out",
    "hook_mlp_out",
    "hook_resid_post",
];

/// Position of a (prefix-free) TL name in the forward graph; None for names not in it.
fn forward_position(name: &str) -> Option<i64> {
    let fixed = |n: &str| match n {
        // A trajectory's per-step record comes first: the earliest step that differs shows there.
        "lr" => Some(-3),
        "losses" => Some(-2),
        "grad_norm_sq" => Some(-1),
        "tokens" | "labels" => Some(0),
        "embed.W_E" | "hook_embed" => Some(1),
        "pos_embed.W_pos" | "hook_pos_embed" => Some(2),
        n if n.starts_with("ln_final.") => Some(1_000_000),
        "unembed.W_U" | "unembed.b_U" => Some(1_000_001),
        "logits" => Some(1_000_002),
        "loss" => Some(1_000_003),
        _ => None,
    };
    if let Some(p) = fixed(name) {
        return Some(p);
    }
    let rest = name.strip_prefix("blocks.")?;
    let (layer, within) = rest.split_once('.')?;
    let layer: i64 = layer.parse().ok()?;
    let step = BLOCK.iter().position(|s| within.starts_with(s))? as i64;
    Some(10 + layer * 100 + step)
}

/// Sort key: (section, position, name). Sections: 0 forward (parameters, activations under
/// `cache.`, outputs), 1 gradients (`grad.`) in backward order, 2 anything else by name.
pub fn graph_key(name: &str) -> (u8, i64, String) {
    if let Some(p) = name.strip_prefix("grad.").and_then(forward_position) {
        return (1, -p, name.to_string());
    }
    let plain = name.strip_prefix("cache.").unwrap_or(name);
    match forward_position(plain) {
        Some(p) => (0, p, name.to_string()),
        None => (2, 0, name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::graph_key;

    #[test]
    fn forward_then_backward_with_hooks_before_the_parameters_they_feed() {
        let mut names = vec![
            "grad.embed.W_E",
            "loss",
            "cache.blocks.0.mlp.hook_post",
            "blocks.0.mlp.W_out",
            "grad.unembed.W_U",
            "cache.blocks.0.mlp.hook_pre",
            "blocks.0.mlp.W_in",
            "cache.blocks.1.hook_resid_pre",
            "logits",
            "cache.hook_embed",
            "zzz.unknown",
            "grad.blocks.0.mlp.W_in",
            "grad.blocks.1.attn.W_Q",
        ];
        names.sort_by_key(|n| graph_key(n));
        assert_eq!(
            names,
            [
                "cache.hook_embed",
                "blocks.0.mlp.W_in",
                "cache.blocks.0.mlp.hook_pre",
                "cache.blocks.0.mlp.hook_post",
                "blocks.0.mlp.W_out",
                "cache.blocks.1.hook_resid_pre",
                "logits",
                "loss",
                "grad.unembed.W_U",
                "grad.blocks.1.attn.W_Q",
                "grad.blocks.0.mlp.W_in",
                "grad.embed.W_E",
                "zzz.unknown",
            ]
        );
    }
}
