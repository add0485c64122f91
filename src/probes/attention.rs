//! Attention from the query to the selector z, per layer and head (spec §7.6). The author's
//! probe reads query position 11 (the a1 token, which predicts a2); the position that produces
//! a1's logit is 10. Both are reported (ambiguity A11). Head onset: the first probe step whose
//! attention exceeds 1.5× the mean of the first five probe steps.
//!
//! windtunnel reports the attention *mass* on z. The author's `attention_to_z.py` counts its
//! samples inside the layer loop, so it divides by n_layers × N: its values are the mass over
//! n_layers (¼ here). [`author_units`] converts; onsets, ratios to a baseline, do not change.

use super::run::RunView;
use crate::error::Result;
use crate::model::Model;
use crate::plot::{LinePlot, Series, line_plot};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeadTrace {
    pub layer: usize,
    pub head: usize,
    /// Query position (relative: `target_start − 1` or `target_start`).
    pub query: usize,
    /// Mean attention mass on the z positions at each probe step.
    pub attention: Vec<f64>,
    pub onset: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AttentionReport {
    pub steps: Vec<u64>,
    pub n_examples: usize,
    pub heads: Vec<HeadTrace>,
}

/// A mass on z in the author's units (his probe's mean over n_layers × N samples).
pub fn author_units(mass: f64, n_layers: usize) -> f64 {
    mass / n_layers as f64
}

impl AttentionReport {
    /// The model's layer count, from the traced heads.
    pub fn n_layers(&self) -> usize {
        self.heads.iter().map(|h| h.layer + 1).max().unwrap_or(1)
    }
}

/// Mean attention mass on z from query `q(b) = target_start + dq` (dq ∈ {−1, 0}), per (layer, head).
pub fn attention_to_z(run: &RunView, model: &Model<f32>, idx: &[usize]) -> Vec<[f64; 2]> {
    let cfg = &model.cfg;
    let (nl, nh) = (cfg.n_layers, cfg.n_heads);
    let mut sums = vec![[0.0; 2]; nl * nh];
    let t = run.train.seq_len();
    let mut ws = model.workspace(256, t);
    for chunk in idx.chunks(256) {
        let batch = run.batch(chunk);
        model.forward(&mut ws, &batch);
        for (l, a) in ws.layers.iter().enumerate() {
            for b in 0..batch.batch_size {
                let (z0, z1) = batch.z_span[b];
                for (qi, dq) in [1usize, 0].iter().enumerate() {
                    let q = batch.target_start[b] - dq;
                    for h in 0..nh {
                        let row = ((b * nh + h) * t + q) * t;
                        let mass: f32 = a.pattern[row + z0..row + z1].iter().sum();
                        sums[l * nh + h][qi] += mass as f64;
                    }
                }
            }
        }
    }
    sums.iter().map(|s| [s[0] / idx.len() as f64, s[1] / idx.len() as f64]).collect()
}

pub fn run_attention(run: &RunView, steps: Option<Vec<u64>>, n_examples: usize) -> Result<AttentionReport> {
    let steps = steps.unwrap_or_else(|| {
        // At most 40 checkpoints, evenly spread over the run.
        let all = &run.steps;
        let stride = all.len().div_ceil(40).max(1);
        all.iter().step_by(stride).copied().collect()
    });
    let idx = run.subset(n_examples);
    let cfg = &run.cfg.model;
    let mut traces: Vec<HeadTrace> = (0..cfg.n_layers)
        .flat_map(|layer| (0..cfg.n_heads).flat_map(move |head| [10usize, 11].map(|query| (layer, head, query))))
        .map(|(layer, head, query)| HeadTrace { layer, head, query, attention: vec![], onset: None })
        .collect();
    for (i, &step) in steps.iter().enumerate() {
        run.note_checkpoint("attention", i, steps.len(), step);
        let model: Model<f32> = run.model(step)?;
        let att = attention_to_z(run, &model, &idx);
        for tr in traces.iter_mut() {
            let qi = if tr.query == 10 { 0 } else { 1 };
            tr.attention.push(att[tr.layer * cfg.n_heads + tr.head][qi]);
        }
    }
    for tr in traces.iter_mut() {
        let base: f64 = tr.attention.iter().take(5).sum::<f64>() / tr.attention.len().clamp(1, 5) as f64;
        tr.onset = tr.attention.iter().position(|&a| a > 1.5 * base).map(|i| steps[i]);
    }
    let report = AttentionReport { steps: steps.clone(), n_examples: idx.len(), heads: traces };
    run.write_json("attention", &report)?;
    let mut series = vec![];
    for tr in report.heads.iter().filter(|t| t.query == 10) {
        let peak = tr.attention.iter().cloned().fold(0.0, f64::max);
        if peak > 0.2 {
            series.push(Series::line(
                format!("L{}H{}", tr.layer, tr.head),
                steps.iter().zip(&tr.attention).map(|(&s, &a)| (s as f64, a)).collect(),
            ));
        }
    }
    let mut vlines = vec![];
    if let Some(t1) = run.taus.t1 {
        vlines.push((t1 as f64, "T1".to_string()));
    }
    let p = LinePlot {
        title: "Attention to z from the query that predicts a1 (position 10), heads peaking > 0.2".into(),
        x_label: "step".into(),
        y_label: "attention mass on z".into(),
        series,
        vlines,
        ..Default::default()
    };
    run.write_figure("attention.svg", &line_plot(&p)?)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authors_units_are_the_mass_over_the_layer_count() {
        assert_eq!(author_units(0.79, 4), 0.1975);
        assert_eq!(author_units(1.0, 1), 1.0);
        let trace = |layer| HeadTrace { layer, head: 0, query: 11, attention: vec![], onset: None };
        let r = AttentionReport { steps: vec![], n_examples: 0, heads: vec![trace(0), trace(3), trace(1)] };
        assert_eq!(r.n_layers(), 4);
    }
}
