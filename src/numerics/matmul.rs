//! Fixed-order matrix products (anchors §4.4), arithmetic v2.
//!
//! Every output element is `acc = 0; acc = fma(a[i,p], b[p,j], acc)` for `p = 0..k` ascending
//! (one rounding per step, [`super::fused`]), then either `out = acc (+ bias[j])` or
//! `out = out + acc`. The sum over `p` is never split or reordered, so the result is the same bit
//! pattern whatever the tile shape, SIMD width or thread count ([`super::gemm`]).
//!
//! Two layouts cover a transformer:
//! - [`matmul_nn`]: `out[m,n] = a[m,k] · b[k,n]` (forward `X·W` with TL's `[in, out]` storage, and
//!   `dX = dY·Wᵀ` once `W` is transposed into scratch with [`transpose`]).
//! - [`matmul_tn`]: `out[m,n] = a[k,m]ᵀ · b[k,n]` (weight gradients `dW = Xᵀ·dY`, summed over the
//!   batch rows in order).

use super::fused::Software;
pub use super::product::{Accum, Product};
use super::scalar::Scalar;

/// `out[m,n] (=|+=) a[m,k] · b[k,n] (+ bias[n])`, all row-major and contiguous.
/// `bias` is only allowed with [`Accum::Set`].
#[allow(clippy::too_many_arguments)]
pub fn matmul_nn<S: Scalar>(
    out: &mut [S],
    a: &[S],
    b: &[S],
    bias: Option<&[S]>,
    m: usize,
    k: usize,
    n: usize,
    accum: Accum,
) {
    assert_eq!(a.len(), m * k, "matmul_nn: a is not [m,k]");
    assert_eq!(b.len(), k * n, "matmul_nn: b is not [k,n]");
    check_out_bias(out, bias, m, n, accum);
    super::flops::add(2 * m * k * n);
    S::matmul(Product { out, a, a_trans: false, b, bias, m, k, n, accum });
}

/// `out[m,n] (=|+=) a[k,m]ᵀ · b[k,n]`: the weight-gradient layout. The sum runs over the `k`
/// rows of `a` and `b` (batch positions) in ascending order.
pub fn matmul_tn<S: Scalar>(out: &mut [S], a: &[S], b: &[S], m: usize, k: usize, n: usize, accum: Accum) {
    assert_eq!(a.len(), k * m, "matmul_tn: a is not [k,m]");
    assert_eq!(b.len(), k * n, "matmul_tn: b is not [k,n]");
    check_out_bias(out, None, m, n, accum);
    super::flops::add(2 * m * k * n);
    S::matmul(Product { out, a, a_trans: true, b, bias: None, m, k, n, accum });
}

/// `dst[cols, rows] = src[rows, cols]ᵀ` (a copy; no arithmetic), in 16 × 16 tiles: a whole row
/// of `src` at a time writes a column of `dst` at a stride of `rows` elements, which for the
/// model's power-of-two widths lands in a few L1 sets and evicts itself before the next row.
pub fn transpose<S: Scalar>(dst: &mut [S], src: &[S], rows: usize, cols: usize) {
    const TILE: usize = 16;
    assert_eq!(src.len(), rows * cols);
    assert_eq!(dst.len(), rows * cols);
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

/// `db[n] += Σ_p dy[p, n]`, summed over rows `p` in ascending order (bias gradients).
pub fn sum_rows_into<S: Scalar>(db: &mut [S], dy: &[S], rows: usize, n: usize) {
    assert_eq!(db.len(), n);
    assert_eq!(dy.len(), rows * n);
    if n == 0 {
        return;
    }
    let mut acc = vec![S::zero(); n];
    // Vectorised across columns only: each column's sum keeps its row order.
    super::simd::dispatch(
        #[inline(always)]
        || {
            for row in dy.chunks_exact(n) {
                for (s, &v) in acc.iter_mut().zip(row) {
                    *s += v;
                }
            }
        },
    );
    for (d, s) in db.iter_mut().zip(acc) {
        *d += s;
    }
}

/// The plain triple loop with the documented order and `libm`'s software FMA; the reference
/// every kernel must match bit for bit (tests and proptests).
#[allow(clippy::too_many_arguments)]
pub fn matmul_reference<S: Scalar>(
    out: &mut [S],
    a_at: impl Fn(usize, usize) -> S,
    b: &[S],
    bias: Option<&[S]>,
    m: usize,
    k: usize,
    n: usize,
    accum: Accum,
) {
    for i in 0..m {
        for j in 0..n {
            let mut acc = S::zero();
            for p in 0..k {
                acc = S::fma::<Software>(a_at(i, p), b[p * n + j], acc);
            }
            out[i * n + j] = finish(out[i * n + j], acc, bias.map(|bb| bb[j]), accum);
        }
    }
}

#[inline(always)]
pub(crate) fn finish<S: Scalar>(old: S, acc: S, bias: Option<S>, accum: Accum) -> S {
    match (accum, bias) {
        (Accum::Set, None) => acc,
        (Accum::Set, Some(b)) => acc + b,
        (Accum::Add, _) => old + acc,
    }
}

fn check_out_bias<S: Scalar>(out: &[S], bias: Option<&[S]>, m: usize, n: usize, accum: Accum) {
    assert_eq!(out.len(), m * n, "matmul: out is not [m,n]");
    if let Some(bb) = bias {
        assert_eq!(bb.len(), n, "matmul: bias is not [n]");
        assert_eq!(accum, Accum::Set, "matmul: bias only with Accum::Set");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn nn_and_tn_match_reference_bits_on_ragged_shapes() {
        let mut s = 7u64;
        for &(m, k, n) in &[(1, 1, 1), (5, 3, 7), (9, 17, 41), (33, 64, 96), (130, 5, 40)] {
            let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut s)).collect();
            let at: Vec<f32> = (0..k * m).map(|_| lcg(&mut s)).collect();
            let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut s)).collect();
            let bias: Vec<f32> = (0..n).map(|_| lcg(&mut s)).collect();
            let init: Vec<f32> = (0..m * n).map(|_| lcg(&mut s)).collect();

            let mut got = vec![0.0; m * n];
            let mut want = vec![0.0; m * n];
            matmul_nn(&mut got, &a, &b, Some(&bias), m, k, n, Accum::Set);
            matmul_reference(&mut want, |i, p| a[i * k + p], &b, Some(&bias), m, k, n, Accum::Set);
            assert_eq!(bits(&got), bits(&want), "nn {m}x{k}x{n}");

            let mut got = init.clone();
            let mut want = init.clone();
            matmul_tn(&mut got, &at, &b, m, k, n, Accum::Add);
            matmul_reference(&mut want, |i, p| at[p * m + i], &b, None, m, k, n, Accum::Add);
            assert_eq!(bits(&got), bits(&want), "tn {m}x{k}x{n}");
        }
    }

    #[test]
    fn tiled_transpose_moves_every_element_once() {
        for &(rows, cols) in &[(1, 1), (5, 37), (16, 16), (33, 17), (128, 40)] {
            let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
            let mut dst = vec![f32::NAN; rows * cols];
            transpose(&mut dst, &src, rows, cols);
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(dst[c * rows + r], src[r * cols + c], "{rows}x{cols} at ({r}, {c})");
                }
            }
        }
    }
}
