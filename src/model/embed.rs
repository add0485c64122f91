//! Token + learned positional embedding (TL `embed` + `pos_embed`).

use crate::numerics::Scalar;

/// `x[b,t,:] = W_E[tokens[b,t], :] + W_pos[t, :]` for the first `t` positions.
/// x is (B·t, C), tokens is (B·T_full), w_e is (V, C), w_pos is (n_ctx, C).
pub fn embed_forward<S: Scalar>(
    x: &mut [S],
    tokens: &[u32],
    t_full: usize,
    w_e: &[S],
    w_pos: &[S],
    t: usize,
    c: usize,
) {
    for (n, row) in x.chunks_exact_mut(c).enumerate() {
        let tok = tokens[(n / t) * t_full + n % t] as usize;
        let e = &w_e[tok * c..(tok + 1) * c];
        let p = &w_pos[(n % t) * c..(n % t + 1) * c];
        for i in 0..c {
            row[i] = e[i] + p[i];
        }
    }
}

/// `dW_E[tok] += dx[n]`, `dW_pos[t] += dx[n]` for rows `n` in ascending order.
/// dx is (B·t, C) for the first `t` of `t_full` positions.
pub fn embed_backward<S: Scalar>(
    dw_e: &mut [S],
    dw_pos: &mut [S],
    dx: &[S],
    tokens: &[u32],
    t_full: usize,
    t: usize,
    c: usize,
) {
    for (n, row) in dx.chunks_exact(c).enumerate() {
        let tok = tokens[(n / t) * t_full + n % t] as usize;
        let e = &mut dw_e[tok * c..(tok + 1) * c];
        for i in 0..c {
            e[i] += row[i];
        }
        let p = &mut dw_pos[(n % t) * c..(n % t + 1) * c];
        for i in 0..c {
            p[i] += row[i];
        }
    }
}
