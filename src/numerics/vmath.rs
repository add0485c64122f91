//! Branch-free transcriptions of the `libm` crate's `expf` and `erff` (0.2.16; FreeBSD/fdlibm
//! algorithms), so that loops over them vectorise.
//!
//! Each lane evaluates every branch of the original with the *same IEEE operations in the same
//! order* and then selects, so the result is bit-identical to `libm::expf` / `libm::erff` —
//! checked over every one of the 2³² f32 inputs (`tests/vmath_exhaustive.rs`; CI checks a
//! stride of them and all special ranges). This keeps the rule "every transcendental equals the
//! libm crate's" while letting GELU run at SIMD width.

// Constants as exact bit patterns from libm 0.2.16's expf.rs / erff.rs.
const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
const LN2_LO: f32 = f32::from_bits(0x35bf_be8e);
const INV_LN2: f32 = f32::from_bits(0x3fb8_aa3b);
const P1: f32 = f32::from_bits(0x3e2a_aa8f); // 0xaaaa8f.0p-26
const P2: f32 = f32::from_bits(0xbb35_5215); // -0xb55215.0p-32

#[inline(always)]
fn sel(c: bool, a: f32, b: f32) -> f32 {
    if c { a } else { b }
}

/// `t as i32` for |t| < 2²², as `libm` computes `k`; other lanes (|x| beyond expf's overflow and
/// underflow thresholds, NaN) get some value in [−256, 256], and their result is selected away.
/// Rust's saturating `as i32` does not vectorise (LLVM emits eight scalar conversions with NaN
/// and range fix-ups); truncating in f32 and reading the integer out of `trunc + 1.5·2²³` does.
#[inline(always)]
fn trunc_to_i32(t: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2²³: adding it puts an integer of |i| < 2²² in the low mantissa bits
    #[allow(clippy::manual_clamp)] // `clamp` keeps NaN; `max` maps it to −256, so `k` stays small
    let clamped = t.trunc().max(-256.0).min(256.0);
    ((clamped + MAGIC).to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32)
}

#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// `libm::expf`, branch-free.
#[inline(always)]
pub fn expf(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = (bits >> 31) as i32;
    let hx = bits & 0x7fff_ffff;
    // Argument reduction: k·ln2 split in hi and lo parts (k = 0 leaves x unchanged).
    let half = sel(sign != 0, -0.5, 0.5);
    let k_far = trunc_to_i32(INV_LN2 * x + half);
    let k_near = 1 - sign - sign;
    let k = if hx > 0x3f85_1592 {
        k_far
    } else if hx > 0x3eb1_7218 {
        k_near
    } else {
        0
    };
    let kf = k as f32;
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let xr = hi - lo;
    let xx = xr * xr;
    let c = xr - xx * (P1 + xx * P2);
    let y = 1.0 + (xr * c / (2.0 - c) - lo + hi);
    // scalbnf(y, k) for k ∈ [−150, 128]: at most one prescaling multiply.
    let (pre, n) = if k > 127 {
        (pow2(127), k - 127)
    } else if k < -126 {
        (pow2(-126) * pow2(24), k + 102)
    } else {
        (1.0, k)
    };
    let scaled = (y * pre) * pow2(n);
    let normal = sel(k == 0, y, scaled);
    // Special ranges, in the original's order of tests.
    let tiny = 1.0 + x;
    let r = sel(hx > 0x3900_0000, normal, tiny);
    let r = sel(sign != 0 && hx >= 0x42cf_f1b5, 0.0, r);
    let r = sel(sign == 0 && hx >= 0x42b1_7218, x * pow2(127), r);
    sel(hx > 0x7f80_0000, x, r)
}

const ERX: f32 = f32::from_bits(0x3f58_560b);
const EFX8: f32 = f32::from_bits(0x3f83_75d4);
const PP: [f32; 5] = [
    f32::from_bits(0x3e03_75d4),
    f32::from_bits(0xbea6_6beb),
    f32::from_bits(0xbce9_528f),
    f32::from_bits(0xbbbd_1489),
    f32::from_bits(0xb7c7_56b1),
];
const QQ: [f32; 5] = [
    f32::from_bits(0x3ecb_bbce),
    f32::from_bits(0x3d85_2a63),
    f32::from_bits(0x3ba6_8116),
    f32::from_bits(0x390a_ee49),
    f32::from_bits(0xb684_e21a),
];
const PA: [f32; 7] = [
    f32::from_bits(0xbb1a_cdc6),
    f32::from_bits(0x3ed4_6805),
    f32::from_bits(0xbebe_9208),
    f32::from_bits(0x3ea2_fe54),
    f32::from_bits(0xbde3_1cc2),
    f32::from_bits(0x3d11_51b3),
    f32::from_bits(0xbb0d_f9c0),
];
const QA: [f32; 6] = [
    f32::from_bits(0x3dd9_f331),
    f32::from_bits(0x3f0a_5785),
    f32::from_bits(0x3d93_1ae7),
    f32::from_bits(0x3e01_3307),
    f32::from_bits(0x3c5f_6e13),
    f32::from_bits(0x3c44_5aa3),
];
const RA: [f32; 8] = [
    f32::from_bits(0xbc21_a093),
    f32::from_bits(0xbf31_a0b7),
    f32::from_bits(0xc128_f022),
    f32::from_bits(0xc279_8057),
    f32::from_bits(0xc322_658c),
    f32::from_bits(0xc338_9ae7),
    f32::from_bits(0xc2a2_932b),
    f32::from_bits(0xc11d_077e),
];
const SA: [f32; 8] = [
    f32::from_bits(0x419d_35ce),
    f32::from_bits(0x4309_a863),
    f32::from_bits(0x43d9_486f),
    f32::from_bits(0x4421_58c9),
    f32::from_bits(0x43d6_810b),
    f32::from_bits(0x42d9_451f),
    f32::from_bits(0x40d2_3f7c),
    f32::from_bits(0xbd77_7f97),
];
const RB: [f32; 7] = [
    f32::from_bits(0xbc21_a092),
    f32::from_bits(0xbf4c_9dd4),
    f32::from_bits(0xc18e_104b),
    f32::from_bits(0xc320_a2ea),
    f32::from_bits(0xc41f_6441),
    f32::from_bits(0xc480_230b),
    f32::from_bits(0xc3f1_c275),
];
const SB: [f32; 7] = [
    f32::from_bits(0x41f2_b459),
    f32::from_bits(0x43a2_e571),
    f32::from_bits(0x44c0_1759),
    f32::from_bits(0x4547_fdbb),
    f32::from_bits(0x451f_90ce),
    f32::from_bits(0x43ed_43a7),
    f32::from_bits(0xc1b3_8712),
];

/// `c0 + s·(c1 + s·(c2 + …))`, the nesting of the original polynomials.
#[inline(always)]
fn horner(s: f32, c: &[f32]) -> f32 {
    let mut acc = c[c.len() - 1];
    for &ci in c[..c.len() - 1].iter().rev() {
        acc = ci + s * acc;
    }
    acc
}

/// `1 + s·(c0 + s·(c1 + …))`.
#[inline(always)]
fn one_plus(s: f32, c: &[f32]) -> f32 {
    1.0 + s * horner(s, c)
}

/// `libm::erff`, branch-free: the small-or-middle form where libm takes those branches, the
/// outer form elsewhere.
#[inline(always)]
pub fn erff(x: f32) -> f32 {
    sel(needs_outer(x.to_bits() & 0x7fff_ffff), erff_outer(x), erff_small_or_mid(x))
}

/// Whether libm's `erff` takes a branch other than small or middle for `|x|`'s bits `ix`: tiny
/// (|x| < 2⁻²⁸), 1.25 ≤ |x|, or not finite.
#[inline(always)]
fn needs_outer(ix: u32) -> bool {
    !(0x3180_0000..0x3fa0_0000).contains(&ix)
}

/// [`erff`] for 2⁻²⁸ ≤ |x| < 1.25: libm's small branch (`x + x·P(z)/Q(z)`, z = x²) or middle
/// branch (`±(1 − (1 − erx − P(s)/Q(s)))`, s = |x| − 1) — one polynomial pair and one division per lane,
/// the variable and the coefficients chosen per lane first (the shorter `PP`, `QQ` padded by
/// leading zero coefficients, whose Horner steps `c + t·0` give `c` exactly), so each lane's
/// quotient is bit for bit its own branch's.
#[inline(always)]
fn erff_small_or_mid(x: f32) -> f32 {
    let small = x.to_bits() & 0x7fff_ffff < 0x3f58_0000;
    let ax = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let t = sel(small, x * x, ax - 1.0);
    let q = horner(t, &pick(small, &PP_PADDED, &PA)) / one_plus(t, &pick(small, &QQ_PADDED, &QA));
    let y_small = x + x * q;
    let y_mid = 1.0 - (1.0 - ERX - q);
    sel(small, y_small, sel(x.to_bits() >> 31 != 0, -y_mid, y_mid))
}

/// `PP` and `QQ` with leading (highest-order) zero coefficients, as long as `PA` and `QA`.
const PP_PADDED: [f32; 7] = [PP[0], PP[1], PP[2], PP[3], PP[4], 0.0, 0.0];
const QQ_PADDED: [f32; 6] = [QQ[0], QQ[1], QQ[2], QQ[3], QQ[4], 0.0];

/// [`erff`] where [`needs_outer`]: tiny, `1 − erfc2(|x|)` up to 6, `1 − 2⁻¹²⁰` beyond, the
/// special values. libm's two rational functions of erfc2 (|x| below or above 1/0.35) become one
/// with per-lane coefficients: the shorter (`RB`, `SB`) padded by a leading zero coefficient,
/// whose Horner step `c + s·0` gives `c` exactly (s = 1/x² is positive and finite there).
#[inline(always)]
fn erff_outer(x: f32) -> f32 {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let ix = bits & 0x7fff_ffff;
    let r_tiny = 0.125 * (8.0 * x + EFX8 * x);
    // 1.25 ≤ |x| < 6: erfc2
    let ax = f32::from_bits(ix);
    let s = 1.0 / (ax * ax);
    let near = ix < 0x4036_db6d;
    let r = horner(s, &pick(near, &RA, &RB_PADDED));
    let big_s = one_plus(s, &pick(near, &SA, &SB_PADDED));
    let zz = f32::from_bits(ix & 0xffff_e000);
    let erfc2 = expf(-zz * zz - 0.5625) * expf((zz - ax) * (zz + ax) + r / big_s) / ax;
    let y_mid = 1.0 - erfc2;
    let y_big = 1.0 - f32::from_bits(0x0380_0000);
    let y = sel(ix < 0x40c0_0000, y_mid, y_big);
    let signed = sel(negative, -y, y);
    let r = sel(ix < 0x3180_0000, r_tiny, signed);
    let special = 1.0 - 2.0 * (negative as u32 as f32) + 1.0 / x;
    sel(ix >= 0x7f80_0000, special, r)
}

/// `RB` and `SB` with a leading (highest-order) zero coefficient, as long as `RA` and `SA`.
const RB_PADDED: [f32; 8] = [RB[0], RB[1], RB[2], RB[3], RB[4], RB[5], RB[6], 0.0];
const SB_PADDED: [f32; 8] = [SB[0], SB[1], SB[2], SB[3], SB[4], SB[5], SB[6], 0.0];

/// `a` where `c`, else `b`, coefficient by coefficient (a blend per coefficient in a vector loop).
#[inline(always)]
fn pick<const N: usize>(c: bool, a: &[f32; N], b: &[f32; N]) -> [f32; N] {
    std::array::from_fn(|i| sel(c, a[i], b[i]))
}

/// `v[i] = libm::erff(v[i])`, bit for bit, for a whole slice. libm's small (|x| < 0.84375) and
/// middle (< 1.25) branches cost one division each; the outer form ([`erff_outer`]: two `expf`,
/// four divisions) is needed only where [`needs_outer`] — a minority early in training, about
/// half of the GELU inputs after the snap. So those elements are set aside first, the
/// small-or-middle form runs over the whole slice in place, and the outer form only over the set-
/// aside values, whose results are written back. Every loop vectorises; `scratch` is reused.
#[inline(always)]
pub fn erff_in_place(v: &mut [f32], scratch: &mut ErfScratch) {
    let n_rest = scratch.set_aside(v);
    for x in v.iter_mut() {
        *x = erff_small_or_mid(*x);
    }
    let ErfScratch { idx, vals } = scratch;
    for x in &mut vals[..n_rest] {
        *x = erff_outer(*x);
    }
    for (&i, &y) in idx[..n_rest].iter().zip(&vals[..n_rest]) {
        v[i as usize] = y;
    }
}

/// Elements per block of [`ErfScratch::set_aside`]'s test (a 512-bit vector of f32).
const LANES: usize = 16;

/// Bit `j` set where `chunk[j]` needs the outer form (≤ 32 elements; inlined on a fixed-size
/// block, one vector compare).
#[inline(always)]
fn outer_mask(chunk: &[f32]) -> u32 {
    chunk.iter().enumerate().fold(0, |m, (j, x)| m | (needs_outer(x.to_bits() & 0x7fff_ffff) as u32) << j)
}

/// Reusable buffers of [`erff_in_place`]: the indices and values set aside for the outer form.
#[derive(Default)]
pub struct ErfScratch {
    idx: Vec<u32>,
    vals: Vec<f32>,
}

impl ErfScratch {
    /// Record (index, value) of every element that needs the outer form, in index order; returns
    /// how many. Sixteen lanes at a time: a vectorised test of a fixed-size block gives a bit
    /// mask, whose set bits are then written out (a per-element branch would mispredict on GELU
    /// inputs); most blocks have none before the snap.
    #[inline(always)]
    fn set_aside(&mut self, v: &[f32]) -> usize {
        self.idx.resize(v.len(), 0);
        self.vals.resize(v.len(), 0.0);
        let mut n = 0;
        for (c, chunk) in v.chunks(LANES).enumerate() {
            let mut mask = match <&[f32; LANES]>::try_from(chunk) {
                Ok(block) => outer_mask(block),
                Err(_) => outer_mask(chunk),
            };
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                (self.idx[n], self.vals[n]) = ((c * LANES + j) as u32, chunk[j]);
                n += 1;
                mask &= mask - 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit patterns covering every branch and boundary of both functions.
    pub(crate) fn probe_bits() -> Vec<u32> {
        let mut v = vec![];
        let edges = [
            0u32,
            1,
            0x0080_0000,
            0x3180_0000,
            0x3900_0000,
            0x3eb1_7218,
            0x3f58_0000,
            0x3f85_1592,
            0x3fa0_0000,
            0x4036_db6d,
            0x40c0_0000,
            0x42ae_ac50,
            0x42b1_7218,
            0x42cf_f1b5,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7f80_0001,
            0x7fc0_0000,
        ];
        for e in edges {
            for d in 0..64u32 {
                for s in [0u32, 0x8000_0000] {
                    v.push((e.wrapping_add(d).wrapping_sub(32)) | s);
                }
            }
        }
        v.extend((0..1u64 << 32).step_by(65_537).map(|b| b as u32));
        v
    }

    #[test]
    fn erff_in_place_matches_libm_bits() {
        let xs: Vec<f32> = probe_bits().into_iter().map(f32::from_bits).collect();
        let mut out = xs.clone();
        erff_in_place(&mut out, &mut ErfScratch::default());
        for (x, r) in xs.iter().zip(&out) {
            let l = libm::erff(*x);
            assert!(r.to_bits() == l.to_bits() || (r.is_nan() && l.is_nan()), "erff_slice({x:e})");
        }
    }

    #[test]
    fn expf_and_erff_match_libm_bits_on_every_branch() {
        for b in probe_bits() {
            let x = f32::from_bits(b);
            let (e, le) = (expf(x), libm::expf(x));
            assert!(
                e.to_bits() == le.to_bits() || (e.is_nan() && le.is_nan()),
                "expf({x:e} = {b:#x}): {e:e} vs libm {le:e}"
            );
            let (r, lr) = (erff(x), libm::erff(x));
            assert!(
                r.to_bits() == lr.to_bits() || (r.is_nan() && lr.is_nan()),
                "erff({x:e} = {b:#x}): {r:e} vs libm {lr:e}"
            );
        }
    }
}
