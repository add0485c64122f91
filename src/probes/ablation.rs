//! Head ablation (spec §7.7, claim 7): necessity (zero / mean ablation of one head's `hook_z`) and
//! sufficiency (every other head zeroed), on the author's 2048 examples as 8 batches of 256, at
//! the checkpoints nearest T1/4 ("pre"), T1 ("mid") and min(2·T1, last) ("post").
//!
//! Loss: mean CE over all target tokens, averaged over the 8 batch means. Δz: the same-batch
//! all-target variant (shuffled minus clean, spec §7.3). Mean ablation uses the per-head mean of
//! `hook_z` over (batch, position), averaged over the 8 batch means.

use super::run::RunView;
use crate::error::Result;
use crate::model::{HeadPatch, Model, Workspace};
use crate::plot::bar_chart;
use crate::task::Batch;
use crate::train::eval::shuffle_z;
use serde::{Deserialize, Serialize};

const BATCHES: usize = 8;
const BATCH: usize = 256;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeadResult {
    pub layer: usize,
    pub head: usize,
    pub zero_loss_delta: f64,
    pub mean_loss_delta: f64,
    pub zero_dz_delta: f64,
    pub mean_dz_delta: f64,
    /// Loss with every other head zeroed (only this head kept).
    pub sufficiency_loss: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckpointAblation {
    pub label: String,
    pub step: u64,
    pub clean_loss: f64,
    pub clean_dz: f64,
    pub all_zero_loss: f64,
    pub heads: Vec<HeadResult>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AblationReport {
    pub tau_t1: u64,
    pub n_examples: usize,
    pub checkpoints: Vec<CheckpointAblation>,
}

/// (mean loss, mean Δz) over the batches with the given patches.
fn evaluate(
    model: &Model<f32>,
    ws: &mut Workspace<f32>,
    batches: &[(Batch, Batch)],
    patches: &[HeadPatch<f32>],
) -> (f64, f64) {
    ws.head_patches = patches.to_vec();
    let (mut loss, mut dz) = (0.0, 0.0);
    for (clean, shuffled) in batches {
        let l = model.forward_scored(ws, clean) as f64;
        let ls = model.forward_scored(ws, shuffled) as f64;
        loss += l;
        dz += ls - l;
    }
    ws.head_patches.clear();
    (loss / batches.len() as f64, dz / batches.len() as f64)
}

/// Per-head mean of `hook_z` over (batch, position), averaged over the batch means.
fn head_means(model: &Model<f32>, ws: &mut Workspace<f32>, batches: &[(Batch, Batch)]) -> Vec<Vec<Vec<f32>>> {
    let cfg = &model.cfg;
    let (nl, nh, dh) = (cfg.n_layers, cfg.n_heads, cfg.d_head);
    let mut acc = vec![vec![vec![0.0f64; dh]; nh]; nl];
    for (clean, _) in batches {
        model.forward(ws, clean);
        let rows = ws.rows();
        for (l, a) in ws.layers.iter().enumerate() {
            for h in 0..nh {
                let mut m = vec![0.0f64; dh];
                for r in 0..rows {
                    for d in 0..dh {
                        m[d] += a.z[r * nh * dh + h * dh + d] as f64;
                    }
                }
                for d in 0..dh {
                    acc[l][h][d] += m[d] / rows as f64;
                }
            }
        }
    }
    acc.into_iter()
        .map(|layer| {
            layer.into_iter().map(|v| v.into_iter().map(|x| (x / batches.len() as f64) as f32).collect()).collect()
        })
        .collect()
}

fn ablate_checkpoint(run: &RunView, label: &str, step: u64, batches: &[(Batch, Batch)]) -> Result<CheckpointAblation> {
    let model: Model<f32> = run.model(step)?;
    let (nl, nh) = (model.cfg.n_layers, model.cfg.n_heads);
    let mut ws = model.workspace(BATCH, run.train.seq_len());
    let (clean_loss, clean_dz) = evaluate(&model, &mut ws, batches, &[]);
    let means = head_means(&model, &mut ws, batches);
    let all: Vec<(usize, usize)> = (0..nl).flat_map(|l| (0..nh).map(move |h| (l, h))).collect();
    let zero = |l, h| HeadPatch { layer: l, head: h, value: None };
    let all_zero: Vec<HeadPatch<f32>> = all.iter().map(|&(l, h)| zero(l, h)).collect();
    let (all_zero_loss, _) = evaluate(&model, &mut ws, batches, &all_zero);
    let mut heads = vec![];
    for &(l, h) in &all {
        let (zl, zdz) = evaluate(&model, &mut ws, batches, &[zero(l, h)]);
        let mean_patch = HeadPatch { layer: l, head: h, value: Some(means[l][h].clone()) };
        let (ml, mdz) = evaluate(&model, &mut ws, batches, &[mean_patch]);
        let others: Vec<HeadPatch<f32>> = all.iter().filter(|&&x| x != (l, h)).map(|&(a, b)| zero(a, b)).collect();
        let (sl, _) = evaluate(&model, &mut ws, batches, &others);
        heads.push(HeadResult {
            layer: l,
            head: h,
            zero_loss_delta: zl - clean_loss,
            mean_loss_delta: ml - clean_loss,
            zero_dz_delta: zdz - clean_dz,
            mean_dz_delta: mdz - clean_dz,
            sufficiency_loss: sl,
        });
    }
    Ok(CheckpointAblation { label: label.into(), step, clean_loss, clean_dz, all_zero_loss, heads })
}

pub fn run_ablation(run: &RunView, steps: Option<Vec<u64>>) -> Result<AblationReport> {
    let tau = run.t1("ablate")?;
    let labelled: Vec<(String, u64)> = match steps {
        Some(s) => s.into_iter().map(|x| (format!("step {x}"), run.snap(x as f64))).collect(),
        None => vec![
            ("pre".into(), run.snap((tau / 4) as f64)),
            ("mid".into(), run.snap(tau as f64)),
            ("post".into(), run.snap(((2 * tau).min(run.last_step())) as f64)),
        ],
    };
    let idx = run.subset(BATCHES * BATCH);
    let batches: Vec<(Batch, Batch)> = idx
        .chunks(BATCH)
        .enumerate()
        .map(|(i, c)| {
            let b = run.batch(c);
            let s = shuffle_z(&b, 42, i as u64);
            (b, s)
        })
        .collect();
    let mut checkpoints = vec![];
    let n = labelled.len();
    for (i, (label, step)) in labelled.into_iter().enumerate() {
        run.note_checkpoint("ablate", i, n, step);
        checkpoints.push(ablate_checkpoint(run, &label, step, &batches)?);
    }
    let report = AblationReport { tau_t1: tau, n_examples: idx.len(), checkpoints };
    run.write_json("ablation", &report)?;
    for c in &report.checkpoints {
        let cats: Vec<String> = c.heads.iter().map(|h| format!("L{}H{}", h.layer, h.head)).collect();
        let svg = bar_chart(
            &format!("Head ablation at step {} ({}): Δ loss (all target tokens)", c.step, c.label),
            "Δ loss (nats)",
            &cats,
            &[
                ("zero".into(), c.heads.iter().map(|h| h.zero_loss_delta).collect()),
                ("mean".into(), c.heads.iter().map(|h| h.mean_loss_delta).collect()),
            ],
        )?;
        run.write_figure(&format!("ablation_{}.svg", c.label.replace(' ', "_")), &svg)?;
    }
    Ok(report)
}
