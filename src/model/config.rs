//! Model configuration with TransformerLens field names (`HookedTransformerConfig`).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Activation function of the MLP (TL `act_fn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActFn {
    /// `F.gelu`: the exact erf form, `x·0.5·(1 + erf(x/√2))`. The paper's model.
    Gelu,
    /// `relu` (TL's default when `act_fn` is not set).
    Relu,
}

impl ActFn {
    pub fn name(self) -> &'static str {
        match self {
            ActFn::Gelu => "gelu",
            ActFn::Relu => "relu",
        }
    }
}

/// `HookedTransformerConfig` fields that define the architecture. Defaults are the paper's
/// canonical model (spec §5.1): 4 layers, d_model 128, 4 heads of 32, d_mlp 512, d_vocab 40,
/// n_ctx 32, exact GELU, LN eps 1e-5, init σ = 0.8/√d_model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    pub n_layers: usize,
    pub d_model: usize,
    pub n_heads: usize,
    pub d_head: usize,
    pub d_mlp: usize,
    pub d_vocab: usize,
    pub n_ctx: usize,
    pub act_fn: ActFn,
    pub eps: f64,
    /// σ of the N(0, σ²) init of every `W_` tensor; TL's default is `0.8/sqrt(d_model)`.
    pub initializer_range: Option<f64>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            n_layers: 4,
            d_model: 128,
            n_heads: 4,
            d_head: 32,
            d_mlp: 512,
            d_vocab: 40,
            n_ctx: 32,
            act_fn: ActFn::Gelu,
            eps: 1e-5,
            initializer_range: None,
        }
    }
}

impl ModelConfig {
    /// The paper's model (807,720 parameters).
    pub fn canonical() -> Self {
        Self::default()
    }

    /// A 2-layer model small enough for per-coordinate gradient checks.
    pub fn tiny() -> Self {
        ModelConfig { n_layers: 2, d_model: 16, n_heads: 2, d_head: 8, d_mlp: 32, n_ctx: 16, ..Self::default() }
    }

    /// σ of the weight init (TL: `0.8 / np.sqrt(d_model)` when not given).
    pub fn init_std(&self) -> f64 {
        self.initializer_range.unwrap_or(0.8 / crate::numerics::math::sqrt(self.d_model as f64))
    }

    /// The config with every default written out (for run directories and file metadata).
    pub fn resolved(&self) -> Self {
        ModelConfig { initializer_range: Some(self.init_std()), ..self.clone() }
    }

    /// Width of the concatenated heads, `n_heads · d_head`.
    pub fn d_attn(&self) -> usize {
        self.n_heads * self.d_head
    }

    pub fn validate(&self) -> Result<()> {
        let check = |field: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi { Err(Error::config(field, format!("{v} (allowed {lo}..={hi})"))) } else { Ok(()) }
        };
        check("model.n_layers", self.n_layers, 1, 64)?;
        check("model.d_model", self.d_model, 1, 8192)?;
        check("model.n_heads", self.n_heads, 1, 256)?;
        check("model.d_head", self.d_head, 1, 1024)?;
        check("model.d_mlp", self.d_mlp, 1, 65536)?;
        check("model.d_vocab", self.d_vocab, 40, 65536)?;
        check("model.n_ctx", self.n_ctx, 1, 8192)?;
        if !(self.eps > 0.0 && self.eps < 1.0) {
            return Err(Error::config("model.eps", format!("{} (allowed 0 < eps < 1)", self.eps)));
        }
        if let Some(s) = self.initializer_range
            && !(s > 0.0 && s < 10.0)
        {
            return Err(Error::config("model.initializer_range", format!("{s} (allowed 0 < σ < 10)")));
        }
        Ok(())
    }
}
