//! Grouped bar charts: one cluster per category, one bar per group.

use super::legend::{self, Swatch};
use super::{Figure, PALETTE, err, field, num, ticks};
use crate::error::Result;
use plotters::prelude::*;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 520;
const LEGEND: u32 = 220;

/// A grouped bar chart (each group one value per category) and the CSV of its values.
pub fn bar_chart(title: &str, y_label: &str, categories: &[String], groups: &[(String, Vec<f64>)]) -> Result<Figure> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
        let (data, side) = root.split_horizontally(WIDTH - LEGEND);
        let vals = groups.iter().flat_map(|g| g.1.iter().copied()).filter(|v| v.is_finite());
        let (lo, hi) = vals.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        let pad = (hi - lo).abs().max(1e-9) * 0.08;
        let (y0, y1) = (lo - pad, hi + pad);
        let n = categories.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&data)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(75)
            .build_cartesian_2d(0.0..n, ticks::linear_axis(y0, y1))
            .map_err(err)?;
        chart
            .configure_mesh()
            .y_desc(y_label)
            .y_label_formatter(&|v| ticks::label(*v))
            .x_labels(0)
            .disable_x_mesh()
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let font = ("sans-serif", 12).into_font().color(&BLACK);
        let label_y = lo - pad * 0.6;
        chart
            .draw_series(
                categories
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Text::new(c.clone(), (i as f64 + 0.3, label_y), font.clone())),
            )
            .map_err(err)?;
        let w = 0.8 / groups.len().max(1) as f64;
        for (gi, (_, values)) in groups.iter().enumerate() {
            let c = PALETTE[gi % PALETTE.len()];
            chart
                .draw_series(values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(ci, &v)| {
                    let x = ci as f64 + 0.1 + gi as f64 * w;
                    Rectangle::new([(x, 0.0), (x + w * 0.9, v)], c.filled())
                }))
                .map_err(err)?;
        }
        let entries: Vec<_> = groups
            .iter()
            .enumerate()
            .map(|(gi, (label, _))| (Swatch::Bar(PALETTE[gi % PALETTE.len()]), label.clone()))
            .collect();
        legend::draw(&side, &entries)?;
        root.present().map_err(err)?;
    }
    let mut csv = format!("group,category,{}\n", field(y_label));
    for (label, values) in groups {
        for (c, v) in categories.iter().zip(values) {
            csv += &format!("{},{},{}\n", field(label), field(c), num(Some(*v)));
        }
    }
    Ok(Figure { svg, csv })
}
