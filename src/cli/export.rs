use super::{Dtype, Outcome};
use crate::config::RunConfig;
use crate::error::Result;
use crate::io::{export, tensors, weights};
use crate::numerics::Scalar;
use crate::task::Batch;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Run config (TOML with [model], [data], [train]); default: the canonical K=10 run.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. --set data.k=20 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Initial weights: seed:N (windtunnel's init) or a safetensors file (e.g. golden/tl/init_f32.safetensors).
    #[arg(long)]
    init: Option<String>,
    /// Batch of this many training examples, sampled without replacement (see --batch-seed).
    #[arg(long, default_value_t = 16)]
    batch_size: usize,
    /// Seed of the batch sample: the first B indices of Stream(seed, Fixture, 0).permutation(D).
    #[arg(long, default_value_t = 0)]
    batch_seed: u64,
    /// Use the `tokens` and `labels` tensors of this file instead of sampling a batch.
    #[arg(long)]
    batch: Option<PathBuf>,
    #[arg(long, default_value = "f32", value_parser = super::dtype_parser())]
    dtype: Dtype,
    /// Also write activations as cache.<TL hook name>.
    #[arg(long)]
    hooks: bool,
    /// A trajectory reference instead: train this many steps (the config's init, data order and
    /// schedule; no periodic eval) and write per-step `losses`, `lr`, `grad_norm_sq` and the
    /// parameters after the last step (docs/interop.md).
    #[arg(long, conflicts_with_all = ["batch", "hooks"], value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    steps: Option<u64>,
    /// With --steps: also the parameters after every this many steps, as `step_NNNNNN.<name>`.
    #[arg(long, requires = "steps", value_parser = clap::value_parser!(u64).range(1..))]
    every: Option<u64>,
    /// Output file (safetensors; a file path, not a directory).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    output: super::Output,
}

pub fn run(a: Args) -> Result<Outcome> {
    let cfg = RunConfig::load(a.config.as_deref(), &a.set)?;
    if let Some(steps) = a.steps {
        return crate::with_scalar!(a.dtype, S => trajectory::<S>(&a, cfg, steps));
    }
    let batch = match &a.batch {
        Some(p) => export::batch_from_file(&tensors::read(p)?, p)?,
        None => export::sample_batch(&cfg.data, a.batch_size, a.batch_seed)?,
    };
    let init = a.init.clone().unwrap_or_else(|| cfg.train.init.clone());
    crate::with_scalar!(a.dtype, S => write::<S>(&a, &cfg, &init, &batch))
}

fn trajectory<S: Scalar>(a: &Args, cfg: RunConfig, steps: u64) -> Result<Outcome> {
    let init = a.init.clone().unwrap_or_else(|| cfg.train.init.clone());
    let model = weights::init_model::<S>(&init, &cfg.model)?;
    let mut tr = crate::train::Trainer::new(cfg, model, std::path::Path::new("."))?;
    let (ts, meta) = crate::train::trajectory::trajectory_tensors(&mut tr, steps, a.every)?;
    tensors::write(&a.out, &ts, Some(&meta))?;
    let last = tr.state.step;
    a.output.emit(&serde_json::json!({ "file": a.out, "tensors": ts.len(), "steps": last, "dtype": S::NAME }));
    a.output.note(format!("wrote a {last}-step trajectory ({} tensors, {}) to {}", ts.len(), S::NAME, a.out.display()));
    Ok(Outcome::Ok)
}

fn write<S: Scalar>(a: &Args, cfg: &RunConfig, init: &str, batch: &Batch) -> Result<Outcome> {
    let model = weights::init_model::<S>(init, &cfg.model)?;
    let (ts, meta) = export::export_tensors(&model, batch, a.hooks)?;
    tensors::write(&a.out, &ts, Some(&meta))?;
    let loss = match &ts.iter().find(|t| t.name == "loss").unwrap().values {
        tensors::Values::F32(v) => v[0] as f64,
        tensors::Values::F64(v) => v[0],
        _ => f64::NAN,
    };
    a.output.emit(&serde_json::json!({
        "file": a.out, "tensors": ts.len(), "examples": batch.batch_size, "positions": batch.seq_len,
        "dtype": S::NAME, "loss": loss,
    }));
    a.output.note(format!(
        "wrote {} tensors ({} examples × {} positions, {}, loss {loss:.6}) to {}",
        ts.len(),
        batch.batch_size,
        batch.seq_len,
        S::NAME,
        a.out.display()
    ));
    Ok(Outcome::Ok)
}
