//! Waiting times T1–T4 and plateau heights from a metrics log (spec §7.1, §7.4).

use super::record::Record;
use serde::{Deserialize, Serialize};

/// ln 36: the full-vocabulary first-token loss on the plateau.
pub fn ln36() -> f64 {
    crate::numerics::math::ln(36.0)
}

/// What K means for the waiting times: ln K, and each threshold as a fraction of it (spec §7.4).
/// The trainer's stopping rules and the analyses of a metrics log both read them here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub k: usize,
    pub ln_k: f64,
}

impl Thresholds {
    /// T1: candidate loss below this fraction of ln K.
    pub const T1: f64 = 0.5;
    /// T2: first-target loss below this fraction.
    pub const T2: f64 = 0.5;
    /// The T3 window: from the last candidate loss above `T3_START`·ln K to the first below `T3_END`·ln K.
    pub const T3_START: f64 = 0.95;
    pub const T3_END: f64 = 0.05;
    /// T4, the loss onset of the Δz-lead analysis: first-target loss below this fraction.
    pub const T4: f64 = 0.9;
    /// The fractions at which T1 is re-measured to show the exponent does not depend on them.
    pub const T1_FRACTIONS: [f64; 5] = [0.3, 0.4, 0.5, 0.6, 0.7];

    pub fn new(k: usize) -> Self {
        Thresholds { k, ln_k: crate::numerics::math::ln(k as f64) }
    }

    /// Waiting times exist only when there is something to disambiguate (K ≥ 2).
    pub fn defined(&self) -> bool {
        self.k > 1
    }

    /// `frac`·ln K.
    pub fn at(&self, frac: f64) -> f64 {
        frac * self.ln_k
    }
}

/// First eval step where `f(record) < threshold`.
fn first_below(recs: &[Record], threshold: f64, f: impl Fn(&Record) -> Option<f64>) -> Option<u64> {
    recs.iter().find(|r| f(r).is_some_and(|v| v < threshold)).map(|r| r.step)
}

/// T1 at a threshold fraction: first step with `candidate_loss < frac·ln K`.
pub fn t1_at(recs: &[Record], ln_k: f64, frac: f64) -> Option<u64> {
    first_below(recs, frac * ln_k, |r| r.candidate_loss)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Taus {
    /// First step with candidate_loss < 0.5 ln K (τ(D) law, D-confound, probes).
    pub t1: Option<u64>,
    /// First step with first_target_loss < 0.5 ln K (batch sweep, post-hoc analyses).
    pub t2: Option<u64>,
    /// Transition-window width t_end − t_start (LR sweep): t_end = first step with
    /// candidate_loss < 0.05 ln K, t_start = last step before t_end with candidate_loss > 0.95 ln K.
    pub t3: Option<u64>,
    pub t3_start: Option<u64>,
    pub t3_end: Option<u64>,
    /// "Loss onset": first step with first_target_loss < 0.9 ln K (Δz-lead analysis).
    pub t4: Option<u64>,
    /// First step with the paper-compatible Δz > 0.1 nats.
    pub dz_onset: Option<u64>,
    /// T1 at threshold fractions 0.3, 0.4, 0.5, 0.6, 0.7 of ln K.
    pub t1_fractions: Vec<(f64, Option<u64>)>,
}

pub fn taus(recs: &[Record], k: usize) -> Taus {
    let th = Thresholds::new(k);
    if !th.defined() {
        return Taus::default();
    }
    let ln_k = th.ln_k;
    let t3_end = first_below(recs, th.at(Thresholds::T3_END), |r| r.candidate_loss);
    let t3_start = t3_end.and_then(|end| {
        recs.iter()
            .rev()
            .filter(|r| r.step < end && r.candidate_loss.is_some_and(|c| c > th.at(Thresholds::T3_START)))
            .map(|r| r.step)
            .next()
    });
    Taus {
        t1: t1_at(recs, ln_k, Thresholds::T1),
        t2: first_below(recs, th.at(Thresholds::T2), |r| Some(r.first_target_loss)),
        t3: match (t3_start, t3_end) {
            (Some(s), Some(e)) => Some(e - s),
            _ => None,
        },
        t3_start,
        t3_end,
        t4: first_below(recs, th.at(Thresholds::T4), |r| Some(r.first_target_loss)),
        dz_onset: recs.iter().find(|r| r.dz_paper.is_some_and(|d| d > 0.1)).map(|r| r.step),
        t1_fractions: Thresholds::T1_FRACTIONS.iter().map(|&f| (f, t1_at(recs, ln_k, f))).collect(),
    }
}

/// Losses on the plateau and their reference values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Eval steps used: those in [0.2·T1, 0.8·T1] (or [0.2·last, last] without a transition).
    pub window: (u64, u64),
    pub n_evals: usize,
    /// Median candidate loss and its ratio to ln K (expected ≈ 1).
    pub candidate_loss: Option<f64>,
    pub candidate_over_ln_k: Option<f64>,
    /// Median full-vocabulary first-target loss and its ratio to ln 36 (expected ≈ 1).
    pub first_target_loss: f64,
    pub first_target_over_ln36: f64,
    /// Median all-target train loss and its ratio to (4/5)·ln 36 = 2.867 (EOS learned, A uniform).
    pub train_loss: f64,
    pub train_over_four_fifths_ln36: f64,
    pub ln_k: f64,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

pub fn plateau(recs: &[Record], k: usize, t1: Option<u64>) -> Option<Plateau> {
    let last = recs.last()?.step;
    let (lo, hi) = match t1 {
        Some(t) => (t / 5, t * 4 / 5),
        None => (last / 5, last),
    };
    let w: Vec<&Record> = recs.iter().filter(|r| r.step >= lo && r.step <= hi).collect();
    if w.is_empty() {
        return None;
    }
    let ln_k = Thresholds::new(k).ln_k;
    let cand = median(w.iter().filter_map(|r| r.candidate_loss).collect());
    let first = median(w.iter().map(|r| r.first_target_loss).collect())?;
    let train = median(w.iter().map(|r| r.train_loss).collect())?;
    Some(Plateau {
        window: (lo, hi),
        n_evals: w.len(),
        candidate_loss: cand,
        candidate_over_ln_k: cand.filter(|_| k > 1).map(|c| c / ln_k),
        first_target_loss: first,
        first_target_over_ln36: first / ln36(),
        train_loss: train,
        train_over_four_fifths_ln36: train / (0.8 * ln36()),
        ln_k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(step: u64, cand: f64, first: f64, dz: f64) -> Record {
        Record {
            step,
            candidate_loss: Some(cand),
            first_target_loss: first,
            train_loss: 2.87,
            dz_paper: Some(dz),
            ..Record::default()
        }
    }

    #[test]
    fn waiting_times_follow_the_four_definitions() {
        let ln_k = crate::numerics::math::ln(10.0);
        // Plateau at ln K until 1000, transition 1000–1400, converged after.
        let recs: Vec<Record> = (1..=40)
            .map(|i| {
                let s = i * 50;
                let f = if s < 1000 {
                    1.0
                } else if s <= 1400 {
                    1.0 - (s - 1000) as f64 / 400.0
                } else {
                    0.0
                };
                let dz = if s >= 600 { 0.5 } else { 0.0 };
                rec(s, f * ln_k, 3.58 * f.max(0.2), dz)
            })
            .collect();
        let t = taus(&recs, 10);
        assert_eq!(t.t1, Some(1250)); // first cand < 0.5 ln K: f = 0.375 at 1250
        assert_eq!(t.t3_end, Some(1400)); // first cand < 0.05 ln K
        assert_eq!(t.t3_start, Some(1000)); // last cand > 0.95 ln K before it
        assert_eq!(t.t3, Some(400));
        assert_eq!(t.t2, Some(1300)); // first_target < 0.5 ln K = 1.151 ⇔ 3.58·f < 1.151 ⇔ f < 0.32
        assert_eq!(t.t4, Some(1200)); // first_target < 0.9 ln K = 2.072 ⇔ f < 0.579
        assert_eq!(t.dz_onset, Some(600));
        assert_eq!(t.t1_fractions[0], (0.3, Some(1300)));
        let p = plateau(&recs, 10, t.t1).unwrap();
        assert_eq!(p.window, (250, 1000));
        assert!((p.candidate_over_ln_k.unwrap() - 1.0).abs() < 1e-12);
    }
}
