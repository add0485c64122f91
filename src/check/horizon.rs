//! How far a per-step trajectory comparison means anything: the same run trained twice, the
//! second with one parameter moved by one ulp. On the plateau rounding differences grow
//! exponentially, so two correct implementations agree per step only up to a horizon; past it
//! they can agree only on waiting times. measure (both runs' records) → the first step at which
//! each tolerance is exceeded, and whether T1–T4 agree → render (text or JSON).

use crate::config::RunConfig;
use crate::error::Result;
use crate::io::weights;
use crate::numerics::Scalar;
use crate::train::record::Record;
use crate::train::tau::{Taus, taus};
use crate::train::trainer::{MemorySink, Trainer};
use serde::Serialize;
use std::path::Path;

/// The loss differences whose first crossing is reported.
pub const TOLERANCES: [f64; 3] = [1e-12, 1e-6, 1e-3];

#[derive(Clone, Debug, Serialize)]
pub struct Horizon {
    pub dtype: String,
    /// Index into the flat parameter buffer of the moved parameter.
    pub param: usize,
    /// Evaluations compared (the shorter run's).
    pub evals: usize,
    pub last_step: u64,
    /// (tolerance, first eval step at which a logged loss differs by more).
    pub first_beyond: Vec<(f64, Option<u64>)>,
    pub max_diff: f64,
    pub taus: [Taus; 2],
}

/// The largest difference between two records' logged losses (train, first-target, candidate).
pub fn loss_diff(a: &Record, b: &Record) -> f64 {
    let cand = match (a.candidate_loss, b.candidate_loss) {
        (Some(x), Some(y)) => (x - y).abs(),
        (None, None) => 0.0,
        _ => f64::INFINITY,
    };
    (a.train_loss - b.train_loss).abs().max((a.first_target_loss - b.first_target_loss).abs()).max(cand)
}

/// The first step at which the two trajectories' losses differ by more than `tol`.
pub fn first_beyond(a: &[Record], b: &[Record], tol: f64) -> Option<u64> {
    a.iter().zip(b).find(|(x, y)| loss_diff(x, y) > tol).map(|(x, _)| x.step)
}

/// `x` moved up by one unit in the last place of `S`.
pub fn one_ulp_up<S: Scalar>(x: S) -> S {
    match S::NAME {
        "f32" => S::from_f64((x.value() as f32).next_up() as f64),
        _ => S::from_f64(x.value().next_up()),
    }
}

fn train<S: Scalar>(cfg: &RunConfig, nudge: Option<usize>) -> Result<Vec<Record>> {
    let mut model = weights::init_model::<S>(&cfg.train.init, &cfg.model)?;
    if let Some(i) = nudge {
        model.params[i] = one_ulp_up(model.params[i]);
    }
    let mut trainer = Trainer::new(cfg.clone(), model, Path::new("."))?;
    let mut sink = MemorySink::default();
    trainer.run(&mut sink)?;
    Ok(sink.records)
}

/// Train `cfg` as given and with parameter `param` (default: the middle of the flat buffer) one
/// ulp up, and compare.
pub fn measure<S: Scalar>(cfg: &RunConfig, param: Option<usize>) -> Result<Horizon> {
    let n = crate::model::Model::<S>::init(&cfg.model, 0).params.len();
    let param = param.unwrap_or(n / 2);
    if param >= n {
        return Err(crate::error::Error::config("--param", format!("{param} (allowed 0..={})", n - 1)));
    }
    let (a, b) = (train::<S>(cfg, None)?, train::<S>(cfg, Some(param))?);
    Ok(compare(S::NAME, param, &a, &b, cfg.data.k))
}

/// The horizon of two trajectories of a K-candidate task.
pub fn compare(dtype: &str, param: usize, a: &[Record], b: &[Record], k: usize) -> Horizon {
    let evals = a.len().min(b.len());
    let (a, b) = (&a[..evals], &b[..evals]);
    Horizon {
        dtype: dtype.into(),
        param,
        evals,
        last_step: a.last().map_or(0, |r| r.step),
        first_beyond: TOLERANCES.iter().map(|&t| (t, first_beyond(a, b, t))).collect(),
        max_diff: a.iter().zip(b).map(|(x, y)| loss_diff(x, y)).fold(0.0, f64::max),
        taus: [taus(a, k), taus(b, k)],
    }
}

impl Horizon {
    pub fn render(&self) -> String {
        let mut s = format!(
            "{}: parameter {} one ulp up; {} evaluations to step {}, largest loss difference {:.3e}\n",
            self.dtype, self.param, self.evals, self.last_step, self.max_diff
        );
        for (t, at) in &self.first_beyond {
            let at = at.map_or(format!("not within {} steps", self.last_step), |s| format!("from step {s}"));
            s += &format!("  losses differ by > {t:.0e}: {at}\n");
        }
        let [x, y] = &self.taus;
        let show = |t: Option<u64>| t.map_or("–".into(), |v| v.to_string());
        for (name, p, q) in [("T1", x.t1, y.t1), ("T2", x.t2, y.t2), ("T3 end", x.t3_end, y.t3_end), ("T4", x.t4, y.t4)]
        {
            let same = if p == q { "same" } else { "differ" };
            s += &format!("  {name}: {} vs {} ({same})\n", show(p), show(q));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(step: u64, loss: f64, cand: Option<f64>) -> Record {
        Record { step, train_loss: loss, first_target_loss: loss, candidate_loss: cand, ..Default::default() }
    }

    #[test]
    fn the_first_step_beyond_each_tolerance_is_where_the_losses_part() {
        let a: Vec<Record> = (1..=4).map(|i| rec(i * 50, 3.0, Some(2.0))).collect();
        let mut b = a.clone();
        b[1].train_loss += 1e-9;
        b[2].first_target_loss += 1e-4;
        b[3].candidate_loss = Some(2.5);
        assert_eq!(first_beyond(&a, &b, 1e-12), Some(100));
        assert_eq!(first_beyond(&a, &b, 1e-6), Some(150));
        assert_eq!(first_beyond(&a, &b, 1e-3), Some(200));
        assert_eq!(first_beyond(&a, &a, 0.0), None, "a trajectory against itself never parts");
        let h = compare("f32", 0, &a, &b, 3);
        assert_eq!(h.first_beyond, vec![(1e-12, Some(100)), (1e-6, Some(150)), (1e-3, Some(200))]);
        assert_eq!((h.evals, h.last_step, h.max_diff), (4, 200, 0.5));
        let mut c = a.clone();
        c[0].candidate_loss = None;
        assert_eq!(first_beyond(&a, &c, 1e3), Some(50), "a missing candidate loss is a difference");
    }

    #[test]
    fn one_ulp_up_is_the_next_representable_value_of_each_dtype() {
        assert_eq!(one_ulp_up(1.0f32), 1.0 + f32::EPSILON);
        assert_eq!(one_ulp_up(1.0f64), 1.0 + f64::EPSILON);
        assert_eq!(one_ulp_up(-0.5f32).to_bits(), (-0.5f32).to_bits() - 1);
        assert!(one_ulp_up(0.0f32) > 0.0);
    }
}
