//! `summary.json`: what a finished run measured (waiting times, the plateau, the last record,
//! time), and its human-readable form.

use super::record::Record;
use super::tau::{self, Plateau, Taus};
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::Path;

/// `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub steps: u64,
    pub stopped: Option<String>,
    pub k: usize,
    pub d: usize,
    pub ln_k: f64,
    pub taus: Taus,
    pub plateau: Option<Plateau>,
    pub final_record: Option<Record>,
    pub train_seconds: f64,
    pub eval_seconds: f64,
    /// eval_seconds / train_seconds.
    pub eval_overhead: f64,
    pub steps_per_s: f64,
}

fn opt_step(x: Option<u64>) -> String {
    x.map_or("not reached".into(), |v| v.to_string())
}

impl Summary {
    /// The human-readable end-of-run report (`train` prints it; README.md quotes it).
    pub fn text(&self, dir: &Path) -> String {
        let s = self;
        let mut out = String::new();
        let stop = s.stopped.clone().unwrap_or_else(|| "reached max_steps".into());
        let _ = writeln!(out, "run {}: {} steps ({stop})", dir.display(), s.steps);
        let _ = writeln!(
            out,
            "  time: {:.0} s training + {:.0} s evaluation ({:.1}% eval overhead), {:.1} steps/s",
            s.train_seconds,
            s.eval_seconds,
            100.0 * s.eval_overhead,
            s.steps_per_s
        );
        if let Some(p) = &s.plateau {
            let _ = writeln!(
                out,
                "  plateau (evals at steps {}–{}): candidate loss {} = {} × ln K (ln {} = {:.3})",
                p.window.0,
                p.window.1,
                p.candidate_loss.map_or("–".into(), |c| format!("{c:.3}")),
                p.candidate_over_ln_k.map_or("–".into(), |c| format!("{c:.3}")),
                s.k,
                s.ln_k
            );
            let _ = writeln!(
                out,
                "           first-target loss {:.3} = {:.3} × ln 36; all-target loss {:.3} = {:.3} × (4/5)·ln 36 = {:.3}",
                p.first_target_loss,
                p.first_target_over_ln36,
                p.train_loss,
                p.train_over_four_fifths_ln36,
                0.8 * tau::ln36()
            );
        }
        let t = &s.taus;
        let _ = writeln!(
            out,
            "  waiting times: T1 = {} (candidate < ½ ln K), T2 = {}, T3 = {}{}, T4 = {}; Δz onset (> 0.1) = {}",
            opt_step(t.t1),
            opt_step(t.t2),
            opt_step(t.t3),
            match (t.t3_start, t.t3_end) {
                (Some(a), Some(b)) => format!(" ({a}→{b})"),
                _ => String::new(),
            },
            opt_step(t.t4),
            opt_step(t.dz_onset)
        );
        if let Some(r) = &s.final_record {
            let _ = writeln!(
                out,
                "  final (step {}): candidate loss {}, candidate accuracy {}, Δz {} nats",
                r.step,
                r.candidate_loss.map_or("–".into(), |c| format!("{c:.4}")),
                r.candidate_accuracy.map_or("–".into(), |c| format!("{:.1}%", 100.0 * c)),
                r.dz_paper.map_or("–".into(), |d| format!("{d:.2}"))
            );
        }
        let _ =
            writeln!(out, "  files: {}/metrics.jsonl, summary.json, loss.svg (and .csv), checkpoints/", dir.display());
        out
    }
}
