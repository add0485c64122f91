//! A claim graded over init/order seeds against the paper's value: one run cannot tell a real
//! disagreement from noise, so "differs" means the paper's value lies outside the range of
//! windtunnel's per-seed figures. measure (each seed's figure, their range) → grade → render.

use super::verdict::{Measure, Verdict};
use serde::Serialize;

/// One claim over seeds: what each seed found, their range, and the verdict from both.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverSeeds {
    /// Each seed's verdict on its own runs (s0 first).
    pub verdicts: Vec<Verdict>,
    /// Each seed's figure(s); empty when the row grades no figure against the paper.
    pub values: Vec<Vec<f64>>,
    /// The figure's name, when the row has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<String>,
    /// Min and max over every seed's figures.
    pub range: Option<(f64, f64)>,
    /// The paper's value (an interval; lo = hi for one number).
    pub paper: Option<(f64, f64)>,
    /// Whether the paper's interval meets the seeds' range.
    pub paper_inside: Option<bool>,
    pub verdict: Verdict,
}

/// The range of every seed's figures, or None if a seed has no figure or a non-finite one.
pub fn seed_range(measures: &[Option<&Measure>]) -> Option<(f64, f64)> {
    let mut all = vec![];
    for m in measures {
        let m = (*m)?;
        if m.values.is_empty() || m.values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        all.extend(&m.values);
    }
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (!all.is_empty()).then_some((lo, hi))
}

/// Whether the paper's interval meets the seeds' range.
pub fn paper_inside((lo, hi): (f64, f64), (p_lo, p_hi): (f64, f64)) -> bool {
    p_lo <= hi && p_hi >= lo
}

/// Verdict without a figure to compare: replicated (or the finding) only when every seed agrees.
pub fn by_agreement(v: &[Verdict]) -> Verdict {
    if v.is_empty() || v.contains(&Verdict::Incomplete) {
        Verdict::Incomplete
    } else if v.iter().all(|x| *x == v[0]) {
        v[0]
    } else {
        Verdict::Differs
    }
}

/// The verdict over seeds. Incomplete while a seed is; replicated when every seed replicates,
/// or when every seed points the paper's way and the paper's value lies inside the seeds' range
/// (the disagreement is within seed noise); not replicated when no seed points the paper's way;
/// differs otherwise — outside the range, or the seeds split on direction. Without a figure
/// (`inside` None) the seeds must agree.
pub fn grade(v: &[Verdict], inside: Option<bool>) -> Verdict {
    if v.is_empty() || v.contains(&Verdict::Incomplete) {
        return Verdict::Incomplete;
    }
    if v.iter().all(|x| *x == Verdict::Replicated) {
        return Verdict::Replicated;
    }
    let Some(inside) = inside else { return by_agreement(v) };
    let agree = v.iter().filter(|x| x.in_direction()).count();
    match agree {
        0 => Verdict::NotReplicated,
        a if a == v.len() && inside => Verdict::Replicated,
        _ => Verdict::Differs,
    }
}

/// Seeds whose figures answer different questions (the K = 36 batch row: B128/B512 on the seeds
/// whose B256 never escaped, B128/B256 on the other) cannot share one range: each figure becomes
/// a factor off the paper's value for that same figure, the paper then at 1. None when every seed
/// states the same figure; all None (graded by agreement) when a paper value is no single number.
pub fn like_for_like(measures: &[Option<&Measure>]) -> Option<Vec<Option<Measure>>> {
    let named: Vec<&Measure> = measures.iter().flatten().copied().collect();
    let first = named.first()?;
    if named.iter().all(|m| m.name == first.name && m.paper == first.paper) {
        return None;
    }
    let mut names: Vec<&str> = vec![];
    for m in &named {
        if !names.contains(&m.name.as_str()) {
            names.push(&m.name);
        }
    }
    let name = format!("{} ÷ the paper's for the same pair", names.join(" or "));
    let point = |m: &Measure| m.paper.0 == m.paper.1 && m.paper.0 != 0.0 && m.paper.0.is_finite();
    if !named.iter().all(|m| point(m)) {
        return Some(vec![None; measures.len()]);
    }
    let factor = |m: &Measure| Measure {
        name: name.clone(),
        values: m.values.iter().map(|v| v / m.paper.0).collect(),
        paper: (1.0, 1.0),
    };
    Some(measures.iter().map(|m| m.map(factor)).collect())
}

/// Measure and grade one claim from each seed's verdict and figure.
pub fn over_seeds(verdicts: Vec<Verdict>, measures: &[Option<&Measure>]) -> OverSeeds {
    if let Some(factors) = like_for_like(measures) {
        return over_like_seeds(verdicts, &factors.iter().map(Option::as_ref).collect::<Vec<_>>());
    }
    over_like_seeds(verdicts, measures)
}

pub(super) fn over_like_seeds(verdicts: Vec<Verdict>, measures: &[Option<&Measure>]) -> OverSeeds {
    let named = measures.iter().flatten().next();
    let paper = named.map(|m| m.paper);
    let range = seed_range(measures);
    let inside = range.zip(paper).map(|(r, p)| paper_inside(r, p));
    let values = measures.iter().map(|m| m.map_or(vec![], |m| m.values.clone())).collect();
    let verdict = grade(&verdicts, inside);
    OverSeeds { verdicts, values, measure: named.map(|m| m.name.clone()), range, paper, paper_inside: inside, verdict }
}

/// A figure at three significant digits or so ("3.6", "0.267", "47726", "-4.34e-5").
pub fn num(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 1.0 => format!("{x:.2}"),
        a if a >= 0.001 || a == 0.0 => format!("{x:.3}"),
        _ => super::stats::sig(x, 3),
    }
}

pub(super) fn interval((lo, hi): (f64, f64)) -> String {
    match (lo == hi, lo < 0.0) {
        (true, _) => num(lo),
        (false, false) => format!("{}–{}", num(lo), num(hi)),
        (false, true) => format!("{} to {}", num(lo), num(hi)),
    }
}

impl OverSeeds {
    /// "T3 ratio over 3 seeds: 1.29 / 1.50 / 2.00; range 1.29–2.00; the paper's 3.60 lies outside it".
    pub fn describe(&self) -> String {
        let n = self.verdicts.len();
        let unfinished: Vec<String> =
            (0..n).filter(|&s| self.verdicts[s] == Verdict::Incomplete).map(|s| format!("s{s}")).collect();
        let each: Vec<String> = self
            .values
            .iter()
            .map(|v| if v.is_empty() { "–".into() } else { v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ") })
            .collect();
        let name = self.measure.as_deref();
        if !unfinished.is_empty() {
            let shown = name.map_or(String::new(), |m| format!("{m}: {}; ", each.join(" / ")));
            return format!("over {n} seeds: {shown}{} not finished", unfinished.join(", "));
        }
        let (Some(name), Some(range), Some(paper), Some(inside)) = (name, self.range, self.paper, self.paper_inside)
        else {
            let each: Vec<&str> = self.verdicts.iter().map(|v| v.label()).collect();
            return format!(
                "over {n} seeds, each seed's verdict: {} (no paper figure to place in a range)",
                each.join(" / ")
            );
        };
        let side = if inside { "inside" } else { "outside" };
        format!(
            "{name} over {n} seeds: {}; range {}; the paper's {} lies {side} it{}",
            each.join(" / "),
            interval(range),
            interval(paper),
            self.not_read_off_the_range(inside)
        )
    }

    /// The rule [`grade`] applied, for a row's reason: with the paper placed in the seeds' range,
    /// or (no figure in every seed) by agreement.
    pub fn criterion(&self) -> String {
        let n = self.verdicts.len();
        match self.paper_inside {
            Some(_) => format!(
                "graded over {n} seeds: replicated needs all {n} to replicate, or all in the paper's direction with \
                 its value inside their range; not replicated if none points its way; differs otherwise"
            ),
            None => format!(
                "graded over {n} seeds without a figure in each: replicated needs all {n} to replicate, a finding all \
                 {n} to agree on it; seeds that disagree differ"
            ),
        }
    }

    /// Where the verdict is not the one the range alone would give, why: every seed passes the
    /// claim's own criterion (replicated though the paper lies outside), or the seeds disagree on
    /// the direction (differs though it lies inside), or none points the paper's way.
    fn not_read_off_the_range(&self, inside: bool) -> &'static str {
        match (self.verdict, inside) {
            (Verdict::Replicated, false) => ", yet every seed passes the claim's own criterion",
            (Verdict::Differs, true) => ", but the seeds split on its direction",
            (Verdict::NotReplicated, true) => ", but no seed points the paper's way",
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    fn m(values: &[f64], paper: (f64, f64)) -> Measure {
        Measure { name: "r".into(), values: values.to_vec(), paper }
    }

    #[test]
    fn the_range_spans_every_seeds_figures_and_needs_them_all() {
        let (a, b) = (m(&[1.2, 1.9], (3.6, 3.6)), m(&[1.5], (3.6, 3.6)));
        assert_eq!(seed_range(&[Some(&a), Some(&b)]), Some((1.2, 1.9)));
        assert_eq!(seed_range(&[Some(&a), None]), None);
        assert_eq!(seed_range(&[Some(&a), Some(&m(&[f64::NAN], (1.0, 1.0)))]), None);
        assert_eq!(seed_range(&[Some(&a), Some(&m(&[], (1.0, 1.0)))]), None);
    }

    #[test]
    fn the_paper_is_inside_when_its_interval_meets_the_range_edges_included() {
        assert!(paper_inside((1.0, 2.0), (2.0, 2.0)));
        assert!(paper_inside((1.0, 2.0), (1.0, 1.0)));
        assert!(paper_inside((1.0, 2.0), (1.7, 4.4)));
        assert!(paper_inside((1.0, 2.0), (0.5, 3.0)));
        assert!(!paper_inside((1.0, 2.0), (2.01, 2.01)));
        assert!(!paper_inside((1.04, 1.19), (1.7, 4.4)));
        assert!(!paper_inside((1.0, 2.0), (0.2, 0.99)));
    }

    #[test]
    fn every_seed_replicating_is_replicated_whatever_the_range() {
        assert_eq!(grade(&[Replicated, Replicated, Replicated], Some(false)), Replicated);
        assert_eq!(grade(&[Replicated, Replicated], None), Replicated);
    }

    #[test]
    fn in_direction_everywhere_is_replicated_inside_the_range_and_differs_outside() {
        assert_eq!(grade(&[Replicated, Differs, Differs], Some(true)), Replicated);
        assert_eq!(grade(&[Differs, Differs, Differs], Some(true)), Replicated);
        assert_eq!(grade(&[Replicated, Differs, Differs], Some(false)), Differs);
        assert_eq!(grade(&[Differs, Differs, Differs], Some(false)), Differs);
    }

    #[test]
    fn seeds_split_on_direction_differ_and_none_in_direction_is_not_replicated() {
        assert_eq!(grade(&[Replicated, NotReplicated, Differs], Some(true)), Differs);
        assert_eq!(grade(&[NotReplicated, NotReplicated, NotReplicated], Some(true)), NotReplicated);
        assert_eq!(grade(&[NotReplicated, NotReplicated, NotReplicated], Some(false)), NotReplicated);
        assert_eq!(grade(&[NotReplicated, NotReplicated], None), NotReplicated);
    }

    #[test]
    fn an_unfinished_seed_or_no_seed_is_incomplete() {
        assert_eq!(grade(&[Replicated, Incomplete, Replicated], Some(true)), Incomplete);
        assert_eq!(grade(&[], Some(true)), Incomplete);
    }

    #[test]
    fn without_a_figure_the_seeds_must_agree() {
        assert_eq!(grade(&[FindingAgrees, FindingAgrees], None), FindingAgrees);
        assert_eq!(grade(&[FindingAgrees, FindingDisagrees], None), Differs);
        assert_eq!(grade(&[Differs, Replicated], None), Differs);
    }

    #[test]
    fn over_seeds_places_the_paper_in_the_range_and_says_so() {
        let (a, b, c) = (m(&[1.29], (3.6, 3.6)), m(&[2.0], (3.6, 3.6)), m(&[3.9], (3.6, 3.6)));
        let o = over_seeds(vec![Differs, Differs, Replicated], &[Some(&a), Some(&b), Some(&c)]);
        assert_eq!((o.range, o.paper_inside, o.verdict), (Some((1.29, 3.9)), Some(true), Replicated));
        assert_eq!(
            o.describe(),
            "r over 3 seeds: 1.29 / 2.00 / 3.90; range 1.29–3.90; the paper's 3.60 lies inside it"
        );
        let (d0, d1) = (m(&[-0.011], (-0.004, -0.004)), m(&[0.026], (-0.004, -0.004)));
        let o = over_seeds(vec![Replicated, Replicated], &[Some(&d0), Some(&d1)]);
        assert!(o.describe().contains("range -0.011 to 0.026; the paper's -0.004 lies inside"), "{}", o.describe());
        let o = over_seeds(vec![Differs, Differs], &[Some(&a), Some(&b)]);
        assert_eq!((o.paper_inside, o.verdict), (Some(false), Differs));
        assert!(o.describe().ends_with("the paper's 3.60 lies outside it"), "{}", o.describe());
        let o = over_seeds(vec![Replicated, Replicated], &[Some(&a), Some(&b)]);
        assert_eq!((o.paper_inside, o.verdict), (Some(false), Replicated));
        assert!(o.describe().ends_with("lies outside it, yet every seed passes the claim's own criterion"));
        let o = over_seeds(vec![Replicated, NotReplicated, Differs], &[Some(&a), Some(&b), Some(&c)]);
        assert_eq!((o.paper_inside, o.verdict), (Some(true), Differs));
        assert!(o.describe().ends_with("lies inside it, but the seeds split on its direction"), "{}", o.describe());
        let o = over_seeds(vec![NotReplicated, NotReplicated], &[Some(&a), Some(&c)]);
        assert_eq!((o.paper_inside, o.verdict), (Some(true), NotReplicated));
        assert!(o.describe().ends_with("lies inside it, but no seed points the paper's way"), "{}", o.describe());
        let o = over_seeds(vec![Differs, Replicated], &[Some(&a), None]);
        assert_eq!((o.range, o.verdict), (None, Differs));
        assert_eq!(
            o.describe(),
            "over 2 seeds, each seed's verdict: differs / replicated (no paper figure to place in a range)"
        );
        let o = over_seeds(vec![Differs, Incomplete, Incomplete], &[Some(&a), None, None]);
        assert_eq!(o.verdict, Incomplete);
        assert_eq!(o.describe(), "over 3 seeds: r: 1.29 / – / –; s1, s2 not finished");
    }

    #[test]
    fn the_criterion_names_the_rule_that_graded_the_row() {
        let (a, b) = (m(&[1.0], (2.0, 2.0)), m(&[3.0], (2.0, 2.0)));
        let ranged = over_seeds(vec![Differs, Differs, Replicated], &[Some(&a), Some(&b), Some(&b)]);
        assert!(ranged.criterion().contains("inside their range"), "{}", ranged.criterion());
        let no_figure = over_seeds(vec![FindingAgrees, FindingAgrees, Replicated], &[None, None, Some(&b)]);
        assert_eq!(no_figure.verdict, Differs);
        assert!(no_figure.criterion().contains("without a figure") && no_figure.criterion().contains("all 3 to agree"));
    }

    #[test]
    fn seeds_stating_different_pairs_are_placed_as_factors_off_the_papers_value_for_each() {
        let named = |name: &str, v: f64, p: f64| Measure { name: name.into(), values: vec![v], paper: (p, p) };
        let (a, b, c) =
            (named("B128/B512", 4.77, 4.32), named("B128/B512", 4.42, 4.32), named("B128/B256", 2.58, 2.65));
        let o = over_seeds(vec![Differs, Differs, Replicated], &[Some(&a), Some(&b), Some(&c)]);
        let f = |x: f64, p: f64| x / p;
        assert_eq!(o.values, vec![vec![f(4.77, 4.32)], vec![f(4.42, 4.32)], vec![f(2.58, 2.65)]]);
        assert_eq!((o.paper, o.paper_inside, o.verdict), (Some((1.0, 1.0)), Some(true), Replicated));
        assert!(o.describe().starts_with("B128/B512 or B128/B256 ÷ the paper's for the same pair over 3 seeds: 1.10 / 1.02 / 0.974; range 0.974–1.10; the paper's 1.00 lies inside"), "{}", o.describe());
        // All seeds above their own pair's value: outside, though the raw figures (2.58–4.77) hold 4.32.
        let c_far = named("B128/B256", 3.5, 2.65);
        let o = over_seeds(vec![Differs, Differs, Differs], &[Some(&a), Some(&b), Some(&c_far)]);
        assert_eq!((o.paper_inside, o.verdict), (Some(false), Differs));
        // Same name and paper value: the figures themselves, not factors.
        assert_eq!(like_for_like(&[Some(&a), Some(&b), None]), None);
        // A paper interval has no single value to divide by: graded by agreement.
        let span = Measure { name: "r".into(), values: vec![1.0], paper: (1.7, 4.4) };
        assert_eq!(like_for_like(&[Some(&a), Some(&span)]), Some(vec![None, None]));
        assert_eq!(over_seeds(vec![Differs, Replicated], &[Some(&a), Some(&span)]).paper_inside, None);
    }

    #[test]
    fn small_figures_keep_three_significant_digits() {
        assert_eq!(
            [num(47726.4), num(14.64), num(1.083), num(0.0123), num(0.0)],
            ["47726", "14.6", "1.08", "0.012", "0.000"]
        );
        assert_eq!((num(-4.34e-5), num(-0.004)), ("-4.34e-5".to_string(), "-0.004".to_string()));
    }
}
