use super::Outcome;
use crate::check::gradcheck::{self, TOLERANCE};
use crate::error::{Error, Result};
use crate::model::ModelConfig;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// TOML file whose `[model]` table gives the config (default: the canonical model).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Use the tiny 2-layer config and check every coordinate instead of random directions.
    #[arg(long)]
    tiny: bool,
    /// Check every coordinate (only sensible for small models).
    #[arg(long)]
    per_coordinate: bool,
    /// Examples in the check batch (first examples of the canonical K=10 train order).
    #[arg(long, default_value_t = 8)]
    batch_size: usize,
    /// Seed of the init, the perturbation and the directions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Fail above this relative error.
    #[arg(long, default_value_t = TOLERANCE)]
    tolerance: f64,
    #[command(flatten)]
    out: super::Output,
}

/// Read the `[model]` table of a TOML file (other tables are ignored here).
pub fn model_config_from_file(path: &std::path::Path) -> Result<ModelConfig> {
    let text = crate::io::read_text(path)?;
    let value: toml::Table = toml::from_str(&text).map_err(|e| Error::format(path, e.to_string()))?;
    let cfg: ModelConfig = match value.get("model") {
        Some(toml::Value::Table(m)) => {
            crate::config::keys::check_table("model", m, crate::config::keys::field_names::<ModelConfig>())?;
            toml::Value::Table(m.clone())
                .try_into()
                .map_err(|e: toml::de::Error| Error::config("model", e.to_string()))?
        }
        Some(_) => return Err(Error::config("model", "must be a table [model]")),
        None => ModelConfig::canonical(),
    };
    cfg.validate()?;
    Ok(cfg)
}

pub fn run(a: Args) -> Result<Outcome> {
    let cfg = match (&a.config, a.tiny) {
        (Some(p), _) => model_config_from_file(p)?,
        (None, true) => ModelConfig::tiny(),
        (None, false) => ModelConfig::canonical(),
    };
    if !(1..=10_000).contains(&a.batch_size) {
        return Err(Error::config("--batch-size", format!("{} (allowed 1..=10000)", a.batch_size)));
    }
    let batch = gradcheck::check_batch(a.batch_size);
    if batch.seq_len > cfg.n_ctx {
        return Err(Error::config(
            "model.n_ctx",
            format!("{} is shorter than the task's sequences ({})", cfg.n_ctx, batch.seq_len),
        ));
    }
    // Three f64 copies of the parameters (the model, the stencil's probe, the gradient) and two
    // workspaces.
    let bytes = 3 * cfg.n_params() as u128 * 8
        + 2 * crate::model::memory::workspace_bytes(&cfg, batch.batch_size, batch.seq_len, 8);
    crate::memory::check(&format!("a gradient check of a batch of {}", a.batch_size), bytes)?;
    let model = gradcheck::perturbed_model(&cfg, a.seed);
    let report = if a.per_coordinate || a.tiny {
        gradcheck::per_coordinate(&model, &batch)
    } else {
        gradcheck::directional(&model, &batch, a.seed)
    };
    let max = report.max_rel_err();
    let passed = report.passed(a.tolerance);
    a.out.emit(&serde_json::json!({
        "passed": passed, "max_rel_err": max, "tolerance": a.tolerance,
        "rows": report.rows.iter().map(|r| serde_json::json!({
            "name": r.name, "analytic": r.analytic, "finite_difference": r.numeric, "rel_err": r.rel_err,
        })).collect::<Vec<_>>(),
    }));
    if a.out.text() {
        println!("{:<36} {:>24} {:>24} {:>10}", "tensor", "analytic", "finite_difference", "rel_err");
        for r in &report.rows {
            println!("{:<36} {:>24.16e} {:>24.16e} {:>10.2e}", r.name, r.analytic, r.numeric, r.rel_err);
        }
        println!("max_rel_err {max:.3e}");
    }
    // The verdict and its tolerance, on stdout with the rows (also under --quiet when it failed).
    if passed {
        if a.out.text() {
            println!("gradient check passed: max_rel_err {max:.3e} ≤ tolerance {:.1e}", a.tolerance);
        }
        Ok(Outcome::Ok)
    } else {
        if !a.out.json {
            println!("gradient check FAILED: max_rel_err {max:.3e} > tolerance {:.1e}", a.tolerance);
        }
        Ok(Outcome::CheckFailed)
    }
}
