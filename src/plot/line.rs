//! Line plots: series, confidence bands, reference lines, on linear or log axes.

use super::legend::{self, Swatch};
use super::{LinePlot, Mark, PALETTE, Series, err, line_csv, ticks};
use crate::error::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Reference lines: one colour and one dash length each, so ln K and ln 36 never look alike.
const REFERENCE: [(RGBColor, u32); 4] =
    [(RGBColor(60, 60, 60), 8), (RGBColor(150, 40, 150), 3), (RGBColor(0, 120, 120), 12), (RGBColor(160, 90, 0), 5)];
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 520;
const LEGEND: u32 = 270;

/// Whether a value can be drawn on the axis (a log axis shows only positive values).
fn drawable(log: bool, x: f64) -> bool {
    x.is_finite() && (!log || x > 0.0)
}

/// The data range of each axis, padded; (0, 1) or (1, 10) when there is nothing to show.
fn bounds(p: &LinePlot) -> (f64, f64, f64, f64) {
    let xs = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0));
    let xs = xs.chain(p.bands.iter().flat_map(|b| b.points.iter().map(|q| q.0))).chain(p.vlines.iter().map(|v| v.0));
    let ys = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.1));
    let ys = ys
        .chain(p.bands.iter().flat_map(|b| b.points.iter().flat_map(|q| [q.1, q.2])))
        .chain(p.hlines.iter().map(|h| h.0));
    let span = |v: Vec<f64>| v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let (x0, x1) = span(xs.filter(|&x| drawable(p.log_x, x)).collect());
    let (y0, y1) = span(ys.filter(|&y| drawable(p.log_y, y)).collect());
    let pad = |lo: f64, hi: f64, log: bool| match (lo.is_finite(), log) {
        (false, true) => (1.0, 10.0),
        (false, false) => (0.0, 1.0),
        (true, true) => (lo / 1.3, hi * 1.3),
        (true, false) => {
            let d = (hi - lo).abs().max(1e-9 * lo.abs().max(1.0));
            (lo - 0.05 * d, hi + 0.05 * d)
        }
    };
    let (x0, x1) = pad(x0, x1, p.log_x);
    let (y0, y1) = pad(y0, y1, p.log_y);
    (x0, x1, y0, y1)
}

fn color(i: usize, s: &Series) -> RGBColor {
    PALETTE[s.color.unwrap_or(i) % PALETTE.len()]
}

/// What the legend lists, in drawing order.
fn entries(p: &LinePlot) -> Vec<(Swatch, String)> {
    let mut e = vec![];
    for (i, s) in p.series.iter().enumerate() {
        let c = color(i, s);
        let swatch = match s.mark {
            Mark::Line => Swatch::Line(c),
            Mark::Points => Swatch::Marker(c),
            Mark::Open => Swatch::OpenMarker(c),
            Mark::Above => Swatch::Above(c),
        };
        e.push((swatch, s.label.clone()));
    }
    for b in &p.bands {
        e.push((Swatch::Band(PALETTE[b.series % PALETTE.len()]), b.label.clone()));
    }
    for (i, (_, label)) in p.hlines.iter().enumerate() {
        let (c, dash) = REFERENCE[i % REFERENCE.len()];
        e.push((Swatch::Dashed(c, dash), label.clone()));
    }
    for (i, (_, label)) in p.vlines.iter().enumerate() {
        e.push((Swatch::Dashed(PALETTE[(i + 3) % PALETTE.len()], 2), label.clone()));
    }
    e
}

/// Render a line plot: the SVG (data left, legend right) and the CSV of its values.
pub fn line_plot(p: &LinePlot) -> Result<super::Figure> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&p.title, ("sans-serif", 20)).map_err(err)?;
        let (data, side) = root.split_horizontally(WIDTH - LEGEND);
        let (x0, x1, y0, y1) = bounds(p);
        let mut b = ChartBuilder::on(&data);
        b.margin(12).x_label_area_size(50).y_label_area_size(75);
        macro_rules! draw {
            ($x:expr, $y:expr) => {{
                let mut chart = b.build_cartesian_2d($x, $y).map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc(&p.x_label)
                    .y_desc(&p.y_label)
                    .x_label_formatter(&|v| ticks::label(*v))
                    .y_label_formatter(&|v| ticks::label(*v))
                    .label_style(("sans-serif", 13))
                    .axis_desc_style(("sans-serif", 15))
                    .draw()
                    .map_err(err)?;
                draw_bands(&mut chart, p)?;
                draw_series(&mut chart, p)?;
                draw_references(&mut chart, p, (x0, x1, y0, y1))?;
            }};
        }
        match (p.log_x, p.log_y) {
            (false, false) => draw!(x_axis(p, ticks::linear_axis(x0, x1)), ticks::linear_axis(y0, y1)),
            (true, false) => draw!(x_axis(p, ticks::log_axis(x0, x1)), ticks::linear_axis(y0, y1)),
            (false, true) => draw!(x_axis(p, ticks::linear_axis(x0, x1)), ticks::log_axis(y0, y1)),
            (true, true) => draw!(x_axis(p, ticks::log_axis(x0, x1)), ticks::log_axis(y0, y1)),
        }
        if p.series.iter().all(|s| s.points.is_empty()) && p.bands.is_empty() {
            let note = ("sans-serif", 18)
                .into_font()
                .color(&RGBColor(120, 120, 120))
                .pos(Pos::new(HPos::Center, VPos::Center));
            data.draw(&Text::new("no data yet", ((WIDTH - LEGEND) as i32 / 2, HEIGHT as i32 / 2), note))
                .map_err(err)?;
        }
        legend::draw(&side, &entries(p))?;
        root.present().map_err(err)?;
    }
    Ok(super::Figure { svg, csv: line_csv(p) })
}

/// The x axis with the plot's own ticks, when it gives them.
fn x_axis<R: Ranged<ValueType = f64>>(p: &LinePlot, axis: ticks::Axis<R>) -> ticks::Axis<R> {
    match &p.x_ticks {
        Some(t) => axis.with_ticks(t.iter().copied().filter(|&x| drawable(p.log_x, x)).collect()),
        None => axis,
    }
}

type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

fn draw_bands<X, Y>(chart: &mut Chart<'_, '_, X, Y>, p: &LinePlot) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for b in &p.bands {
        let pts: Vec<_> =
            b.points.iter().copied().filter(|q| q.0.is_finite() && q.1.is_finite() && q.2.is_finite()).collect();
        let outline: Vec<(f64, f64)> =
            pts.iter().map(|q| (q.0, q.2)).chain(pts.iter().rev().map(|q| (q.0, q.1))).collect();
        let c = PALETTE[b.series % PALETTE.len()].mix(0.2);
        chart.draw_series(std::iter::once(Polygon::new(outline, c.filled()))).map_err(err)?;
    }
    Ok(())
}

fn draw_series<X, Y>(chart: &mut Chart<'_, '_, X, Y>, p: &LinePlot) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    // Runs that never got there often share a budget: each later "above" series is drawn
    // smaller, so coinciding triangles nest instead of hiding one another.
    let mut aboves_left = p.series.iter().filter(|s| s.mark == Mark::Above).count() as i32;
    for (i, s) in p.series.iter().enumerate() {
        let c = color(i, s);
        let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        match s.mark {
            Mark::Line => chart.draw_series(LineSeries::new(pts, c.stroke_width(2))).map(|_| ()),
            Mark::Points => chart.draw_series(pts.iter().map(|&q| Circle::new(q, 4, c.filled()))).map(|_| ()),
            Mark::Open => chart.draw_series(pts.iter().map(|&q| Circle::new(q, 5, c.stroke_width(2)))).map(|_| ()),
            Mark::Above => {
                aboves_left -= 1;
                let r = 7 + 4 * aboves_left;
                chart
                    .draw_series(pts.iter().map(|&q| EmptyElement::at(q) + super::legend::open_triangle(c, r)))
                    .map(|_| ())
            }
        }
        .map_err(err)?;
    }
    Ok(())
}

fn draw_references<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    p: &LinePlot,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, (v, _)) in p.hlines.iter().enumerate() {
        let (c, dash) = REFERENCE[i % REFERENCE.len()];
        chart.draw_series(DashedLineSeries::new(vec![(x0, *v), (x1, *v)], dash, 4, c.stroke_width(2))).map_err(err)?;
    }
    for (i, (v, _)) in p.vlines.iter().enumerate() {
        let c = PALETTE[(i + 3) % PALETTE.len()];
        chart.draw_series(DashedLineSeries::new(vec![(*v, y0), (*v, y1)], 2, 3, c.stroke_width(2))).map_err(err)?;
    }
    Ok(())
}
