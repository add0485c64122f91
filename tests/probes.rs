//! Probes: head ablation semantics, the linear baseline (gradient check; it stays at ln K), and
//! the probes end to end on a small real run, including clear errors for unusable runs.

use std::path::{Path, PathBuf};
use windtunnel::check::gradcheck::{check_batch, perturbed_model, rel_err};
use windtunnel::config::RunConfig;
use windtunnel::model::{HeadPatch, Model, ModelConfig};
use windtunnel::probes::linear::{LinExample, LinearModel, Positions, SEED, train_linear};
use windtunnel::probes::{RunView, attention, displacement, snap};
use windtunnel::task::DataConfig;
use windtunnel::train::Trainer;
use windtunnel::train::rundir::RunDir;

#[test]
fn ablating_a_head_that_is_already_zero_changes_nothing_and_a_live_head_does() {
    let cfg = ModelConfig::tiny();
    let mut m: Model<f64> = perturbed_model(&cfg, 7);
    // Head 1 of layer 0 reads nothing: W_V and b_V zero make its hook_z exactly zero.
    let bp = m.layout.blocks[0];
    let (dh, c) = (cfg.d_head, cfg.d_model);
    m.layout.view_mut(&mut m.params, bp.w_v)[c * dh..2 * c * dh].fill(0.0);
    m.layout.view_mut(&mut m.params, bp.b_v)[dh..2 * dh].fill(0.0);
    let batch = check_batch(4);
    let mut ws = m.workspace(4, batch.seq_len);
    let clean = m.forward_scored(&mut ws, &batch);
    for value in [None, Some(vec![0.0; dh])] {
        ws.head_patches = vec![HeadPatch { layer: 0, head: 1, value }];
        assert_eq!(m.forward_scored(&mut ws, &batch).to_bits(), clean.to_bits());
    }
    ws.head_patches = vec![HeadPatch { layer: 0, head: 0, value: None }];
    let ablated = m.forward_scored(&mut ws, &batch);
    assert!((ablated - clean).abs() > 1e-6, "ablating a live head must change the loss");
}

#[test]
fn linear_baseline_gradient_matches_finite_differences() {
    let m = LinearModel::<f64>::new(5, 3, 4, 2, 7, 3);
    let batch = vec![
        LinExample { b: 1, z: 2, targets: vec![3, 6] },
        LinExample { b: 4, z: 0, targets: vec![0, 2] },
        LinExample { b: 1, z: 1, targets: vec![5, 5] },
    ];
    let mut g = vec![0.0; m.params.len()];
    m.loss(&batch, Some(&mut g));
    let h = 1e-5;
    for i in 0..m.params.len() {
        let mut p = m.clone();
        p.params[i] += h;
        let up = p.loss(&batch, None);
        p.params[i] -= 2.0 * h;
        let down = p.loss(&batch, None);
        let fd = (up - down) / (2.0 * h);
        assert!(rel_err(g[i], fd) < 1e-6, "param {i}: {} vs {fd}", g[i]);
    }
}

#[test]
fn linear_baseline_stays_at_ln_k_with_no_z_dependence() {
    let cfg = DataConfig { k: 10, n_b: 1000, ..DataConfig::default() };
    let r = train_linear(&cfg, Positions::First, 3000, 32, SEED, &mut |_| {}).unwrap();
    assert!((0.85..1.15).contains(&r.final_candidate_over_ln_k), "candidate/ln K = {}", r.final_candidate_over_ln_k);
    // No z-dependence beyond memorising finite-sample selector/character correlations (≈ 0.03
    // nats at 30k steps), against 10–17 nats for a transformer after its transition.
    assert!(r.max_abs_z_gap_last_quarter < 0.1, "z-gap {}", r.max_abs_z_gap_last_quarter);
    // It is learning the group marginal: the first-target loss fell from ≈ ln 40 = 3.69 towards
    // ln K (it reaches it after ≈ 30k steps, the paper's length).
    let (first, last) = (r.points[0].train_loss, r.points.last().unwrap().train_loss);
    assert!(last < 3.0 && last < first, "first-target loss {first} → {last}");
}

/// A small run with checkpoints every 20 steps (tiny model, K=3, D=150).
fn small_run(dir: &Path) {
    let text = "[model]\nn_layers = 2\nd_model = 16\nn_heads = 2\nd_head = 8\nd_mlp = 32\nn_ctx = 16\n[data]\nk = 3\nn_b = 50\n\
                [train]\nbatch_size = 32\nmax_steps = 400\neval_every = 20\ncheckpoint_every = 200\nlr = 1e-2\n";
    let cfg = RunConfig::from_toml_with(text, &[], "test").unwrap();
    let m = Model::<f32>::init(&cfg.model, 42);
    let mut tr = Trainer::new(cfg.clone(), m, Path::new(".")).unwrap();
    let mut rd = RunDir::create(dir, &cfg, "f32", true).unwrap();
    tr.run(&mut rd).unwrap();
    rd.finish(&tr).unwrap();
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("wt-probes-{}-{name}", std::process::id()))
}

#[test]
fn probes_run_on_a_real_run_and_fail_clearly_on_unusable_ones() {
    let dir = tmp("run");
    small_run(&dir);
    let view = RunView::open(&dir).unwrap();
    assert!(view.steps.contains(&0) && view.steps.contains(&200) && view.steps.contains(&400));
    let a = attention::run_attention(&view, Some(vec![0, 200, 400]), 64).unwrap();
    assert_eq!(a.heads.len(), 2 * 2 * 2);
    assert!(a.heads.iter().all(|h| h.attention.iter().all(|&x| (0.0..=1.0 + 1e-6).contains(&x))));
    // The fixture escapes its plateau (seeded, so always at the same step).
    let t1 = view.taus.t1.expect("the fixture run reaches T1");
    assert!(t1 < 400, "T1 = {t1}");
    // 0, 200, 400: two displacements.
    let d = displacement::run_displacement(&view).unwrap();
    assert_eq!(d.points.len(), 2);
    // The snap: per-group accuracy at init is chance-level and after T1 it has risen.
    let s = snap::run_snap(&view, Some(vec![0, 400]), 20).unwrap();
    let (first, last) = (&s.points[0], &s.points[1]);
    assert!(first.mean_accuracy < 0.5 && last.mean_accuracy > first.mean_accuracy + 0.3, "{first:?} → {last:?}");
    assert!(last.frac_ge_08 > first.frac_ge_08);
    assert!(dir.join("probes/snap.svg").exists());
    // A missing checkpoint is named.
    let e = view.model::<f32>(123).unwrap_err().to_string();
    assert!(e.contains("no checkpoint at step 123") && e.contains("nearest saved"), "{e}");
    // Not a run directory.
    let e = RunView::open(&tmp("nothing")).err().unwrap().to_string();
    assert!(e.contains("not a windtunnel run directory"), "{e}");
    // A checkpoint of another config.
    std::fs::copy(dir.join("config.toml"), dir.join("config.bak")).unwrap();
    let other = std::fs::read_to_string(dir.join("config.toml")).unwrap().replace("d_model = 16", "d_model = 24");
    std::fs::write(dir.join("config.toml"), other).unwrap();
    let view2 = RunView::open(&dir).unwrap();
    let e = view2.model::<f32>(200).unwrap_err().to_string();
    assert!(e.contains("another config") || e.contains("shape"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A run trained across sessions keeps only its last two 200-step checkpoints and its earlier
/// displacement report; the probe continues that report to the same bits as one pass over all.
#[test]
fn displacement_continues_an_earlier_report_to_the_same_bits() {
    let dir = tmp("continued");
    let text = "[model]\nn_layers = 2\nd_model = 16\nn_heads = 2\nd_head = 8\nd_mlp = 32\nn_ctx = 16\n[data]\nk = 3\nn_b = 50\n\
                [train]\nbatch_size = 32\nmax_steps = 1200\neval_every = 20\ncheckpoint_every = 200\nlr = 1e-2\n";
    let cfg = RunConfig::from_toml_with(text, &[], "test").unwrap();
    let mut tr = Trainer::new(cfg.clone(), Model::<f32>::init(&cfg.model, 42), Path::new(".")).unwrap();
    let mut rd = RunDir::create(&dir, &cfg, "f32", true).unwrap();
    tr.run(&mut rd).unwrap();
    rd.finish(&tr).unwrap();
    let mut view = RunView::open(&dir).unwrap();
    let all = displacement::run_displacement(&view).unwrap();
    assert_eq!((all.points.len(), all.from_earlier_report), (6, 0));
    assert!(all.reaches(1200) && !all.reaches(1400));

    // The first session measured up to step 600, then kept 400 and 600; had the run not
    // reached τ by then, the points are kept all the same (the phases wait for τ).
    view.steps = vec![0, 200, 400, 600];
    let taus = view.taus.clone();
    (view.taus.t1, view.taus.t2) = (None, None);
    let early = displacement::run_displacement(&view).unwrap();
    assert!(early.tau.is_none() && early.phases.is_empty() && early.points.len() == 3);
    view.taus = taus;
    let first = displacement::run_displacement(&view).unwrap();
    assert!(!first.reaches(1200) && first.tau.is_some());
    view.steps = vec![400, 600, 800, 1000, 1200];
    let continued = displacement::run_displacement(&view).unwrap();
    assert_eq!(continued.from_earlier_report, 3);
    let bits = |r: &displacement::DisplacementReport| -> Vec<(u64, u64, Option<u64>)> {
        r.points.iter().map(|p| (p.step, p.norm.to_bits(), p.cosine.map(f64::to_bits))).collect()
    };
    assert_eq!(bits(&continued), bits(&all));
    assert_eq!(serde_json::to_string(&continued.phases).unwrap(), serde_json::to_string(&all.phases).unwrap());

    // A chain that does not reach back to the earlier report's last step is refused by step,
    // and so is a report of another training (its last norm differs).
    view.steps = vec![0, 200, 400, 600];
    displacement::run_displacement(&view).unwrap();
    view.steps = vec![800, 1000, 1200];
    let e = displacement::run_displacement(&view).unwrap_err().to_string();
    assert!(e.contains("ends at step 600") && e.contains("start at step 1000"), "{e}");
    let path = dir.join("probes/displacement.json");
    let mut rep: displacement::DisplacementReport =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    rep.points.last_mut().unwrap().norm *= 1.0 + 1e-12;
    std::fs::write(&path, serde_json::to_string(&rep).unwrap()).unwrap();
    view.steps = vec![400, 600, 800, 1000, 1200];
    let e = displacement::run_displacement(&view).unwrap_err().to_string();
    assert!(e.contains("does not belong"), "{e}");
    // Without an earlier report, a chain that starts late is measured but does not start at the
    // run's beginning (the suite grades no such report).
    assert!(all.starts_at_the_beginning());
    std::fs::remove_file(&path).unwrap();
    view.steps = vec![600, 800, 1000, 1200];
    let late = displacement::run_displacement(&view).unwrap();
    assert!(late.reaches(1200) && !late.starts_at_the_beginning());
    std::fs::remove_dir_all(&dir).ok();
}

/// The Hessian probe, stopped part way (a session's end), continues from its partial file: the
/// points it keeps are not computed again, and the result has the bits of one pass.
#[test]
fn hessian_continues_its_partial_result_to_the_same_bits() {
    use windtunnel::probes::hessian::{HessianReport, run_hessian};
    let dir = tmp("hessian");
    small_run(&dir);
    let view = RunView::open(&dir).unwrap();
    let steps = vec![0, 200, 400];
    let one_pass = run_hessian(&view, Some(steps.clone()), 32, 8, &mut |_| {}).unwrap();
    let untimed = |r: &HessianReport| {
        let mut r = r.clone();
        r.points.iter_mut().for_each(|p| p.seconds = 0.0);
        serde_json::to_string(&r).unwrap()
    };
    let partial = |batch_size, n: usize| {
        let mut points = one_pass.points[..n].to_vec();
        points.iter_mut().for_each(|p| p.seconds = -1.0); // marks a point that was kept
        let r = HessianReport { tau_t1: one_pass.tau_t1, batch_size, points };
        std::fs::write(dir.join("probes/hessian.partial.json"), serde_json::to_string(&r).unwrap()).unwrap();
    };
    partial(32, 2);
    let continued = run_hessian(&view, Some(steps.clone()), 32, 8, &mut |_| {}).unwrap();
    let kept: Vec<bool> = continued.points.iter().map(|p| p.seconds == -1.0).collect();
    assert_eq!(kept, [true, true, false]);
    assert_eq!(untimed(&continued), untimed(&one_pass));
    assert!(!dir.join("probes/hessian.partial.json").exists(), "the complete result replaces it");
    // A partial result of another batch size is computed again.
    partial(16, 2);
    let other = run_hessian(&view, Some(steps), 32, 8, &mut |_| {}).unwrap();
    assert!(other.points.iter().all(|p| p.seconds >= 0.0));
    assert_eq!(untimed(&other), untimed(&one_pass));
    std::fs::remove_dir_all(&dir).ok();
}
