use super::Outcome;
use crate::check::compare::{CompareOpts, Comparison, FLOOR_FRACTION, compare};
use crate::error::Result;
use crate::io::tensors;
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Reference file (e.g. a windtunnel export).
    reference: PathBuf,
    /// File to check against it (e.g. the same export from your implementation).
    other: PathBuf,
    /// Relative tolerance: pass when |other − ref| ≤ atol + rtol·|ref| elementwise.
    #[arg(long, default_value_t = 1e-5, value_parser = tolerance)]
    rtol: f64,
    /// Absolute tolerance.
    #[arg(long, default_value_t = 1e-8, value_parser = tolerance)]
    atol: f64,
    /// Only compare tensors whose names start with one of these prefixes (comma-separated),
    /// e.g. --keys logits,loss,grad.blocks.0
    #[arg(long, value_delimiter = ',')]
    keys: Vec<String>,
    /// Leave out tensors whose names start with one of these (comma-separated): the explicit way
    /// to skip what cannot or need not be compared; anything else not compared fails.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    #[command(flatten)]
    out: super::Output,
}

/// A tolerance: finite and ≥ 0 (a NaN tolerance would pass everything).
fn tolerance(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(t) => Err(format!("{t} (allowed a finite number ≥ 0)")),
        Err(e) => Err(e.to_string()),
    }
}

pub fn run(a: Args) -> Result<Outcome> {
    let r = tensors::read(&a.reference)?;
    let o = tensors::read(&a.other)?;
    let opts = CompareOpts { rtol: a.rtol, atol: a.atol, prefixes: a.keys.clone(), exclude: a.exclude.clone() };
    let cmp = compare(&r, &o, &opts);
    let passed = cmp.passed() && !cmp.rows.is_empty();
    a.out.emit(&json!({
        "passed": passed, "compared": cmp.rows.len(), "failed": cmp.failures(),
        "rtol": a.rtol, "atol": a.atol,
        "tensors": cmp.rows.iter().map(|r| json!({
            "name": r.name, "shape": r.shape, "max_abs": r.max_abs, "max_rel": r.max_rel,
            "pass": r.pass, "note": r.note,
        })).collect::<Vec<_>>(),
        "missing_in_other": cmp.missing_in_other, "only_in_other": cmp.only_in_other,
    }));
    if !a.out.json {
        print_table(&cmp, &a, passed);
    }
    Ok(if passed { Outcome::Ok } else { Outcome::CheckFailed })
}

/// The table: every tensor (only failing ones with --quiet), then the one-line result.
fn print_table(cmp: &Comparison, a: &Args, passed: bool) {
    let width = cmp.rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
    if a.out.text() {
        println!("{:<width$}  {:<16}  {:>10}  {:>10}  status", "tensor", "shape", "max_abs", "max_rel");
    }
    for row in &cmp.rows {
        if a.out.quiet && row.pass {
            continue;
        }
        let status = if row.pass { "ok" } else { "FAIL" };
        let note = if row.note.is_empty() { String::new() } else { format!("  ({})", row.note) };
        println!(
            "{:<width$}  {:<16}  {:>10.3e}  {:>10.3e}  {status}{note}",
            row.name,
            format!("{:?}", row.shape),
            row.max_abs,
            row.max_rel
        );
    }
    for m in &cmp.missing_in_other {
        println!("{m:<width$}  missing in {}  FAIL", a.other.display());
    }
    if !cmp.only_in_other.is_empty() && a.out.text() {
        let shown: Vec<&str> = cmp.only_in_other.iter().take(6).map(|s| s.as_str()).collect();
        let more = cmp.only_in_other.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        println!("only in {} (not compared): {}{more}", a.other.display(), shown.join(", "));
    }
    if a.out.quiet && passed {
        return;
    }
    println!(
        "{} tensors compared, {} failed (rtol {:.1e}, atol {:.1e}; max_rel floor = {FLOOR_FRACTION:.0e} × max|ref| per tensor)",
        cmp.rows.len(),
        cmp.failures(),
        a.rtol,
        a.atol
    );
}
