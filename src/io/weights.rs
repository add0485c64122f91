//! Model parameters in safetensors under TransformerLens names and shapes, with the model config
//! in the metadata. Files load into `HookedTransformer(cfg).load_state_dict(sd, strict=False)`
//! with only TL's `blocks.{i}.attn.mask` / `IGNORE` buffers missing.

use super::tensors::{self, Tensor, TensorFile};
use crate::error::{Error, Result};
use crate::model::{Model, ModelConfig};
use crate::numerics::Scalar;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What windtunnel writes into the `"windtunnel"` metadata key.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileMeta {
    pub format: String,
    pub version: u32,
    /// `params`, `export` or `checkpoint`.
    pub kind: String,
    pub model: ModelConfig,
    /// Scalar type the tensors were computed in.
    pub dtype: String,
    /// [`crate::numerics::ARITHMETIC`] of the build that computed them (absent before v2: 1).
    #[serde(default = "arithmetic_v1")]
    pub arithmetic: u32,
    #[serde(default)]
    pub windtunnel_version: String,
    #[serde(default)]
    pub git_revision: String,
}

fn arithmetic_v1() -> u32 {
    1
}

impl FileMeta {
    pub fn new(kind: &str, model: &ModelConfig, dtype: &str) -> Self {
        FileMeta {
            format: "windtunnel".into(),
            version: 1,
            kind: kind.into(),
            model: model.resolved(),
            dtype: dtype.into(),
            arithmetic: crate::numerics::ARITHMETIC,
            windtunnel_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: env!("WINDTUNNEL_GIT_REV").into(),
        }
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("metadata serialises")
    }
}

/// The model's parameters as TL-named tensors, in registration order.
pub fn param_tensors<S: Scalar>(model: &Model<S>) -> Vec<Tensor> {
    model
        .layout
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| Tensor::from_scalars(e.name.clone(), e.shape.clone(), model.layout.view(&model.params, i)))
        .collect()
}

/// Write a parameters-only file.
pub fn save_params<S: Scalar>(path: &Path, model: &Model<S>) -> Result<()> {
    let meta = FileMeta::new("params", &model.cfg, S::NAME);
    tensors::write(path, &param_tensors(model), Some(&meta.to_json()))
}

/// The model config recorded in a file's metadata, if windtunnel wrote it.
pub fn file_model_config(file: &TensorFile, path: &Path) -> Result<Option<ModelConfig>> {
    match &file.metadata {
        None => Ok(None),
        Some(m) => match serde_json::from_str::<FileMeta>(m) {
            Ok(meta) => Ok(Some(meta.model)),
            Err(e) => Err(Error::format(path, format!("unreadable windtunnel metadata: {e}"))),
        },
    }
}

/// Load parameters by TL name from a parsed file. `expected`, when given, must have the shapes of
/// the file's recorded config (if any) and is the config used: weights do not depend on
/// LayerNorm's eps or the activation, so a port's variant (`--set model.eps=…`) loads them.
/// Without either, the canonical config is assumed. Every
/// parameter must be present with its TL shape; other tensors (TL buffers, gradients, logits)
/// are ignored. f32 files load exactly into f64 models; f64 files round into f32 models.
pub fn model_from_file<S: Scalar>(file: &TensorFile, path: &Path, expected: Option<&ModelConfig>) -> Result<Model<S>> {
    let recorded = file_model_config(file, path)?;
    let cfg = match (recorded, expected) {
        (Some(r), Some(e)) if describe(&r.resolved()) != describe(&e.resolved()) => {
            return Err(Error::format(
                path,
                format!("holds a model of another config: {} (expected {})", describe(&r), describe(e)),
            ));
        }
        (_, Some(e)) => e.clone(),
        (Some(r), None) => r,
        (None, None) => ModelConfig::canonical(),
    };
    cfg.validate()?;
    let mut model = Model::<S>::zeros(&cfg);
    let mut missing = vec![];
    for i in 0..model.layout.entries.len() {
        let e = model.layout.entries[i].clone();
        let Some(t) = file.get(&e.name) else {
            missing.push(e.name.clone());
            continue;
        };
        if t.shape != e.shape {
            return Err(Error::format(
                path,
                format!("tensor {} has shape {:?}, expected {:?}", e.name, t.shape, e.shape),
            ));
        }
        let vals = t.to_scalars::<S>().ok_or_else(|| {
            Error::format(path, format!("tensor {} has dtype {}, expected F32 or F64", e.name, t.dtype_name()))
        })?;
        model.layout.view_mut(&mut model.params, i).copy_from_slice(&vals);
    }
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(|s| s.as_str()).collect();
        return Err(Error::format(
            path,
            format!(
                "missing {} of {} parameters (e.g. {}); is this a TransformerLens/windtunnel weights file for {}?",
                missing.len(),
                model.layout.entries.len(),
                shown.join(", "),
                describe(&cfg)
            ),
        ));
    }
    if let Some(bad) = model.params.iter().position(|p| !p.is_finite()) {
        return Err(Error::format(path, format!("parameter {bad} is not finite")));
    }
    Ok(model)
}

/// Read a file and load parameters (see [`model_from_file`]).
pub fn load_model<S: Scalar>(path: &Path, expected: Option<&ModelConfig>) -> Result<Model<S>> {
    let file = tensors::read(path)?;
    model_from_file(&file, path, expected)
}

fn describe(c: &ModelConfig) -> String {
    format!(
        "n_layers={} d_model={} n_heads={} d_head={} d_mlp={} d_vocab={} n_ctx={}",
        c.n_layers, c.d_model, c.n_heads, c.d_head, c.d_mlp, c.d_vocab, c.n_ctx
    )
}

/// `--init seed:N|FILE`: windtunnel's init with seed N, or parameters from a file.
pub fn init_model<S: Scalar>(spec: &str, cfg: &ModelConfig) -> Result<Model<S>> {
    let what = format!("a model of {} parameters ({})", cfg.n_params(), describe(cfg));
    crate::memory::check(&what, crate::model::memory::training_state_bytes(cfg, std::mem::size_of::<S>()))?;
    match spec.strip_prefix("seed:") {
        Some(n) => {
            let seed = n
                .parse::<u64>()
                .map_err(|_| Error::config("--init", format!("{spec:?} (allowed seed:N or a file)")))?;
            Ok(Model::init(cfg, seed))
        }
        None => load_model(Path::new(spec), Some(cfg)),
    }
}
