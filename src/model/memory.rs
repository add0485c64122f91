//! Memory estimates made before allocating, so that a size inside the validated ranges but too
//! large for the machine is refused with the figure instead of aborting the process.

use super::ModelConfig;

/// Bytes of the parameters, their gradients and the two AdamW moments.
pub fn training_state_bytes(cfg: &ModelConfig, scalar_bytes: usize) -> u128 {
    4 * cfg.n_params() as u128 * scalar_bytes as u128
}

/// Bytes of the forward/backward workspace for `batch` sequences of `t` tokens (the activation
/// caches of `Workspace::new` and the same again for the backward pass's scratch).
pub fn workspace_bytes(cfg: &ModelConfig, batch: usize, t: usize, scalar_bytes: usize) -> u128 {
    let (n, b, t) = (batch as u128 * t as u128, batch as u128, t as u128);
    let (c, f, v, hd, h) =
        (cfg.d_model as u128, cfg.d_mlp as u128, cfg.d_vocab as u128, cfg.d_attn() as u128, cfg.n_heads as u128);
    let layer = 8 * n * c + 4 * n * hd + 2 * b * h * t * t + 3 * n * f;
    let rest = (cfg.n_layers as u128 + 3) * n * c + n * v + c * f.max(v).max(3 * hd);
    2 * (cfg.n_layers as u128 * layer + rest) * scalar_bytes as u128
}

/// Bytes of a training step at `batch`: parameters, gradients, moments and the workspace.
pub fn training_bytes(cfg: &ModelConfig, batch: usize, t: usize, scalar_bytes: usize) -> u128 {
    training_state_bytes(cfg, scalar_bytes) + workspace_bytes(cfg, batch, t, scalar_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_run_fits_and_a_huge_model_does_not() {
        let cfg = ModelConfig::default();
        let canonical = training_state_bytes(&cfg, 4) + workspace_bytes(&cfg, 128, 17, 4);
        // 807,720 parameters × 4 copies × 4 bytes ≈ 12.9 MB plus activations (twice, for the
        // backward's scratch): an upper bound of the canonical run's measured peak RSS (< 200 MB).
        assert!(canonical > 12_000_000 && canonical < 500_000_000, "{canonical}");
        let huge = ModelConfig { d_model: 8192, n_heads: 256, d_head: 1024, d_mlp: 65_536, n_layers: 64, ..cfg };
        assert!(training_state_bytes(&huge, 4) > 1 << 40, "a 2-TB model is estimated as one");
    }
}
