//! A trajectory longer than the per-step horizon: verify compares its per-step records up to the
//! horizon and its waiting times, sets the later parameters aside, and still names a wrong loop.

use std::path::Path;
use windtunnel::check::horizon::one_ulp_up;
use windtunnel::check::past_horizon::HORIZON_F32;
use windtunnel::check::verify::{VerifyOpts, verify};
use windtunnel::config::RunConfig;
use windtunnel::io::tensors::TensorFile;
use windtunnel::io::weights;
use windtunnel::train::Trainer;
use windtunnel::train::trajectory::trajectory_tensors;

const STEPS: u64 = HORIZON_F32 as u64 + 50;

/// The canonical run at batch 16 (cheap steps), `STEPS` steps; `nudge` moves one parameter one ulp.
fn trajectory(sets: &[&str], nudge: bool) -> TensorFile {
    let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sets.push("train.batch_size=16".into());
    let cfg = RunConfig::load(None, &sets).unwrap();
    let mut model = weights::init_model::<f32>(&cfg.train.init, &cfg.model).unwrap();
    if nudge {
        let mid = model.params.len() / 2;
        model.params[mid] = one_ulp_up(model.params[mid]);
    }
    let mut tr = Trainer::new(cfg, model, Path::new(".")).unwrap();
    let (mut tensors, _) = trajectory_tensors(&mut tr, STEPS, Some(100)).unwrap();
    tensors.sort_by(|a, b| a.name.cmp(&b.name));
    TensorFile { tensors, metadata: None }
}

#[test]
fn past_the_horizon_waiting_times_are_compared_and_a_wrong_loop_still_fails() {
    let reference = trajectory(&[], false);
    let nudged = verify(&reference, trajectory(&[], true), &VerifyOpts::default(), "nudged").unwrap();
    let past = nudged.past_horizon.as_ref().expect("a trajectory past the f32 horizon says so");
    assert_eq!((past.steps, past.horizon), (STEPS as usize, HORIZON_F32));
    assert!(past.not_judged.contains(&"embed.W_E".to_string()), "the final parameters are set aside");
    let rows = &nudged.comparison.rows;
    assert!(rows.iter().any(|r| r.name == "step_000200.embed.W_E"), "parameters inside the horizon are compared");
    assert!(rows.iter().any(|r| r.name.starts_with("waiting: loss <")), "the waiting times are compared");
    assert_eq!(nudged.comparison.row("losses").map(|r| r.shape.clone()), Some(vec![HORIZON_F32]));
    assert!(nudged.passed, "a 1-ulp nudge is what correct loops differ by:\n{}", nudged.render(true, false));
    assert!(
        nudged.render(false, false).starts_with(&format!("a {STEPS}-step trajectory is past the f32 per-step horizon"))
    );

    let wrong = verify(&reference, trajectory(&["train.lr=1.1e-3"], false), &VerifyOpts::default(), "lr").unwrap();
    assert!(!wrong.passed);
    assert_eq!(wrong.first_divergence(), Some("lr"), "{}", wrong.render(true, false));
}
