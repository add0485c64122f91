//! Fixed-order matrix products (anchors §4.4).
//!
//! Every output element is `acc = 0; for p in 0..k { acc = acc + a[i,p]*b[p,j] }`, then either
//! `out = acc (+ bias[j])` or `out = out + acc`. The sum over `p` is never split, reordered or
//! fused, so the result is the same bit pattern whatever the tile shape, SIMD width or thread
//! count: vector lanes only ever run across independent output columns `j`.
//!
//! Two layouts cover a transformer:
//! - [`matmul_nn`]: `out[m,n] = a[m,k] · b[k,n]` (forward `X·W` with TL's `[in, out]` storage, and
//!   `dX = dY·Wᵀ` once `W` is transposed into scratch with [`transpose`]).
//! - [`matmul_tn`]: `out[m,n] = a[k,m]ᵀ · b[k,n]` (weight gradients `dW = Xᵀ·dY`, summed over the
//!   batch rows in order).

use super::scalar::Scalar;
use rayon::prelude::*;

/// What to do with the existing contents of the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accum {
    /// `out = acc (+ bias)`.
    Set,
    /// `out = out + acc` (gradient accumulation, llm.c style).
    Add,
}

/// Rows per parallel task are a multiple of this (the lcm of every level's tile height), so the
/// partition depends on the shape only, never on the SIMD level or thread count.
const ROW_QUANTUM: usize = 12;
/// Target number of parallel tasks per product (enough to balance a few cores).
const TASKS: usize = 8;
/// Minimum multiply-adds per parallel task; below this rayon overhead dominates.
const MIN_WORK_PER_TASK: usize = 1 << 17;

/// How `a` is addressed: element `(r, p)` lives at `r*rs + p*cs`.
#[derive(Clone, Copy)]
struct AView {
    rs: usize,
    cs: usize,
}

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
    if let Some((o, a, b, bias)) = as_dual4(out, a, b, bias) {
        return super::dual::products::nn(o, a, b, bias, m, k, n, accum);
    }
    let view = AView { rs: k, cs: 1 };
    run_rows(out, m, k, n, |row0, rows, chunk| {
        let a_blk = &a[row0 * k..(row0 + rows) * k];
        block(Blk { out: chunk, a: a_blk, av: view, b, bias, rows, k, n, accum });
    });
}

/// `out[m,n] (=|+=) a[k,m]ᵀ · b[k,n]`: the weight-gradient layout. The sum runs over the `k`
/// rows of `a` and `b` (batch positions) in ascending order.
pub fn matmul_tn<S: Scalar>(out: &mut [S], a: &[S], b: &[S], m: usize, k: usize, n: usize, accum: Accum) {
    assert_eq!(a.len(), k * m, "matmul_tn: a is not [k,m]");
    assert_eq!(b.len(), k * n, "matmul_tn: b is not [k,n]");
    check_out_bias(out, None, m, n, accum);
    if let Some((o, a, b, _)) = as_dual4(out, a, b, None) {
        return super::dual::products::tn(o, a, b, m, k, n, accum);
    }
    let view = AView { rs: 1, cs: m };
    run_rows(out, m, k, n, |row0, rows, chunk| {
        // Column `row0` of `a` onwards; AView strides address the rest.
        let a_blk = &a[row0..];
        block(Blk { out: chunk, a: a_blk, av: view, b, bias: None, rows, k, n, accum });
    });
}

/// The slices as dual numbers when `S` is [`Dual`](super::dual::Dual), whose products go through
/// three f64 products (see `dual::products`).
#[allow(clippy::type_complexity)]
fn as_dual4<'a, S: Scalar>(
    out: &'a mut [S],
    a: &'a [S],
    b: &'a [S],
    bias: Option<&'a [S]>,
) -> Option<(
    &'a mut [super::dual::Dual],
    &'a [super::dual::Dual],
    &'a [super::dual::Dual],
    Option<&'a [super::dual::Dual]>,
)> {
    use super::dual::Dual;
    if std::any::TypeId::of::<S>() != std::any::TypeId::of::<Dual>() {
        return None;
    }
    // SAFETY: S is Dual (checked above), so the slices have Dual's layout.
    unsafe {
        Some((
            &mut *(out as *mut [S] as *mut [Dual]),
            &*(a as *const [S] as *const [Dual]),
            &*(b as *const [S] as *const [Dual]),
            bias.map(|bb| &*(bb as *const [S] as *const [Dual])),
        ))
    }
}

/// `dst[cols, rows] = src[rows, cols]ᵀ` (a copy; no arithmetic).
pub fn transpose<S: Scalar>(dst: &mut [S], src: &[S], rows: usize, cols: usize) {
    assert_eq!(src.len(), rows * cols);
    assert_eq!(dst.len(), rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            dst[c * rows + r] = src[r * cols + c];
        }
    }
}

/// `db[n] += Σ_p dy[p, n]`, summed over rows `p` in ascending order (bias gradients).
pub fn sum_rows_into<S: Scalar>(db: &mut [S], dy: &[S], rows: usize, n: usize) {
    assert_eq!(db.len(), n);
    assert_eq!(dy.len(), rows * n);
    let mut acc = vec![S::zero(); n];
    for p in 0..rows {
        let row = &dy[p * n..(p + 1) * n];
        for (s, &v) in acc.iter_mut().zip(row) {
            *s += v;
        }
    }
    for (d, s) in db.iter_mut().zip(acc) {
        *d += s;
    }
}

/// The plain triple loop with the documented summation order; the reference every kernel must
/// match bit for bit (tests and proptests).
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
                acc += a_at(i, p) * b[p * n + j];
            }
            out[i * n + j] = finish(out[i * n + j], acc, bias.map(|bb| bb[j]), accum);
        }
    }
}

#[inline(always)]
fn finish<S: Scalar>(old: S, acc: S, bias: Option<S>, accum: Accum) -> S {
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

/// Split the output rows into fixed blocks (a function of the shape only) and run `f` on each,
/// in parallel when the work is large enough. Each block is owned by exactly one task.
fn run_rows<S: Scalar>(out: &mut [S], m: usize, k: usize, n: usize, f: impl Fn(usize, usize, &mut [S]) + Sync + Send) {
    if m == 0 || n == 0 {
        return;
    }
    let work_per_row = k.max(1) * n;
    // Enough work per task to amortise scheduling, and no more than TASKS tasks, so each task
    // reuses the panels of `b` over many rows; both from the shape only.
    let rows_per_task =
        MIN_WORK_PER_TASK.div_ceil(work_per_row).max(m.div_ceil(TASKS)).next_multiple_of(ROW_QUANTUM).min(m);
    if rows_per_task >= m {
        f(0, m, out);
        return;
    }
    out.par_chunks_mut(rows_per_task * n).enumerate().for_each(|(t, chunk)| {
        let row0 = t * rows_per_task;
        f(row0, chunk.len() / n, chunk)
    });
}

/// Arguments of one block of output rows.
struct Blk<'a, S> {
    out: &'a mut [S],
    a: &'a [S],
    av: AView,
    b: &'a [S],
    bias: Option<&'a [S]>,
    rows: usize,
    k: usize,
    n: usize,
    accum: Accum,
}

/// One block of output rows, dispatched to the widest SIMD copy of the same generic code. Tile
/// shapes are chosen per level, layout and element size (measured, docs/PERFORMANCE.md); they
/// never change the arithmetic.
fn block<S: Scalar>(blk: Blk<'_, S>) {
    use super::simd::Level;
    let wide = std::mem::size_of::<S>();
    let tn = blk.av.rs == 1;
    match super::simd::level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx512 when the CPU reports avx512f.
        Level::Avx512 if tn && blk.n > 128 => unsafe { block_avx512_tn(blk, wide) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Level::Avx512 => unsafe { block_avx512_nn(blk, wide) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx2 when the CPU reports avx2.
        Level::Avx2 => unsafe { block_avx2(blk, wide) },
        _ => block_baseline(blk, wide),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn block_avx512_nn<S: Scalar>(blk: Blk<'_, S>, wide: usize) {
    match wide {
        4 => block_tiles::<S, NN_R, NN_C>(blk),
        8 => block_tiles::<S, D_NN_R, D_NN_C>(blk),
        _ => block_tiles::<S, 4, 8>(blk),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn block_avx512_tn<S: Scalar>(blk: Blk<'_, S>, wide: usize) {
    match wide {
        4 => block_tiles::<S, TN_R, TN_C>(blk),
        8 => block_tiles::<S, D_TN_R, D_TN_C>(blk),
        _ => block_tiles::<S, 4, 8>(blk),
    }
}

const NN_R: usize = 12;
const NN_C: usize = 16;
const TN_R: usize = 6;
const TN_C: usize = 32;
const D_NN_R: usize = 12;
const D_NN_C: usize = 8;
const D_TN_R: usize = 4;
const D_TN_C: usize = 32;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2<S: Scalar>(blk: Blk<'_, S>, wide: usize) {
    match wide {
        4 => block_tiles::<S, 6, 16>(blk),
        8 => block_tiles::<S, 6, 8>(blk),
        _ => block_tiles::<S, 4, 4>(blk),
    }
}

fn block_baseline<S: Scalar>(blk: Blk<'_, S>, wide: usize) {
    match wide {
        4 => block_tiles::<S, 4, 8>(blk),
        8 => block_tiles::<S, 4, 4>(blk),
        _ => block_tiles::<S, 2, 4>(blk),
    }
}

/// Where a tile's sum goes: into the output (with bias / accumulate), or into a partial-sum
/// buffer to be continued by the next k-block.
#[derive(Clone, Copy)]
enum Sink<'a, S> {
    Finish {
        bias: Option<&'a [S]>,
        accum: Accum,
    },
    /// `first`: start from zero; otherwise continue the sum stored in the buffer.
    Partial {
        first: bool,
    },
}

/// Inner-dimension block (in elements) beyond which the sum is carried through a partial-sum
/// buffer: the same additions in the same order (a stored f32/f64 reloads exactly), with a
/// `KC × C` panel of `b` small enough to stay in L1 across the row tiles.
const KC_BYTES: usize = 1024;

/// Cover the block with R×C tiles: column panels outermost (so a `k×C` panel of `b` stays in
/// cache while every row tile uses it), then narrower panels and single rows at the edges. Long
/// inner dimensions are processed in blocks of `KC` with the running sums carried in `part`.
#[inline(always)]
fn block_tiles<S: Scalar, const R: usize, const C: usize>(blk: Blk<'_, S>) {
    let Blk { out, a, av, b, bias, rows, k, n, accum } = blk;
    let kc = (KC_BYTES / std::mem::size_of::<S>()).max(16);
    if k <= kc {
        panels::<S, R, C>(out, a, av, b, rows, k, n, Sink::Finish { bias, accum });
        return;
    }
    let mut part = vec![S::zero(); rows * n];
    let mut k0 = 0;
    while k0 < k {
        let kl = kc.min(k - k0);
        panels::<S, R, C>(&mut part, &a[k0 * av.cs..], av, &b[k0 * n..], rows, kl, n, Sink::Partial { first: k0 == 0 });
        k0 += kl;
    }
    for (r, (orow, prow)) in out[..rows * n].chunks_exact_mut(n).zip(part.chunks_exact(n)).enumerate() {
        let _ = r;
        for j in 0..n {
            orow[j] = finish(orow[j], prow[j], bias.map(|bb| bb[j]), accum);
        }
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn panels<S: Scalar, const R: usize, const C: usize>(
    dst: &mut [S],
    a: &[S],
    av: AView,
    b: &[S],
    rows: usize,
    k: usize,
    n: usize,
    sink: Sink<'_, S>,
) {
    let mut j = 0;
    while j + C <= n {
        rows_of_panel::<S, R, C>(dst, a, av, b, rows, k, n, j, sink);
        j += C;
    }
    while j + 4 <= n {
        rows_of_panel::<S, R, 4>(dst, a, av, b, rows, k, n, j, sink);
        j += 4;
    }
    while j < n {
        rows_of_panel::<S, R, 1>(dst, a, av, b, rows, k, n, j, sink);
        j += 1;
    }
}

/// All rows of the block against one `C`-wide column panel starting at `j`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn rows_of_panel<S: Scalar, const R: usize, const C: usize>(
    dst: &mut [S],
    a: &[S],
    av: AView,
    b: &[S],
    rows: usize,
    k: usize,
    n: usize,
    j: usize,
    sink: Sink<'_, S>,
) {
    assert!(j + C <= n && b.len() >= k * n && dst.len() >= rows * n);
    if rows > 0 {
        assert!(a.len() > (rows - 1) * av.rs + k.saturating_sub(1) * av.cs);
    }
    let mut i = 0;
    while i + R <= rows {
        one_tile::<S, R, C>(dst, a, av, b, i, j, k, n, sink);
        i += R;
    }
    while i < rows {
        one_tile::<S, 1, C>(dst, a, av, b, i, j, k, n, sink);
        i += 1;
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn one_tile<S: Scalar, const R: usize, const C: usize>(
    dst: &mut [S],
    a: &[S],
    av: AView,
    b: &[S],
    i: usize,
    j: usize,
    k: usize,
    n: usize,
    sink: Sink<'_, S>,
) {
    let mut acc = [[S::zero(); C]; R];
    if let Sink::Partial { first: false } = sink {
        for (r, acc_r) in acc.iter_mut().enumerate() {
            acc_r.copy_from_slice(&dst[(i + r) * n + j..(i + r) * n + j + C]);
        }
    }
    // SAFETY: rows_of_panel's asserts bound every index the tile touches.
    unsafe { tile::<S, R, C>(&mut acc, a.as_ptr().add(i * av.rs), av, b.as_ptr().add(j), k, n) };
    match sink {
        Sink::Finish { bias, accum } => store::<S, R, C>(dst, &acc, bias, i, j, n, accum),
        Sink::Partial { .. } => {
            for (r, acc_r) in acc.iter().enumerate() {
                dst[(i + r) * n + j..(i + r) * n + j + C].copy_from_slice(acc_r);
            }
        }
    }
}

/// The register tile: `acc[r][c] += a[r,p]·b[p,c]` for `p = 0..k` in order, `a` addressed by
/// `av`, `b` rows `n` apart. Fixed-size arrays let the compiler keep `acc` in vector registers
/// and vectorise over `c` only.
///
/// # Safety
/// `a.add(r*av.rs + p*av.cs)` for r < R, p < k and `b.add(p*n + c)` for c < C must be in bounds.
#[inline(always)]
unsafe fn tile<S: Scalar, const R: usize, const C: usize>(
    acc: &mut [[S; C]; R],
    a: *const S,
    av: AView,
    b: *const S,
    k: usize,
    n: usize,
) {
    let mut regs = *acc;
    for p in 0..k {
        // SAFETY: guaranteed by the caller.
        let brow: [S; C] = unsafe { std::ptr::read_unaligned(b.add(p * n) as *const [S; C]) };
        for (r, acc_r) in regs.iter_mut().enumerate() {
            let x = unsafe { *a.add(r * av.rs + p * av.cs) };
            for c in 0..C {
                acc_r[c] += x * brow[c];
            }
        }
    }
    *acc = regs;
}

#[inline(always)]
fn store<S: Scalar, const R: usize, const C: usize>(
    out: &mut [S],
    acc: &[[S; C]; R],
    bias: Option<&[S]>,
    i: usize,
    j: usize,
    n: usize,
    accum: Accum,
) {
    for (r, acc_r) in acc.iter().enumerate() {
        let orow = &mut out[(i + r) * n + j..(i + r) * n + j + C];
        for c in 0..C {
            orow[c] = finish(orow[c], acc_r[c], bias.map(|bb| bb[j + c]), accum);
        }
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
}
