//! Fixtures shared by the integration tests.

/// A small, fast run: the tiny model on K=3, 50 base strings (D=150), batch 32 (a short last batch
/// of 22), eval every 5 steps, parameter checkpoints every 10 (and powers of two).
pub const SMALL: &str = r#"
[model]
n_layers = 2
d_model = 16
n_heads = 2
d_head = 8
d_mlp = 32
n_ctx = 16
[data]
k = 3
n_b = 50
[train]
batch_size = 32
max_steps = 40
eval_every = 5
checkpoint_every = 10
lr = 3e-3
"#;
