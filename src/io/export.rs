//! The export format (docs/interop.md): parameters under TL names, the batch (`tokens`,
//! `labels` int64 [B, T], −100 = not scored), `logits` [B, T, V], `loss` [] and `grad.<TL name>`
//! for every parameter (unclipped), optionally activations as `cache.<TL hook name>`.

use super::tensors::{Tensor, TensorFile, Values};
use super::weights::{FileMeta, param_tensors};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::numerics::Scalar;
use crate::task::Batch;
use std::path::Path;

/// The training set as `tokens` and `labels`, int64 [D, T], in train order (`data --out-tensors`).
pub fn train_set_tensors(train: &crate::task::TrainSet) -> Vec<Tensor> {
    let (d, t) = (train.len(), train.seq_len());
    let tokens = train.encoded.iter().flat_map(|e| e.tokens.iter().map(|&x| x as i64)).collect();
    let labels = train.encoded.iter().flat_map(|e| e.labels.iter().map(|&x| x as i64)).collect();
    vec![Tensor::i64("tokens", vec![d, t], tokens), Tensor::i64("labels", vec![d, t], labels)]
}

/// `export --batch-size B --batch-seed S`: the first B indices of windtunnel's seeded
/// permutation of the config's train set (`Stream(S, Fixture, 0)`).
pub fn sample_batch(data: &crate::task::DataConfig, size: usize, seed: u64) -> Result<Batch> {
    let train = crate::task::train_split(&crate::task::generate(data)?);
    if !(1..=train.len()).contains(&size) {
        return Err(Error::config("--batch-size", format!("{size} (allowed 1..={} = D)", train.len())));
    }
    let perm = crate::rng::Stream::new(seed, crate::rng::Purpose::Fixture, 0).permutation(train.len());
    Ok(Batch::gather(&train, &perm[..size]))
}

/// The batch as `tokens` and `labels`, int64 [B, T].
pub fn batch_tensors(batch: &Batch) -> Vec<Tensor> {
    let (b, t) = (batch.batch_size, batch.seq_len);
    vec![
        Tensor::i64("tokens", vec![b, t], batch.tokens.iter().map(|&x| x as i64).collect()),
        Tensor::i64("labels", vec![b, t], batch.labels.iter().map(|&x| x as i64).collect()),
    ]
}

/// Run forward and backward on `batch` and collect every export tensor.
pub fn export_tensors<S: Scalar>(model: &Model<S>, batch: &Batch, hooks: bool) -> Result<(Vec<Tensor>, String)> {
    // The export holds every activation (hooks) besides the workspace.
    let bytes =
        crate::model::memory::workspace_bytes(&model.cfg, batch.batch_size, batch.seq_len, std::mem::size_of::<S>());
    crate::memory::check(&format!("an export of a batch of {}", batch.batch_size), 2 * bytes)?;
    let mut ws = model.workspace(batch.batch_size, batch.seq_len);
    model.check_batch(&ws, batch)?;
    let mut grads = model.new_grads();
    let loss = model.forward(&mut ws, batch);
    model.backward(&mut ws, batch, &mut grads);
    let (b, t, v) = (batch.batch_size, batch.seq_len, model.cfg.d_vocab);
    let mut out = param_tensors(model);
    out.extend(batch_tensors(batch));
    out.push(Tensor::from_scalars("logits", vec![b, t, v], &ws.logits[..b * t * v]));
    out.push(Tensor::from_scalars("loss", vec![], &[loss]));
    for (i, e) in model.layout.entries.iter().enumerate() {
        out.push(Tensor::from_scalars(format!("grad.{}", e.name), e.shape.clone(), model.layout.view(&grads, i)));
    }
    if hooks {
        for h in model.hook_cache(&ws, batch) {
            out.push(Tensor::from_scalars(format!("cache.{}", h.name), h.shape, &h.data));
        }
    }
    Ok((out, FileMeta::new("export", &model.cfg, S::NAME).to_json()))
}

/// Read `tokens` and `labels` (integer [B, T]) from a parsed file into a batch.
pub fn batch_from_file(file: &TensorFile, path: &Path) -> Result<Batch> {
    let get = |name: &str| -> Result<(Vec<usize>, Vec<i64>)> {
        let t =
            file.get(name).ok_or_else(|| Error::format(path, format!("no tensor `{name}` (expected int64 [B, T])")))?;
        match &t.values {
            Values::I64(v) if t.shape.len() == 2 => Ok((t.shape.clone(), v.clone())),
            _ => Err(Error::format(
                path,
                format!("tensor `{name}` is {} {:?}, expected an integer [B, T] tensor", t.dtype_name(), t.shape),
            )),
        }
    };
    let (ts, tokens) = get("tokens")?;
    let (ls, labels) = get("labels")?;
    if ts != ls {
        return Err(Error::format(path, format!("tokens {ts:?} and labels {ls:?} differ in shape")));
    }
    if ts[0] == 0 || ts[1] < 2 {
        return Err(Error::format(path, format!("batch shape {ts:?}: need B ≥ 1 and T ≥ 2")));
    }
    if let Some(bad) = tokens.iter().find(|&&x| !(0..1 << 20).contains(&x)) {
        return Err(Error::format(path, format!("token id {bad} out of range")));
    }
    if let Some(bad) = labels.iter().find(|&&x| x != -100 && !(0..1 << 20).contains(&x)) {
        return Err(Error::format(path, format!("label {bad} is neither −100 nor a token id")));
    }
    // Position 0's label is never scored (the targets are shifted by one).
    let scored = labels.chunks(ts[1]).any(|row| row[1..].iter().any(|&x| x != -100));
    if !scored {
        return Err(Error::format(
            path,
            "every label after position 0 is −100: no position is scored, so the loss is undefined",
        ));
    }
    Ok(Batch::from_raw(
        ts[0],
        ts[1],
        tokens.iter().map(|&x| x as u32).collect(),
        labels.iter().map(|&x| x as i32).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::batch_from_file;
    use crate::io::tensors::{Tensor, TensorFile};
    use std::path::Path;

    fn file(labels: Vec<i64>) -> TensorFile {
        // Sorted by name, as a file read from disk.
        let tensors =
            vec![Tensor::i64("labels", vec![2, 3], labels), Tensor::i64("tokens", vec![2, 3], vec![1, 2, 3, 4, 5, 6])];
        TensorFile { tensors, metadata: None }
    }

    #[test]
    fn a_batch_with_no_scored_position_is_refused() {
        let p = Path::new("b.safetensors");
        // Position 0's label is never scored: only [.., 1..] counts.
        let e = batch_from_file(&file(vec![7, -100, -100, 7, -100, -100]), p).unwrap_err().to_string();
        assert!(e.contains("no position is scored"), "{e}");
        assert!(batch_from_file(&file(vec![-100, -100, 7, -100, -100, -100]), p).is_ok());
    }
}
