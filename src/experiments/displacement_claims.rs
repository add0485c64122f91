//! The displacement suite (spec §7.9): the cosine between consecutive 200-step weight
//! displacements, averaged per phase, on runs trained to the author's 50,000 steps — measured by
//! the probe, graded by [`displacement_verdict`], drawn against the author's phase means.

use super::claims::{Ctx, Row, RunData, Suite, SuiteOutcome, Verdict, outcome, table};
use super::paper;
use super::probe_claims::{cached, cached_in};
use super::run_key::{RunKey, Scale};
use crate::error::{Error, Result};
use crate::plot::{LinePlot, Series, line_plot};
use crate::probes::RunView;
use crate::probes::displacement::{self, DisplacementReport};
use serde_json::json;

/// Random walk then coherent descent: the post-τ cosine above the plateau's; replicated when the
/// plateau's is below 0.3 and the rise over 0.2. A phase that was not measured fails the claim.
pub fn displacement_verdict(plateau: Option<f64>, post: Option<f64>) -> Verdict {
    match (plateau, post) {
        (Some(pc), Some(oc)) => Verdict::grade(oc > pc, pc < 0.3 && oc - pc > 0.2),
        _ => Verdict::NotReplicated,
    }
}

pub fn displacement_suite(ctx: &Ctx, suite: &Suite) -> Result<SuiteOutcome> {
    let runs = ctx.load(suite)?;
    let mut secs = 0.0;
    let (mut rows, mut series, mut detail, mut data) = (vec![], vec![], vec![], vec![]);
    for r in &runs {
        let paper = match r.k() {
            10 => paper::DISPLACEMENT_K10.quote,
            20 => paper::DISPLACEMENT_K20.quote,
            _ => "cos ≈ 0.04 on the plateau → ≈ 0.8 at τ",
        };
        let claim = format!("Random walk on the plateau, then coherent descent (K = {})", r.k());
        let rep = match finished_displacement(ctx, r, &mut secs)? {
            Some(Ok(rep)) => rep,
            Some(Err(why)) => {
                rows.push(Row::incomplete(&claim, paper, why));
                continue;
            }
            None => {
                rows.push(Row::incomplete(&claim, paper, displacement_pending(ctx, r)?));
                continue;
            }
        };
        rows.push(grade_displacement(&claim, paper, &rep));
        series.extend(displacement_series(r.k(), &rep, ctx.scale));
        detail.extend(phase_table(r.k(), &rep));
        data.push(json!({"k": r.k(), "report": rep}));
    }
    let p = LinePlot {
        title: "Direction consistency of 200-step weight displacements".into(),
        x_label: "step / τ (T2)".into(),
        y_label: "cos(Δ_t, Δ_{t−200})".into(),
        series,
        hlines: vec![(0.0, "0".into())],
        vlines: vec![(0.5, "τ/2".into()), (1.0, "τ".into())],
        ..Default::default()
    };
    let figures = vec![ctx.figure("displacement.svg", &line_plot(&p)?)?];
    let mut o =
        outcome("displacement", &runs, rows, figures, table(&["K", "phase", "n", "‖Δ‖ mean", "cos mean"], &detail));
    o.data = json!(data);
    o.compute_seconds += secs;
    Ok(o)
}

/// (cosine mean, displacements) of one phase.
fn phase(rep: &DisplacementReport, name: &str) -> (Option<f64>, usize) {
    rep.phases.iter().find(|p| p.phase == name).map_or((None, 0), |p| (p.cosine_mean, p.n))
}

fn grade_displacement(claim: &str, paper: &str, rep: &DisplacementReport) -> Row {
    let ((pc, pn), (qc, qn), (oc, on)) = (phase(rep, "plateau"), phase(rep, "pre-transition"), phase(rep, "post"));
    let c = |x: Option<f64>| x.map_or("–".into(), |x| format!("{x:+.3}"));
    let tau = rep.tau.map_or("–".into(), |t| t.to_string());
    Row::new(
        claim,
        paper,
        format!(
            "cos: plateau {} (n {pn}), pre {} (n {qn}), post {} (n {on}); τ = {tau} ({})",
            c(pc),
            c(qc),
            c(oc),
            rep.tau_definition
        ),
        displacement_verdict(pc, oc),
        "cosine between consecutive 200-step weight displacements, phase means; replicated: plateau < 0.3 and \
             post above it by > 0.2, differs: post > plateau; a phase without displacements cannot show the claim",
    )
    .with("cosine", [pc, qc, oc])
    .with("n", [pn, qn, on])
}

/// The run's cosines against step / τ, and at paper scale the author's phase means.
fn displacement_series(k: usize, rep: &DisplacementReport, scale: Scale) -> Vec<Series> {
    let pts = match rep.tau {
        Some(tau) => rep.points.iter().filter_map(|p| p.cosine.map(|c| (p.step as f64 / tau as f64, c))).collect(),
        None => vec![],
    };
    let mut series = vec![Series::line(format!("K = {k}"), pts)];
    let cited = match (k, scale) {
        (10, Scale::Paper) => paper::DISPLACEMENT_K10.value,
        (20, Scale::Paper) => paper::DISPLACEMENT_K20.value,
        _ => return series,
    };
    // Phase means, drawn at the middle of each phase: plateau [0, τ/2), pre [τ/2, τ), post ≥ τ.
    let x = |phase: &str| match phase {
        "plateau" => 0.25,
        "pre" => 0.75,
        _ => 1.5,
    };
    let pts = cited.iter().map(|&(phase, c)| (x(phase), c)).collect();
    series.push(Series::points(format!("K = {k}: author's phase means"), pts));
    series
}

fn phase_table(k: usize, rep: &DisplacementReport) -> Vec<Vec<String>> {
    let f = |x: Option<f64>, plus: bool| {
        x.map_or("–".into(), |x| if plus { format!("{x:+.3}") } else { format!("{x:.3}") })
    };
    rep.phases
        .iter()
        .map(|p| vec![k.to_string(), p.phase.clone(), p.n.to_string(), f(p.norm_mean, false), f(p.cosine_mean, true)])
        .collect()
}

/// Why a displacement row is not graded yet: at paper scale, the 50,000-step run's progress and
/// what the canonical run (stopped at 3·T1, too few post-transition displacements) showed.
fn displacement_pending(ctx: &Ctx, r: &RunData) -> Result<String> {
    let at = r.records.last().map_or(0, |x| x.step);
    let mut why = match (r.complete, ctx.scale) {
        (false, Scale::Paper) => format!(
            "graded on the run {}, trained to the author's 50,000 steps (≈ 200 post-transition displacements): {}",
            r.name,
            if at == 0 { "not trained yet".to_string() } else { format!("at step {at}") }
        ),
        _ => "run or probe not complete".to_string(),
    };
    let canonical = ctx.runs.join(RunKey::canonical(ctx.scale, r.key.k).to_string());
    let mut ignored = 0.0;
    // Read only (never computed here): the canonical run's checkpoints are not kept.
    let early: Option<DisplacementReport> =
        cached_in(&canonical, "displacement", "canonical", false, &mut ignored, || {
            Err(Error::other("the canonical run's displacement is read, not computed"))
        })?;
    if let (Scale::Paper, Some(rep)) = (ctx.scale, early) {
        let c = |(x, n): (Option<f64>, usize)| x.map_or("–".into(), |x| format!("{x:+.3} (n {n})"));
        why += &format!(
            "; not graded: the canonical run, stopped at 3·T1, gives cos plateau {}, pre {}, post {}",
            c(phase(&rep, "plateau")),
            c(phase(&rep, "pre-transition")),
            c(phase(&rep, "post"))
        );
    }
    Ok(why)
}

/// The displacement report over the whole run: one written part way through (a run trained
/// across sessions) is continued from the run's remaining checkpoints when probing is allowed.
/// Err: why a report on disk cannot be graded.
fn finished_displacement(
    ctx: &Ctx,
    r: &RunData,
    secs: &mut f64,
) -> Result<Option<std::result::Result<DisplacementReport, String>>> {
    let Some(rep) = cached(ctx, r, "displacement", secs, displacement::run_displacement)? else { return Ok(None) };
    let mut rep: DisplacementReport = rep;
    let last = r.records.last().map_or(0, |x| x.step);
    if !rep.reaches(last) {
        if !ctx.probe_allowed(&r.name) {
            return Ok(None);
        }
        let t0 = std::time::Instant::now();
        rep = displacement::run_displacement(&RunView::open(&r.dir)?)?;
        *secs += t0.elapsed().as_secs_f64();
    }
    if !rep.starts_at_the_beginning() {
        let first = rep.points.first().map_or(0, |p| p.step);
        return Ok(Some(Err(format!(
            "the displacement points of {} start at step {first}, not at the run's beginning (its early \
             checkpoints are gone and no earlier report holds them): train it again",
            r.name
        ))));
    }
    Ok(Some(Ok(rep)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displacement_needs_both_phases_and_a_rise() {
        assert_eq!(displacement_verdict(Some(0.05), Some(0.8)), Verdict::Replicated);
        assert_eq!(displacement_verdict(Some(0.35), Some(0.8)), Verdict::Differs);
        assert_eq!(displacement_verdict(Some(0.05), Some(0.2)), Verdict::Differs);
        assert_eq!(displacement_verdict(Some(0.5), Some(0.4)), Verdict::NotReplicated);
        assert_eq!(displacement_verdict(None, Some(0.8)), Verdict::NotReplicated);
        assert_eq!(displacement_verdict(Some(0.05), None), Verdict::NotReplicated);
    }
}
