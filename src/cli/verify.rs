use super::Outcome;
use crate::check::compare::{CompareOpts, FLOOR_FRACTION, compare};
use crate::error::Result;
use crate::io::tensors;
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
    /// Print only failing tensors and the summary.
    #[arg(long)]
    quiet: bool,
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
    let width = cmp.rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
    println!("{:<width$}  {:<16}  {:>10}  {:>10}  status", "tensor", "shape", "max_abs", "max_rel");
    for row in &cmp.rows {
        if a.quiet && row.pass {
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
    if !cmp.only_in_other.is_empty() {
        let shown: Vec<&str> = cmp.only_in_other.iter().take(6).map(|s| s.as_str()).collect();
        let more = cmp.only_in_other.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        println!("only in {} (not compared): {}{more}", a.other.display(), shown.join(", "));
    }
    println!(
        "{} tensors compared, {} failed (rtol {:.1e}, atol {:.1e}; max_rel floor = {FLOOR_FRACTION:.0e} × max|ref| per tensor)",
        cmp.rows.len(),
        cmp.failures(),
        a.rtol,
        a.atol
    );
    Ok(if cmp.passed() && !cmp.rows.is_empty() { Outcome::Ok } else { Outcome::CheckFailed })
}
