//! A claim whose seeds repeat only part of its suite (the D sweep and the Δz lead to K = 20, not
//! to 36): its row is graded on all of seed 0's runs, the seeds on fewer. A per-run figure (the
//! plateau height of each run) is the same quantity on any subset; a fit or mean over the runs
//! (the lead exponent) is not, and placing it against the paper's figure over all K compares unlike
//! quantities. measure (each seed against seed 0 on the same runs) → scale (seed 0's figure on
//! all its runs by those factors: an estimate, labelled) → grade as any claim over seeds.

use super::seed_range::{OverSeeds, grade, num, over_like_seeds};
use super::verdict::{Measure, Verdict};

/// How the seeds' figures on the subset relate to the row's figure on all of seed 0's runs.
#[derive(Debug, PartialEq)]
enum Relation {
    /// Seed 0's figure on the subset is the row's, or every one of its values is one of the
    /// row's (per-run figures): placed against the paper as they are.
    Comparable,
    /// One figure per seed, and seed 0's on the subset is not the row's: scaled.
    Scalable,
    /// Neither: shown, not placed against the paper.
    Unlike,
}

fn relation(o: &OverSeeds, whole: &Measure) -> Relation {
    let Some(s0) = o.values.first() else { return Relation::Comparable };
    let bits = |v: &f64| v.to_bits();
    let contained = s0.len() > 1 && s0.iter().all(|v| whole.values.iter().any(|w| bits(w) == bits(v)));
    let single = |v: &Vec<f64>| v.len() == 1 && v[0].is_finite() && v[0] != 0.0;
    if *s0 == whole.values || contained {
        Relation::Comparable
    } else if o.values.iter().all(single) && single(&whole.values) {
        Relation::Scalable
    } else {
        Relation::Unlike
    }
}

/// The grade over seeds of a row graded on all of seed 0's runs (`whole`, that row's figure),
/// from the seeds' grade on the runs they repeat (`o`): as it is where the figures are
/// comparable; else each seed's figure as seed 0's on all runs times its factor of seed 0's on
/// the subset (an estimate; the measure's name says so); else without a paper value to place.
pub fn on_the_rows_runs(o: &OverSeeds, whole: Option<&Measure>) -> OverSeeds {
    let (Some(w), Some(name), Some(paper)) = (whole, o.measure.as_deref(), o.paper) else { return o.clone() };
    if o.verdicts.contains(&Verdict::Incomplete) {
        return o.clone();
    }
    match relation(o, w) {
        Relation::Comparable => o.clone(),
        Relation::Unlike => {
            OverSeeds { paper: None, paper_inside: None, range: None, verdict: grade(&o.verdicts, None), ..o.clone() }
        }
        Relation::Scalable => {
            let subset: Vec<f64> = o.values.iter().map(|v| v[0]).collect();
            let shown = subset.iter().map(|x| num(*x)).collect::<Vec<_>>().join(" / ");
            let estimate = Measure {
                name: format!(
                    "{name} on all runs, estimated (seed 0's {} × each seed's factor of seed 0's {name} on the runs \
                     the seeds repeat: {shown})",
                    num(w.values[0])
                ),
                values: vec![],
                paper,
            };
            let scaled: Vec<Measure> = subset
                .iter()
                .map(|v| Measure { values: vec![w.values[0] * v / subset[0]], ..estimate.clone() })
                .collect();
            over_like_seeds(o.verdicts.clone(), &scaled.iter().map(Some).collect::<Vec<_>>())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::seed_range::over_seeds;
    use super::*;
    use Verdict::*;

    fn m(values: &[f64], paper: (f64, f64)) -> Measure {
        Measure { name: "lead exponent".into(), values: values.to_vec(), paper }
    }

    fn graded(values: &[f64], verdicts: Vec<Verdict>) -> OverSeeds {
        let ms: Vec<Measure> = values.iter().map(|v| m(&[*v], (2.13, 2.13))).collect();
        over_seeds(verdicts, &ms.iter().map(Some).collect::<Vec<_>>())
    }

    #[test]
    fn a_fit_over_fewer_runs_is_scaled_from_seed_0s_figure_on_all_runs() {
        let o = graded(&[1.70, 1.56, 1.77], vec![Replicated, Differs, Replicated]);
        assert_eq!((o.paper_inside, o.verdict), (Some(false), Differs));
        let e = on_the_rows_runs(&o, Some(&m(&[2.055], (2.13, 2.13))));
        let want = [2.055, 2.055 * 1.56 / 1.70, 2.055 * 1.77 / 1.70];
        assert_eq!(e.values, want.iter().map(|v| vec![*v]).collect::<Vec<_>>());
        assert_eq!((e.paper_inside, e.verdict), (Some(true), Replicated));
        assert!(
            e.describe().starts_with(
                "lead exponent on all runs, estimated (seed 0's 2.06 × each seed's factor of seed 0's lead exponent on \
                 the runs the seeds repeat: 1.70 / 1.56 / 1.77) over 3 seeds: 2.06 / 1.89 / 2.14; range 1.89–2.14; \
                 the paper's 2.13 lies inside it"
            ),
            "{}",
            e.describe()
        );
        let far = on_the_rows_runs(&o, Some(&m(&[3.0], (2.13, 2.13))));
        assert_eq!((far.paper_inside, far.verdict), (Some(false), Differs));
    }

    #[test]
    fn the_rows_own_figure_or_per_run_figures_are_placed_as_they_are() {
        let o = graded(&[1.70, 1.56, 1.77], vec![Replicated, Differs, Replicated]);
        assert_eq!(on_the_rows_runs(&o, Some(&m(&[1.70], (2.13, 2.13)))), o);
        let (a, b) = (m(&[1.02, 1.03], (1.0, 1.0)), m(&[1.01, 1.04], (1.0, 1.0)));
        let per_run = over_seeds(vec![Replicated, Replicated], &[Some(&a), Some(&b)]);
        assert_eq!(on_the_rows_runs(&per_run, Some(&m(&[1.021, 1.02, 1.03], (1.0, 1.0)))), per_run);
        assert_eq!(on_the_rows_runs(&o, None), o);
    }

    #[test]
    fn an_unlike_figure_is_not_placed_and_an_unfinished_seed_stays_incomplete() {
        let (a, b) = (m(&[1.0, 1.1], (1.0, 1.0)), m(&[1.2, 1.3], (1.0, 1.0)));
        let o = over_seeds(vec![Replicated, Differs], &[Some(&a), Some(&b)]);
        let u = on_the_rows_runs(&o, Some(&m(&[0.9, 1.0, 1.2], (1.0, 1.0))));
        assert_eq!((u.paper, u.paper_inside, u.range, u.verdict), (None, None, None, Differs));
        let part = over_seeds(vec![Replicated, Incomplete], &[Some(&a), None]);
        assert_eq!(on_the_rows_runs(&part, Some(&m(&[2.0], (1.0, 1.0)))), part);
    }
}
