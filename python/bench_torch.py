#!/usr/bin/env python3
"""Time the canonical training step in PyTorch + TransformerLens, the way windtunnel bench does:
the author's model (spec §5.1), AdamW(lr 1e-3, wd 0.01), batches of the canonical K=10 task,
forward + backward + pre-clip gradient norm + optimizer step, torch.set_num_threads(N).

Prints the same fields as `windtunnel bench --json` (one JSON object with --json).
Data: tokens/labels [D, T] from `windtunnel data --out-tensors FILE` (default: random tokens with
the canonical label layout, which costs the same).
"""

import json
import statistics
import time
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=DeprecationWarning)
from transformer_lens import HookedTransformer, HookedTransformerConfig  # noqa: E402
from bench_common import step_parser, step_summary  # noqa: E402


def main():
    p = step_parser(__doc__)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--data", help="safetensors with tokens/labels [D, T] (windtunnel data --out-tensors)")
    p.add_argument("--kernels", action="store_true",
                   help="time torch.matmul at the model's product shapes (as windtunnel bench --kernels)")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the forward and loss (the backward through AOTAutograd; AdamW eager)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    dtype = {"f32": torch.float32, "f64": torch.float64}[a.dtype]
    if a.kernels:
        return kernels(a, dtype)
    cfg = HookedTransformerConfig(n_layers=4, n_heads=4, d_model=128, d_head=32, d_mlp=512, d_vocab=40, n_ctx=32,
                                  act_fn="gelu", normalization_type="LN", seed=42, device="cpu", dtype=dtype)
    model = HookedTransformer(cfg)
    if a.data:
        from safetensors.torch import load_file
        d = load_file(a.data)
        tokens_all, labels_all = d["tokens"].long(), d["labels"].long()
    else:
        g = torch.Generator().manual_seed(0)
        tokens_all = torch.randint(4, 40, (10_000, 16), generator=g)
        labels_all = torch.full_like(tokens_all, -100)
        labels_all[:, 11:] = tokens_all[:, 11:]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def step_loss(tokens, labels):
        logits = model(tokens)
        return F.cross_entropy(logits[:, :-1].reshape(-1, 40), labels[:, 1:].reshape(-1), ignore_index=-100)

    if a.compile:
        step_loss = torch.compile(step_loss)
    times = []
    for i in range(a.warmup + a.steps):
        idx = torch.randint(0, tokens_all.shape[0], (a.batch_size,))
        tokens, labels = tokens_all[idx], labels_all[idx]
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = step_loss(tokens, labels)
        loss.backward()
        _ = sum(p.grad.data.norm() ** 2 for p in model.parameters()).item()
        opt.step()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    out = {"impl": "pytorch+transformer_lens" + (" torch.compile" if a.compile else ""), "torch": torch.__version__,
           "dtype": a.dtype, "batch_size": a.batch_size, "threads": a.threads, "steps": a.steps,
           **step_summary(times, a.batch_size, tokens_all.shape[1])}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"pytorch {a.dtype} batch {a.batch_size} ({a.threads} threads, {a.steps} timed steps): "
              f"median {out['median_ms']:.1f} ms/step, {out['gflops']:.1f} GFLOP/s, {out['steps_per_s']:.1f} steps/s")


def model_shapes(b):
    """The model's products at batch b, as windtunnel's cli/bench.rs: (name, transposed a, m, k, n)."""
    n = 16 * b
    return [("qkv X·W", False, n, 128, 384), ("mlp_in X·W", False, n, 128, 512), ("mlp_out X·W", False, n, 512, 128),
            ("dX of mlp_in dY·Wᵀ", False, n, 512, 128), ("dW_in Xᵀ·dY", True, 128, n, 512),
            ("dW_out Xᵀ·dY", True, 512, n, 128)]


def kernels(a, dtype):
    rows = []
    for name, tn, m, k, n in model_shapes(a.batch_size):
        x = torch.randn(k, m, dtype=dtype) if tn else torch.randn(m, k, dtype=dtype)
        w = torch.randn(k, n, dtype=dtype)
        prod = (lambda: x.t() @ w) if tn else (lambda: x @ w)
        for _ in range(a.warmup):
            prod()
        times = []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            prod()
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        rows.append({"name": name, "m": m, "k": k, "n": n, "median_ms": med * 1e3, "gflops": 2 * m * k * n / med / 1e9})
    out = {"impl": "torch.matmul", "torch": torch.__version__, "dtype": a.dtype, "threads": a.threads,
           "kernels_at_model_shapes": rows}
    if a.json:
        print(json.dumps(out))
    else:
        for r in rows:
            print(f"  {r['name']:<20} {r['m']:>5}×{r['k']:>5}×{r['n']:>4} {a.dtype}: {r['median_ms']:8.3f} ms "
                  f"{r['gflops']:7.1f} GFLOP/s")


if __name__ == "__main__":
    main()
