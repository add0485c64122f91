//! Figures (plotters, SVG backend only, no system fonts): line plots with confidence bands,
//! reference lines and markers, log axes, and grouped bar charts. Each figure is an SVG with its
//! legend beside the data, ticks chosen and labelled here (`ticks`), and the CSV of every plotted
//! value, saved beside it. Output is a deterministic string.

mod bar;
mod legend;
mod line;
pub mod ticks;

pub use bar::bar_chart;
pub use line::line_plot;

use crate::error::{Error, Result};
use std::path::Path;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    Line,
    /// Filled circles: windtunnel's measurements.
    Points,
    /// Open circles: the author's values, in the colour of the windtunnel series they pair with.
    Open,
    /// Open up-triangles at a run's budget: it never got there, the value is above (censored).
    Above,
}

/// One curve (or point set) of a line plot.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub mark: Mark,
    /// Palette index (default: the series' own position), so a pair shares its colour.
    pub color: Option<usize>,
}

impl Series {
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Line, color: None }
    }
    pub fn points(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Points, color: None }
    }
    /// The author's values beside windtunnel's: open markers.
    pub fn open(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Open, color: None }
    }
    /// Runs that never got there, at (x, budget).
    pub fn above(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Above, color: None }
    }
    /// In palette colour `i` (pair a measurement with the figure it is compared with).
    pub fn in_color(mut self, i: usize) -> Self {
        self.color = Some(i);
        self
    }
}

/// A shaded interval (x, low, high), e.g. a 95% confidence band, in the colour of the series it
/// belongs to (`series`, an index into `LinePlot::series`).
#[derive(Clone, Debug)]
pub struct Band {
    pub label: String,
    pub points: Vec<(f64, f64, f64)>,
    pub series: usize,
}

#[derive(Clone, Debug, Default)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Horizontal reference lines (value, label), e.g. ln K; each in its own dash and colour.
    pub hlines: Vec<(f64, String)>,
    /// Vertical markers (value, label), e.g. T1.
    pub vlines: Vec<(f64, String)>,
    pub log_x: bool,
    pub log_y: bool,
    /// Ticks of the x axis at these values (e.g. the swept η), instead of round numbers.
    pub x_ticks: Option<Vec<f64>>,
}

/// A rendered figure: the SVG and the CSV of what it plots.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub svg: String,
    pub csv: String,
}

impl Figure {
    /// Write `<path>` (the SVG, `name.svg`) and the CSV beside it (`name.csv`), atomically.
    pub fn save(&self, svg_path: &Path) -> Result<()> {
        crate::io::tensors::write_atomic(svg_path, self.svg.as_bytes())?;
        crate::io::tensors::write_atomic(&svg_path.with_extension("csv"), self.csv.as_bytes())
    }
}

const PALETTE: [plotters::style::RGBColor; 8] = {
    use plotters::style::RGBColor;
    [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ]
};

fn err(e: impl std::fmt::Display) -> Error {
    Error::other(format!("plot: {e}"))
}

/// A CSV field, quoted when it holds a comma, quote or newline (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// A number in a CSV: shortest round-trip form, empty for none.
fn num(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or(String::new(), |v| format!("{v}"))
}

/// Every plotted value of a line plot, one row per point, in long form:
/// `series, kind, <x label>, <y label>, <y label> low, <y label> high`.
fn line_csv(p: &LinePlot) -> String {
    let header = [
        "series".into(),
        "kind".into(),
        p.x_label.clone(),
        p.y_label.clone(),
        format!("{} low", p.y_label),
        format!("{} high", p.y_label),
    ];
    let mut out = header.iter().map(|h| field(h)).collect::<Vec<_>>().join(",") + "\n";
    let mut row = |label: &str, kind: &str, x: Option<f64>, y: Option<f64>, lo: Option<f64>, hi: Option<f64>| {
        out += &format!("{},{kind},{},{},{},{}\n", field(label), num(x), num(y), num(lo), num(hi));
    };
    for s in &p.series {
        for &(x, y) in &s.points {
            let kind = match s.mark {
                Mark::Line => "line",
                Mark::Points => "points",
                Mark::Open => "points (open)",
                Mark::Above => "above (never reached; at the budget)",
            };
            row(&s.label, kind, Some(x), Some(y), None, None);
        }
    }
    for b in &p.bands {
        for &(x, lo, hi) in &b.points {
            row(&b.label, "band", Some(x), None, Some(lo), Some(hi));
        }
    }
    for (v, label) in &p.hlines {
        row(label, "hline", None, Some(*v), None, None);
    }
    for (v, label) in &p.vlines {
        row(label, "vline", Some(*v), None, None, None);
    }
    out
}

#[cfg(test)]
mod tests;
