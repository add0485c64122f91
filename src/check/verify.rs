//! `verify` as a library: rename, choose the criterion, compare, and render the report (text for
//! people, JSON for CI). One implementation behind the CLI and the Python package.

use super::compare::{CompareOpts, Comparison, Criterion, F32_TOL, F64_TOL, compare};
use super::past_horizon::{self, PastHorizon};
use crate::error::{Error, Result};
use crate::io::tensors::TensorFile;
use serde_json::{Value, json};
use std::fmt::Write;

/// What to compare and how.
#[derive(Clone, Debug, Default)]
pub struct VerifyOpts {
    /// `bits`, `f64` or `f32`; `None` chooses from the reference's dtype.
    pub preset: Option<String>,
    /// Elementwise `(rtol, atol)` instead of a preset.
    pub elementwise: Option<(f64, f64)>,
    /// Only names starting with one of these (empty = all).
    pub keys: Vec<String>,
    /// Never names starting with one of these.
    pub exclude: Vec<String>,
    /// `(their_name, tl_name)` pairs applied to the other file first.
    pub rename: Vec<(String, String)>,
}

/// The outcome of a verify: the comparison, the criterion's description and a naming hint.
#[derive(Clone, Debug)]
pub struct Report {
    pub comparison: Comparison,
    pub criterion: String,
    pub passed: bool,
    /// How the other side is named in messages (its path, or "other").
    pub other_label: String,
    pub naming_hint: Option<&'static str>,
    /// Set when a trajectory was longer than its per-step horizon (and compared cut there).
    pub past_horizon: Option<PastHorizon>,
}

/// Compare `other` against `reference`. A comparison of no tensors is not a pass.
pub fn verify(reference: &TensorFile, mut other: TensorFile, opts: &VerifyOpts, other_label: &str) -> Result<Report> {
    rename(&mut other, &opts.rename, other_label)?;
    let names: Vec<String> = other.tensors.iter().map(|t| t.name.clone()).collect();
    let naming_hint = super::names::scheme_hint(&names);
    let (criterion, described) = criterion(opts, reference)?;
    let copts = CompareOpts { criterion, prefixes: opts.keys.clone(), exclude: opts.exclude.clone() };
    let (comparison, past_horizon) = match past_horizon::horizon(reference) {
        (h, _) if reference.get("losses").is_some_and(|l| l.numel() > h) => beyond_horizon(reference, other, &copts),
        _ => (compare(reference, &other, &copts), None),
    };
    let passed = comparison.passed() && !comparison.rows.is_empty();
    let other_label = other_label.to_string();
    Ok(Report { comparison, criterion: described, passed, other_label, naming_hint, past_horizon })
}

/// Whether `name` is among the tensors compared (`--keys` prefixes, `--exclude`).
fn judged(copts: &CompareOpts, name: &str) -> bool {
    let by = |ps: &[String]| ps.iter().any(|p| name.starts_with(p.as_str()));
    (copts.prefixes.is_empty() || by(&copts.prefixes)) && !by(&copts.exclude)
}

/// A trajectory past its per-step horizon: compared cut at the horizon, plus its waiting times.
fn beyond_horizon(
    reference: &TensorFile,
    mut other: TensorFile,
    copts: &CompareOpts,
) -> (Comparison, Option<PastHorizon>) {
    let losses = |f: &TensorFile| f.get("losses").and_then(|t| t.to_f64());
    let waiting = match (losses(reference), losses(&other)) {
        (Some(r), Some(o)) if judged(copts, "losses") => past_horizon::waiting_rows(&r, &o),
        _ => vec![],
    };
    let mut reference = reference.clone();
    let past = past_horizon::cut(&mut reference, &mut other);
    let mut comparison = compare(&reference, &other, copts);
    if past.is_some() {
        comparison.rows.extend(waiting);
    }
    (comparison, past)
}

fn rename(other: &mut TensorFile, pairs: &[(String, String)], label: &str) -> Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    for t in other.tensors.iter_mut() {
        if let Some((_, to)) = pairs.iter().find(|(from, _)| *from == t.name) {
            t.name = to.clone();
        }
    }
    other.tensors.sort_by(|x, y| x.name.cmp(&y.name)); // lookups are by binary search
    match other.tensors.windows(2).find(|w| w[0].name == w[1].name) {
        Some(w) => Err(Error::config("rename", format!("two tensors of {label} would both be named {}", w[0].name))),
        None => Ok(()),
    }
}

/// The criterion asked for, and how the report names it.
fn criterion(opts: &VerifyOpts, reference: &TensorFile) -> Result<(Criterion, String)> {
    if let Some((rtol, atol)) = opts.elementwise {
        for (name, t) in [("rtol", rtol), ("atol", atol)] {
            if !(t.is_finite() && t >= 0.0) {
                return Err(Error::config(name, format!("{t} (allowed a finite number ≥ 0)")));
            }
        }
        return Ok((
            Criterion::Elementwise { rtol, atol },
            format!("elementwise: |Δ| ≤ {atol:.1e} + {rtol:.1e}·|ref|"),
        ));
    }
    let f32_reference = reference.tensors.iter().any(|t| t.dtype_name() == "F32");
    let default = if f32_reference { "f32" } else { "f64" };
    match opts.preset.as_deref().unwrap_or(default) {
        "bits" => Ok((Criterion::Bits, "preset bits: identical".into())),
        "f32" => Ok((Criterion::Normwise(F32_TOL), format!("preset f32: ‖Δ‖∞/‖ref‖∞ ≤ {F32_TOL:.0e}"))),
        "f64" => Ok((Criterion::Normwise(F64_TOL), format!("preset f64: ‖Δ‖∞/‖ref‖∞ ≤ {F64_TOL:.0e}"))),
        p => Err(Error::config("preset", format!("{p:?} (allowed bits, f64, f32)"))),
    }
}

impl Report {
    /// The name of the first divergence: the first failing tensor in graph order, else the first
    /// tensor missing from the other side.
    pub fn first_divergence(&self) -> Option<&str> {
        let c = &self.comparison;
        c.first_divergence().map(|r| r.name.as_str()).or_else(|| c.missing_in_other.first().map(|s| s.as_str()))
    }

    pub fn to_json(&self) -> Value {
        let c = &self.comparison;
        json!({
            "passed": self.passed, "compared": c.rows.len(), "failed": c.failures(),
            "criterion": self.criterion, "first_divergence": self.first_divergence(),
            "tensors": c.rows.iter().map(|r| json!({
                "name": r.name, "shape": r.shape, "max_abs": r.max_abs, "max_rel": r.max_rel,
                "norm_rel": r.norm_rel, "pass": r.pass, "note": r.note,
            })).collect::<Vec<_>>(),
            "missing_in_other": c.missing_in_other, "only_in_other": c.only_in_other,
            "naming_hint": self.naming_hint, "past_horizon": self.past_horizon,
        })
    }

    /// The diagnosis line, the table (forward graph, then gradients backward; only failing rows
    /// when `failures_only`), the missing tensors and the one-line result.
    /// The diagnosis, the table and the count. `quiet`: only what failed, nothing on a pass;
    /// `all_rows`: every tensor's row, else only the failing ones (a passing comparison of 144
    /// tensors is two lines).
    pub fn render(&self, quiet: bool, all_rows: bool) -> String {
        let failures_only = quiet;
        let mut s = String::new();
        let c = &self.comparison;
        if let Some(p) = &self.past_horizon {
            s += &p.render();
        }
        let width = c.rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
        let _ = match (c.first_divergence(), c.missing_in_other.first()) {
            (Some(r), _) => {
                let note = if r.note.is_empty() { String::new() } else { format!("; {}", r.note) };
                let (name, rel) = (&r.name, r.norm_rel);
                writeln!(s, "first divergence: {name} (‖Δ‖∞/‖ref‖∞ {rel:.2e}{note}); everything before it agrees")
            }
            (None, Some(m)) => writeln!(s, "first divergence: {m} is missing in {}", self.other_label),
            (None, None) if self.passed && !failures_only => writeln!(s, "no divergence ({})", self.criterion),
            _ => Ok(()),
        };
        let shown = |r: &&super::compare::Row| !r.pass || (all_rows && !quiet);
        if !quiet && c.rows.iter().any(|r| shown(&r)) {
            let _ = writeln!(s, "{:<width$}  {:<16}  {:>10}  {:>10}  status", "tensor", "shape", "max_abs", "norm_rel");
        }
        for row in c.rows.iter().filter(shown) {
            let status = if row.pass { "ok" } else { "FAIL" };
            let note = if row.note.is_empty() { String::new() } else { format!("  ({})", row.note) };
            let shape = format!("{:?}", row.shape);
            let (name, abs, rel) = (&row.name, row.max_abs, row.norm_rel);
            let _ = writeln!(s, "{name:<width$}  {shape:<16}  {abs:>10.3e}  {rel:>10.3e}  {status}{note}");
        }
        self.render_missing(&mut s, width, failures_only);
        if !(failures_only && self.passed) {
            let _ = writeln!(s, "{} tensors compared, {} failed ({})", c.rows.len(), c.failures(), self.criterion);
        }
        if let (Some(h), false) = (self.naming_hint, c.missing_in_other.is_empty()) {
            let n = c.missing_in_other.len();
            let _ = writeln!(s, "hint: {} is missing {n} tensors; {h}", self.other_label);
        }
        s
    }

    /// A port with other names would list every tensor: the first few, then a count.
    fn render_missing(&self, s: &mut String, width: usize, failures_only: bool) {
        let (c, label) = (&self.comparison, &self.other_label);
        for m in c.missing_in_other.iter().take(10) {
            let _ = writeln!(s, "{m:<width$}  missing in {label}  FAIL");
        }
        if c.missing_in_other.len() > 10 {
            let _ = writeln!(s, "… and {} more missing in {label}", c.missing_in_other.len() - 10);
        }
        if !c.only_in_other.is_empty() && !failures_only {
            let shown: Vec<&str> = c.only_in_other.iter().take(6).map(|s| s.as_str()).collect();
            let more = c.only_in_other.len().saturating_sub(shown.len());
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            let _ = writeln!(s, "only in {label} (not compared): {}{more}", shown.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tensors::Tensor;

    fn file(ts: Vec<Tensor>) -> TensorFile {
        let mut tensors = ts;
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        TensorFile { tensors, metadata: None }
    }

    #[test]
    fn rename_maps_names_and_refuses_a_collision() {
        let r = file(vec![Tensor::from_scalars("embed.W_E", vec![1], &[1.0f32])]);
        let o = || {
            file(vec![Tensor::from_scalars("wte", vec![1], &[1.0f32]), Tensor::from_scalars("x", vec![1], &[2.0f32])])
        };
        let mut opts = VerifyOpts { rename: vec![("wte".into(), "embed.W_E".into())], ..Default::default() };
        let report = verify(&r, o(), &opts, "o").unwrap();
        assert!(report.passed && report.first_divergence().is_none());
        opts.rename.push(("x".into(), "embed.W_E".into()));
        let e = verify(&r, o(), &opts, "o").unwrap_err().to_string();
        assert!(e.contains("would both be named embed.W_E"), "{e}");
        let bad = VerifyOpts { elementwise: Some((f64::NAN, 0.0)), ..Default::default() };
        assert!(verify(&r, o(), &bad, "o").unwrap_err().to_string().contains("rtol"));
        let none = VerifyOpts { keys: vec!["nothing".into()], ..Default::default() };
        assert!(!verify(&r, o(), &none, "o").unwrap().passed, "a comparison of nothing is not a pass");
    }
}
