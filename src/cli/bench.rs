use super::{DtypeArg, Outcome};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::numerics::Scalar;
use crate::train::{MemorySink, Trainer};
use std::path::Path;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    #[arg(long, value_enum, default_value = "f32")]
    dtype: DtypeArg,
    /// Timed steps (after --warmup untimed ones).
    #[arg(long, default_value_t = 30)]
    steps: u64,
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Include the eval (candidate loss, z-shuffle) every this many steps, as in training.
    #[arg(long, default_value_t = 50)]
    eval_every: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Model FLOPs per training step: 6 · parameters · tokens (forward 2, backward 4), the
/// convention of the reference figures (9.93 GFLOP at batch 128).
pub fn step_flops(n_params: usize, batch: usize, seq: usize) -> f64 {
    6.0 * n_params as f64 * (batch * seq) as f64
}

pub fn run(a: Args) -> Result<Outcome> {
    match a.dtype {
        DtypeArg::F32 => bench::<f32>(&a),
        DtypeArg::F64 => bench::<f64>(&a),
    }
}

fn bench<S: Scalar>(a: &Args) -> Result<Outcome> {
    if a.steps == 0 {
        return Err(Error::config("--steps", "0 (allowed ≥ 1)"));
    }
    let overrides = vec![
        format!("train.batch_size={}", a.batch_size),
        format!("train.max_steps={}", a.warmup + a.steps),
        format!("train.eval_every={}", a.eval_every),
    ];
    let cfg = RunConfig::load(None, &overrides)?;
    let model = Model::<S>::init(&cfg.model, 42);
    let mut tr = Trainer::new(cfg, model, Path::new("."))?;
    let mut sink = MemorySink::default();
    let mut times = Vec::with_capacity(a.steps as usize);
    for i in 0..a.warmup + a.steps {
        let t0 = Instant::now();
        tr.step()?;
        if tr.state.step.is_multiple_of(a.eval_every) {
            let r = tr.evaluate()?;
            crate::train::Sink::record(&mut sink, &tr, &r)?;
        }
        if i >= a.warmup {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let flops = step_flops(tr.model.layout.total, a.batch_size, tr.train.seq_len());
    let gflops = flops / median / 1e9;
    let threads = rayon::current_num_threads();
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "impl": "windtunnel", "dtype": S::NAME, "batch_size": a.batch_size, "threads": threads,
                "steps": a.steps, "median_ms": median * 1e3, "mean_ms": mean * 1e3,
                "gflop_per_step": flops / 1e9, "gflops": gflops, "steps_per_s": 1.0 / median,
                "eval_every": a.eval_every, "simd": crate::train::rundir::simd_cpu(),
            })
        );
    } else {
        println!(
            "windtunnel {} batch {} ({} threads, {} timed steps, eval every {}): median {:.1} ms/step, mean {:.1} ms, {:.1} GFLOP/s ({:.2} GFLOP/step), {:.1} steps/s",
            S::NAME,
            a.batch_size,
            threads,
            a.steps,
            a.eval_every,
            median * 1e3,
            mean * 1e3,
            gflops,
            flops / 1e9,
            1.0 / median
        );
    }
    Ok(Outcome::Ok)
}
