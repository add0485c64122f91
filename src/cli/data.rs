use super::Outcome;
use crate::error::{Error, Result};
use crate::io::tensors;
use crate::task::dataset::sha_trained_targets;
use crate::task::{DataConfig, TaskKind, ZSharing, generate, sha_gen, sha_train, train_split};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Task direction: bz_to_a, az_to_b, b_to_a or a_to_b.
    #[arg(long, default_value = "bz_to_a")]
    task: String,
    /// K: targets per base string.
    #[arg(long, default_value_t = 10)]
    k: usize,
    /// Number of base strings (D = n_b · K).
    #[arg(long = "n-b", default_value_t = 1000)]
    n_b: usize,
    /// Data seed (`random.Random(seed)`).
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    seed: i64,
    /// Give every target of a group a distinct first character (the canonical setting).
    #[arg(long)]
    enforce_unique_first_char: bool,
    /// Length of the distinct prefix when --enforce-unique-first-char is set (1 or 2).
    #[arg(long, default_value_t = 1)]
    prefix_length: usize,
    #[arg(long, default_value_t = 6)]
    b_length: usize,
    #[arg(long, default_value_t = 4)]
    a_length: usize,
    #[arg(long, default_value_t = 2)]
    z_length: usize,
    /// Lengthen z when too short for K, as the author's generator does.
    #[arg(long)]
    auto_z_length: bool,
    /// z sharing: shared, private or supergroup.
    #[arg(long, default_value = "shared")]
    z_sharing: String,
    /// Number of supergroups G (with --z-sharing supergroup).
    #[arg(long, default_value_t = 1)]
    n_supergroups: usize,
    /// Probability of replacing a training target by a wrong candidate.
    #[arg(long, default_value_t = 0.0)]
    label_noise: f64,
    /// Write the training examples (train order) as JSON lines to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the training set as safetensors: `tokens` and `labels` int64 [D, T] in train order.
    #[arg(long)]
    out_tensors: Option<PathBuf>,
    #[command(flatten)]
    output: super::Output,
}

/// CLI flag of a data config field, for error messages.
fn flag(field: &str) -> &'static str {
    match field {
        "data.k" => "--k",
        "data.n_b" => "--n-b",
        "data.z_length" => "--z-length",
        "data.b_length" => "--b-length",
        "data.a_length" => "--a-length",
        "data.prefix_length" => "--prefix-length",
        "data.n_supergroups" => "--n-supergroups",
        "data.label_noise_prob" => "--label-noise",
        _ => "",
    }
}

pub fn run(a: Args) -> Result<Outcome> {
    let task = TaskKind::parse(&a.task).ok_or_else(|| {
        Error::config("data.task (--task)", format!("{:?} (allowed bz_to_a, az_to_b, b_to_a, a_to_b)", a.task))
    })?;
    let z_sharing = ZSharing::parse(&a.z_sharing).ok_or_else(|| {
        Error::config(
            "data.z_sharing (--z-sharing)",
            format!("{:?} (allowed shared, private, supergroup)", a.z_sharing),
        )
    })?;
    let cfg = DataConfig {
        task,
        k: a.k,
        n_b: a.n_b,
        seed: a.seed,
        b_length: a.b_length,
        a_length: a.a_length,
        z_length: a.z_length,
        auto_z_length: a.auto_z_length,
        enforce_unique_first_char: a.enforce_unique_first_char,
        prefix_length: a.prefix_length,
        z_sharing,
        n_supergroups: a.n_supergroups,
        label_noise_prob: a.label_noise,
        probe_fraction: 0.0,
    };
    let out = a.output;
    if a.enforce_unique_first_char && !task.b_first() {
        out.note(format!(
            "note: --enforce-unique-first-char has no effect for {} (as in the author's generator)",
            task.name()
        ));
    }
    let mapping = generate(&cfg).map_err(|e| match e {
        Error::Config { field, message } if !flag(&field).is_empty() => {
            Error::Config { field: format!("{field} ({})", flag(&field)), message }
        }
        e => e,
    })?;
    if cfg.task.has_z() && cfg.effective_z_length() != cfg.z_length {
        out.note(format!(
            "note: z_length lengthened {} → {} (as the author's generator does)",
            cfg.z_length,
            cfg.effective_z_length()
        ));
    }
    let train = train_split(&mapping);
    print_hashes(out, &cfg, &mapping, &train);
    if let Some(path) = a.out {
        write_jsonl(&path, &train).map_err(|e| Error::io(&path, e))?;
        out.note(format!("wrote {} examples to {}", train.len(), path.display()));
    }
    if let Some(path) = a.out_tensors {
        let (d, t) = (train.len(), train.seq_len());
        // Beside the dataset, int64 tokens and labels held three times while written (measured:
        // 600 MB more for a 205 MB file).
        let file = 2 * 8 * d as u128 * t as u128;
        let bytes = crate::task::dataset_bytes(cfg.n_b * cfg.k) + 3 * file;
        crate::memory::check(&format!("writing {d} examples as tensors"), bytes)?;
        tensors::write(&path, &crate::io::export::train_set_tensors(&train), None)?;
        out.note(format!("wrote tokens/labels [{d}, {t}] to {}", path.display()));
    }
    Ok(Outcome::Ok)
}

/// The data's hashes (the author's `sha_gen`, `sha_train`, and with label noise the trained targets').
fn print_hashes(out: super::Output, cfg: &DataConfig, mapping: &crate::task::Mapping, train: &crate::task::TrainSet) {
    let noisy = (train.n_noisy > 0).then(|| sha_trained_targets(train));
    out.emit(&serde_json::json!({
        "sha_gen": sha_gen(mapping), "sha_train": sha_train(train), "sha_trained_targets": noisy,
        "examples": train.len(), "noisy": train.n_noisy, "k": cfg.k, "n_b": cfg.n_b,
        "z_length": cfg.effective_z_length(),
    }));
    if out.text() {
        println!("sha_gen {}", sha_gen(mapping));
        println!("sha_train {}", sha_train(train));
        if let Some(h) = &noisy {
            println!("sha_trained_targets {h}");
        }
    }
    if train.n_noisy > 0 {
        out.note(format!("label noise: {}/{} training targets replaced", train.n_noisy, train.len()));
    }
}

fn write_jsonl(path: &std::path::Path, train: &crate::task::TrainSet) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (i, ((e, a), enc)) in train.examples.iter().zip(&train.trained_a).zip(&train.encoded).enumerate() {
        let row = serde_json::json!({
            "index": i, "b": e.b, "z": e.z, "a": a, "clean_a": e.a,
            "tokens": enc.tokens, "labels": enc.labels,
        });
        writeln!(f, "{row}")?;
    }
    f.flush()
}
