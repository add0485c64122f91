//! The matrix-product kernel behind [`super::matmul`]: packed panels, register tiles, FMA.
//!
//! Every output is `acc = 0; acc = fma(a[i,p], b[p,j], acc)` for `p = 0..k` ascending, then
//! finished (`+ bias`, or `out + acc`). How the work is tiled — the register tile `R×C`, the
//! inner-dimension block `kc`, which rows a thread owns — never changes that sequence: a running
//! sum carried between `kc` blocks is stored and reloaded exactly, zero-padded rows and columns of
//! a tile are computed and discarded, and vector lanes run across output columns only. So every
//! [`Tiling`] at every SIMD level gives the same bits (`tests/simd_levels.rs` forces each one).

use super::fused::{Fma, Hardware256, Hardware512, Software, VectorTile};
use super::matmul::finish;
use super::product::{Accum, Product};
use super::product_times::{self, Shape, Split};
use super::scalar::Scalar;
use super::simd::{self, Level};
use rayon::prelude::*;
use std::cell::RefCell;
use std::thread::LocalKey;
use std::time::Instant;

pub use super::tiling::{TILINGS, Tiling, force_tiling, tiling};

/// Rows per parallel task are a multiple of this (a shape-only partition, independent of tiling).
const ROW_QUANTUM: usize = 24;
/// Target number of parallel tasks per product (enough to balance a few cores).
const TASKS: usize = 8;
/// Minimum multiply-adds per parallel task; below this rayon overhead dominates.
const MIN_WORK_PER_TASK: usize = 1 << 17;

thread_local! {
    static B_PACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static A_PACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static PARTIAL: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static TRANSPOSED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// `f` on a per-thread scratch slice of `len` elements (contents unspecified), reused between
/// calls: multi-megabyte fresh buffers cost more in page faults than the products themselves.
/// The buffer is taken out while in use, so a nested call simply allocates.
fn with_scratch<S: Scalar, R>(
    slot: &'static LocalKey<RefCell<Vec<u64>>>,
    len: usize,
    f: impl FnOnce(&mut [S]) -> R,
) -> R {
    assert!(std::mem::align_of::<S>() <= 8);
    let mut buf = slot.with(|c| c.take());
    let words = (len * std::mem::size_of::<S>()).div_ceil(8);
    if buf.len() < words {
        buf.resize(words, 0);
    }
    // SAFETY: the buffer holds at least `len` S-sized, 8-aligned slots; S is f32 or f64 here
    // (dual numbers take their own path), for which every bit pattern is a valid value.
    let view = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut S, len) };
    let r = f(view);
    slot.with(|c| c.replace(buf));
    r
}

/// Run one product (f32 or f64), timed for `bench --products` when that is on.
pub(crate) fn run<S: Scalar>(p: Product<'_, S>) {
    if p.m == 0 || p.n == 0 {
        return;
    }
    let split = split(&p);
    let shape = Shape { m: p.m, k: p.k, n: p.n, a_trans: p.a_trans, split };
    product_times::timed(shape, || {
        let level = simd::level();
        let t = tiling(level, std::mem::size_of::<S>());
        match split {
            Split::Rows => run_row_blocks(p, level, t),
            Split::Columns => {
                run_column_blocks(p, level, t);
                0.0
            }
            Split::Transposed => run_transposed(p, level, t),
        }
    })
}

/// From the shape only. Weight gradients (`dW = Xᵀ·dY`) with fewer output rows than columns
/// would have every row task stream all of the wide `dY`: over a long batch (`dY` of ≥ 2²¹
/// elements) the tasks split the columns instead, each streaming its own; over a short one the
/// product runs transposed, `dWᵀ = dYᵀ·X`, whose row tasks stream the narrow `X` (small enough
/// for L2). Measured on Intel Xeon: the transposed form is 2 % slower at batch 512 than columns,
/// and takes `dW_in` from 9.2–10.4 to 8.0–8.4 ms per f32/128 step, where columns did not help.
fn split<S>(p: &Product<'_, S>) -> Split {
    let wide_gradient = p.a_trans && p.bias.is_none() && p.m < p.n;
    match (wide_gradient, p.n >= 2 * COL_QUANTUM && p.k * p.n >= 1 << 21) {
        (true, true) => Split::Columns,
        (true, false) => Split::Transposed,
        (false, _) => Split::Rows,
    }
}

/// Pack `b` once, then split the output rows among tasks; returns the seconds spent packing
/// when products are timed.
fn run_row_blocks<S: Scalar>(p: Product<'_, S>, level: Level, t: Tiling) -> f64 {
    let Product { out, a, a_trans, b, bias, m, k, n, accum } = p;
    with_scratch(&B_PACK, n.div_ceil(t.cols) * t.cols * k, |bpack: &mut [S]| {
        let t0 = product_times::on().then(Instant::now);
        pack_b(bpack, b, k, n, 0, n, t.cols);
        let pack_secs = t0.map_or(0.0, |t0| t0.elapsed().as_secs_f64());
        let bpack = &*bpack;
        run_rows(out, m, k, n, |row0, rows, out| {
            run_task(Task { out, a, a_trans, m, row0, rows, bpack, k, n, bias, accum }, level, t)
        });
        pack_secs
    })
}

/// `out (=|+=) aᵀ·b` as `sums = bᵀ·a` into scratch (row tasks), then each `out[i, j]` finished
/// from `sums[j, i]`. The same bits: `fma(x, y, s) = fma(y, x, s)` exactly, so every output's
/// chain over `p` is unchanged.
fn run_transposed<S: Scalar>(p: Product<'_, S>, level: Level, t: Tiling) -> f64 {
    let Product { out, a, b, m, k, n, accum, .. } = p;
    with_scratch(&TRANSPOSED, m * n, |sums: &mut [S]| {
        let q = Product { out: &mut *sums, a: b, a_trans: true, b: a, bias: None, m: n, k, n: m, accum: Accum::Set };
        let pack_secs = run_row_blocks(q, level, t);
        finish_transposed(out, sums, m, n, accum);
        pack_secs
    })
}

/// `out[i, j] = finish(out[i, j], sums[j, i])`, in 16 × 16 tiles (one task: a few hundred KB).
fn finish_transposed<S: Scalar>(out: &mut [S], sums: &[S], m: usize, n: usize, accum: Accum) {
    const TILE: usize = 16;
    for i0 in (0..m).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(m) {
                for j in j0..(j0 + TILE).min(n) {
                    out[i * n + j] = finish(out[i * n + j], sums[j * m + i], None, accum);
                }
            }
        }
    }
}

/// Columns per column task are a multiple of this (every tiling's width divides it).
const COL_QUANTUM: usize = 32;
/// Column tasks per product (each re-reads all of `a`, the smaller operand).
const COL_TASKS: usize = 4;

/// Column tasks compute their `m × w` block into their own buffer (`Accum::Set`, no bias), then
/// each block is finished into `out` — the same `finish` of the same sums as a row task.
fn run_column_blocks<S: Scalar>(p: Product<'_, S>, level: Level, t: Tiling) {
    let Product { out, a, a_trans, b, bias, m, k, n, accum } = p;
    let w = n.div_ceil(COL_TASKS).next_multiple_of(COL_QUANTUM);
    let blocks: Vec<(usize, usize)> = (0..n).step_by(w).map(|j0| (j0, w.min(n - j0))).collect();
    let sums: Vec<Vec<S>> = blocks
        .par_iter()
        .map(|&(j0, wd)| {
            let mut block = vec![S::zero(); m * wd];
            with_scratch(&B_PACK, wd.div_ceil(t.cols) * t.cols * k, |bpack: &mut [S]| {
                pack_b(bpack, b, k, n, j0, wd, t.cols);
                let (row0, rows, bias, accum) = (0, m, None, Accum::Set);
                run_task(Task { out: &mut block, a, a_trans, m, row0, rows, bpack, k, n: wd, bias, accum }, level, t);
            });
            block
        })
        .collect();
    for (&(j0, wd), block) in blocks.iter().zip(&sums) {
        for (orow, brow) in out.chunks_exact_mut(n).zip(block.chunks_exact(wd)) {
            for (j, (o, &acc)) in orow[j0..j0 + wd].iter_mut().zip(brow).enumerate() {
                *o = finish(*o, acc, bias.map(|bb| bb[j0 + j]), accum);
            }
        }
    }
}

/// One task on this thread: its scratch, then the level's compiled copy.
fn run_task<S: Scalar>(task: Task<'_, S>, level: Level, t: Tiling) {
    let (nip, njp) = (task.rows.div_ceil(t.rows), task.n.div_ceil(t.cols));
    let carried = if task.k > t.kc(std::mem::size_of::<S>()) { nip * njp * t.rows * t.cols } else { 0 };
    with_scratch(&PARTIAL, carried, |partial: &mut [S]| match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx512 when the CPU reports it (with fma).
        Level::Avx512 => unsafe { task_avx512(task, partial, t) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` only returns Avx2 when the CPU reports avx2 and fma.
        Level::Avx2 => unsafe { task_avx2(task, partial, t) },
        _ => by_tiling::<S, Software>(task, partial, t),
    })
}

/// Split the output rows into fixed blocks (a function of the shape only) and run `f` on each,
/// in parallel when the work is large enough. Each block is owned by exactly one task.
fn run_rows<S: Scalar>(out: &mut [S], m: usize, k: usize, n: usize, f: impl Fn(usize, usize, &mut [S]) + Sync + Send) {
    let work_per_row = k.max(1) * n;
    let rows_per_task =
        MIN_WORK_PER_TASK.div_ceil(work_per_row).max(m.div_ceil(TASKS)).next_multiple_of(ROW_QUANTUM).min(m);
    if rows_per_task >= m {
        return f(0, m, out);
    }
    out.par_chunks_mut(rows_per_task * n)
        .enumerate()
        .for_each(|(t, chunk)| f(t * rows_per_task, chunk.len() / n, chunk));
}

/// `bpack[jp][p][c] = b[p, j0 + jp·C + c]` (zero past the block's `width` columns): each `C`-wide column panel of `b`
/// contiguous, so the tile streams it without cache-set conflicts.
fn pack_b<S: Scalar>(bpack: &mut [S], b: &[S], k: usize, n: usize, j0: usize, width: usize, c: usize) {
    // Groups of whole panels in parallel (a copy: each element written by one task). Within a
    // group, row `p`'s slice of `b` is read once, contiguously, and dealt out to the panels
    // (reading down one column panel at a time would miss the cache at every row).
    let panel_len = k * c;
    let panels = width.div_ceil(c);
    let per_group = panels.div_ceil(PACK_GROUPS).max(1);
    bpack[..panels * panel_len].par_chunks_mut(per_group * panel_len).enumerate().for_each(|(g, group)| {
        let (c0, c1) = (g * per_group * c, ((g + 1) * per_group * c).min(width));
        let rows = (0..k).map(|p| &b[p * n + j0 + c0..p * n + j0 + c1]);
        match c {
            8 => deal_rows::<S, 8>(group, rows, k),
            16 => deal_rows::<S, 16>(group, rows, k),
            32 => deal_rows::<S, 32>(group, rows, k),
            _ => unreachable!("panel width {c} is not a tiling's"),
        }
    });
}

/// Deal each row (in `p` order) out to the `C`-wide panels: panel `jp` gets columns
/// `jp·C .. jp·C + C` of every row at `jp·k·C + p·C`, zero past the row's end. Whole panels are
/// fixed-size copies (inline vector moves, not a `memmove` call per 32–128 bytes).
#[inline(always)]
fn deal_rows<'a, S: Scalar, const C: usize>(group: &mut [S], rows: impl Iterator<Item = &'a [S]>, k: usize) {
    let panel_len = k * C;
    for (p, row) in rows.enumerate() {
        let (full, tail) = row.split_at(row.len() / C * C);
        for (jp, chunk) in full.chunks_exact(C).enumerate() {
            let dst: &mut [S; C] = (&mut group[jp * panel_len + p * C..][..C]).try_into().unwrap();
            *dst = chunk.try_into().unwrap();
        }
        if !tail.is_empty() {
            let dst = &mut group[full.len() / C * panel_len + p * C..][..C];
            dst[..tail.len()].copy_from_slice(tail);
            dst[tail.len()..].fill(S::zero());
        }
    }
}

/// A transposed `a` (`Xᵀ` of the weight gradients) read in place puts each step `p` of a panel
/// one stored row further on; at a stride of 2 KiB or more those rows fall into so few L1 sets
/// that a `kc`-deep panel cannot stay in L1 (measured on Intel Xeon, batch 128, in the step:
/// `dW_out` 8.5–9.0 → 7.4–7.5 ms/step f32, 19.5 → 16.6–17.2 f64 when packed; at 0.5–1 KiB packing
/// was as fast or 3–7 % slower). Speed only: the tile reads the same values in the same order.
const PACK_A_STRIDE_BYTES: usize = 2048;

/// Parallel groups of panels when packing `b`.
const PACK_GROUPS: usize = 4;

/// One task's rows of one product.
struct Task<'a, S> {
    out: &'a mut [S],
    a: &'a [S],
    a_trans: bool,
    m: usize,
    row0: usize,
    rows: usize,
    bpack: &'a [S],
    k: usize,
    n: usize,
    bias: Option<&'a [S]>,
    accum: Accum,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
unsafe fn task_avx512<S: Scalar>(task: Task<'_, S>, partial: &mut [S], t: Tiling) {
    by_tiling::<S, Hardware512>(task, partial, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn task_avx2<S: Scalar>(task: Task<'_, S>, partial: &mut [S], t: Tiling) {
    by_tiling::<S, Hardware256>(task, partial, t)
}

#[inline(always)]
fn by_tiling<S: Scalar, F: Fma>(task: Task<'_, S>, partial: &mut [S], t: Tiling) {
    match (t.rows, t.cols) {
        (4, 8) => tiles::<S, F, 4, 8>(task, partial),
        (6, 8) => tiles::<S, F, 6, 8>(task, partial),
        (6, 16) => tiles::<S, F, 6, 16>(task, partial),
        (8, 16) => tiles::<S, F, 8, 16>(task, partial),
        (8, 32) => tiles::<S, F, 8, 32>(task, partial),
        (12, 16) => tiles::<S, F, 12, 16>(task, partial),
        (12, 32) => tiles::<S, F, 12, 32>(task, partial),
        _ => unreachable!("tiling {t:?} is not in TILINGS"),
    }
}

/// The task's rows in `R`-row micro-panels of `a` × `C`-wide panels of `b`, the inner
/// dimension in blocks of `kc` (column panels inside, so one `kc × C` block of `b` serves every
/// row tile while it is in L1).
#[inline(always)]
fn tiles<S: Scalar, F: Fma, const R: usize, const C: usize>(t: Task<'_, S>, partial: &mut [S]) {
    let (nip, njp, k) = (t.rows.div_ceil(R), t.n.div_ceil(C), t.k);
    let kc = Tiling { rows: R, cols: C }.kc(std::mem::size_of::<S>());
    let Task { out, a, a_trans, m, row0, rows, bpack, n, bias, accum, .. } = t;
    let mut sink = Sink { out, rows, n, bias, accum };
    // The vector tiles broadcast each `a[r, p]` from memory, so they read whole panels of `a` in
    // place; only a ragged last panel (and every panel at the scalar level) is packed, zero-padded.
    // A transposed `a` with a long stored row is packed too: see PACK_A_STRIDE_BYTES.
    let in_place = F::TILE != VectorTile::Auto && !(a_trans && m * size_of::<S>() >= PACK_A_STRIDE_BYTES);
    let direct = if in_place { rows / R } else { 0 };
    let packed = rows - direct * R;
    with_scratch(&A_PACK, packed.div_ceil(R) * R * k, |apack: &mut [S]| {
        pack_a::<S, R>(apack, a, a_trans, m, row0 + direct * R, packed, k);
        let mut k0 = 0;
        while k0 < k.max(1) {
            let kl = kc.min(k - k0);
            let (first, last) = (k0 == 0, k0 + kl >= k);
            for jp in 0..njp {
                let bp = &bpack[jp * C * k + k0 * C..][..kl * C];
                for ip in 0..nip {
                    let ap = match (ip < direct, a_trans) {
                        (true, true) => APanel { data: &a[k0 * m + row0 + ip * R..], rs: 1, ps: m },
                        (true, false) => APanel { data: &a[(row0 + ip * R) * k + k0..], rs: k, ps: 1 },
                        _ => APanel { data: &apack[(ip - direct) * R * k + k0 * R..][..kl * R], rs: 1, ps: R },
                    };
                    let carried = &mut partial
                        [if first && last { 0..0 } else { (jp * nip + ip) * R * C..(jp * nip + ip + 1) * R * C }];
                    let acc = tile::<S, F, R, C>(if first { None } else { Some(carried) }, ap, bp);
                    if last {
                        store::<S, R, C>(&mut sink, &acc, ip * R, jp * C);
                    } else {
                        for (row, dst) in acc.iter().zip(carried.chunks_exact_mut(C)) {
                            let dst: &mut [S; C] = dst.try_into().unwrap();
                            *dst = *row;
                        }
                    }
                }
            }
            k0 += kl.max(1);
        }
    });
}

/// Where a register tile reads `a[r, p]` (`r` of its `R` rows, `p` from the `kc` block's start):
/// `data[r·rs + p·ps]` — a packed panel (`rs` 1, `ps` R) or `a` in place (row-major: `rs` k,
/// `ps` 1; stored transposed: `rs` 1, `ps` m).
#[derive(Clone, Copy)]
pub struct APanel<'a, S> {
    pub data: &'a [S],
    pub rs: usize,
    pub ps: usize,
}

/// `apack[ip][p][r] = a[row0 + ip·R + r, p]` (zero past the task's rows).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pack_a<S: Scalar, const R: usize>(
    apack: &mut [S],
    a: &[S],
    a_trans: bool,
    m: usize,
    row0: usize,
    rows: usize,
    k: usize,
) {
    let panels = rows.div_ceil(R);
    if a_trans {
        // Column-major rows: row `p` of the stored `a` holds the task's `rows` values contiguously;
        // read it once and deal it out to the panels (one panel at a time would revisit every line).
        let apack = &mut apack[..panels * R * k];
        for p in 0..k {
            let src = &a[p * m + row0..][..rows];
            for (ip, chunk) in src.chunks(R).enumerate() {
                let dst = &mut apack[ip * R * k + p * R..][..R];
                match <&[S; R]>::try_from(chunk) {
                    Ok(full) => *<&mut [S; R]>::try_from(dst).unwrap() = *full,
                    Err(_) => {
                        dst[..chunk.len()].copy_from_slice(chunk);
                        dst[chunk.len()..].fill(S::zero());
                    }
                }
            }
        }
        return;
    }
    for (ip, panel) in apack.chunks_exact_mut(R * k.max(1)).enumerate().take(panels) {
        let first = row0 + ip * R;
        let valid = R.min(rows - ip * R);
        // Row-major rows: R rows read side by side, contiguously, one R-wide group per `p`.
        let src: [&[S]; R] = std::array::from_fn(|r| if r < valid { &a[(first + r) * k..][..k] } else { &[] });
        if valid == R {
            for (p, dst) in panel.chunks_exact_mut(R).enumerate() {
                let dst: &mut [S; R] = dst.try_into().unwrap();
                *dst = std::array::from_fn(|r| src[r][p]);
            }
        } else {
            for (p, dst) in panel.chunks_exact_mut(R).enumerate() {
                for (d, row) in dst.iter_mut().zip(&src) {
                    *d = row.get(p).copied().unwrap_or(S::zero());
                }
            }
        }
    }
}

/// The register tile: `acc[r][c] = fma(a[r,p], b[p,c], acc[r][c])` for the packed `p` in order,
/// starting from zero or from the sums `carried` from the previous `kc` block. Fixed-size arrays
/// let the compiler keep `acc` in vector registers and vectorise over `c` only.
#[inline(always)]
fn tile<S: Scalar, F: Fma, const R: usize, const C: usize>(
    carried: Option<&[S]>,
    a: APanel<'_, S>,
    bp: &[S],
) -> [[S; C]; R] {
    let mut acc = [[S::zero(); C]; R];
    if let Some(src) = carried {
        for (r, row) in src.chunks_exact(C).take(R).enumerate() {
            let row: &[S; C] = row.try_into().unwrap();
            acc[r] = *row;
        }
    }
    // SAFETY: `Hardware512` and `Hardware256` are selected only in `task_avx512` and `task_avx2`,
    // run on CPUs with those features.
    if F::TILE != VectorTile::Auto && unsafe { S::vector_tile::<F, R, C>(&mut acc, a, bp) } {
        return acc;
    }
    // Only the vector tiles read `a` in place (`tiles`); they exist for f32 and f64 at every width.
    assert!(a.rs == 1 && a.ps == R, "a packed panel");
    for (x, y) in a.data.chunks_exact(R).zip(bp.chunks_exact(C)) {
        let x: &[S; R] = x.try_into().unwrap();
        let y: &[S; C] = y.try_into().unwrap();
        for r in 0..R {
            for c in 0..C {
                acc[r][c] = S::fma::<F>(x[r], y[c], acc[r][c]);
            }
        }
    }
    acc
}

/// Where a finished tile goes: the task's rows of the output, with the bias or accumulation.
struct Sink<'a, S> {
    out: &'a mut [S],
    rows: usize,
    n: usize,
    bias: Option<&'a [S]>,
    accum: Accum,
}

/// Finish the tile's in-range outputs (`i`, `j`: the tile's origin in the task's rows).
#[inline(always)]
fn store<S: Scalar, const R: usize, const C: usize>(s: &mut Sink<'_, S>, acc: &[[S; C]; R], i: usize, j: usize) {
    let (rows, cols) = (R.min(s.rows - i), C.min(s.n - j));
    for (r, acc_r) in acc.iter().enumerate().take(rows) {
        let orow = &mut s.out[(i + r) * s.n + j..][..cols];
        let bias = s.bias.map(|bb| &bb[j..j + cols]);
        match <&mut [S; C]>::try_from(&mut *orow) {
            // Full-width tiles: a fixed trip count, so the finish vectorises.
            Ok(full) => finish_row(full, acc_r, bias, s.accum),
            Err(_) => finish_row(orow, acc_r, bias, s.accum),
        }
    }
}

/// `out[c] = finish(out[c], acc[c], bias[c])` over `out.len()` columns.
#[inline(always)]
fn finish_row<S: Scalar>(out: &mut [S], acc: &[S], bias: Option<&[S]>, accum: Accum) {
    match (accum, bias) {
        (Accum::Set, None) => out.iter_mut().zip(acc).for_each(|(o, &a)| *o = a),
        (Accum::Set, Some(b)) => {
            out.iter_mut().zip(acc).zip(b).for_each(|((o, &a), &b)| *o = finish(*o, a, Some(b), accum))
        }
        (Accum::Add, _) => out.iter_mut().zip(acc).for_each(|(o, &a)| *o = finish(*o, a, None, accum)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_weight_gradients_split_by_columns_when_long_else_run_transposed() {
        let (a, b, mut out) = (vec![0.0f32; 1], vec![0.0f32; 1], vec![0.0f32; 1]);
        let mut p = |a_trans, m, k, n| {
            split(&Product { out: &mut out, a: &a, a_trans, b: &b, bias: None, m, k, n, accum: Accum::Add })
        };
        assert_eq!(p(true, 128, 7680, 512), Split::Columns, "dW_in at batch 512");
        assert_eq!(p(true, 128, 1920, 512), Split::Transposed, "dW_in at batch 128");
        assert_eq!(p(true, 128, 1920, 384), Split::Transposed, "dW_qkv at batch 128");
        assert_eq!(p(true, 128, 1920, 128), Split::Rows, "dW_O: square");
        assert_eq!(p(true, 512, 7680, 128), Split::Rows, "dW_out: more rows than columns");
        assert_eq!(p(false, 128, 7680, 512), Split::Rows, "forward layout");
    }
}
