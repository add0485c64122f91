//! windtunnel's T1, T2 and T4 per K beside the author's two sets of waiting times (spec A2): the
//! D-law table (T1) and the post-hoc figures (the Δz table's T4, the displacement runs' T2). The
//! spec reads the second set as "another generation of runs"; `reading` says what windtunnel's
//! runs say about that. measure → render (an explanation, not a claim).

use super::claims::{RunData, table};
use super::paper::{self, at_k};

/// One K: windtunnel's waiting times (None: not reached) and the author's.
pub struct PerK {
    pub k: usize,
    pub t1: Option<f64>,
    pub t2: Option<f64>,
    pub t4: Option<f64>,
}

pub fn measure(runs: &[RunData]) -> Vec<PerK> {
    let f = |t: Option<u64>| t.map(|v| v as f64);
    runs.iter().map(|r| PerK { k: r.k(), t1: f(r.taus.t1), t2: f(r.taus.t2), t4: f(r.taus.t4) }).collect()
}

/// The median over K of |ln(ours / author's)| for the K where both exist, as a factor (1.00 =
/// identical), and how many K it covers.
pub fn median_factor(ours: impl Iterator<Item = (usize, Option<f64>)>, theirs: paper::PerK) -> Option<(f64, usize)> {
    let mut logs: Vec<f64> = ours
        .filter_map(|(k, t)| Some((t?, at_k(theirs, k)?)))
        .map(|(a, b)| crate::numerics::math::ln(a / b).abs())
        .collect();
    if logs.is_empty() {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let m = logs.len() / 2;
    let med = if logs.len() % 2 == 1 { logs[m] } else { 0.5 * (logs[m - 1] + logs[m]) };
    Some((crate::numerics::math::exp(med), logs.len()))
}

pub fn render(v: &[PerK]) -> String {
    let show = |t: Option<f64>| t.map_or("–".into(), |t| format!("{t:.0}"));
    let rows: Vec<Vec<String>> = v
        .iter()
        .map(|p| {
            vec![
                p.k.to_string(),
                show(p.t1),
                show(at_k(paper::D_SWEEP_T1.value, p.k)),
                show(p.t4),
                show(at_k(paper::SECOND_SET_T4.value, p.k)),
                show(p.t2),
                show(at_k(paper::SECOND_SET_T2.value, p.k)),
            ]
        })
        .collect();
    let factor = |ours: &dyn Fn(&PerK) -> Option<f64>, theirs| median_factor(v.iter().map(|p| (p.k, ours(p))), theirs);
    let show_f = |f: Option<(f64, usize)>| f.map_or("–".into(), |(f, n)| format!("{f:.2}× over {n} K"));
    let t4_second = factor(&|p| p.t4, paper::SECOND_SET_T4.value);
    let t1_second = factor(&|p| p.t1, paper::SECOND_SET_T4.value);
    format!(
        "\nWaiting times against the author's two sets (spec A2). Median factor between windtunnel's and the \
         author's: T1 vs the first set (the D-law table) {}; T4 vs the second set (the Δz table) {}; T1 vs \
         the second set {}; T2 vs the displacement runs' T2 {}. {}\n\n{}",
        show_f(factor(&|p| p.t1, paper::D_SWEEP_T1.value)),
        show_f(t4_second),
        show_f(t1_second),
        show_f(factor(&|p| p.t2, paper::SECOND_SET_T2.value)),
        reading(t4_second, t1_second),
        table(&["K", "T1", "author T1", "T4", "author T4 (2nd set)", "T2", "author T2 (2nd set)"], &rows)
    )
}

/// What the factors say about the second set: two waiting times of the same runs when the
/// author's second set sits closer to windtunnel's T4 than to its T1.
pub fn reading(t4_second: Option<(f64, usize)>, t1_second: Option<(f64, usize)>) -> &'static str {
    match (t4_second, t1_second) {
        (Some((a, _)), Some((b, _))) if a < b => {
            "The second set matches windtunnel's T4 of the same runs better than their T1: it reads as another \
             waiting time of the same runs, not as another generation of runs."
        }
        (Some(_), Some(_)) => "The second set does not match windtunnel's T4 better than its T1.",
        _ => "Too few runs have both waiting times to compare the sets.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_factor_is_symmetric_in_direction_and_skips_missing_k() {
        // Author's T4 at K = 3, 10, 20: 500, 2350, 8700.
        let ours = [(3, Some(1000.0)), (10, Some(2350.0 / 2.0)), (20, Some(8700.0)), (15, Some(1.0)), (36, None)];
        let (f, n) = median_factor(ours.into_iter(), paper::SECOND_SET_T4.value).unwrap();
        assert_eq!(n, 3, "K = 15 has no author T4 and K = 36 no windtunnel T4");
        assert!((f - 2.0).abs() < 1e-12, "{f}");
        assert!(median_factor([(15, Some(1.0))].into_iter(), paper::SECOND_SET_T4.value).is_none());
    }

    #[test]
    fn the_reading_follows_the_factors() {
        assert!(reading(Some((1.1, 8)), Some((2.5, 8))).contains("same runs"));
        assert!(reading(Some((2.5, 8)), Some((1.1, 8))).contains("does not match"));
        assert!(reading(None, Some((1.1, 8))).contains("Too few"));
    }
}
