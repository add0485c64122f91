use super::Outcome;
use crate::error::{Error, Result};
use crate::probes::{RunView, ablation, attention, displacement, hessian, linear, snap};
use crate::task::DataConfig;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    probe: Probe,
    #[command(flatten)]
    out: super::Output,
}

#[derive(clap::Args, Clone)]
struct RunArg {
    /// Run directory made by `windtunnel train` (results go to <run>/probes/).
    #[arg(long)]
    run: PathBuf,
    /// Checkpoint steps to probe (comma-separated; default: the paper's schedule).
    #[arg(long, value_delimiter = ',')]
    steps: Option<Vec<u64>>,
}

#[derive(clap::Subcommand)]
enum Probe {
    /// Per-group accuracy over time: is the transition collective (spec §7.5)?
    Snap {
        #[command(flatten)]
        run: RunArg,
        #[arg(long, default_value_t = 200, value_parser = super::positive)]
        groups: usize,
    },
    /// Attention from the query positions to z, per layer and head, and head onsets (spec §7.6).
    Attention {
        #[command(flatten)]
        run: RunArg,
        #[arg(long, default_value_t = 512, value_parser = super::positive)]
        examples: usize,
    },
    /// Zero/mean ablation and sufficiency of every head at pre/mid/post checkpoints (spec §7.7).
    Ablate {
        #[command(flatten)]
        run: RunArg,
    },
    /// Exact Hessian extreme eigenvalues: the paper's power iteration and Lanczos (spec §7.8).
    Hessian {
        #[command(flatten)]
        run: RunArg,
        #[arg(long, default_value_t = 512, value_parser = super::positive)]
        batch_size: usize,
        #[arg(long, default_value_t = 50, value_parser = super::positive)]
        lanczos_steps: usize,
    },
    /// Weight displacement and direction consistency per 200 steps (spec §7.9).
    Displacement {
        #[arg(long)]
        run: PathBuf,
    },
    /// Train the two-layer linear baseline on the task (spec §8 row 12).
    Linear {
        #[arg(long, default_value_t = 10)]
        k: usize,
        #[arg(long = "n-b", default_value_t = 1000)]
        n_b: usize,
        #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        steps: u64,
        #[arg(long, default_value_t = 64, value_parser = super::positive)]
        hidden: usize,
        /// Predict the first target character (the paper's reading) or every target token.
        #[arg(long, default_value = "first")]
        positions: String,
        /// Directory to write linear_k<K>.json into.
        #[arg(long, default_value = "runs/linear")]
        out: PathBuf,
    },
}

pub fn run(a: Args) -> Result<Outcome> {
    let out = a.out;
    match a.probe {
        Probe::Snap { run, groups } => {
            let r = snap::run_snap(&view(&run.run, out)?, run.steps, groups)?;
            show(out, &r, print_snap)
        }
        Probe::Attention { run, examples } => {
            let r = attention::run_attention(&view(&run.run, out)?, run.steps, examples)?;
            show(out, &r, print_attention)
        }
        Probe::Ablate { run } => {
            let r = ablation::run_ablation(&view(&run.run, out)?, run.steps)?;
            show(out, &r, print_ablation)
        }
        Probe::Hessian { run, batch_size, lanczos_steps } => {
            let view = view(&run.run, out)?;
            if out.text() {
                print_hessian_header();
            }
            let r = hessian::run_hessian(&view, run.steps, batch_size, lanczos_steps, &mut |p| {
                if out.text() {
                    print_hessian_point(p)
                }
            })?;
            out.emit(&r);
            Ok(Outcome::Ok)
        }
        Probe::Displacement { run } => {
            let r = displacement::run_displacement(&view(&run, out)?)?;
            show(out, &r, print_displacement)
        }
        Probe::Linear { k, n_b, steps, hidden, positions, out: dir } => {
            linear(out, k, n_b, steps, hidden, &positions, dir)
        }
    }
}

/// The run, with a progress line per checkpoint unless --quiet.
fn view(dir: &std::path::Path, out: super::Output) -> Result<RunView> {
    let mut v = RunView::open(dir)?;
    v.progress = !out.quiet;
    Ok(v)
}

/// The result as JSON (`--json`) or as text.
fn show<R: serde::Serialize>(out: super::Output, r: &R, print: fn(&R)) -> Result<Outcome> {
    out.emit(r);
    if out.text() {
        print(r);
    }
    Ok(Outcome::Ok)
}

fn print_snap(r: &snap::SnapReport) {
    println!("T1 = {}; {} groups", r.tau_t1, r.n_groups);
    println!("{:>8} {:>7} {:>10} {:>10} {:>9}", "step", "step/τ", "frac≥0.8", "frac=1.0", "mean acc");
    for p in &r.points {
        println!(
            "{:>8} {:>7.2} {:>10.3} {:>10.3} {:>9.3}",
            p.step, p.step_over_tau, p.frac_ge_08, p.frac_eq_1, p.mean_accuracy
        );
    }
}

fn print_attention(r: &attention::AttentionReport) {
    println!(
        "{} checkpoints, {} examples; attention mass on z at the last probe step (in the author's units, \
         mass / n_layers, beside it) and onset:",
        r.steps.len(),
        r.n_examples
    );
    let n_layers = r.n_layers();
    for h in &r.heads {
        let last = h.attention.last().copied();
        println!(
            "  L{}H{} query {}: {} ({})  onset {}",
            h.layer,
            h.head,
            h.query,
            last.map_or("–".into(), |a| format!("{a:.3}")),
            last.map_or("–".into(), |a| format!("{:.3}", attention::author_units(a, n_layers))),
            h.onset.map_or("–".into(), |s| s.to_string())
        );
    }
}

fn print_ablation(r: &ablation::AblationReport) {
    for c in &r.checkpoints {
        println!(
            "{} (step {}): clean loss {:.4}, clean Δz {:.4}, all heads zeroed {:.4}",
            c.label, c.step, c.clean_loss, c.clean_dz, c.all_zero_loss
        );
        println!(
            "  {:>5} {:>10} {:>10} {:>10} {:>10} {:>11}",
            "head", "zero Δloss", "mean Δloss", "zero ΔΔz", "mean ΔΔz", "only-this"
        );
        for h in &c.heads {
            println!(
                "  L{}H{} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>11.4}",
                h.layer,
                h.head,
                h.zero_loss_delta,
                h.mean_loss_delta,
                h.zero_dz_delta,
                h.mean_dz_delta,
                h.sufficiency_loss
            );
        }
    }
}

fn print_hessian_header() {
    println!(
        "{:>7} {:>8} {:>11} {:>11} {:>6} {:>11} {:>11} {:>9} {:>9} {:>7} {:>6}",
        "step", "phase", "pw λmax", "pw λmin", "iters", "Lz λmax", "Lz λmin", "res min", "aniso Lz", "∠g,vmin", "s"
    );
}

fn print_hessian_point(p: &hessian::HessianPoint) {
    println!(
        "{:>7} {:>8} {:>11.4e} {:>11.4e} {:>3}/{:<2} {:>11.4e} {:>11.4e} {:>9.2e} {:>9.2e} {:>7.1} {:>6.0}",
        p.step,
        p.phase,
        p.power_lambda_max,
        p.power_lambda_min,
        p.power_iters_max,
        p.power_iters_min,
        p.lanczos_lambda_max,
        p.lanczos_lambda_min,
        p.lanczos_residual_min,
        p.lanczos_anisotropy,
        p.angle_grad_vmin_deg,
        p.seconds
    )
}

fn print_displacement(r: &displacement::DisplacementReport) {
    let tau = r.tau.map_or("–".into(), |t| t.to_string());
    println!("τ = {tau} ({}); {} displacement points", r.tau_definition, r.points.len());
    for ph in &r.phases {
        let f = |x: Option<f64>, plus: bool| match x {
            Some(x) if plus => format!("{x:+.3}"),
            Some(x) => format!("{x:.4}"),
            None => "–".into(),
        };
        println!(
            "  {:<15} n={:<4} ‖Δ‖ {} ± {}  cos {}",
            ph.phase,
            ph.n,
            f(ph.norm_mean, false),
            f(ph.norm_std, false),
            f(ph.cosine_mean, true)
        );
    }
}

/// The linear baseline: trained here, written to `<dir>/linear_k<K>.json`.
fn linear(
    out: super::Output,
    k: usize,
    n_b: usize,
    steps: u64,
    hidden: usize,
    positions: &str,
    dir: PathBuf,
) -> Result<Outcome> {
    if k < 2 {
        // K = 1 has nothing to disambiguate: the candidate loss is 0 and "× ln K" is 0/0.
        return Err(Error::config("--k", format!("{k} (allowed 2.., the baseline is graded in units of ln K)")));
    }
    let cfg = DataConfig { k, n_b, ..DataConfig::default() };
    let positions = match positions {
        "first" => linear::Positions::First,
        "all" => linear::Positions::All,
        s => return Err(Error::config("--positions", format!("{s:?} (allowed first, all)"))),
    };
    let r = linear::train_linear(&cfg, positions, steps, hidden, linear::SEED, &mut |p| {
        out.note(format!(
            "step {:>6}  loss {:.4}  candidate {:.4}  z-gap {:+.5}",
            p.step, p.train_loss, p.candidate_loss, p.z_gap
        ))
    })?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join(format!("linear_k{k}.json"));
    crate::io::tensors::write_atomic(&path, serde_json::to_string_pretty(&r).expect("serialises").as_bytes())?;
    out.emit(&r);
    if out.text() {
        println!(
            "linear baseline K={k}: final candidate loss = {:.3} × ln K; max |z-gap| over the last quarter {:.5}; → {}",
            r.final_candidate_over_ln_k,
            r.max_abs_z_gap_last_quarter,
            path.display()
        );
    }
    Ok(Outcome::Ok)
}
