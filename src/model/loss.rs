//! Next-token cross-entropy exactly as the author's trainer (spec §4): logits at position `t`
//! are scored against `labels[t+1]`, positions whose label is −100 are ignored, and the loss is
//! the mean over all scored positions of the batch (`F.cross_entropy(..., ignore_index=-100)`).

use crate::numerics::Scalar;
use crate::task::tokenizer::IGNORE;
use rayon::prelude::*;

/// Rows per parallel task (fixed).
const ROWS_PER_TASK: usize = 64;

/// Shifted targets for the first `t` positions: `targets[b·t + p] = labels[b, p+1]`, −100 where
/// `p + 1` is past the sequence. `labels` is (B, T_full).
pub fn shifted_targets(labels: &[i32], t_full: usize, t: usize) -> Vec<i32> {
    let b = labels.len() / t_full;
    let mut out = vec![IGNORE; b * t];
    for (o, l) in out.chunks_exact_mut(t).zip(labels.chunks_exact(t_full)) {
        let m = t.min(t_full - 1);
        o[..m].copy_from_slice(&l[1..=m]);
    }
    out
}

/// Per-position loss `−log_softmax(logits[n])[y]` (0 where ignored) into `losses` (N), and the
/// batch mean: the sum over scored rows in ascending order, divided by their count (NaN when no
/// row is scored, as PyTorch's mean over an empty set).
/// logits is (N, V). Computed as `lse − (l_y − max)`, `lse = ln Σ exp(l_j − max)`.
pub fn crossentropy_forward<S: Scalar>(losses: &mut [S], logits: &[S], targets: &[i32], v: usize) -> (S, usize) {
    losses
        .par_chunks_mut(ROWS_PER_TASK)
        .zip(logits.par_chunks(ROWS_PER_TASK * v))
        .zip(targets.par_chunks(ROWS_PER_TASK))
        .for_each(|((losses, logits), targets)| {
            for (r, (loss, &y)) in losses.iter_mut().zip(targets).enumerate() {
                if y == IGNORE {
                    *loss = S::zero();
                    continue;
                }
                let row = &logits[r * v..(r + 1) * v];
                *loss = token_nll(row, y as usize);
            }
        });
    let mut sum = S::zero();
    let mut count = 0usize;
    for (&l, &y) in losses.iter().zip(targets) {
        if y != IGNORE {
            sum += l;
            count += 1;
        }
    }
    let mean = if count > 0 { sum / S::from_f64(count as f64) } else { S::from_f64(f64::NAN) };
    (mean, count)
}

/// `−log_softmax(row)[y]`.
#[inline]
pub fn token_nll<S: Scalar>(row: &[S], y: usize) -> S {
    let (m, lse) = max_lse(row);
    lse - (row[y] - m)
}

/// `(max, ln Σ exp(x − max))` of a row.
#[inline]
pub fn max_lse<S: Scalar>(row: &[S]) -> (S, S) {
    let mut m = row[0];
    for &x in &row[1..] {
        m = m.max_by_value(x);
    }
    let mut s = S::zero();
    for &x in row {
        s += (x - m).exp();
    }
    (m, s.ln())
}

/// dlogits (N, V) = (softmax − onehot(y)) / count on scored rows, 0 elsewhere (overwritten).
pub fn crossentropy_backward<S: Scalar>(dlogits: &mut [S], logits: &[S], targets: &[i32], v: usize, count: usize) {
    let cnt = S::from_f64(count.max(1) as f64);
    dlogits
        .par_chunks_mut(ROWS_PER_TASK * v)
        .zip(logits.par_chunks(ROWS_PER_TASK * v))
        .zip(targets.par_chunks(ROWS_PER_TASK))
        .for_each(|((dl, logits), targets)| {
            for (r, &y) in targets.iter().enumerate() {
                let d = &mut dl[r * v..(r + 1) * v];
                if y == IGNORE {
                    d.fill(S::zero());
                    continue;
                }
                let row = &logits[r * v..(r + 1) * v];
                let (m, lse) = max_lse(row);
                for j in 0..v {
                    let p = (row[j] - m - lse).exp();
                    d[j] = if j == y as usize { p - S::one() } else { p } / cnt;
                }
            }
        });
}

/// Output positions for the scored forward: positions `p < t` whose next token is scored in some
/// example.
pub(crate) fn scored_positions(targets_full: &[i32], b: usize, t: usize) -> Vec<usize> {
    (0..t).filter(|&p| (0..b).any(|bi| targets_full[bi * t + p] != IGNORE)).collect()
}

#[cfg(test)]
mod tests {
    use super::crossentropy_forward;
    use crate::task::tokenizer::IGNORE;

    #[test]
    fn the_mean_over_no_scored_position_is_nan_as_in_pytorch() {
        let logits = [0.0f64, 1.0, 2.0, 0.5, 0.5, 0.5];
        let mut losses = [9.0f64; 2];
        let (mean, count) = crossentropy_forward(&mut losses, &logits, &[IGNORE, IGNORE], 3);
        assert!(mean.is_nan() && count == 0 && losses == [0.0, 0.0]);
        let (mean, count) = crossentropy_forward(&mut losses, &logits, &[2, IGNORE], 3);
        assert!(count == 1 && (mean - losses[0]).abs() == 0.0 && mean > 0.0);
    }
}
