use super::{Dtype, Outcome};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::numerics::gemm::{self, TILINGS, Tiling};
use crate::numerics::matmul::{Accum, matmul_nn, matmul_tn};
use crate::numerics::{ARITHMETIC, Scalar, flops, kernel_summary, product_times, simd};
use crate::train::{MemorySink, Trainer};
use std::path::Path;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    #[arg(long, default_value = "f32", value_parser = super::dtype_parser())]
    dtype: Dtype,
    /// Timed steps (after --warmup untimed ones).
    #[arg(long, default_value_t = 30)]
    steps: u64,
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Include the eval (candidate loss, z-shuffle) every this many steps, as in training.
    #[arg(long, default_value_t = 50)]
    eval_every: u64,
    /// Time the matrix products at the model's shapes instead of a training step.
    #[arg(long)]
    kernels: bool,
    /// Also time each matrix-product shape inside the step (wall ms per step, the part packing
    /// `b`, GFLOP/s), to set against --kernels' products alone.
    #[arg(long, conflicts_with = "kernels")]
    products: bool,
    /// Force one register tiling of the matrix kernel, e.g. 12x32 (default: tuned for this CPU).
    /// Speed only: every tiling gives the same bits.
    #[arg(long)]
    tiling: Option<String>,
    #[command(flatten)]
    out: super::Output,
}

/// Model FLOPs per training step: 6 · parameters · tokens (forward 2, backward 4), the
/// convention of the reference figures (9.93 GFLOP at batch 128).
pub fn step_flops(n_params: usize, batch: usize, seq: usize) -> f64 {
    6.0 * n_params as f64 * (batch * seq) as f64
}

pub fn run(a: Args) -> Result<Outcome> {
    if a.steps == 0 {
        return Err(Error::config("--steps", "0 (allowed ≥ 1)"));
    }
    if a.batch_size == 0 || a.batch_size > 65_536 {
        return Err(Error::config("--batch-size", format!("{} (allowed 1..=65536)", a.batch_size)));
    }
    if let Some(t) = &a.tiling {
        gemm::force_tiling(Some(parse_tiling(t)?));
    }
    match (a.dtype, a.kernels) {
        (Dtype::F32, false) => bench::<f32>(&a),
        (Dtype::F64, false) => bench::<f64>(&a),
        (Dtype::F32, true) => kernels::<f32>(&a),
        (Dtype::F64, true) => kernels::<f64>(&a),
    }
}

/// `RxC` → one of the compiled tilings.
fn parse_tiling(s: &str) -> Result<Tiling> {
    TILINGS.into_iter().find(|t| t.name() == s).ok_or_else(|| {
        let allowed: Vec<String> = TILINGS.iter().map(|t| t.name()).collect();
        Error::config("--tiling", format!("{s:?} (allowed: {})", allowed.join(", ")))
    })
}

/// What every bench line starts with: the machine and the kernels chosen for it.
fn machine() -> serde_json::Value {
    serde_json::json!({
        "cpu": simd::cpu_model(), "kernels": kernel_summary(), "arithmetic": ARITHMETIC,
        "threads": rayon::current_num_threads(), "windtunnel": env!("CARGO_PKG_VERSION"),
        "git_revision": env!("WINDTUNNEL_GIT_REV"),
    })
}

/// The first line of the text output: CPU, kernels, arithmetic, threads.
fn print_machine(out: &serde_json::Value) {
    println!(
        "{} · {} · arithmetic v{ARITHMETIC} · {} threads",
        out["cpu"].as_str().unwrap_or(""),
        out["kernels"].as_str().unwrap_or(""),
        out["threads"]
    );
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn bench<S: Scalar>(a: &Args) -> Result<Outcome> {
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
        if i == a.warmup {
            flops::take();
            product_times::switch(a.products);
        }
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
    let products = a.products.then(|| products_in_step(a.steps));
    product_times::switch(false);
    let useful = flops::take() as f64 / a.steps as f64;
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let median = median(times);
    let reference = step_flops(tr.model.layout.total, a.batch_size, tr.train.seq_len());
    let mut out = machine();
    let fields = serde_json::json!({
        "impl": "windtunnel", "dtype": S::NAME, "batch_size": a.batch_size, "steps": a.steps,
        "median_ms": median * 1e3, "mean_ms": mean * 1e3, "steps_per_s": 1.0 / median, "eval_every": a.eval_every,
        "useful_gflop_per_step": useful / 1e9, "useful_gflops": useful / median / 1e9,
        "reference_gflop_per_step": reference / 1e9, "reference_gflops": reference / median / 1e9,
    });
    out.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    if let Some(p) = &products {
        out["products_in_step"] = p.clone().into();
    }
    a.out.emit(&out);
    if a.out.text() {
        print_machine(&out);
        println!(
            "windtunnel {} batch {} ({} timed steps, eval every {}): median {:.1} ms/step, mean {:.1} ms, {:.1} steps/s",
            S::NAME,
            a.batch_size,
            a.steps,
            a.eval_every,
            median * 1e3,
            mean * 1e3,
            1.0 / median
        );
        println!(
            "  useful work {:.2} GFLOP/step = {:.1} GFLOP/s (products and attention actually computed); reference {:.2} GFLOP/step = {:.1} GFLOP/s",
            useful / 1e9,
            useful / median / 1e9,
            reference / 1e9,
            reference / median / 1e9
        );
        if let Some(p) = &products {
            let ms: f64 = p.iter().filter_map(|r| r["ms_per_step"].as_f64()).sum();
            println!(
                "  matrix products: {ms:.1} ms/step ({:.0} % of the median step), by shape:",
                ms / (median * 1e3) * 100.0
            );
            p.iter().for_each(print_product);
        }
    }
    Ok(Outcome::Ok)
}

/// Each product shape's share of a step, from [`product_times`]: per step, in shape order.
fn products_in_step(steps: u64) -> Vec<serde_json::Value> {
    let per_step = |x: f64| x / steps as f64;
    product_times::take()
        .into_iter()
        .map(|(s, t)| {
            let flop = 2.0 * (s.m * s.k * s.n) as f64 * t.calls as f64;
            serde_json::json!({
                "m": s.m, "k": s.k, "n": s.n, "layout": if s.a_trans { "tn" } else { "nn" },
                "split": s.split.name(),
                "calls_per_step": per_step(t.calls as f64), "ms_per_step": per_step(t.secs) * 1e3,
                "pack_ms_per_step": per_step(t.pack_secs) * 1e3, "gflops": flop / t.secs / 1e9,
            })
        })
        .collect()
}

fn print_product(p: &serde_json::Value) {
    let f = |k: &str| p[k].as_f64().unwrap_or(f64::NAN);
    // Column tasks pack their own part of `b` inside the parallel work: not timed apart.
    let pack = match p["split"].as_str() {
        Some("columns") => "packing b in the tasks".to_string(),
        _ => format!("{:.3} packing b", f("pack_ms_per_step")),
    };
    println!(
        "    {} {:>5}×{:>5}×{:>4} ({}): {:>4} per step, {:>7.3} ms/step ({pack}) {:>6.1} GFLOP/s",
        p["layout"].as_str().unwrap_or(""),
        p["m"],
        p["k"],
        p["n"],
        p["split"].as_str().unwrap_or(""),
        p["calls_per_step"],
        f("ms_per_step"),
        f("gflops")
    );
}

/// The model's products at batch `b` (rows n = 16·b): (name, layout `tn`, m, k, n).
pub fn model_shapes(b: usize) -> Vec<(&'static str, bool, usize, usize, usize)> {
    let n = 16 * b;
    vec![
        ("qkv X·W", false, n, 128, 384),
        ("mlp_in X·W", false, n, 128, 512),
        ("mlp_out X·W", false, n, 512, 128),
        ("dX of mlp_in dY·Wᵀ", false, n, 512, 128),
        ("dW_in Xᵀ·dY", true, 128, n, 512),
        ("dW_out Xᵀ·dY", true, 512, n, 128),
    ]
}

fn kernels<S: Scalar>(a: &Args) -> Result<Outcome> {
    let mut rows = vec![];
    for (name, tn, m, k, n) in model_shapes(a.batch_size) {
        let x: Vec<S> = (0..m * k).map(|i| S::from_f64(((i % 7) as f64 - 3.0) * 0.1)).collect();
        let w: Vec<S> = (0..k * n).map(|i| S::from_f64(((i % 5) as f64 - 2.0) * 0.1)).collect();
        let mut out = vec![S::zero(); m * n];
        let mut product = || match tn {
            false => matmul_nn(&mut out, &x, &w, None, m, k, n, Accum::Set),
            true => matmul_tn(&mut out, &x, &w, m, k, n, Accum::Set),
        };
        (0..a.warmup).for_each(|_| product());
        let times: Vec<f64> = (0..a.steps)
            .map(|_| {
                let t0 = Instant::now();
                product();
                t0.elapsed().as_secs_f64()
            })
            .collect();
        let med = median(times);
        let gflops = 2.0 * (m * k * n) as f64 / med / 1e9;
        rows.push(serde_json::json!({"name": name, "m": m, "k": k, "n": n, "median_ms": med * 1e3, "gflops": gflops}));
    }
    let mut out = machine();
    out["impl"] = "windtunnel".into();
    out["dtype"] = S::NAME.into();
    out["kernels_at_model_shapes"] = rows.clone().into();
    a.out.emit(&out);
    if a.out.text() {
        print_machine(&out);
        for r in rows {
            println!(
                "  {:<20} {:>5}×{:>5}×{:>4} {}: {:>8.3} ms {:>7.1} GFLOP/s",
                r["name"].as_str().unwrap_or(""),
                r["m"],
                r["k"],
                r["n"],
                S::NAME,
                r["median_ms"].as_f64().unwrap_or(0.0),
                r["gflops"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(Outcome::Ok)
}
