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
    #[arg(long, default_value_t = 1e-5)]
    rtol: f64,
    /// Absolute tolerance.
    #[arg(long, default_value_t = 1e-8)]
    atol: f64,
    /// Only compare tensors whose names start with one of these prefixes (comma-separated),
    /// e.g. --keys logits,loss,grad.blocks.0
    #[arg(long, value_delimiter = ',')]
    keys: Vec<String>,
    /// Print only failing tensors and the summary.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: Args) -> Result<Outcome> {
    let r = tensors::read(&a.reference)?;
    let o = tensors::read(&a.other)?;
    let cmp = compare(&r, &o, &CompareOpts { rtol: a.rtol, atol: a.atol, prefixes: a.keys.clone() });
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
