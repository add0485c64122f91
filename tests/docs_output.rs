//! Output blocks quoted in the docs are what the commands print.
//!
//! README.md's sample output of `cargo run --release -- train`: the committed paper run
//! `results/paper/runs/canonical_k10` has the default run's config but for its stopping rule, so
//! its eval records up to the default run's stop are the default run's records (training is
//! bit-reproducible). Replayed through the stopping rules training uses (`TrainState::observe`),
//! summarised and rendered by the code `train` prints with, they must give the README's block,
//! line for line, but for the wall-clock `time:` line.

use std::path::Path;
use windtunnel::config::RunConfig;
use windtunnel::train::{TrainState, layout, rundir::summarize};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of the first fenced block opened by "```<info>" after the first line containing
/// `after` in a markdown file.
fn block_after(doc: &str, after: &str, info: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let rest = &text[text.find(after).unwrap_or_else(|| panic!("{doc}: no {after:?}"))..];
    let mut lines = rest.lines().skip_while(|l| *l != format!("```{info}"));
    assert!(lines.next().is_some(), "{doc}: no ```{info} block after {after:?}");
    lines.take_while(|l| *l != "```").map(String::from).collect()
}

/// The default run's config with the committed run's stopping rule (to compare the rest).
fn with_stop_rule_of(mut cfg: RunConfig, of: &RunConfig) -> RunConfig {
    let (t, o) = (&mut cfg.train, &of.train);
    t.stop_after_t1 = o.stop_after_t1;
    t.stop_at_t1_multiple = o.stop_at_t1_multiple;
    t.stop_not_before_t4 = o.stop_not_before_t4;
    t.max_steps = o.max_steps;
    cfg
}

/// What `train` prints at the end of the default run, from the committed run's records.
fn default_run_summary() -> String {
    let run = root().join("results/paper/runs/canonical_k10");
    let default = windtunnel::cli::RunArgs { config: None, set: vec![] }.load().unwrap();
    let committed = layout::read_config(&run).unwrap();
    assert_eq!(
        with_stop_rule_of(default.clone(), &committed).to_toml(),
        committed.to_toml(),
        "the committed run is no longer the default run but for its stopping rule"
    );
    let records = layout::read_metrics(&run).unwrap();
    let mut state = TrainState::default();
    let mut upto = 0;
    for (i, r) in records.iter().enumerate() {
        state.observe(&default, r);
        (state.step, upto) = (r.step, i + 1);
        if state.stopped.is_some() || r.step >= default.train.max_steps {
            break;
        }
    }
    assert!(state.stopped.is_some(), "the committed run ends before the default run would stop");
    let d = layout::read_summary(&run).unwrap().d;
    summarize(&records[..upto], &state, &default, d).text(Path::new("runs/canonical-k10"))
}

#[test]
fn the_readme_shows_what_the_canonical_train_prints() {
    let printed = default_run_summary();
    let quoted = block_after("README.md", "<!-- output of `cargo run --release -- train`", "");
    let without_time =
        |lines: Vec<String>| -> Vec<String> { lines.into_iter().filter(|l| !l.starts_with("  time: ")).collect() };
    let printed = without_time(printed.lines().map(String::from).collect());
    assert!(printed.len() >= 6, "{printed:?}");
    assert_eq!(without_time(quoted), printed, "README.md's sample output of `train` is stale");
}

/// docs/interop.md §0: windtunnel against the author's TransformerLens dump, as the doc shows it.
#[test]
fn interop_shows_what_verify_prints_against_the_transformerlens_dump() {
    let bin = env!("CARGO_BIN_EXE_windtunnel");
    let reference = std::env::temp_dir().join(format!("wt-docs-ref-{}.safetensors", std::process::id()));
    let golden = |f: &str| root().join("golden/tl").join(f).to_string_lossy().into_owned();
    let export = std::process::Command::new(bin)
        .args(["export", "--init", &golden("init_f32.safetensors"), "--batch", &golden("grads_f32.safetensors")])
        .args(["--out", reference.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    let verify = std::process::Command::new(bin)
        .args(["verify", reference.to_str().unwrap(), &golden("grads_f32.safetensors")])
        .args(["--keys", "tokens,labels,logits,loss,grad."])
        .output()
        .unwrap();
    std::fs::remove_file(&reference).ok();
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stdout));
    let printed: Vec<String> = String::from_utf8_lossy(&verify.stdout).lines().map(String::from).collect();
    assert_eq!(block_after("docs/interop.md", "## 0. First, a correct port", "text"), printed);
}
