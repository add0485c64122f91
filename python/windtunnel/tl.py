"""TransformerLens from a windtunnel file: ``hooked_transformer(source)``. Needs torch and
transformer-lens 2.16-3.9 (``pip install "./python[tl]"``, or python/requirements.txt for the
pinned versions); 4.x removed ``HookedTransformer``."""
from __future__ import annotations

from typing import Any

from . import _tensors


def hooked_transformer(source: _tensors.Source) -> Any:
    """A ``HookedTransformer`` holding the parameters of a windtunnel file or mapping, in the
    file's dtype and model config (the canonical model when the file records none)."""
    try:
        import torch
        from transformer_lens import HookedTransformer, HookedTransformerConfig
    except ImportError as e:
        raise ImportError(
            "hooked_transformer needs torch and transformer-lens 2.16-3.9 (pip install \"./python[tl]\"); "
            f"transformer-lens 4.x has no HookedTransformer ({e})"
        ) from None
    from . import load

    ts = load(source) if _tensors.is_path(source) else _tensors.Tensors(source)
    params = ts.params if isinstance(ts, _tensors.Tensors) else dict(ts)
    m = (ts.metadata or {}).get("model") or {}
    f64 = all(_tensors.as_array(k, v).dtype.name == "float64" for k, v in params.items())
    cfg = HookedTransformerConfig(
        n_layers=m.get("n_layers", 4), d_model=m.get("d_model", 128), n_heads=m.get("n_heads", 4),
        d_head=m.get("d_head", 32), d_mlp=m.get("d_mlp", 512), d_vocab=m.get("d_vocab", 40),
        n_ctx=m.get("n_ctx", 32), act_fn=m.get("act_fn", "gelu"), eps=m.get("eps", 1e-5),
        normalization_type="LN", positional_embedding_type="standard",
        dtype=torch.float64 if f64 else torch.float32, device="cpu",
    )
    model = HookedTransformer(cfg)
    sd = {k: torch.from_numpy(_tensors.as_array(k, v)) for k, v in params.items()}
    result = model.load_state_dict(sd, strict=False)
    missing = [k for k in result.missing_keys if not k.endswith((".mask", ".IGNORE"))]
    if missing or result.unexpected_keys:
        raise ValueError(f"not a windtunnel/TransformerLens parameter set: missing {missing[:5]}, unexpected {result.unexpected_keys[:5]}")
    return model
