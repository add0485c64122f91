//! The packed QKV projection: TL stores W_Q, W_K, W_V per head (`[H, C, dh]`); the forward runs
//! them as one `[C, 3·H·dh]` linear layer. Copies only, no arithmetic.

use super::transformer::Model;
use crate::numerics::Scalar;

/// w_qkv (C, 3·H·dh) = [W_Q | W_K | W_V] with `w[c, s·HD + h·dh + d] = W_s[h, c, d]`, and the
/// matching bias (a copy; no arithmetic).
pub(crate) fn pack_qkv<S: Scalar>(w_qkv: &mut [S], b_qkv: &mut [S], m: &Model<S>, l: usize) {
    let (c, h, dh) = (m.cfg.d_model, m.cfg.n_heads, m.cfg.d_head);
    let hd = h * dh;
    let bp = m.layout.blocks[l];
    for (s, (wi, bi)) in [(bp.w_q, bp.b_q), (bp.w_k, bp.b_k), (bp.w_v, bp.b_v)].into_iter().enumerate() {
        let w = m.p(wi);
        for hh in 0..h {
            for ci in 0..c {
                let src = &w[(hh * c + ci) * dh..(hh * c + ci + 1) * dh];
                let dst = ci * 3 * hd + s * hd + hh * dh;
                w_qkv[dst..dst + dh].copy_from_slice(src);
            }
        }
        b_qkv[s * hd..(s + 1) * hd].copy_from_slice(m.p(bi));
    }
}

/// Add packed QKV weight/bias gradients into the per-head TL tensors.
pub(crate) fn unpack_qkv_grads<S: Scalar>(grads: &mut [S], dw_qkv: &[S], db_qkv: &[S], m: &Model<S>, l: usize) {
    let (c, h, dh) = (m.cfg.d_model, m.cfg.n_heads, m.cfg.d_head);
    let hd = h * dh;
    let bp = m.layout.blocks[l];
    for (s, (wi, bi)) in [(bp.w_q, bp.b_q), (bp.w_k, bp.b_k), (bp.w_v, bp.b_v)].into_iter().enumerate() {
        let (gw, gb) = m.layout.view2_mut(grads, wi, bi);
        for hh in 0..h {
            for ci in 0..c {
                let src = &dw_qkv[ci * 3 * hd + s * hd + hh * dh..][..dh];
                let dst = &mut gw[(hh * c + ci) * dh..(hh * c + ci + 1) * dh];
                for d in 0..dh {
                    dst[d] += src[d];
                }
            }
        }
        for (g, &d) in gb.iter_mut().zip(&db_qkv[s * hd..(s + 1) * hd]) {
            *g += d;
        }
    }
}
