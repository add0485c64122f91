//! SVG figures (plotters, SVG backend only, no system fonts): line plots with reference lines
//! and markers, log axes, and grouped bar charts. Output is a deterministic string.

use crate::error::{Error, Result};
use plotters::prelude::*;

/// One curve (or point set) of a line plot.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Draw markers instead of a line.
    pub markers: bool,
}

impl Series {
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, markers: false }
    }
    pub fn points(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, markers: true }
    }
}

#[derive(Clone, Debug, Default)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Horizontal reference lines (value, label), e.g. ln K.
    pub hlines: Vec<(f64, String)>,
    /// Vertical markers (value, label), e.g. T1.
    pub vlines: Vec<(f64, String)>,
    pub log_x: bool,
    pub log_y: bool,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn err(e: impl std::fmt::Display) -> Error {
    Error::other(format!("plot: {e}"))
}

fn bounds(p: &LinePlot) -> (f64, f64, f64, f64) {
    let xs = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)).chain(p.vlines.iter().map(|v| v.0));
    let ys = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.1)).chain(p.hlines.iter().map(|h| h.0));
    let ok_x = |x: &f64| x.is_finite() && (!p.log_x || *x > 0.0);
    let ok_y = |y: &f64| y.is_finite() && (!p.log_y || *y > 0.0);
    let (x0, x1) = xs.filter(ok_x).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (y0, y1) = ys.filter(ok_y).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let pad = |lo: f64, hi: f64, log: bool| {
        if !lo.is_finite() {
            return (if log { 1.0 } else { 0.0 }, if log { 10.0 } else { 1.0 });
        }
        if log {
            (lo / 1.3, hi * 1.3)
        } else {
            let d = (hi - lo).abs().max(1e-9);
            (lo - 0.05 * d, hi + 0.05 * d)
        }
    };
    let (x0, x1) = pad(x0, x1, p.log_x);
    let (y0, y1) = pad(y0, y1, p.log_y);
    (x0, x1, y0, y1)
}

/// Render a line plot to an SVG string (800×500).
pub fn line_plot(p: &LinePlot) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (x0, x1, y0, y1) = bounds(p);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart.configure_mesh().x_desc(&p.x_label).y_desc(&p.y_label).draw().map_err(err)?;
                for (i, s) in p.series.iter().enumerate() {
                    let c = PALETTE[i % PALETTE.len()];
                    let pts: Vec<(f64, f64)> =
                        s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
                    if s.markers {
                        chart
                            .draw_series(pts.iter().map(|&q| Circle::new(q, 4, c.filled())))
                            .map_err(err)?
                            .label(s.label.clone())
                            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
                    } else {
                        chart
                            .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                            .map_err(err)?
                            .label(s.label.clone())
                            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
                    }
                }
                for (v, label) in &p.hlines {
                    let c = RGBColor(90, 90, 90);
                    chart
                        .draw_series(LineSeries::new(vec![(x0, *v), (x1, *v)], c.stroke_width(1)))
                        .map_err(err)?
                        .label(label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(1)));
                }
                for (i, (v, label)) in p.vlines.iter().enumerate() {
                    let c = PALETTE[(i + 3) % PALETTE.len()].mix(0.6);
                    chart
                        .draw_series(LineSeries::new(vec![(*v, y0), (*v, y1)], c.stroke_width(1)))
                        .map_err(err)?
                        .label(label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(1)));
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .position(SeriesLabelPosition::UpperRight)
                    .draw()
                    .map_err(err)?;
            }};
        }
        let mut b = ChartBuilder::on(&root);
        b.caption(&p.title, ("sans-serif", 20)).margin(15).x_label_area_size(45).y_label_area_size(65);
        match (p.log_x, p.log_y) {
            (false, false) => draw!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?),
            (true, false) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1).map_err(err)?),
            (false, true) => draw!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale()).map_err(err)?),
            (true, true) => draw!(b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()).map_err(err)?),
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A grouped bar chart: one cluster per category, one bar per group (each group one value per
/// category).
pub fn bar_chart(title: &str, y_label: &str, categories: &[String], groups: &[(String, Vec<f64>)]) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let vals = groups.iter().flat_map(|g| g.1.iter().copied()).filter(|v| v.is_finite());
        let (lo, hi) = vals.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        let pad = (hi - lo).abs().max(1e-9) * 0.08;
        let n = categories.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(65)
            .build_cartesian_2d(0.0..n, (lo - pad)..(hi + pad))
            .map_err(err)?;
        chart.configure_mesh().y_desc(y_label).x_labels(0).disable_x_mesh().draw().map_err(err)?;
        let label_y = lo - pad * 0.6;
        chart
            .draw_series(categories.iter().enumerate().map(|(i, c)| {
                Text::new(c.clone(), (i as f64 + 0.3, label_y), ("sans-serif", 12).into_font().color(&BLACK))
            }))
            .map_err(err)?;
        let w = 0.8 / groups.len().max(1) as f64;
        for (gi, (label, values)) in groups.iter().enumerate() {
            let c = PALETTE[gi % PALETTE.len()];
            chart
                .draw_series(values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(ci, &v)| {
                    let x = ci as f64 + 0.1 + gi as f64 * w;
                    Rectangle::new([(x, 0.0), (x + w * 0.9, v)], c.filled())
                }))
                .map_err(err)?
                .label(label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Write an SVG file atomically.
pub fn save(path: &std::path::Path, svg: &str) -> Result<()> {
    crate::io::tensors::write_atomic(path, svg.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_render_deterministic_svg() {
        let p = LinePlot {
            title: "loss".into(),
            x_label: "step".into(),
            y_label: "nats".into(),
            series: vec![Series::line("candidate", vec![(0.0, 2.3), (100.0, 2.2), (200.0, 0.1)])],
            hlines: vec![(std::f64::consts::LN_10, "ln K".into())],
            vlines: vec![(150.0, "T1".into())],
            ..Default::default()
        };
        let a = line_plot(&p).unwrap();
        assert!(a.starts_with("<svg") && a.contains("candidate") && a.contains("T1"));
        assert_eq!(a, line_plot(&p).unwrap());
        let log = LinePlot { log_x: true, log_y: true, ..p.clone() };
        assert!(
            line_plot(&LinePlot { series: vec![Series::points("τ", vec![(1e3, 450.0), (3.6e4, 8750.0)])], ..log })
                .is_ok()
        );
        let b = bar_chart("ablation", "Δloss", &["L0H0".into(), "L0H1".into()], &[("zero".into(), vec![0.1, 1.7])])
            .unwrap();
        assert!(b.contains("L0H1"));
    }
}
