//! Tensor-by-tensor comparison of two safetensors files (`windtunnel verify`, parity tests).
//!
//! For every tensor present in both files (optionally only names starting with given prefixes):
//! - integer tensors must be equal;
//! - float tensors pass when every element satisfies `|other − ref| ≤ atol + rtol·|ref|`
//!   (numpy `isclose` with REF as the reference); NaN matches only NaN;
//! - the reported relative difference is `max |other − ref| / max(|ref|, floor)` with
//!   `floor = 1e-6 · max|ref|` over the tensor (elements a million times smaller than the tensor's
//!   largest are "near zero" and judged on the tensor's scale; `atol` decides them).
//!
//! A float dtype difference (f32 vs f64) is reported but compared by value; a shape difference or
//! a tensor missing from OTHER fails; tensors only in OTHER are listed.

use crate::io::tensors::{TensorFile, Values};

#[derive(Clone, Debug)]
pub struct CompareOpts {
    pub rtol: f64,
    pub atol: f64,
    /// Only names starting with one of these (empty = all).
    pub prefixes: Vec<String>,
    /// Never names starting with one of these (the explicit way to leave a tensor out).
    pub exclude: Vec<String>,
}

/// Fraction of the tensor's largest |ref| below which an element counts as near zero.
pub const FLOOR_FRACTION: f64 = 1e-6;

#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub shape: Vec<usize>,
    pub max_abs: f64,
    pub max_rel: f64,
    pub pass: bool,
    pub note: String,
}

#[derive(Clone, Debug, Default)]
pub struct Comparison {
    pub rows: Vec<Row>,
    pub missing_in_other: Vec<String>,
    pub only_in_other: Vec<String>,
}

impl Comparison {
    pub fn failures(&self) -> usize {
        self.rows.iter().filter(|r| !r.pass).count() + self.missing_in_other.len()
    }
    pub fn passed(&self) -> bool {
        self.failures() == 0
    }
    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }
}

fn excluded(name: &str, opts: &CompareOpts) -> bool {
    opts.exclude.iter().any(|p| name.starts_with(p.as_str()))
}

fn selected(name: &str, prefixes: &[String]) -> bool {
    prefixes.is_empty() || prefixes.iter().any(|p| name.starts_with(p.as_str()))
}

/// Compare element lists: (max_abs, max_rel, all within tolerance).
pub fn compare_values(r: &[f64], o: &[f64], rtol: f64, atol: f64) -> (f64, f64, bool) {
    let scale = r.iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    let floor = (FLOOR_FRACTION * scale).max(f64::MIN_POSITIVE);
    let (mut max_abs, mut max_rel, mut ok) = (0.0f64, 0.0f64, true);
    for (&a, &b) in r.iter().zip(o) {
        if a.is_nan() || b.is_nan() {
            if !(a.is_nan() && b.is_nan()) {
                ok = false;
                max_abs = f64::NAN;
            }
            continue;
        }
        if a == b {
            continue; // also equal infinities
        }
        let d = (a - b).abs();
        max_abs = max_abs.max(d);
        max_rel = max_rel.max(d / a.abs().max(floor));
        if d > atol + rtol * a.abs() {
            ok = false;
        }
    }
    (max_abs, max_rel, ok)
}

pub fn compare(reference: &TensorFile, other: &TensorFile, opts: &CompareOpts) -> Comparison {
    let mut out = Comparison::default();
    for rt in reference.tensors.iter().filter(|t| selected(&t.name, &opts.prefixes) && !excluded(&t.name, opts)) {
        let Some(ot) = other.get(&rt.name) else {
            out.missing_in_other.push(rt.name.clone());
            continue;
        };
        let mut row = Row {
            name: rt.name.clone(),
            shape: rt.shape.clone(),
            max_abs: 0.0,
            max_rel: 0.0,
            pass: true,
            note: String::new(),
        };
        if rt.shape != ot.shape {
            row.pass = false;
            row.note = format!("shape {:?} vs {:?}", rt.shape, ot.shape);
            out.rows.push(row);
            continue;
        }
        match (&rt.values, &ot.values) {
            (Values::I64(a), Values::I64(b)) => {
                let diff = a.iter().zip(b).filter(|(x, y)| x != y).count();
                row.pass = diff == 0;
                row.max_abs = a.iter().zip(b).map(|(x, y)| (x - y).unsigned_abs() as f64).fold(0.0, f64::max);
                if diff > 0 {
                    row.note = format!("{diff} integer elements differ");
                }
            }
            // Anything not compared fails: a check that silently skips a tensor is no check.
            (Values::Other(d), _) | (_, Values::Other(d)) => {
                row.pass = false;
                row.note = format!("cannot compare dtype {d}; leave it out with --exclude {}", rt.name);
            }
            (Values::I64(_), _) | (_, Values::I64(_)) => {
                row.pass = false;
                row.note = format!("dtype {} vs {}", rt.dtype_name(), ot.dtype_name());
            }
            _ => {
                let (a, b) = (rt.to_f64().unwrap(), ot.to_f64().unwrap());
                let (max_abs, max_rel, ok) = compare_values(&a, &b, opts.rtol, opts.atol);
                row.max_abs = max_abs;
                row.max_rel = max_rel;
                row.pass = ok;
                if rt.dtype_name() != ot.dtype_name() {
                    row.note = format!("dtype {} vs {} (compared as f64)", rt.dtype_name(), ot.dtype_name());
                }
            }
        }
        out.rows.push(row);
    }
    out.only_in_other = other
        .tensors
        .iter()
        .filter(|t| selected(&t.name, &opts.prefixes) && reference.get(&t.name).is_none())
        .map(|t| t.name.clone())
        .collect();
    out
}
