//! Run configuration: one TOML file with `[model]` (TL field names), `[data]` (the author's
//! generator parameters) and `[train]` (optimizer, schedule, cadence). Every table rejects
//! unknown keys; every value is range-checked with an error that names the key and the range.
//! `--set key=value` overrides (e.g. `--set train.lr=2e-3 --set data.k=20`) are applied to the
//! TOML before it is parsed, so they get exactly the same checks.

pub mod keys;

/// Refuse a malformed `WINDTUNNEL_*` variable by name before any work (each is otherwise read
/// where it is used, and a typo there would silently mean the default).
pub fn check_environment() -> crate::error::Result<()> {
    crate::numerics::simd::env_cap()?;
    crate::memory::env_limit()?;
    crate::train::lock::env_stale()?;
    Ok(())
}

use crate::error::{Error, Result};
use crate::model::ModelConfig;
use crate::task::DataConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Learning-rate schedule (spec §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Multiplier 1.0 (canonical runs, LR sweep, D-confound, exponent runs).
    Constant,
    /// `step/warmup` during warmup (so the first update has lr 0), then
    /// `0.5·(1 + cos_f32(progress·3.14159))` decaying to 0 at `max_steps` (base.yaml).
    Cosine,
}

/// Optimizer, batching and logging cadence (TOML table `[train]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Initial parameters: `"seed:N"` (windtunnel's init with seed N) or a safetensors path
    /// (e.g. the author's torch init from `golden/tl/`).
    pub init: String,
    /// Seed of the epoch permutations (`Stream(order_seed, BatchOrder, epoch)`).
    pub order_seed: u64,
    /// Replay file: tensor `perm` int64 [n_epochs, D] of train-order indices (overrides order_seed).
    pub data_order: Option<String>,
    pub lr: f64,
    pub weight_decay: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub adam_eps: f64,
    pub batch_size: usize,
    pub max_steps: u64,
    pub schedule: Schedule,
    pub warmup_steps: u64,
    /// Global-norm clipping threshold; absent = no clipping (canonical constant-LR runs).
    pub grad_clip: Option<f64>,
    pub eval_every: u64,
    pub checkpoint_every: u64,
    /// B groups sampled per candidate evaluation (`Random(step).sample(bases, n)`).
    pub candidate_groups: usize,
    /// Stop when candidate_loss < frac·ln K for `early_stop_patience` consecutive evals.
    pub early_stop_frac: Option<f64>,
    pub early_stop_patience: u64,
    /// Stop this many steps after T1 (candidate_loss < 0.5·ln K) is first seen.
    pub stop_after_t1: Option<u64>,
    /// Stop at this multiple of T1 (e.g. 2.0 keeps checkpoints up to 2·T1 for the probes).
    pub stop_at_t1_multiple: Option<f64>,
    /// Stop this many steps after T1, T2 and the end of the T3 window have all been seen: every
    /// waiting time is then known, and the run is a prefix of the full-length one.
    pub stop_after_taus: Option<u64>,
    /// Stop this many steps after the lag: the first eval whose first-target loss is below
    /// 0.1 × the first logged one (the asymmetry metric, any task).
    pub stop_after_lag: Option<u64>,
    /// Hold every stopping rule above until T4 (first-target loss < 0.9·ln K) has been seen:
    /// the Δz-lead claim needs T4 of every run, which can come after 2·T1 at large K.
    pub stop_not_before_t4: bool,
}

impl Default for TrainConfig {
    /// The canonical "landauer_dense" run (spec §1): AdamW lr 1e-3, wd 0.01, batch 128,
    /// constant LR, no warmup, no clipping, 50k steps, eval every 50, checkpoint every 100.
    fn default() -> Self {
        TrainConfig {
            init: "seed:42".into(),
            order_seed: 42,
            data_order: None,
            lr: 1e-3,
            weight_decay: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            adam_eps: 1e-8,
            batch_size: 128,
            max_steps: 50_000,
            schedule: Schedule::Constant,
            warmup_steps: 0,
            grad_clip: None,
            eval_every: 50,
            checkpoint_every: 100,
            candidate_groups: 32,
            early_stop_frac: None,
            early_stop_patience: 20,
            stop_after_t1: None,
            stop_at_t1_multiple: None,
            stop_after_taus: None,
            stop_after_lag: None,
            stop_not_before_t4: false,
        }
    }
}

/// A whole run: model, data and training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub model: ModelConfig,
    pub data: DataConfig,
    pub train: TrainConfig,
}

/// `lo ≤ v ≤ hi`; NaN is outside every range.
fn range<T: PartialOrd + std::fmt::Display>(field: &str, v: T, lo: T, hi: T) -> Result<()> {
    if v >= lo && v <= hi { Ok(()) } else { Err(Error::config(field, format!("{v} (allowed {lo}..={hi})"))) }
}

impl TrainConfig {
    pub fn validate(&self) -> Result<()> {
        if !self.init.starts_with("seed:") && self.init.is_empty() {
            return Err(Error::config("train.init", "empty (allowed \"seed:N\" or a safetensors path)"));
        }
        if let Some(n) = self.init.strip_prefix("seed:")
            && n.parse::<u64>().is_err()
        {
            return Err(Error::config(
                "train.init",
                format!("{:?} (allowed \"seed:N\" with N an integer ≥ 0)", self.init),
            ));
        }
        if !(self.lr > 0.0 && self.lr <= 10.0) {
            return Err(Error::config("train.lr", format!("{} (allowed 0 < lr ≤ 10)", self.lr)));
        }
        range("train.weight_decay", self.weight_decay, 0.0, 1.0)?;
        if !(0.0..1.0).contains(&self.beta1) {
            return Err(Error::config("train.beta1", format!("{} (allowed 0 ≤ β1 < 1)", self.beta1)));
        }
        if !(0.0..1.0).contains(&self.beta2) {
            return Err(Error::config("train.beta2", format!("{} (allowed 0 ≤ β2 < 1)", self.beta2)));
        }
        // f32 training rounds eps once: a value that rounds to 0 would divide by zero.
        if !(self.adam_eps > 0.0 && self.adam_eps < 1.0 && (self.adam_eps as f32) > 0.0) {
            return Err(Error::config("train.adam_eps", format!("{} (allowed 1e-38 ≤ eps < 1)", self.adam_eps)));
        }
        range("train.batch_size", self.batch_size, 1, 65_536)?;
        range("train.max_steps", self.max_steps, 1, 100_000_000)?;
        range("train.eval_every", self.eval_every, 1, 1_000_000)?;
        range("train.checkpoint_every", self.checkpoint_every, 1, 100_000_000)?;
        range("train.candidate_groups", self.candidate_groups, 1, 1_000_000)?;
        range("train.early_stop_patience", self.early_stop_patience, 1, 1_000_000)?;
        if self.schedule == Schedule::Cosine && self.warmup_steps >= self.max_steps {
            return Err(Error::config(
                "train.warmup_steps",
                format!(
                    "{} (allowed 0..={} = max_steps − 1 with the cosine schedule)",
                    self.warmup_steps,
                    self.max_steps - 1
                ),
            ));
        }
        if let Some(c) = self.grad_clip
            && !(c > 0.0 && c.is_finite())
        {
            return Err(Error::config("train.grad_clip", format!("{c} (allowed > 0; omit the key for no clipping)")));
        }
        if let Some(m) = self.stop_at_t1_multiple
            && !(1.0..=100.0).contains(&m)
        {
            return Err(Error::config("train.stop_at_t1_multiple", format!("{m} (allowed 1..=100)")));
        }
        if let Some(f) = self.early_stop_frac
            && !(f > 0.0 && f < 1.0)
        {
            return Err(Error::config("train.early_stop_frac", format!("{f} (allowed 0 < frac < 1)")));
        }
        Ok(())
    }
}

impl RunConfig {
    pub fn validate(&self) -> Result<()> {
        self.model.validate()?;
        self.data.validate()?;
        self.train.validate()?;
        if self.data.seq_len() > self.model.n_ctx {
            return Err(Error::config(
                "model.n_ctx",
                format!("{} is shorter than the task's sequences ({} tokens)", self.model.n_ctx, self.data.seq_len()),
            ));
        }
        Ok(())
    }

    /// Parse TOML text plus `key=value` overrides, then validate.
    pub fn from_toml_with(text: &str, overrides: &[String], origin: &str) -> Result<Self> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| Error::config("config", format!("{origin} is not valid TOML: {e}")))?;
        for ov in overrides {
            apply_override(&mut table, ov)?;
        }
        check_keys(&table)?;
        let cfg: RunConfig =
            table.try_into().map_err(|e: toml::de::Error| Error::config("config", format!("{origin}: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Load a config file (or the canonical config when `path` is `None`) with overrides.
    pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<Self> {
        match path {
            Some(p) => {
                let text = crate::io::read_text(p)?;
                Self::from_toml_with(&text, overrides, &p.display().to_string())
            }
            None => Self::from_toml_with("", overrides, "the canonical config"),
        }
    }

    /// The fully resolved config as TOML (defaults written out), for run directories.
    pub fn to_toml(&self) -> String {
        let mut c = self.clone();
        c.model = c.model.resolved();
        toml::to_string(&c).expect("config serialises")
    }
}

/// Every table and key known, else an error with the nearest known name.
fn check_keys(table: &toml::Table) -> Result<()> {
    let sections = keys::field_names::<RunConfig>();
    for (name, value) in table {
        if !sections.contains(&name.as_str()) {
            return Err(Error::config(name, keys::unknown(name, sections, "a run config: tables")));
        }
        let known = match name.as_str() {
            "model" => keys::field_names::<ModelConfig>(),
            "data" => keys::field_names::<DataConfig>(),
            _ => keys::field_names::<TrainConfig>(),
        };
        match value.as_table() {
            Some(t) => keys::check_table(name, t, known)?,
            None => return Err(Error::config(name, format!("must be a table [{name}]"))),
        }
    }
    Ok(())
}

/// Apply `a.b=value` to a TOML table. The value is parsed as TOML (number, bool, string, …), and
/// as a bare string when it does not parse (`--set data.task=az_to_b`).
fn apply_override(table: &mut toml::Table, ov: &str) -> Result<()> {
    let (key, raw) = ov
        .split_once('=')
        .ok_or_else(|| Error::config("--set", format!("{ov:?} (expected key=value, e.g. train.lr=2e-3)")))?;
    let parts: Vec<&str> = key.trim().split('.').collect();
    let sections = ["model", "data", "train"];
    if parts.len() != 2 || !sections.contains(&parts[0]) {
        let hint = keys::nearest(parts[0], &sections).map(|t| format!("did you mean `{t}`? ")).unwrap_or_default();
        return Err(Error::config(
            "--set",
            format!("{key:?} ({hint}expected model.<key>, data.<key> or train.<key>, e.g. train.lr)"),
        ));
    }
    let value = match toml::from_str::<toml::Table>(&format!("v = {}", raw.trim())) {
        Ok(mut t) => t.remove("v").expect("parsed key"),
        Err(_) => toml::Value::String(raw.trim().to_string()),
    };
    let section = table.entry(parts[0]).or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let section = section
        .as_table_mut()
        .ok_or_else(|| Error::config(parts[0], "must be a table ([model], [data] or [train])"))?;
    section.insert(parts[1].to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_roundtrips_through_toml() {
        let c = RunConfig::default();
        let text = c.to_toml();
        let back = RunConfig::from_toml_with(&text, &[], "test").unwrap();
        assert_eq!(back.model, c.model.resolved());
        assert_eq!(back.data, c.data);
        assert_eq!(back.train, c.train);
    }

    #[test]
    fn overrides_and_errors_name_the_key() {
        let c = RunConfig::from_toml_with("", &["train.lr=2e-3".into(), "data.task=az_to_b".into()], "t").unwrap();
        assert_eq!(c.train.lr, 2e-3);
        assert_eq!(c.data.task, crate::task::TaskKind::AzToB);
        let e = RunConfig::from_toml_with("", &["train.lrr=1".into()], "t").unwrap_err().to_string();
        assert!(e.contains("`train.lrr`") && e.contains("did you mean `lr`?"), "{e}");
        let e = RunConfig::from_toml_with("[model]\nd_modle = 3\n", &[], "t").unwrap_err().to_string();
        assert!(e.contains("`model.d_modle`") && e.contains("did you mean `d_model`?"), "{e}");
        let e = RunConfig::from_toml_with("[data]\nfoo = 3\n", &[], "t").unwrap_err().to_string();
        assert!(e.contains("`data.foo`") && !e.contains("did you mean") && e.contains("n_b"), "{e}");
        let e = RunConfig::from_toml_with("", &["train.batch_size=0".into()], "t").unwrap_err().to_string();
        assert!(e.contains("train.batch_size") && e.contains("allowed 1..=65536"), "{e}");
        let e = RunConfig::from_toml_with("[train]\nlr = -1.0\n", &[], "t").unwrap_err().to_string();
        assert!(e.contains("train.lr"), "{e}");
        let e = RunConfig::from_toml_with("[modle]\n", &[], "t").unwrap_err().to_string();
        assert!(e.contains("`modle`") && e.contains("did you mean `model`?"), "{e}");
        let e = RunConfig::from_toml_with("", &["lr=1".into()], "t").unwrap_err().to_string();
        assert!(e.contains("--set"), "{e}");
    }
}
