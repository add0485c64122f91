#!/usr/bin/env python3
"""TransformerLens parity harness for windtunnel (not needed by CI).

Builds the paper author's model exactly as `synass-lens` does (HookedTransformerConfig of spec
§5.1, seed 42, TL's gpt2 init), and produces reference files in windtunnel's export format:
parameters under TL names, `tokens`/`labels` int64 [B, T], `logits`, `loss`, `grad.<name>` and
optionally `cache.<hook>`.

Subcommands (see python/README.md for the exact command lines used for golden/tl/):
  init        export the author's step-0 weights (f32, or widened to f64)
  grads       logits / loss / gradients (and hooks) of any weights file on any batch file
  train       N optimizer steps of the author's loop from an init and an epoch permutation
  check-load  load a windtunnel file into HookedTransformer and compare logits with the file's
"""

import argparse
import json
import math
import sys
import warnings

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

warnings.filterwarnings("ignore", category=DeprecationWarning)
from transformer_lens import HookedTransformer, HookedTransformerConfig  # noqa: E402

MODEL = dict(n_layers=4, n_heads=4, d_model=128, d_head=32, d_mlp=512, d_vocab=40, n_ctx=32)
DTYPES = {"f32": torch.float32, "f64": torch.float64}


def tl_config(dtype):
    # spec §5.1, the author's src/model/hooked_transformer.py
    return HookedTransformerConfig(
        **MODEL, act_fn="gelu", positional_embedding_type="standard", normalization_type="LN",
        attn_only=False, device="cpu", seed=42, init_weights=True, dtype=DTYPES[dtype])


def meta(kind, dtype):
    cfg = dict(MODEL, act_fn="gelu", eps=1e-5, initializer_range=0.8 / math.sqrt(128))
    return {"windtunnel": json.dumps({"format": "transformer_lens", "version": 1, "kind": kind,
                                      "model": cfg, "dtype": dtype})}


def author_model(dtype):
    """The author's init is drawn in float32 (TL default dtype); f64 widens those values."""
    m32 = HookedTransformer(tl_config("f32"))
    if dtype == "f32":
        return m32
    m = HookedTransformer(tl_config(dtype))
    m.load_state_dict({k: v.to(DTYPES[dtype]) if v.is_floating_point() else v
                       for k, v in m32.state_dict().items()})
    return m


def param_names(model):
    return [n for n, _ in model.named_parameters()]


def load_weights(path, dtype):
    """Load TL-named parameters from any safetensors file (extra keys such as grad.* ignored)."""
    model = HookedTransformer(tl_config(dtype))
    sd = load_file(path)
    names = set(param_names(model))
    params = {k: v.to(DTYPES[dtype]) for k, v in sd.items() if k in names}
    result = model.load_state_dict(params, strict=False)
    missing = [k for k in result.missing_keys if not (k.endswith("attn.mask") or k.endswith("attn.IGNORE"))]
    if missing or result.unexpected_keys:
        sys.exit(f"{path}: missing parameters {missing}, unexpected {result.unexpected_keys}")
    return model, result


def compute_loss(model, tokens, labels):
    """The author's trainer.compute_loss: shifted CE, mean over labels != -100."""
    logits = model(tokens)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)
    return logits, loss


def params_dict(model, dtype):
    return {n: p.detach().to(DTYPES[dtype]).contiguous() for n, p in model.named_parameters()}


def cmd_init(a):
    model = author_model(a.dtype)
    save_file(params_dict(model, a.dtype), a.out, metadata=meta("params", a.dtype))
    print(f"wrote {len(param_names(model))} tensors to {a.out}")


def cmd_grads(a):
    model, _ = load_weights(a.weights, a.dtype)
    batch = load_file(a.batch)
    tokens, labels = batch["tokens"].long(), batch["labels"].long()
    if a.limit:
        tokens, labels = tokens[: a.limit], labels[: a.limit]
    model.zero_grad()
    logits, loss = compute_loss(model, tokens, labels)
    loss.backward()
    out = {} if a.no_params else params_dict(model, a.dtype)
    out.update(tokens=tokens.contiguous(), labels=labels.contiguous(),
               logits=logits.detach().contiguous(), loss=loss.detach().reshape(()))
    for n, p in model.named_parameters():
        out[f"grad.{n}"] = p.grad.detach().contiguous()
    if a.hooks:
        with torch.no_grad():
            _, cache = model.run_with_cache(tokens[: a.hooks])
        for k, v in cache.items():
            out[f"cache.{k}"] = v.detach().clone().contiguous()
    save_file(out, a.out, metadata=meta("export", a.dtype))
    print(f"loss {loss.item():.17g}; wrote {len(out)} tensors to {a.out}")


def lr_lambda(schedule, warmup, max_steps):
    # the author's get_lr_scheduler, including the literal 3.14159 and the float32 cosine
    if schedule == "constant":
        return lambda step: 1.0

    def f(step):
        if step < warmup:
            return step / warmup
        progress = (step - warmup) / (max_steps - warmup)
        return 0.5 * (1 + torch.cos(torch.tensor(progress * 3.14159)).item())
    return f


def cmd_train(a):
    dt = DTYPES[a.dtype]
    model, _ = load_weights(a.init, a.dtype)
    data = load_file(a.data)
    tokens_all, labels_all = data["tokens"].long(), data["labels"].long()
    d = tokens_all.shape[0]
    steps_per_epoch = math.ceil(d / a.batch_size)
    n_epochs = math.ceil(a.steps / steps_per_epoch)
    if a.data_order:
        perm = load_file(a.data_order)["perm"].long()
    else:
        torch.manual_seed(a.perm_seed)
        perm = torch.stack([torch.randperm(d) for _ in range(n_epochs)])
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(a.schedule, a.warmup, a.max_steps or a.steps))
    losses, gnorms, lrs = [], [], []
    model.train()
    for step in range(a.steps):
        epoch, i = divmod(step, steps_per_epoch)
        idx = perm[epoch, i * a.batch_size: (i + 1) * a.batch_size]
        lrs.append(opt.param_groups[0]["lr"])
        opt.zero_grad()
        _, loss = compute_loss(model, tokens_all[idx], labels_all[idx])
        loss.backward()
        gnorms.append(sum(p.grad.data.norm() ** 2 for p in model.parameters()).item())
        if a.clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        sched.step()
        losses.append(loss.item())
    out = params_dict(model, a.dtype)
    out.update(losses=torch.tensor(losses, dtype=torch.float64), grad_norm_sq=torch.tensor(gnorms, dtype=torch.float64),
               lr=torch.tensor(lrs, dtype=torch.float64), perm=perm.contiguous())
    save_file(out, a.out, metadata=meta("trajectory", a.dtype))
    print(f"{a.steps} steps, losses {losses[0]:.6f} … {losses[-1]:.6f}; wrote {a.out}")
    del dt


def cmd_check_load(a):
    model, result = load_weights(a.file, a.dtype)
    print(f"load_state_dict(strict=False): missing {sorted(result.missing_keys)}, unexpected {result.unexpected_keys}")
    sd = load_file(a.file)
    if "tokens" in sd and "logits" in sd:
        with torch.no_grad():
            logits, loss = compute_loss(model, sd["tokens"].long(), sd["labels"].long())
        ref = sd["logits"].to(logits.dtype)
        diff = (logits - ref).abs().max().item()
        rel = diff / ref.abs().max().item()
        print(f"max |TL logits − file logits| = {diff:.3e} (relative to max |logit|: {rel:.3e}); "
              f"loss TL {loss.item():.10f} vs file {sd['loss'].item():.10f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("init")
    s.add_argument("--dtype", choices=DTYPES, default="f32")
    s.add_argument("--out", required=True)
    s = sub.add_parser("grads")
    s.add_argument("--weights", required=True)
    s.add_argument("--batch", required=True, help="file with tokens/labels int64 [B, T]")
    s.add_argument("--dtype", choices=DTYPES, default="f64")
    s.add_argument("--limit", type=int, default=0, help="use only the first N examples")
    s.add_argument("--hooks", type=int, default=0, help="cache activations of the first N examples")
    s.add_argument("--no-params", action="store_true", help="omit the parameters (they are the --weights)")
    s.add_argument("--out", required=True)
    s = sub.add_parser("train")
    s.add_argument("--init", required=True)
    s.add_argument("--data", required=True, help="file with the train set tokens/labels int64 [D, T] in train order")
    s.add_argument("--data-order", help="file with perm int64 [n_epochs, D]; default torch.randperm")
    s.add_argument("--perm-seed", type=int, default=42)
    s.add_argument("--steps", type=int, required=True)
    s.add_argument("--batch-size", type=int, default=128)
    s.add_argument("--lr", type=float, default=1e-3)
    s.add_argument("--weight-decay", type=float, default=0.01)
    s.add_argument("--schedule", choices=["constant", "cosine"], default="constant")
    s.add_argument("--warmup", type=int, default=0)
    s.add_argument("--max-steps", type=int, default=0, help="cosine horizon (default: --steps)")
    s.add_argument("--clip", type=float, default=None)
    s.add_argument("--dtype", choices=DTYPES, default="f64")
    s.add_argument("--out", required=True)
    s = sub.add_parser("check-load")
    s.add_argument("file")
    s.add_argument("--dtype", choices=DTYPES, default="f32")
    a = p.parse_args()
    torch.set_num_threads(2)
    {"init": cmd_init, "grads": cmd_grads, "train": cmd_train, "check-load": cmd_check_load}[a.cmd](a)


if __name__ == "__main__":
    main()
