//! Epoch-wise batching without replacement (the author's `DataLoader(shuffle=True,
//! drop_last=False)`, spec §6.4): epoch `e` is a permutation of the D train-order indices, cut
//! into consecutive chunks of B; the last chunk of an epoch holds `D mod B` examples and still
//! counts as a step. Permutations come from `Stream(order_seed, BatchOrder, e)`, or are replayed
//! from a file (`perm` int64 [n_epochs, D]) to reproduce a PyTorch run's inputs exactly.

use crate::error::{Error, Result};
use crate::io::tensors::{self, Values};
use crate::rng::{Purpose, Stream};
use std::path::Path;

#[derive(Clone, Debug)]
pub enum Order {
    Seeded(u64),
    Replay(Vec<Vec<usize>>),
}

#[derive(Clone, Debug)]
pub struct Batcher {
    order: Order,
    d: usize,
    batch_size: usize,
    cache: Option<(u64, Vec<usize>)>,
}

impl Batcher {
    pub fn new(order: Order, d: usize, batch_size: usize) -> Self {
        Batcher { order, d, batch_size, cache: None }
    }

    pub fn steps_per_epoch(&self) -> u64 {
        self.d.div_ceil(self.batch_size) as u64
    }

    /// Epoch and position within it of global step `step` (0-based).
    pub fn locate(&self, step: u64) -> (u64, u64) {
        (step / self.steps_per_epoch(), step % self.steps_per_epoch())
    }

    fn permutation(&mut self, epoch: u64) -> Result<&[usize]> {
        if self.cache.as_ref().map(|c| c.0) != Some(epoch) {
            let perm = match &self.order {
                Order::Seeded(seed) => Stream::new(*seed, Purpose::BatchOrder, epoch).permutation(self.d),
                Order::Replay(perms) => perms.get(epoch as usize).cloned().ok_or_else(|| {
                    Error::other(format!(
                        "the data-order file holds {} epochs; step needs epoch {epoch} (use max_steps ≤ {})",
                        perms.len(),
                        perms.len() as u64 * self.steps_per_epoch()
                    ))
                })?,
            };
            self.cache = Some((epoch, perm));
        }
        Ok(&self.cache.as_ref().unwrap().1)
    }

    /// Train-order indices of the batch of global step `step`.
    pub fn indices(&mut self, step: u64) -> Result<Vec<usize>> {
        let (epoch, i) = self.locate(step);
        let (b, d) = (self.batch_size, self.d);
        let perm = self.permutation(epoch)?;
        let lo = i as usize * b;
        Ok(perm[lo..(lo + b).min(d)].to_vec())
    }
}

/// Read a replay file: tensor `perm` int64 [n_epochs, D], each row a permutation of 0..D.
pub fn read_order_file(path: &Path, d: usize) -> Result<Order> {
    let f = tensors::read(path)?;
    let t = f.get("perm").ok_or_else(|| Error::format(path, "no tensor `perm` (expected int64 [n_epochs, D])"))?;
    let Values::I64(v) = &t.values else {
        return Err(Error::format(path, format!("`perm` is {}, expected int64", t.dtype_name())));
    };
    if t.shape.len() != 2 || t.shape[1] != d || t.shape[0] == 0 {
        return Err(Error::format(
            path,
            format!("`perm` has shape {:?}, expected [n_epochs, {d}] for this data", t.shape),
        ));
    }
    let mut perms = Vec::with_capacity(t.shape[0]);
    for (e, row) in v.chunks_exact(d).enumerate() {
        let mut seen = vec![false; d];
        let mut p = Vec::with_capacity(d);
        for &x in row {
            if x < 0 || x as usize >= d || seen[x as usize] {
                return Err(Error::format(path, format!("`perm` row {e} is not a permutation of 0..{d}")));
            }
            seen[x as usize] = true;
            p.push(x as usize);
        }
        perms.push(p);
    }
    Ok(Order::Replay(perms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_cover_every_example_once_with_a_short_last_batch() {
        let mut b = Batcher::new(Order::Seeded(3), 10, 4);
        assert_eq!(b.steps_per_epoch(), 3);
        let mut seen: Vec<usize> = (0..3).flat_map(|s| b.indices(s).unwrap()).collect();
        assert_eq!(b.indices(2).unwrap().len(), 2);
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_ne!(b.indices(0).unwrap(), b.indices(3).unwrap(), "each epoch reshuffles");
        let again: Vec<usize> = Batcher::new(Order::Seeded(3), 10, 4).indices(4).unwrap();
        assert_eq!(again, b.indices(4).unwrap(), "a function of the step only");
    }
}
