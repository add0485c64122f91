//! Multi-seed spread (`replicate --seeds N`): the claims that rest on a fit, re-measured on every
//! init/batch-order seed. measure (T1 per run and seed) → grade (the suite's own criterion per
//! seed, and on the pooled points, whose bootstrap CI then includes the seed variation) → render
//! (a markdown section, JSON, one figure with a series per seed).

use super::claims::{Ctx, Row, RunData, Suite, SuiteOutcome, Verdict, fmt_ci, table};
use super::d_scaling::alpha_holds;
use super::seed_range::{OverSeeds, over_seeds};
use super::seed_subset::on_the_rows_runs;
use super::stats::{Fit, mean_std, power_law};
use crate::error::Result;
use crate::plot::{LinePlot, Series, line_plot};
use serde_json::json;

pub struct Section {
    pub markdown: String,
    pub data: Option<serde_json::Value>,
    /// Every claim row graded over seeds, for [`apply`].
    pub graded: Vec<Graded>,
}

/// One claim row of a suite and its grade over seeds.
pub struct Graded {
    pub suite: String,
    pub claim: String,
    pub over_seeds: OverSeeds,
    /// The seeds repeat every run of the suite (else only a subset, which its row above does not
    /// grade alone).
    pub whole_suite: bool,
}

/// (D, T1) of every run with a T1, and whether every run has one.
fn points(runs: &[RunData]) -> (Vec<f64>, Vec<f64>, bool) {
    let (d, t): (Vec<f64>, Vec<f64>) = runs.iter().filter_map(|r| r.taus.t1.map(|t| (r.d() as f64, t as f64))).unzip();
    let all = d.len() == runs.len();
    (d, t, all)
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

/// The Seeds section for the suites already analysed at seed 0 (`outs`): every claim row of each
/// suite graded with several seeds, re-graded on each seed's runs (the runs the seeds repeat, at
/// seed 0 too, so every seed grades the same set), plus the pooled D-scaling fit. A probe suite
/// reads each seed's probe results (computed here when `ctx` allows probes), the linear baseline
/// (no runs) its models trained with each seed.
pub fn section(ctx: &Ctx, outs: &[SuiteOutcome]) -> Result<Section> {
    let mut seeded = vec![];
    for o in outs {
        let suite = super::suites::suite(&o.suite)?;
        if ctx.seeds_of(suite) >= 2 && (!suite.runs(ctx.scale).is_empty() || suite.reads_probes) {
            seeded.push(suite);
        }
    }
    if seeded.is_empty() {
        return Ok(Section { markdown: String::new(), data: None, graded: vec![] });
    }
    let scratch = ctx.figures.join(".seeds");
    std::fs::create_dir_all(&scratch).map_err(|e| crate::error::Error::io(&scratch, e))?;
    let subset = Ctx { seeded_only: true, ..ctx.clone() };
    let mut rows = vec![];
    let mut data = serde_json::Map::new();
    let mut figures = vec![];
    let mut t1_table = String::new();
    let mut claims = vec![];
    for suite in &seeded {
        let n = ctx.seeds_of(suite);
        let by_seed: Vec<SuiteOutcome> = (0..n)
            .map(|s| suite.grade(&Ctx { seed: s, figures: scratch.clone(), ..subset.clone() }))
            .collect::<Result<_>>()?;
        let whole_suite = suite.seeded_runs(ctx.scale).len() == suite.runs(ctx.scale).len();
        let whole = outs.iter().find(|o| o.suite == suite.name);
        let graded = claim_rows(&by_seed, whole.filter(|_| !whole_suite));
        data.insert(suite.name.into(), json!(graded.iter().map(|r| &r.1).collect::<Vec<_>>()));
        for (md, _, g) in graded {
            rows.push(md);
            claims.push(g);
        }
        if suite.name == "d-scaling" {
            let runs: Vec<Vec<RunData>> = (0..n).map(|s| subset.load_seed(suite, s)).collect::<Result<_>>()?;
            let (row, js, fig) = d_scaling(ctx, &runs)?;
            rows.push(row);
            t1_table = t1_markdown(&js["t1_by_k"]);
            data.insert("d-scaling pooled".into(), js);
            figures.push(fig);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let mut md = "\n## Seeds (init/batch-order seeds; data seed 42)\n\n".to_string();
    md += &scope(ctx, &seeded)?;
    md += "Each claim re-measured and re-graded on every seed's runs. s0 is the author's seed, graded \
           here on the same runs as the other seeds, so where a seed repeats only part of a suite \
           its figures can differ from its own row above. Over seeds: replicated when every seed \
           replicates, or when every seed points the paper's way and the paper's value lies inside \
           the range of the seeds' figures; not replicated when no seed points the paper's way; \
           differs otherwise (the paper's value outside the seeds' range, or the seeds split). The \
           table above carries these verdicts.\n\n";
    md += &table(&["suite: claim", "per seed", "pooled / spread", "holds for", "verdict"], &rows);
    md += &t1_table;
    for f in figures {
        md += &format!("\n![seeds]({f})\n");
    }
    md += &against_the_paper(ctx, &claims)?;
    Ok(Section { markdown: md, data: Some(serde_json::Value::Object(data)), graded: claims })
}

/// The figure of every seed's figure against the paper's value (`seed_figure`), with the list
/// of the claims it numbers.
fn against_the_paper(ctx: &Ctx, claims: &[Graded]) -> Result<String> {
    let labelled: Vec<(String, &OverSeeds)> =
        claims.iter().map(|g| (format!("{}: {}", g.suite, g.claim), &g.over_seeds)).collect();
    let Some((fig, names)) = super::seed_figure::render(&labelled)? else { return Ok(String::new()) };
    let f = ctx.figure("seeds_vs_paper.svg", &fig)?;
    Ok(format!("\n![each seed against the paper]({f})\n\n{names}"))
}

/// Which runs each seeded suite repeats, and how far its seed runs (s ≥ 1) are, for the report.
fn scope(ctx: &Ctx, seeded: &[&Suite]) -> Result<String> {
    let mut md = String::new();
    for suite in seeded {
        let (all, rep) = (suite.runs(ctx.scale), suite.seeded_runs(ctx.scale));
        let name = |r: Option<&super::runner::RunSpec>| r.map_or(String::new(), |r| r.name.clone());
        let (first, last) = (name(rep.first()), name(rep.last()));
        let n = ctx.seeds_of(suite);
        if let Some(models) = suite.probe_models {
            let names = models(ctx.scale, 1);
            md += &format!(
                "- {}: {n} seeds of its {} models, trained inside the probe ({} …)\n",
                suite.name,
                names.len(),
                names.join(", ")
            );
            continue;
        }
        let by_seed = (1..n).map(|s| ctx.load_seed(suite, s)).collect::<Result<Vec<_>>>()?;
        let runs: Vec<RunData> = by_seed.into_iter().flatten().collect();
        let done = runs.iter().filter(|r| r.complete).count();
        let probed = runs.iter().filter(|r| crate::train::layout::probe_result(&r.dir, suite.name).exists()).count();
        let probed = if suite.reads_probes { format!(", probed {probed}/{}", runs.len()) } else { String::new() };
        md += &format!(
            "- {}: {n} seeds of {} of its {} runs ({first} … {last}); seed runs complete {done}/{}{probed}, {:.0} s of training\n",
            suite.name,
            rep.len(),
            all.len(),
            runs.len(),
            super::claims::seconds(&runs),
        );
    }
    Ok(md + "\n")
}

/// One markdown row, one JSON object and the grade over seeds per claim row of the suite (rows
/// matched by claim: a seed whose probe is missing has fewer rows, and that claim is incomplete).
/// `part_of`: the suite graded on all of seed 0's runs, when the seeds repeat only part of it
/// (their figures are then set beside its rows', `seed_subset`).
fn claim_rows(
    by_seed: &[SuiteOutcome],
    part_of: Option<&SuiteOutcome>,
) -> Vec<(Vec<String>, serde_json::Value, Graded)> {
    let whole_suite = part_of.is_none();
    let first = &by_seed[0];
    (0..first.rows.len())
        .map(|i| {
            let claim = &first.rows[i].claim;
            let rows: Vec<Option<&Row>> = by_seed.iter().map(|o| o.rows.iter().find(|r| r.claim == *claim)).collect();
            let verdicts: Vec<Verdict> = rows.iter().map(|r| r.map_or(Verdict::Incomplete, |r| r.verdict)).collect();
            let measures: Vec<_> = rows.iter().map(|r| r.and_then(|r| r.measure.as_ref())).collect();
            let per = rows
                .iter()
                .enumerate()
                .map(|(s, r)| format!("s{s}: {} ({})", r.map_or("–", |r| r.ours.as_str()), verdicts[s].label()))
                .collect::<Vec<_>>()
                .join("<br>");
            let holds = verdicts.iter().filter(|v| **v == Verdict::Replicated).count();
            let graded = over_seeds(verdicts, &measures);
            let graded = match part_of.and_then(|o| o.rows.iter().find(|r| r.claim == *claim)) {
                Some(row) => on_the_rows_runs(&graded, row.measure.as_ref()),
                None => graded,
            };
            let spread = if graded.range.is_some() { graded.describe() } else { "–".into() };
            let md = vec![
                format!("{}: {}", first.suite, first.rows[i].claim),
                per,
                spread,
                format!("{holds} of {} seeds", graded.verdicts.len()),
                graded.verdict.label().into(),
            ];
            let js = json!({"claim": first.rows[i].claim, "ours": rows.iter().map(|r| r.map(|r| &r.ours)).collect::<Vec<_>>(),
                "over_seeds": graded, "verdict": graded.verdict});
            let (suite, claim) = (first.suite.clone(), first.rows[i].claim.clone());
            (md, js, Graded { suite, claim, over_seeds: graded, whole_suite })
        })
        .collect()
}

/// Give each claim row of `outs` that was graded over seeds its verdict over seeds, and say in
/// its text what the seeds found (the claims table is then graded over seeds). Where the seeds
/// repeat only part of the suite, the row keeps its verdict on all of seed 0's runs and says
/// what the seeds found on their subset.
pub fn apply(outs: &mut [SuiteOutcome], graded: &[Graded]) {
    for g in graded {
        let Some(o) = outs.iter_mut().find(|o| o.suite == g.suite) else { continue };
        let Some(row) = o.rows.iter_mut().find(|r| r.claim == g.claim) else { continue };
        if !g.whole_suite {
            let v = g.over_seeds.verdict.label();
            row.ours = format!("{}; on the runs the seeds repeat: {} ({v})", row.ours, g.over_seeds.describe());
            continue;
        }
        let seed0 = row.verdict;
        row.verdict = g.over_seeds.verdict;
        row.ours = format!("{}; {}", row.ours, g.over_seeds.describe());
        if seed0 != row.verdict {
            let rule = g.over_seeds.criterion();
            row.reason = format!("{}; {rule} (seed 0 alone: {})", row.reason, seed0.label());
        }
        row.over_seeds = Some(g.over_seeds.clone());
    }
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
        format!("d-scaling: τ ∝ D^α, all seeds' points pooled (paper {})", super::paper::ALPHA.quote),
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

/// The D-sweep's T1 per K: each seed's and mean ± sd (population) over the seeds that reached it.
fn t1_markdown(by_k: &serde_json::Value) -> String {
    let rows: Vec<Vec<String>> = by_k
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    let t: Vec<String> = x["t1"].as_array().map_or(vec![], |t| {
                        t.iter().map(|v| v.as_f64().map_or("–".into(), |v| format!("{v:.0}"))).collect()
                    });
                    let (m, sd) = (x["mean"].as_f64(), x["sd"].as_f64());
                    let spread = match (m, sd) {
                        (Some(m), Some(sd)) => format!("{m:.0} ± {sd:.0}"),
                        _ => "–".into(),
                    };
                    vec![x["k"].to_string(), t.join(", "), spread]
                })
                .collect()
        })
        .unwrap_or_default();
    format!("\nD-sweep T1 per K over seeds:\n\n{}", table(&["K", "T1 per seed", "mean ± sd"], &rows))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_holding_for_some_seeds_only_differs_and_for_none_is_not_replicated() {
        assert_eq!(grade(&[Some(true), Some(true)], Some(true)), Verdict::Replicated);
        assert_eq!(grade(&[Some(true), Some(false)], Some(true)), Verdict::Differs);
        assert_eq!(grade(&[Some(true), Some(true)], Some(false)), Verdict::Differs);
        assert_eq!(grade(&[Some(false), Some(false)], Some(false)), Verdict::NotReplicated);
        assert_eq!(grade(&[Some(true), None], Some(true)), Verdict::Incomplete);
        assert_eq!(grade(&[Some(true)], None), Verdict::Incomplete);
    }

    fn outcome(rows: Vec<Row>) -> SuiteOutcome {
        let (figures, details, data) = (vec![], String::new(), json!(null));
        SuiteOutcome {
            suite: "s".into(),
            rows,
            figures,
            details,
            data,
            runs_total: 2,
            runs_complete: 2,
            compute_seconds: 0.0,
        }
    }

    #[test]
    fn a_seed_missing_one_runs_probe_leaves_that_claim_incomplete_and_the_others_matched() {
        let row = |claim: &str, v| Row::new(claim, "p", "o".into(), v, "r");
        let s0 = outcome(vec![
            row("a (K = 10)", Verdict::Replicated),
            row("b (K = 10)", Verdict::Replicated),
            row("a (K = 20)", Verdict::Differs),
        ]);
        // Seed 1's K = 10 probe is missing: one incomplete row in place of two.
        let s1 = outcome(vec![row("a (K = 10)", Verdict::Incomplete), row("a (K = 20)", Verdict::Differs)]);
        let graded = claim_rows(&[s0, s1], None);
        let by_claim: Vec<(&str, Verdict)> =
            graded.iter().map(|(_, _, g)| (g.claim.as_str(), g.over_seeds.verdict)).collect();
        assert_eq!(
            by_claim,
            [
                ("a (K = 10)", Verdict::Incomplete),
                ("b (K = 10)", Verdict::Incomplete),
                ("a (K = 20)", Verdict::Differs)
            ]
        );
    }
}
