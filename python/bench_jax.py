#!/usr/bin/env python3
"""Time the canonical training step in JAX (`jax.jit`, XLA CPU), the way windtunnel bench does:
the same model (4 layers, d_model 128, 4 heads of 32, d_mlp 512, exact GELU, TL LayerNorm,
vocab 40, 16 positions), loss on the label positions, forward + backward + gradient norm +
AdamW(lr 1e-3, wd 0.01), all in one jitted function. For speed only: its init and batches are
not windtunnel's, so its numbers are not compared, only its time.

Threads: XLA CPU uses every core it is given; run it under `taskset -c 0` for one thread
(scripts/bench-vs-torch.sh does). Prints the same fields as bench_torch.py (one JSON object
with --json).
"""

import json
import time

import jax
import jax.numpy as jnp
from bench_common import step_parser, step_summary
L, H, C, DH, F, V, T = 4, 4, 128, 32, 512, 40, 16


def init(key, dtype):
    def normal(k, shape):
        return (0.02 * jax.random.normal(k, shape)).astype(dtype)

    keys = iter(jax.random.split(key, 64))
    blocks = []
    for _ in range(L):
        blocks.append({
            "ln1_w": jnp.ones(C, dtype), "ln1_b": jnp.zeros(C, dtype),
            "w_qkv": normal(next(keys), (C, 3 * H * DH)), "b_qkv": jnp.zeros(3 * H * DH, dtype),
            "w_o": normal(next(keys), (H * DH, C)), "b_o": jnp.zeros(C, dtype),
            "ln2_w": jnp.ones(C, dtype), "ln2_b": jnp.zeros(C, dtype),
            "w_in": normal(next(keys), (C, F)), "b_in": jnp.zeros(F, dtype),
            "w_out": normal(next(keys), (F, C)), "b_out": jnp.zeros(C, dtype),
        })
    return {"w_e": normal(next(keys), (V, C)), "w_pos": normal(next(keys), (32, C)), "blocks": blocks,
            "lnf_w": jnp.ones(C, dtype), "lnf_b": jnp.zeros(C, dtype),
            "w_u": normal(next(keys), (C, V)), "b_u": jnp.zeros(V, dtype)}


def layer_norm(x, w, b):
    xc = x - x.mean(-1, keepdims=True)
    return xc / jnp.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5) * w + b


def attention(x, p):
    bsz = x.shape[0]
    qkv = (x @ p["w_qkv"] + p["b_qkv"]).reshape(bsz, T, 3, H, DH)
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.asarray(DH, x.dtype))
    mask = jnp.tril(jnp.ones((T, T), bool))
    pattern = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=-1)
    z = jnp.einsum("bhqk,bkhd->bqhd", pattern, v).reshape(bsz, T, H * DH)
    return z @ p["w_o"] + p["b_o"]


def loss_fn(params, tokens, labels):
    x = params["w_e"][tokens] + params["w_pos"][:T]
    for p in params["blocks"]:
        x = x + attention(layer_norm(x, p["ln1_w"], p["ln1_b"]), p)
        h = jax.nn.gelu(layer_norm(x, p["ln2_w"], p["ln2_b"]) @ p["w_in"] + p["b_in"], approximate=False)
        x = x + h @ p["w_out"] + p["b_out"]
    logits = layer_norm(x, params["lnf_w"], params["lnf_b"]) @ params["w_u"] + params["b_u"]
    logp = jax.nn.log_softmax(logits[:, :-1], axis=-1)
    target = labels[:, 1:]
    valid = target >= 0
    picked = jnp.take_along_axis(logp, jnp.where(valid, target, 0)[..., None], axis=-1)[..., 0]
    return -(picked * valid).sum() / valid.sum()


@jax.jit
def train_step(params, m, v, t, tokens, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, labels)
    norm_sq = sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads))
    b1, b2, lr, wd, eps = 0.9, 0.999, 1e-3, 0.01, 1e-8
    m = jax.tree_util.tree_map(lambda m, g: m + (1 - b1) * (g - m), m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    step = lr / (1 - b1 ** t)
    bc2 = jnp.sqrt(1 - b2 ** t)

    def update(p, m, v):
        return p * (1 - lr * wd) - step * m / (jnp.sqrt(v) / bc2 + eps)

    params = jax.tree_util.tree_map(update, params, m, v)
    return params, m, v, loss, norm_sq


def main():
    p = step_parser(__doc__)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.dtype == "f64":
        jax.config.update("jax_enable_x64", True)
    dtype = {"f32": jnp.float32, "f64": jnp.float64}[a.dtype]
    params = init(jax.random.PRNGKey(42), dtype)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    key = jax.random.PRNGKey(0)
    tokens_all = jax.random.randint(key, (10_000, T), 4, V)
    labels_all = jnp.where(jnp.arange(T) >= 11, tokens_all, -100)
    times = []
    for i in range(a.warmup + a.steps):
        idx = jax.random.randint(jax.random.PRNGKey(i + 1), (a.batch_size,), 0, tokens_all.shape[0])
        tokens, labels = tokens_all[idx], labels_all[idx]
        jax.block_until_ready((tokens, labels))
        t0 = time.perf_counter()
        params, m, v, loss, norm_sq = train_step(params, m, v, float(i + 1), tokens, labels)
        jax.block_until_ready((params, loss, norm_sq))
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    out = {"impl": "jax.jit", "jax": jax.__version__, "dtype": a.dtype, "batch_size": a.batch_size, "steps": a.steps,
           **step_summary(times, a.batch_size, T)}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"jax {a.dtype} batch {a.batch_size} ({a.steps} timed steps): median {out['median_ms']:.1f} ms/step, "
              f"{out['gflops']:.1f} GFLOP/s, loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
