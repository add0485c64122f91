//! Tensor-by-tensor comparison of two safetensors files (`windtunnel verify`, parity tests).
//!
//! For every tensor present in both files (optionally only names starting with given prefixes):
//! - integer tensors must be equal;
//! - float tensors are judged by the [`Criterion`]: identical bits, normwise
//!   (`‖other − ref‖∞ / ‖ref‖∞ ≤ tol`, the presets), or elementwise
//!   (`|other − ref| ≤ atol + rtol·|ref|`, numpy `isclose` with REF as the reference); NaN matches
//!   only NaN. Normwise, a tensor that is zero up to rounding in the reference (‖ref‖∞ below
//!   1e-6 of the largest of its kind, e.g. the key bias's gradient, which is exactly zero in exact
//!   arithmetic) is judged on the scale of its kind (all gradients, all activations, all parameters);
//! - the reported relative difference is `max |other − ref| / max(|ref|, floor)` with
//!   `floor = 1e-6 · max|ref|` over the tensor (elements a million times smaller than the tensor's
//!   largest are "near zero" and judged on the tensor's scale; `atol` decides them).
//!
//! A float dtype difference (f32 vs f64) is reported but compared by value; a shape difference or
//! a tensor missing from OTHER fails; tensors only in OTHER are listed.

use super::order::graph_key;
use crate::io::tensors::{Tensor, TensorFile, Values};
use std::collections::BTreeMap;

/// How a float tensor is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Criterion {
    /// Every element identical (golden files, thread and SIMD invariance).
    Bits,
    /// `‖other − ref‖∞ / ‖ref‖∞ ≤ tol` per tensor (for a scalar: its relative error).
    Normwise(f64),
    /// `|other − ref| ≤ atol + rtol·|ref|` for every element.
    Elementwise { rtol: f64, atol: f64 },
}

/// The normwise tolerance of `--preset f64`: a correct f64 port (TransformerLens) agrees to
/// ≤ 2e-15; a LayerNorm eps of 1e-6 instead of 1e-5 differs by ≥ 1.9e-5 (`tests/verify_presets.rs`).
pub const F64_TOL: f64 = 1e-12;
/// The normwise tolerance of `--preset f32`: TransformerLens in f32 agrees to ≤ 1.2e-6.
pub const F32_TOL: f64 = 1e-5;
/// Below this fraction of the largest ‖ref‖∞ of its kind, a tensor is zero up to rounding.
pub const ZERO_FRACTION: f64 = 1e-6;

#[derive(Clone, Debug)]
pub struct CompareOpts {
    pub criterion: Criterion,
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
    /// ‖other − ref‖∞ / ‖ref‖∞ (NaN when a NaN differs; ‖Δ‖∞ itself when ‖ref‖∞ = 0).
    pub norm_rel: f64,
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
    /// The first failing tensor in graph order: where the other implementation first goes wrong.
    pub fn first_divergence(&self) -> Option<&Row> {
        self.rows.iter().find(|r| !r.pass)
    }
}

fn excluded(name: &str, opts: &CompareOpts) -> bool {
    opts.exclude.iter().any(|p| name.starts_with(p.as_str()))
}

fn selected(name: &str, prefixes: &[String]) -> bool {
    prefixes.is_empty() || prefixes.iter().any(|p| name.starts_with(p.as_str()))
}

/// The normwise relative difference ‖o − r‖∞ / ‖r‖∞ (‖o − r‖∞ when r is all zero; NaN when a NaN
/// is on one side only).
pub fn norm_rel(r: &[f64], o: &[f64]) -> f64 {
    let mut scale = 0.0f64;
    let mut diff = 0.0f64;
    for (&a, &b) in r.iter().zip(o) {
        if a.is_nan() != b.is_nan() {
            return f64::NAN;
        }
        if a != b && !a.is_nan() {
            diff = diff.max((a - b).abs());
        }
        if a.is_finite() {
            scale = scale.max(a.abs());
        }
    }
    if scale > 0.0 { diff / scale } else { diff }
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

/// A tensor's kind, for the scale a zero-up-to-rounding tensor is judged on.
fn kind(name: &str) -> &'static str {
    if name.starts_with("grad.") {
        "grad"
    } else if name.starts_with("cache.") {
        "cache"
    } else {
        "other"
    }
}

/// The largest ‖ref‖∞ of each kind of float tensor in the reference.
fn kind_scales(reference: &TensorFile) -> BTreeMap<&'static str, f64> {
    let mut scales = BTreeMap::new();
    for t in &reference.tensors {
        if let Some(v) = t.to_f64() {
            let m = v.iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
            let e = scales.entry(kind(&t.name)).or_insert(0.0f64);
            *e = e.max(m);
        }
    }
    scales
}

/// Judge float values: (pass, max_abs, max_rel, norm_rel).
fn judge(a: &[f64], b: &[f64], criterion: Criterion, kind_scale: f64) -> (bool, f64, f64, f64) {
    let (max_abs, max_rel, within) = match criterion {
        Criterion::Elementwise { rtol, atol } => compare_values(a, b, rtol, atol),
        _ => compare_values(a, b, 0.0, 0.0),
    };
    let scale = a.iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    let mut norm = norm_rel(a, b);
    if scale < ZERO_FRACTION * kind_scale && norm.is_finite() {
        norm = max_abs / kind_scale; // zero up to rounding: judged on its kind's scale
    }
    let pass = match criterion {
        Criterion::Bits => a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())),
        Criterion::Normwise(tol) => norm <= tol,
        Criterion::Elementwise { .. } => within,
    };
    (pass, max_abs, max_rel, norm)
}

/// What a shape difference looks like, and the other values rearranged to the reference's
/// layout when that is meaningful: size-1 dimensions are ignored (a loss saved as [1]); a 2-D
/// tensor stored transposed is compared transposed and fails with a note saying so.
fn reshape(rshape: &[usize], oshape: &[usize], o: Vec<f64>) -> (Option<Vec<f64>>, bool, String) {
    let squeeze = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    let numel = |s: &[usize]| s.iter().product::<usize>();
    if squeeze(rshape) == squeeze(oshape) {
        return (Some(o), true, format!("shape {oshape:?} vs {rshape:?}: size-1 dims ignored"));
    }
    if rshape.len() == 2 && oshape == [rshape[1], rshape[0]] {
        let (r, c) = (rshape[0], rshape[1]);
        let t = (0..r * c).map(|i| o[(i % c) * r + i / c]).collect();
        return (Some(t), false, format!("transposed: stored {oshape:?}, expected {rshape:?} (TL layout)"));
    }
    let what = if numel(rshape) != numel(oshape) {
        "a different size"
    } else if oshape.len() == 1 || rshape.len() == 1 {
        "flattened"
    } else {
        "reshaped"
    };
    (None, false, format!("shape {oshape:?} vs {rshape:?}: {what}"))
}

/// In f32, a trajectory's parameters pass when `|Δ| ≤ TRAJ_F32_STEP · Σ lr`: AdamW divides each
/// gradient by its running RMS, so f32 rounding in small gradients becomes update noise of up to
/// a fraction of lr per step. PyTorch vs windtunnel after 25 steps from the author's init: at most
/// 3.8e-5 = 1.5e-3·Σlr (`golden/tl/traj_constant_f32_25.safetensors`); the per-step records keep
/// the preset and catch update bugs (no weight decay moves `grad_norm_sq` by 2.7e-5, noise 6e-7).
pub const TRAJ_F32_STEP: f64 = 1e-2;

/// Σ |lr| of a trajectory reference (one with per-step `losses` and `lr`).
fn trajectory_lr_sum(reference: &TensorFile) -> Option<f64> {
    reference.get("losses")?;
    let lr = reference.get("lr")?.to_f64()?;
    Some(lr.iter().map(|x| x.abs()).sum::<f64>())
}

/// The per-step records of a trajectory reference, judged by the criterion as they are.
const STEP_RECORDS: [&str; 4] = ["losses", "lr", "grad_norm_sq", "perm"];

/// A trajectory's rules for what correct implementations cannot agree on bit for bit: the key
/// bias (zero gradient in exact arithmetic, so each AdamW step moves it by up to about lr in a
/// direction set by rounding noise: `|Δ| ≤ 2·Σ lr`), and f32 parameters ([`TRAJ_F32_STEP`]).
fn trajectory_rule(rt: &Tensor, criterion: Criterion, lr_sum: f64, row: &mut Row) {
    if row.note.contains("shape") || STEP_RECORDS.contains(&rt.name.as_str()) {
        return;
    }
    if rt.name.ends_with("attn.b_K") {
        let bound = 2.0 * lr_sum;
        row.pass = row.max_abs <= bound;
        row.note = format!("undetermined by the maths (zero gradient): |Δ| ≤ 2·Σlr = {bound:.1e}");
    } else if let (Criterion::Normwise(_), "F32", false) = (criterion, rt.dtype_name(), row.pass) {
        let bound = TRAJ_F32_STEP * lr_sum;
        row.pass = row.max_abs <= bound;
        let sep = if row.note.is_empty() { "" } else { "; " };
        row.note = format!("{}{sep}f32 trajectory: |Δ| ≤ {TRAJ_F32_STEP:.0e}·Σlr = {bound:.1e}", row.note);
    }
}

pub fn compare(reference: &TensorFile, other: &TensorFile, opts: &CompareOpts) -> Comparison {
    let mut out = Comparison::default();
    let scales = kind_scales(reference);
    let lr_sum = trajectory_lr_sum(reference);
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
            norm_rel: 0.0,
            pass: true,
            note: String::new(),
        };
        match (&rt.values, &ot.values) {
            (Values::I64(a), Values::I64(b)) if rt.shape == ot.shape => {
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
                row.note =
                    format!("dtype {} vs {}, shape {:?} vs {:?}", rt.dtype_name(), ot.dtype_name(), rt.shape, ot.shape);
            }
            _ => compare_floats(rt, ot, opts.criterion, scales[kind(&rt.name)], &mut row),
        }
        if let (Some(lr_sum), true) = (lr_sum, row.max_abs.is_finite()) {
            trajectory_rule(rt, opts.criterion, lr_sum, &mut row);
        }
        out.rows.push(row);
    }
    out.rows.sort_by_key(|r| graph_key(&r.name));
    out.missing_in_other.sort_by_key(|n| graph_key(n));
    out.only_in_other = other
        .tensors
        .iter()
        .filter(|t| selected(&t.name, &opts.prefixes) && reference.get(&t.name).is_none())
        .map(|t| t.name.clone())
        .collect();
    out
}

fn compare_floats(rt: &Tensor, ot: &Tensor, criterion: Criterion, kind_scale: f64, row: &mut Row) {
    let (a, b) = (rt.to_f64().expect("a float tensor"), ot.to_f64().expect("a float tensor"));
    let (b, shape_ok, shape_note) =
        if rt.shape == ot.shape { (Some(b), true, String::new()) } else { reshape(&rt.shape, &ot.shape, b) };
    let mut notes = vec![];
    if !shape_note.is_empty() {
        notes.push(shape_note);
    }
    match b {
        Some(b) => {
            let (pass, max_abs, max_rel, norm) = judge(&a, &b, criterion, kind_scale);
            (row.max_abs, row.max_rel, row.norm_rel, row.pass) = (max_abs, max_rel, norm, pass && shape_ok);
            if !shape_ok {
                notes.push(if pass { "values match once transposed".into() } else { "differs even transposed".into() });
            }
        }
        None => (row.max_abs, row.max_rel, row.norm_rel, row.pass) = (f64::NAN, f64::NAN, f64::NAN, false),
    }
    if rt.dtype_name() != ot.dtype_name() {
        notes.push(format!("dtype {} vs {} (compared as f64)", rt.dtype_name(), ot.dtype_name()));
    }
    row.note = notes.join("; ");
}
