//! The legend, drawn in its own panel to the right of the data so it never covers a point.

use super::err;
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

/// How an entry is drawn in the legend.
#[derive(Clone, Copy)]
pub enum Swatch {
    Line(RGBColor),
    Marker(RGBColor),
    OpenMarker(RGBColor),
    Above(RGBColor),
    Band(RGBColor),
    Dashed(RGBColor, u32),
    Bar(RGBColor),
}

const ROW: i32 = 18;
/// Characters per legend line before a label wraps.
const WRAP: usize = 30;

/// Draw `entries` top-down in `area`, wrapping long labels.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(Swatch, String)]) -> Result<()> {
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    let mut y = 40;
    for (swatch, label) in entries {
        let mid = y + ROW / 2 - 2;
        match *swatch {
            Swatch::Line(c) => area.draw(&PathElement::new(vec![(8, mid), (32, mid)], c.stroke_width(2))),
            Swatch::Marker(c) => area.draw(&Circle::new((20, mid), 4, c.filled())),
            Swatch::OpenMarker(c) => area.draw(&Circle::new((20, mid), 4, c.stroke_width(2))),
            Swatch::Above(c) => area.draw(&(EmptyElement::at((20, mid)) + open_triangle(c, 6))),
            Swatch::Band(c) => area.draw(&Rectangle::new([(8, mid - 6), (32, mid + 6)], c.mix(0.25).filled())),
            Swatch::Bar(c) => area.draw(&Rectangle::new([(12, mid - 6), (28, mid + 6)], c.filled())),
            Swatch::Dashed(c, dash) => {
                let mut segments = (0..).map(|i| 8 + i * (dash as i32 + 3)).take_while(|x| *x < 32);
                segments.try_for_each(|x| {
                    area.draw(&PathElement::new(vec![(x, mid), ((x + dash as i32).min(32), mid)], c.stroke_width(2)))
                })
            }
        }
        .map_err(err)?;
        let lines = wrap(label);
        for (i, line) in lines.iter().enumerate() {
            area.draw(&Text::new(line.clone(), (40, y + i as i32 * ROW), font.clone())).map_err(err)?;
        }
        y += lines.len() as i32 * ROW + 4;
    }
    Ok(())
}

/// An up-pointing triangle outline of half-width `r` around the point it is added to ("above").
pub fn open_triangle(c: RGBColor, r: i32) -> PathElement<(i32, i32)> {
    PathElement::new(vec![(0, -r), (-r, r * 2 / 3), (r, r * 2 / 3), (0, -r)], c.stroke_width(2))
}

/// Split a label into lines of at most `WRAP` characters at spaces.
fn wrap(label: &str) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    for word in label.split(' ') {
        let last = lines.last_mut().expect("one line");
        if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > WRAP {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}
