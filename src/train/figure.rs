//! The loss curves of one run (`loss.svg` and `loss.csv` in the run directory, written when the
//! run completes; the report's per-run figures are the same plot).

use super::record::Record;
use super::tau::{Taus, ln36};
use crate::plot::{LinePlot, Series};

/// Candidate, first-target and all-target loss against step, with ln K, ln 36 and (4/5)·ln 36
/// and the waiting times T1, T2, T4 marked.
pub fn loss_curve(title: String, ln_k: f64, records: &[Record], taus: &Taus) -> LinePlot {
    let pts = |f: &dyn Fn(&Record) -> Option<f64>| {
        records.iter().filter_map(|x| f(x).map(|v| (x.step as f64, v))).collect::<Vec<_>>()
    };
    let vlines = [(taus.t1, "T1"), (taus.t2, "T2"), (taus.t4, "T4")]
        .into_iter()
        .filter_map(|(t, l)| t.map(|t| (t as f64, l.to_string())))
        .collect();
    LinePlot {
        title,
        x_label: "step".into(),
        y_label: "loss (nats)".into(),
        series: vec![
            Series::line("candidate loss", pts(&|x| x.candidate_loss)),
            Series::line("first-target loss (full vocab)", pts(&|x| Some(x.first_target_loss))),
            Series::line("all-target train loss", pts(&|x| Some(x.train_loss))),
        ],
        hlines: vec![(ln_k, "ln K".into()), (ln36(), "ln 36".into()), (0.8 * ln36(), "(4/5) ln 36".into())],
        vlines,
        ..Default::default()
    }
}
