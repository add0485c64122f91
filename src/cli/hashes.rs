use super::{Dtype, Outcome};
use crate::check::golden::{differences, fixture_hashes, render};
use crate::error::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Scalar type of the computation.
    #[arg(long, default_value = "f32", value_parser = super::dtype_parser())]
    dtype: Dtype,
    /// Compare with a golden file (e.g. golden/canonical_f32.txt) instead of printing: every
    /// hash must match and the file's arithmetic version must be this build's (its revision may
    /// differ). Exit 1 naming each tensor that differs.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    #[command(flatten)]
    out: super::Output,
}

pub fn run(a: Args) -> Result<Outcome> {
    // Read before the minute of hashing, so a wrong path fails at once.
    let golden = match &a.check {
        Some(p) => Some(crate::io::read_text(p)?),
        None => None,
    };
    let rows = crate::with_scalar!(a.dtype, S => fixture_hashes::<S>());
    let hashes: Vec<_> = rows.iter().map(|(name, hash)| serde_json::json!({"name": name, "hash": hash})).collect();
    let Some(text) = golden else {
        a.out.emit(&serde_json::json!({
            "arithmetic": crate::numerics::ARITHMETIC, "dtype": a.dtype.name(), "hashes": hashes,
        }));
        if a.out.text() {
            print!("{}", render(&rows));
        }
        return Ok(Outcome::Ok);
    };
    let path = a.check.as_deref().expect("checked above");
    let is_row = |l: &str| {
        matches!(l.split_whitespace().collect::<Vec<_>>()[..],
        [_, h] if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    if let Some((i, _)) = lines.clone().find(|(_, l)| !is_row(l)) {
        return Err(Error::format(path, format!("line {}: not `<key> <16 hex digits>`: not a golden file", i + 1)));
    }
    if lines.count() == 0 {
        return Err(Error::format(path, "no `<key> <hash>` lines: not a golden file"));
    }
    let diffs = differences(&text, &rows);
    a.out.emit(&serde_json::json!({
        "arithmetic": crate::numerics::ARITHMETIC, "dtype": a.dtype.name(), "golden": path,
        "identical": diffs.is_empty(), "differences": diffs,
    }));
    if diffs.is_empty() {
        if a.out.text() {
            println!("{} {} hashes identical to {}", rows.len(), a.dtype.name(), path.display());
        }
        return Ok(Outcome::Ok);
    }
    for d in &diffs {
        println!("DIFFERS {d}");
    }
    println!(
        "{} difference(s) from {} ({} {} hashes computed)",
        diffs.len(),
        path.display(),
        rows.len(),
        a.dtype.name()
    );
    Ok(Outcome::CheckFailed)
}
