use super::Outcome;
use crate::check::compare::{CompareOpts, Comparison, Criterion, F32_TOL, F64_TOL, compare};
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
    let mut o = tensors::read(&a.other)?;
    if let Some(path) = &a.rename {
        let pairs = crate::check::names::read_rename(path)?;
        for t in o.tensors.iter_mut() {
            if let Some((_, to)) = pairs.iter().find(|(from, _)| *from == t.name) {
                t.name = to.clone();
            }
        }
        o.tensors.sort_by(|x, y| x.name.cmp(&y.name)); // lookups are by binary search
        if let Some(w) = o.tensors.windows(2).find(|w| w[0].name == w[1].name) {
            let what = format!("two tensors of {} would both be named {}", a.other.display(), w[0].name);
            return Err(crate::error::Error::format(path, what));
        }
    }
    let hint = (!o.tensors.is_empty()).then(|| o.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
    let hint = hint.and_then(|n| crate::check::names::scheme_hint(&n));
    let (criterion, described) = criterion(&a, &r);
    let opts = CompareOpts { criterion, prefixes: a.keys.clone(), exclude: a.exclude.clone() };
    let cmp = compare(&r, &o, &opts);
    let passed = cmp.passed() && !cmp.rows.is_empty();
    let first = cmp.first_divergence().map(|r| r.name.clone()).or_else(|| cmp.missing_in_other.first().cloned());
    a.out.emit(&json!({
        "passed": passed, "compared": cmp.rows.len(), "failed": cmp.failures(),
        "criterion": described, "first_divergence": first,
        "tensors": cmp.rows.iter().map(|r| json!({
            "name": r.name, "shape": r.shape, "max_abs": r.max_abs, "max_rel": r.max_rel, "norm_rel": r.norm_rel,
            "pass": r.pass, "note": r.note,
        })).collect::<Vec<_>>(),
        "missing_in_other": cmp.missing_in_other, "only_in_other": cmp.only_in_other, "naming_hint": hint,
    }));
    if !a.out.json {
        print_table(&cmp, &a, passed, &described);
        if let (Some(h), false) = (hint, cmp.missing_in_other.is_empty()) {
            println!("hint: {} is missing {} tensors; {h}", a.other.display(), cmp.missing_in_other.len());
        }
    }
    Ok(if passed { Outcome::Ok } else { Outcome::CheckFailed })
}

/// The criterion asked for, and how the report names it.
fn criterion(a: &Args, reference: &crate::io::tensors::TensorFile) -> (Criterion, String) {
    if let (Some(rtol), Some(atol)) = (a.rtol, a.atol) {
        return (Criterion::Elementwise { rtol, atol }, format!("elementwise: |Δ| ≤ {atol:.1e} + {rtol:.1e}·|ref|"));
    }
    let f32_reference = reference.tensors.iter().any(|t| t.dtype_name() == "F32");
    let preset = a.preset.clone().unwrap_or_else(|| if f32_reference { "f32" } else { "f64" }.into());
    match preset.as_str() {
        "bits" => (Criterion::Bits, "preset bits: identical".into()),
        "f32" => (Criterion::Normwise(F32_TOL), format!("preset f32: ‖Δ‖∞/‖ref‖∞ ≤ {F32_TOL:.0e}")),
        _ => (Criterion::Normwise(F64_TOL), format!("preset f64: ‖Δ‖∞/‖ref‖∞ ≤ {F64_TOL:.0e}")),
    }
}

/// The diagnosis line, the table (forward graph, then gradients backward; only failing rows
/// with --quiet), then the one-line result.
fn print_table(cmp: &Comparison, a: &Args, passed: bool, described: &str) {
    let width = cmp.rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
    match (cmp.first_divergence(), cmp.missing_in_other.first()) {
        (Some(r), _) => println!(
            "first divergence: {} (‖Δ‖∞/‖ref‖∞ {:.2e}{}); everything before it agrees",
            r.name,
            r.norm_rel,
            if r.note.is_empty() { String::new() } else { format!("; {}", r.note) }
        ),
        (None, Some(m)) => println!("first divergence: {m} is missing in {}", a.other.display()),
        (None, None) if passed && a.out.text() => println!("no divergence ({described})"),
        _ => {}
    }
    if a.out.text() {
        println!("{:<width$}  {:<16}  {:>10}  {:>10}  status", "tensor", "shape", "max_abs", "norm_rel");
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
            row.norm_rel
        );
    }
    // A port with other names would list every tensor: the first few, then a count.
    for m in cmp.missing_in_other.iter().take(10) {
        println!("{m:<width$}  missing in {}  FAIL", a.other.display());
    }
    if cmp.missing_in_other.len() > 10 {
        println!("… and {} more missing in {}", cmp.missing_in_other.len() - 10, a.other.display());
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
    println!("{} tensors compared, {} failed ({described})", cmp.rows.len(), cmp.failures());
}
