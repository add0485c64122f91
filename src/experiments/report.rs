//! The claims report: every suite's rows side by side with the paper's numbers, the seven
//! falsified mechanisms (spec §9), per-suite details and figures → `report.md`, `report.json`.

use super::claims::{Ctx, Key, Row, SuiteOutcome, Verdict, table};
use super::plan::Plan;
use super::provenance::{builds, provenance, segments, trained_by};
use super::run_key::Scale;
use super::scaling;
use super::stats::power_law;
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::json;
use std::path::PathBuf;

/// One of the falsified mechanisms and what windtunnel's runs say about it.
#[derive(Clone, Debug, Serialize)]
pub struct Mechanism {
    pub mechanism: String,
    pub prediction: String,
    pub test: String,
    pub windtunnel: String,
    pub verdict: String,
}

/// A suite's first row: its headline claim.
fn first_row<'a>(outs: &'a [SuiteOutcome], suite: &str) -> Option<&'a Row> {
    outs.iter().find(|o| o.suite == suite).and_then(|o| o.rows.first())
}

/// The suite's first row with this key, else its first row.
fn row_with<'a>(outs: &'a [SuiteOutcome], suite: &str, key: Key) -> Option<&'a Row> {
    let o = outs.iter().find(|o| o.suite == suite)?;
    o.rows.iter().find(|r| r.key == Some(key)).or(o.rows.first())
}

/// Kramers escape predicts that more noise (larger η, smaller B) shortens the plateau. The escape
/// time is the plateau's end, T1: the T3 window can restart after T1 (a loss spike at η = 2e-3 at
/// paper scale) and then says nothing about the escape.
fn kramers(outs: &[SuiteOutcome]) -> (String, String) {
    verdict_from(&[row_with(outs, "lr", Key::LrT1), row_with(outs, "batch", Key::BatchSteps)])
}

/// "falsified" when the row's evidence holds in direction, else what is missing.
fn verdict_from(rows: &[Option<&Row>]) -> (String, String) {
    if rows.iter().any(|r| r.is_none()) {
        return ("–".into(), "suite not run".into());
    }
    let rows: Vec<&Row> = rows.iter().map(|r| r.unwrap()).collect();
    let ours = rows.iter().map(|r| r.ours.clone()).collect::<Vec<_>>().join("; ");
    let v = if rows.iter().any(|r| r.verdict == Verdict::Incomplete) {
        "incomplete"
    } else if rows.iter().all(|r| r.verdict.in_direction()) {
        "falsified (as in the paper)"
    } else {
        "NOT falsified by windtunnel's runs"
    };
    (ours, v.into())
}

/// AdamW timescale (Power Lines): τ_epochs ∝ B/(η·λ·D). Regress ln(T1 in epochs) on ln(B/(ηλD))
/// over the D, LR and batch sweeps.
fn adamw_timescale(ctx: &Ctx) -> Result<(String, String)> {
    let (mut x, mut y) = (vec![], vec![]);
    for suite in ["d-scaling", "lr", "batch"] {
        for r in ctx.load(super::suites::suite(suite)?)? {
            let (b, eta, wd, d) =
                (r.cfg.train.batch_size as f64, r.cfg.train.lr, r.cfg.train.weight_decay, r.d() as f64);
            if let Some(t) = r.taus.t1 {
                x.push(b / (eta * wd * d));
                y.push(t as f64 * b / d);
            }
        }
    }
    Ok(match power_law(&x, &y, scaling::SEED, 600) {
        Some(f) if f.n >= 4 => (
            format!("slope {} (prediction +1)", super::claims::fmt_ci(&f)),
            if f.slope < 0.5 {
                "falsified (as in the paper)".into()
            } else {
                "NOT falsified by windtunnel's runs".into()
            },
        ),
        _ => ("too few runs with T1".into(), "incomplete".into()),
    })
}

pub fn mechanisms(ctx: &Ctx, outs: &[SuiteOutcome]) -> Result<Vec<Mechanism>> {
    let m = |name: &str, pred: &str, test: &str, (ours, v): (String, String)| Mechanism {
        mechanism: name.into(),
        prediction: pred.into(),
        test: test.into(),
        windtunnel: ours,
        verdict: v,
    };
    let lin = first_row(outs, "linear").map(|r| {
        let v = if r.verdict == Verdict::Incomplete { "incomplete" } else { "partly tested" };
        (format!("{}; the author's ill-conditioned regression (κ = 100) is not re-run", r.ours), v.to_string())
    });
    let adamw = if ["d-scaling", "lr", "batch"].iter().all(|s| outs.iter().any(|o| o.suite == *s)) {
        adamw_timescale(ctx)?
    } else {
        ("–".into(), "suite not run".into())
    };
    Ok(vec![
        m(
            "Gradient cancellation between groups sharing z",
            "plateau ∝ (|B|/G)^β with β ≈ 1",
            "z-sharing sweep (paper β ≈ 0.02)",
            verdict_from(&[first_row(outs, "z-sharing")]),
        ),
        m(
            "Kramers / noise-activated escape",
            "more gradient noise (larger η, smaller B) ⇒ faster escape",
            "LR sweep (T1, the plateau's end) and batch sweep (paper: τ rises with η, falls with B)",
            kramers(outs),
        ),
        m(
            "Coverage / signal dilution (groups learned one at a time)",
            "per-group accuracy rises group by group long before τ",
            "per-group K-way scoring (paper: 0% of groups ≥ 0.8 at τ/2)",
            verdict_from(&[first_row(outs, "snap")]),
        ),
        m(
            "Spinodal instability (the plateau is a local minimum)",
            "λ_min ≥ 0 on the plateau, crossing 0 at τ",
            "Hessian λ_min on plateau checkpoints (paper: < 0 throughout)",
            verdict_from(&[first_row(outs, "hessian")]),
        ),
        m(
            "Ambiguity sets the duration",
            "τ ∝ K^δ with δ > 0 at fixed D",
            "fixed-D control (paper δ ≈ 0)",
            verdict_from(&[first_row(outs, "fixed-d")]),
        ),
        m(
            "Ill-conditioning (a slow linear mode)",
            "a linear model shows the same plateau and escape",
            "linear baseline (paper: linear models show no plateau-then-escape)",
            lin.unwrap_or(("–".into(), "suite not run".into())),
        ),
        m(
            "AdamW timescale (Power Lines: τ ∝ B/(ηλD))",
            "τ in epochs grows ∝ B/(ηλD) (slope +1)",
            "regression over the D, LR and batch sweeps (paper slope −1.14, R² 0.70)",
            adamw,
        ),
    ])
}

#[derive(Serialize)]
struct ReportJson<'a> {
    scale: &'a str,
    windtunnel_version: &'a str,
    /// The builds that trained the runs: arithmetic version, revision and run names.
    trained_by: Vec<serde_json::Value>,
    suites: &'a [SuiteOutcome],
    mechanisms: &'a [Mechanism],
    #[serde(skip_serializing_if = "Option::is_none")]
    seeds: &'a Option<serde_json::Value>,
    /// The paper's numbers the report grades against, as numbers.
    paper: Vec<serde_json::Value>,
}

/// Analyse `suites` from `<out>/<scale>/runs` and write `<out>/<scale>/report.{md,json}` and
/// `figures/`. `run_probes`: compute missing probe results of complete runs.
pub fn write_report(plan: &Plan, run_probes: bool) -> Result<PathBuf> {
    let (scale, base) = (plan.scale, plan.out.join(plan.scale.name()));
    let ctx = context(plan, base.join("figures"), run_probes, vec![]);
    std::fs::create_dir_all(&ctx.figures).map_err(|e| Error::io(&ctx.figures, e))?;
    let mut outs = vec![];
    for s in &plan.suites {
        outs.push(s.grade(&ctx)?);
    }
    let seeds = super::seeds::section(&ctx, &outs)?;
    super::seeds::apply(&mut outs, &seeds.graded);
    let mech = mechanisms(&ctx, &outs)?;
    let builds = builds(&ctx.runs)?;
    let md = markdown(scale, plan.seeds, &trained_by(&builds), &outs, &mech)
        + &seeds.markdown
        + &provenance(&builds, &ctx.runs, plan.allow_mixed_arithmetic)?
        + &segments(&ctx.runs)?
        + &config_drift(plan)?
        + &super::paper::markdown();
    let path = base.join("report.md");
    crate::io::tensors::write_atomic(&path, md.as_bytes())?;
    let js = ReportJson {
        scale: scale.name(),
        windtunnel_version: env!("CARGO_PKG_VERSION"),
        trained_by: builds
            .iter()
            .map(|((v, rev), runs)| json!({"arithmetic": v, "revision": rev, "runs": runs}))
            .collect(),
        suites: &outs,
        mechanisms: &mech,
        seeds: &seeds.data,
        paper: super::paper::values(),
    };
    let text = serde_json::to_string_pretty(&json!(js)).expect("serialises");
    crate::io::tensors::write_atomic(&base.join("report.json"), text.as_bytes())?;
    Ok(path)
}

fn context(plan: &Plan, figures: PathBuf, run_probes: bool, only: Vec<String>) -> Ctx {
    Ctx {
        scale: plan.scale,
        configs: plan.configs.clone(),
        runs: plan.runs_dir(),
        figures,
        run_probes,
        only,
        seeds: plan.seeds,
        seed: 0,
        seeded_only: false,
    }
}

/// Compute the missing probe results of the plan's probe suites on the runs `only` (all when
/// empty), at every seed each suite is graded with, writing no report: one unit of work for a cluster task. Figures go to a scratch
/// directory that is removed afterwards (the report step draws them).
pub fn probes_only(plan: &Plan, only: Vec<String>) -> Result<()> {
    let scratch = plan.out.join(plan.scale.name()).join(format!(".probe-figures-{}", std::process::id()));
    let ctx = context(plan, scratch.clone(), true, only);
    std::fs::create_dir_all(&ctx.figures).map_err(|e| Error::io(&ctx.figures, e))?;
    let result = plan.suites.iter().filter(|s| s.reads_probes).try_for_each(|suite| {
        (0..ctx.seeds_of(suite)).try_for_each(|seed| suite.grade(&Ctx { seed, ..ctx.clone() }).map(|_| ()))
    });
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// The verdicts of a `report.json` as the markdown table docs/REPLICATION.md embeds between
/// `<!-- verdicts:<scale> -->` markers (`tests/docs_verdicts.rs` keeps the two equal, so no
/// verdict in the docs is written by hand).
pub fn verdict_table(report: &serde_json::Value) -> String {
    let mut rows = vec![];
    for s in report["suites"].as_array().into_iter().flatten() {
        for r in s["rows"].as_array().into_iter().flatten() {
            let v: Verdict = serde_json::from_value(r["verdict"].clone()).unwrap_or(Verdict::Incomplete);
            rows.push(vec![
                s["suite"].as_str().unwrap_or("").to_string(),
                r["claim"].as_str().unwrap_or("").to_string(),
                r["ours"].as_str().unwrap_or("").to_string(),
                format!("**{}**", v.label()),
            ]);
        }
    }
    table(&["suite", "claim", "windtunnel", "verdict"], &rows)
}

/// Runs on disk whose config.toml is not the one their suite asks for (trained by an older
/// suite definition, or by hand): the report's numbers are theirs, so it says so.
fn config_drift(plan: &Plan) -> Result<String> {
    let mut lines = vec![];
    for spec in plan.specs() {
        let dir = plan.runs_dir().join(&spec.name);
        if !crate::train::layout::config(&dir).exists() {
            continue;
        }
        let (have, want) = (crate::train::layout::read_config(&dir)?, spec.resolve(&plan.configs)?);
        let keys = crate::train::inputs::differing_keys(&have.to_toml(), &want.to_toml());
        if !keys.is_empty() {
            lines.push(format!("- {}: {}", spec.name, keys.join(", ")));
        }
    }
    Ok(if lines.is_empty() {
        String::new()
    } else {
        format!(
            "\n**Runs whose config differs from what their suite asks for now** (the numbers above are these runs'; the \
             keys that differ):\n\n{}\n",
            lines.join("\n")
        )
    })
}

/// "**31 claims: 19 replicated, 7 differs, …**", verdicts in a fixed order, absent ones left out,
/// and where they are explained.
fn tally(outs: &[SuiteOutcome]) -> String {
    const ORDER: [Verdict; 6] = [
        Verdict::Replicated,
        Verdict::Differs,
        Verdict::NotReplicated,
        Verdict::FindingAgrees,
        Verdict::FindingDisagrees,
        Verdict::Incomplete,
    ];
    let verdicts: Vec<Verdict> = outs.iter().flat_map(|o| o.rows.iter().map(|r| r.verdict)).collect();
    let counts: Vec<String> = ORDER
        .iter()
        .filter_map(|&v| {
            let n = verdicts.iter().filter(|&&x| x == v).count();
            (n > 0).then(|| format!("{n} {}", v.label()))
        })
        .collect();
    let n = verdicts.len();
    format!(
        "**{n} claim{}: {}.** What each verdict compares, and why some differ: docs/REPLICATION.md.",
        if n == 1 { "" } else { "s" },
        if counts.is_empty() { "none graded".to_string() } else { counts.join(", ") }
    )
}

/// `seeds`: the plan's `--seeds`, repeated in each suite's command.
/// `trained_by`: a line on the builds that trained the runs ([`trained_by`]).
pub fn markdown(
    scale: Scale,
    seeds: Option<u32>,
    trained_by: &str,
    outs: &[SuiteOutcome],
    mech: &[Mechanism],
) -> String {
    let mut s = format!(
        "# windtunnel replication report — `{}` scale\n\nwindtunnel {}. Paper: *Marginals Before Conditionals* (arXiv 2603.10074); \
         the protocol: docs/SPEC.md; the paper's numbers and their sources: the last section. Verdicts: **replicated** (same direction, magnitude within the stated \
         tolerance), **differs** (same direction, other magnitude), **not replicated** (absent or reversed), **incomplete** (runs or probes \
         still missing).{}\n\n{}\n\n{trained_by}## Claims\n\n",
        scale.name(),
        env!("CARGO_PKG_VERSION"),
        if scale == Scale::Ci {
            " At `ci` scale the model and data are reduced (docs/REPLICATION.md), so only directions are comparable with the paper's numbers."
        } else {
            ""
        },
        tally(outs)
    );
    let mut rows = vec![];
    for o in outs {
        for r in &o.rows {
            rows.push(vec![
                o.suite.clone(),
                r.claim.clone(),
                r.paper.clone(),
                r.ours.clone(),
                format!("**{}**", r.verdict.label()),
                r.reason.clone(),
            ]);
        }
    }
    s += &table(&["suite", "claim", "paper", "windtunnel", "verdict", "why"], &rows);
    s += "\n## The seven falsified mechanisms (spec §9, inferred list)\n\n";
    let mrows: Vec<Vec<String>> = mech
        .iter()
        .map(|m| {
            vec![m.mechanism.clone(), m.prediction.clone(), m.test.clone(), m.windtunnel.clone(), m.verdict.clone()]
        })
        .collect();
    s += &table(&["mechanism", "prediction", "test", "windtunnel", "verdict"], &mrows);
    s += "\n## Compute\n\n";
    let crows: Vec<Vec<String>> = outs
        .iter()
        .map(|o| {
            let seeds = seeds.map_or(String::new(), |n| format!(" --seeds {n}"));
            vec![
                o.suite.clone(),
                format!("{}/{}", o.runs_complete, o.runs_total),
                format!("{:.0}", o.compute_seconds),
                format!("`windtunnel replicate {} --scale {}{seeds}`", o.suite, scale.name()),
            ]
        })
        .collect();
    s += "Each suite is reproduced by its command, run at the revision under Provenance (add \
          `--executor slurm` on a cluster, docs/CLUSTER.md); `windtunnel replicate all` runs them all.\n\n";
    let header = ["suite", "runs complete", "training + probe seconds (shared runs count in every suite)", "command"];
    s += &table(&header, &crows);
    for o in outs {
        s += &format!("\n## {}\n\n{}\n", o.suite, o.details);
        for f in &o.figures {
            s += &format!("![{f}]({f})\n");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(suite: &str, rows: Vec<Row>) -> SuiteOutcome {
        SuiteOutcome {
            suite: suite.into(),
            rows,
            figures: vec![],
            details: String::new(),
            data: json!(null),
            runs_total: 0,
            runs_complete: 0,
            compute_seconds: 0.0,
        }
    }

    #[test]
    fn the_report_opens_with_the_tally_of_every_verdict_in_a_fixed_order() {
        let row = |v| Row::new("c", "", String::new(), v, "");
        let outs = [
            outcome("a", vec![row(Verdict::Incomplete), row(Verdict::Replicated), row(Verdict::NotReplicated)]),
            outcome("b", vec![row(Verdict::Replicated), row(Verdict::FindingAgrees)]),
        ];
        assert_eq!(
            tally(&outs),
            "**5 claims: 2 replicated, 1 not replicated, 1 finding (paper's direction), 1 incomplete.** What each \
             verdict compares, and why some differ: docs/REPLICATION.md."
        );
        assert!(tally(&[outcome("a", vec![row(Verdict::Differs)])]).starts_with("**1 claim: 1 differs.**"));
        assert!(tally(&[]).starts_with("**0 claims: none graded.**"));
        let md = markdown(Scale::Paper, None, "", &outs, &[]);
        assert!(md.split("## Claims").next().unwrap().contains("**5 claims: 2 replicated"), "{md}");
    }

    #[test]
    fn the_compute_table_gives_each_suites_command() {
        let outs = [outcome("lr", vec![]), outcome("fixed-d", vec![])];
        let md = markdown(Scale::Paper, None, "", &outs, &[]);
        assert!(md.contains("| lr | 0/0 | 0 | `windtunnel replicate lr --scale paper` |"), "{md}");
        assert!(md.contains("`windtunnel replicate fixed-d --scale paper` |") && !md.contains("--seeds"));
        let md = markdown(Scale::Ci, Some(2), "", &outs, &[]);
        assert!(md.contains("`windtunnel replicate lr --scale ci --seeds 2` |"), "{md}");
    }

    #[test]
    fn kramers_is_judged_on_the_plateaus_end() {
        let row = |claim: &str, v| Row::new(claim, "", claim.into(), v, "");
        let lr = outcome(
            "lr",
            vec![
                row("Higher η slows the transition (T3 window)", Verdict::NotReplicated),
                row("T1", Verdict::FindingAgrees).keyed(Key::LrT1),
            ],
        );
        let batch = outcome("batch", vec![row("Smaller batch delays escape", Verdict::Replicated)]);
        let (ours, v) = kramers(&[lr.clone(), batch.clone()]);
        assert_eq!(v, "falsified (as in the paper)");
        assert_eq!(ours.split("; ").next(), Some("T1"));
        // Without a T1 row the first (T3) row decides.
        let lr_t3 = outcome("lr", vec![lr.rows[0].clone()]);
        assert_eq!(kramers(&[lr_t3, batch.clone()]).1, "NOT falsified by windtunnel's runs");
        // A T1 finding against the paper's direction does not falsify Kramers.
        let mut against = lr.clone();
        against.rows[1].verdict = Verdict::FindingDisagrees;
        assert_eq!(kramers(&[against, batch.clone()]).1, "NOT falsified by windtunnel's runs");
        assert_eq!(kramers(&[batch]).1, "suite not run");
    }
}
