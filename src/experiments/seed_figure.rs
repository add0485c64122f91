//! One figure for every claim graded over seeds: each seed's figure as a factor off the paper's
//! value (1 = inside the paper's interval) on a log axis, so a reader sees at a glance which
//! claims sit on the paper's value, which miss it on every seed, and by how much.
//! measure (the factor per seed) → render (the figure and the list of claims it numbers).

use super::claims::table;
use super::seed_range::{OverSeeds, num};
use crate::plot::{Figure, LinePlot, Series, line_plot};

/// How far `v` lies outside the paper's interval `(lo, hi)`: the factor by which its magnitude
/// exceeds the interval's largest (> 1) or falls short of its smallest (< 1), and 1 inside.
/// None when `v` and the interval do not share a sign (an interval may end at 0), or `v` is 0 or
/// not finite: a factor says nothing there.
pub fn factor(v: f64, (lo, hi): (f64, f64)) -> Option<f64> {
    let (lo, hi) = (lo.min(hi), lo.max(hi));
    let same_sign = (v > 0.0 && lo >= 0.0 && hi > 0.0) || (v < 0.0 && hi <= 0.0 && lo < 0.0);
    if !v.is_finite() || !same_sign {
        return None;
    }
    let (small, large) = (lo.abs().min(hi.abs()), lo.abs().max(hi.abs()));
    let m = v.abs();
    Some(if m > large {
        m / large
    } else if m < small {
        m / small
    } else {
        1.0
    })
}

/// One claim's factors per seed (empty where a seed has no figure yet), or None when the claim
/// has no paper figure, no seed has a figure yet, or one of them cannot be put as a factor
/// (a figure that straddles 0, such as a slope the paper finds flat).
fn factors(o: &OverSeeds) -> Option<Vec<Vec<f64>>> {
    let paper = o.paper?;
    let per_seed: Vec<Vec<f64>> =
        o.values.iter().map(|vs| vs.iter().map(|&v| factor(v, paper)).collect::<Option<_>>()).collect::<Option<_>>()?;
    per_seed.iter().any(|f| !f.is_empty()).then_some(per_seed)
}

/// The figure over `claims` ((label, grade over seeds), in report order) and the markdown table
/// of its numbered claims and factors, naming those it could not draw; None when none can be.
pub fn render(claims: &[(String, &OverSeeds)]) -> crate::error::Result<Option<(Figure, String)>> {
    let (mut drawn, mut skipped) = (vec![], vec![]);
    for (label, o) in claims {
        match factors(o) {
            Some(f) => drawn.push((label.as_str(), f)),
            None if o.paper.is_some() => skipped.push(label.as_str()),
            None => {}
        }
    }
    if drawn.is_empty() {
        return Ok(None);
    }
    let seeds = drawn.iter().map(|(_, f)| f.len()).max().unwrap_or(0);
    let series = (0..seeds)
        .map(|s| {
            // Seeds side by side around each claim's x, so coinciding factors stay visible.
            let dx = (s as f64 - (seeds as f64 - 1.0) / 2.0) * 0.2;
            let points = drawn
                .iter()
                .enumerate()
                .flat_map(|(i, (_, f))| f.get(s).into_iter().flatten().map(move |&y| ((i + 1) as f64 + dx, y)))
                .collect();
            let name = if s == 0 { "s0 (the author's seed)".to_string() } else { format!("s{s}") };
            Series::points(name, points)
        })
        .collect();
    let p = LinePlot {
        title: "Each seed's figure against the paper's".into(),
        x_label: "claim (numbered in the table below)".into(),
        y_label: "factor off the paper's value (1 = inside its interval)".into(),
        series,
        hlines: vec![(1.0, "the paper's value or interval".into())],
        log_y: true,
        x_ticks: Some((1..=drawn.len()).map(|i| i as f64).collect()),
        ..Default::default()
    };
    let rows: Vec<Vec<String>> = drawn
        .iter()
        .enumerate()
        .map(|(i, (l, f))| {
            let each = |v: &Vec<f64>| {
                if v.is_empty() { "–".into() } else { v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ") }
            };
            vec![(i + 1).to_string(), l.to_string(), f.iter().map(each).collect::<Vec<_>>().join(" / ")]
        })
        .collect();
    let mut md = table(&["#", "claim", "factor off the paper's value, per seed"], &rows);
    if !skipped.is_empty() {
        md += &format!("\nNot drawn (a figure of the other sign, or 0): {}.\n", skipped.join("; "));
    }
    Ok(Some((line_plot(&p)?, md)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factor_is_one_inside_the_interval_and_the_ratio_to_its_nearer_end_outside() {
        assert_eq!(factor(15.0, (10.0, 20.0)), Some(1.0));
        assert_eq!(factor(10.0, (10.0, 20.0)), Some(1.0), "an end is inside");
        assert_eq!(factor(40.0, (10.0, 20.0)), Some(2.0));
        assert_eq!(factor(5.0, (10.0, 20.0)), Some(0.5));
        assert_eq!(factor(1.29, (3.6, 3.6)), Some(1.29 / 3.6));
        // Negative figures by magnitude: −4e-5 against −0.009 … −0.001 is 0.04 of the smallest.
        assert_eq!(factor(-4e-5, (-0.009, -0.001)), Some(4e-5 / 0.001));
        assert_eq!(factor(-0.018, (-0.009, -0.001)), Some(2.0));
        // "< 0.002": an interval from 0.
        assert_eq!(factor(0.001, (0.0, 0.002)), Some(1.0));
        assert_eq!(factor(0.035, (0.0, 0.002)), Some(17.5));
    }

    #[test]
    fn no_factor_across_zero_or_without_a_finite_figure() {
        assert_eq!(factor(0.026, (-0.004, -0.004)), None);
        assert_eq!(factor(-0.011, (0.0, 0.002)), None);
        assert_eq!(factor(0.0, (1.0, 2.0)), None);
        assert_eq!(factor(f64::NAN, (1.0, 2.0)), None);
        assert_eq!(factor(f64::INFINITY, (1.0, 2.0)), None);
    }

    fn over(values: Vec<Vec<f64>>, paper: Option<(f64, f64)>) -> OverSeeds {
        use super::super::verdict::Verdict;
        OverSeeds {
            verdicts: vec![Verdict::Differs; values.len()],
            values,
            measure: Some("r".into()),
            range: None,
            paper,
            paper_inside: None,
            verdict: Verdict::Differs,
        }
    }

    #[test]
    fn claims_are_numbered_in_order_and_those_without_a_factor_named() {
        let (a, b, c) = (
            over(vec![vec![1.29], vec![3.13], vec![]], Some((3.6, 3.6))),
            over(vec![vec![0.026], vec![-0.011]], Some((-0.004, -0.004))),
            over(vec![vec![], vec![]], None),
        );
        let claims = [("lr: T3".to_string(), &a), ("fixed-d: δ".to_string(), &b), ("ablation: none".to_string(), &c)];
        let (fig, md) = render(&claims).unwrap().expect("one claim is drawn");
        assert_eq!(
            md,
            "| # | claim | factor off the paper's value, per seed |\n|---|---|---|\n| 1 | lr: T3 | 0.358 / 0.869 / – |\n\
             \nNot drawn (a figure of the other sign, or 0): fixed-d: δ.\n"
        );
        // s0 and s1 at claim 1, side by side; s2 has no figure yet.
        assert!(fig.csv.contains("s0 (the author's seed)") && fig.csv.contains("s1"), "{}", fig.csv);
        assert!(render(&claims[1..]).unwrap().is_none(), "nothing to draw");
    }
}
