//! Multi-seed spread (`replicate --seeds N`): the claims that rest on a fit, re-measured on every
//! init/batch-order seed. measure (T1 per run and seed) → grade (the suite's own criterion per
//! seed, and on the pooled points, whose bootstrap CI then includes the seed variation) → render
//! (a markdown section, JSON, one figure with a series per seed).

use super::claims::{Ctx, RunData, Verdict, fmt_ci, table};
use super::stats::{Fit, mean_std, power_law};
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use serde_json::json;

/// The paper's D-scaling exponent (spec §8 row 3).
const ALPHA: f64 = 1.194;

pub struct Section {
    pub markdown: String,
    pub data: Option<serde_json::Value>,
}

/// (D, T1) of every run with a T1, and whether every run has one.
fn points(runs: &[RunData]) -> (Vec<f64>, Vec<f64>, bool) {
    let (d, t): (Vec<f64>, Vec<f64>) = runs.iter().filter_map(|r| r.taus.t1.map(|t| (r.d() as f64, t as f64))).unzip();
    let all = d.len() == runs.len();
    (d, t, all)
}

/// D-scaling α replicated: within 0.15 of the paper's or the paper's inside the CI (as the
/// single-seed row).
pub fn alpha_holds(f: &Fit) -> bool {
    (f.slope - ALPHA).abs() <= 0.15 || f.ci95.is_some_and(|(lo, hi)| lo <= ALPHA && ALPHA <= hi)
}

/// Fixed-D flatness: |δ| ≤ 0.15 (as the single-seed row).
pub fn delta_holds(f: &Fit) -> bool {
    f.slope.abs() <= 0.15
}

/// The verdict over seeds: incomplete until every seed has its fit; replicated when the pooled
/// fit holds *and* every seed does; differs when only some do; not replicated when none does.
pub fn grade(per_seed: &[Option<bool>], pooled: Option<bool>) -> Verdict {
    if per_seed.iter().any(|x| x.is_none()) || pooled.is_none() {
        return Verdict::Incomplete;
    }
    let holding = per_seed.iter().filter(|x| **x == Some(true)).count();
    match (holding, pooled) {
        (h, Some(true)) if h == per_seed.len() => Verdict::Replicated,
        (0, _) => Verdict::NotReplicated,
        _ => Verdict::Differs,
    }
}

pub fn section(ctx: &Ctx, suites: &[&str], seeds: u32) -> Result<Section> {
    if seeds < 2 {
        return Ok(Section { markdown: String::new(), data: None });
    }
    let mut rows = vec![];
    let mut data = serde_json::Map::new();
    let mut figures = vec![];
    if suites.contains(&"d-scaling") {
        let by_seed: Vec<Vec<RunData>> = (0..seeds).map(|s| ctx.load_seed("d-scaling", s)).collect::<Result<_>>()?;
        let (row, js, fig) = d_scaling(ctx, &by_seed)?;
        rows.push(row);
        data.insert("d-scaling".into(), js);
        figures.push(fig);
    }
    if suites.contains(&"fixed-d") {
        let by_seed: Vec<Vec<RunData>> = (0..seeds).map(|s| ctx.load_seed("fixed-d", s)).collect::<Result<_>>()?;
        rows.push(fixed_d(&by_seed));
    }
    let mut md = format!("\n## Seeds ({seeds} init/batch-order seeds per configuration; data seed 42)\n\n");
    md += &table(&["claim", "per seed", "pooled / spread", "holds for", "verdict"], &rows);
    for f in figures {
        md += &format!("\n![seeds]({f})\n");
    }
    Ok(Section { markdown: md, data: Some(serde_json::Value::Object(data)) })
}

fn d_scaling(ctx: &Ctx, by_seed: &[Vec<RunData>]) -> Result<(Vec<String>, serde_json::Value, String)> {
    let fits: Vec<Option<Fit>> = by_seed
        .iter()
        .enumerate()
        .map(|(s, runs)| {
            let (d, t, all) = points(runs);
            power_law(&d, &t, super::scaling::SEED, 300 + s as u64).filter(|_| all)
        })
        .collect();
    let (mut pd, mut pt) = (vec![], vec![]);
    for runs in by_seed {
        let (d, t, _) = points(runs);
        pd.extend(d);
        pt.extend(t);
    }
    let complete = by_seed.iter().all(|r| points(r).2);
    let pooled = power_law(&pd, &pt, super::scaling::SEED, 299).filter(|_| complete);
    let per: Vec<Option<bool>> = fits.iter().map(|f| f.as_ref().map(alpha_holds)).collect();
    let verdict = grade(&per, pooled.as_ref().map(alpha_holds));
    let alphas: Vec<f64> = fits.iter().flatten().map(|f| f.slope).collect();
    let (m, sd) = mean_std(&alphas);
    let spread = if alphas.is_empty() { "–".into() } else { format!("α mean {m:.3} ± {sd:.3} (sd over seeds)") };
    let shown = fits
        .iter()
        .enumerate()
        .map(|(s, f)| format!("s{s}: {}", f.as_ref().map_or("–".into(), |f| format!("{:.3}", f.slope))))
        .collect::<Vec<_>>()
        .join(", ");
    let row = vec![
        "τ ∝ D^α (paper α = 1.194 [1.137, 1.308])".into(),
        shown,
        format!("pooled {}; {spread}", pooled.as_ref().map_or("–".into(), fmt_ci)),
        format!("{} of {} seeds", per.iter().filter(|x| **x == Some(true)).count(), per.len()),
        verdict.label().into(),
    ];
    let t1_by_k = t1_spread(by_seed);
    let js = json!({ "alpha_per_seed": fits, "pooled": pooled, "alpha_mean": m, "alpha_sd": sd,
        "t1_by_k": t1_by_k, "verdict": verdict });
    let series = by_seed
        .iter()
        .enumerate()
        .map(|(s, runs)| {
            let (d, t, _) = points(runs);
            Series::points(format!("seed {s}"), d.into_iter().zip(t).collect())
        })
        .collect();
    let p = LinePlot {
        title: "T1 vs D, one series per seed".into(),
        x_label: "D".into(),
        y_label: "T1 (steps)".into(),
        series,
        log_x: true,
        log_y: true,
        ..Default::default()
    };
    Ok((row, js, ctx.figure("d_scaling_seeds.svg", &line_plot(&p)?)?))
}

/// T1 mean ± sd across seeds per K (over the seeds that reached T1).
fn t1_spread(by_seed: &[Vec<RunData>]) -> Vec<serde_json::Value> {
    let ks: Vec<usize> = by_seed.first().map_or(vec![], |r| r.iter().map(|r| r.k()).collect());
    ks.iter()
        .enumerate()
        .map(|(i, k)| {
            let t: Vec<f64> = by_seed.iter().filter_map(|r| r.get(i)?.taus.t1.map(|t| t as f64)).collect();
            let (m, sd) = mean_std(&t);
            json!({"k": k, "t1": t, "mean": m, "sd": sd})
        })
        .collect()
}

fn fixed_d(by_seed: &[Vec<RunData>]) -> Vec<String> {
    let round = |d: usize| if d >= 1000 { (d + 50) / 100 * 100 } else { d };
    let mut ds: Vec<usize> = by_seed.first().map_or(vec![], |r| r.iter().map(|r| round(r.d())).collect());
    ds.dedup();
    let mut per = vec![];
    let mut shown = vec![];
    for (s, runs) in by_seed.iter().enumerate() {
        for (i, &d) in ds.iter().enumerate() {
            let group: Vec<&RunData> = runs.iter().filter(|r| round(r.d()) == d).collect();
            let (k, t): (Vec<f64>, Vec<f64>) =
                group.iter().filter_map(|r| r.taus.t1.map(|t| (r.k() as f64, t as f64))).unzip();
            let fit = power_law(&k, &t, super::scaling::SEED, 400 + 10 * s as u64 + i as u64)
                .filter(|f| k.len() == group.len() && f.n >= 3);
            shown.push(format!("s{s} D={d}: {}", fit.as_ref().map_or("–".into(), |f| format!("{:+.3}", f.slope))));
            per.push(fit.as_ref().map(delta_holds));
        }
    }
    let verdict = grade(&per, per.iter().all(|x| x.is_some()).then_some(per.iter().all(|x| *x == Some(true))));
    vec![
        "At fixed D, τ does not depend on K (|δ| ≤ 0.15)".into(),
        shown.join(", "),
        "–".into(),
        format!("{} of {} (seed, D)", per.iter().filter(|x| **x == Some(true)).count(), per.len()),
        verdict.label().into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(slope: f64, ci: Option<(f64, f64)>) -> Fit {
        Fit { slope, intercept: 0.0, r2: 1.0, n: 6, ci95: ci }
    }

    #[test]
    fn alpha_criterion_edges() {
        assert!(alpha_holds(&fit(1.194 + 0.149, None)));
        assert!(!alpha_holds(&fit(1.194 + 0.151, None)));
        assert!(alpha_holds(&fit(1.5, Some((1.1, 1.6)))));
        assert!(!alpha_holds(&fit(0.9, Some((0.8, 1.0)))));
        assert!(delta_holds(&fit(-0.15, None)) && !delta_holds(&fit(0.151, None)));
    }

    #[test]
    fn a_claim_holding_for_some_seeds_only_differs_and_for_none_is_not_replicated() {
        assert_eq!(grade(&[Some(true), Some(true)], Some(true)), Verdict::Replicated);
        assert_eq!(grade(&[Some(true), Some(false)], Some(true)), Verdict::Differs);
        assert_eq!(grade(&[Some(true), Some(true)], Some(false)), Verdict::Differs);
        assert_eq!(grade(&[Some(false), Some(false)], Some(false)), Verdict::NotReplicated);
        assert_eq!(grade(&[Some(true), None], Some(true)), Verdict::Incomplete);
        assert_eq!(grade(&[Some(true)], None), Verdict::Incomplete);
    }
}
