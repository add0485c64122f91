use super::Outcome;
use crate::check::verify::{VerifyOpts, verify};
use crate::error::Result;
use crate::io::tensors;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Reference file (e.g. a windtunnel export).
    reference: PathBuf,
    /// File to check against it (e.g. the same export from your implementation).
    other: PathBuf,
    /// How to judge: `bits` (identical), `f64` (normwise ‖Δ‖∞/‖ref‖∞ ≤ 1e-12 per tensor) or `f32`
    /// (normwise ≤ 1e-5), calibrated on TransformerLens against four wrong ports (docs/interop.md).
    /// Default: `f32` when the reference holds f32 tensors, else `f64`.
    #[arg(long, value_parser = ["bits", "f64", "f32"], conflicts_with_all = ["rtol", "atol"])]
    preset: Option<String>,
    /// Elementwise instead: pass when |other − ref| ≤ atol + rtol·|ref| for every element.
    #[arg(long, value_parser = tolerance, requires = "atol")]
    rtol: Option<f64>,
    /// Absolute tolerance of the elementwise criterion (with --rtol).
    #[arg(long, value_parser = tolerance, requires = "rtol")]
    atol: Option<f64>,
    /// Only compare tensors whose names start with one of these prefixes (comma-separated),
    /// e.g. --keys logits,loss,grad.blocks.0
    #[arg(long, value_delimiter = ',')]
    keys: Vec<String>,
    /// Leave out tensors whose names start with one of these (comma-separated): the explicit way
    /// to skip what cannot or need not be compared; anything else not compared fails.
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Rename tensors of the second file first: one `their_name tl_name` pair per line (for a port
    /// whose names differ from TransformerLens's one to one).
    #[arg(long, value_name = "FILE")]
    rename: Option<PathBuf>,
    /// Print a row for every tensor compared, not only for those that failed.
    #[arg(long)]
    all: bool,
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
    let rename = match &a.rename {
        Some(path) => crate::check::names::read_rename(path)?,
        None => vec![],
    };
    let opts = VerifyOpts {
        preset: a.preset.clone(),
        elementwise: a.rtol.zip(a.atol),
        keys: a.keys.clone(),
        exclude: a.exclude.clone(),
        rename,
    };
    let report = verify(&r, o, &opts, &a.other.display().to_string())?;
    a.out.emit(&report.to_json());
    if !a.out.json {
        print!("{}", report.render(a.out.quiet, a.all));
    }
    Ok(if report.passed { Outcome::Ok } else { Outcome::CheckFailed })
}
