"""numpy arrays <-> the (name, dtype, shape, bytes) tuples the native module exchanges."""
from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Union

import numpy as np

# safetensors dtype names <-> numpy dtypes (little-endian).
_FROM_NAME = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
}
_TO_NAME = {np.dtype(t): n for n, t in _FROM_NAME.items()}

# Names in the export format that are not parameters (docs/interop.md).
_NOT_PARAMS = {"tokens", "labels", "logits", "loss", "losses", "lr", "grad_norm_sq", "perm"}


class Tensors(dict):
    """Tensor name -> numpy array, under the names of windtunnel's file format (docs/interop.md):
    TransformerLens parameter names, ``tokens``/``labels``, ``logits``, ``loss``, ``grad.<name>``
    and ``cache.<hook name>``. ``metadata`` is windtunnel's metadata (a dict) when known."""

    def __init__(self, *args: Any, metadata: Optional[dict] = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.metadata = metadata

    @property
    def logits(self) -> np.ndarray:
        return self["logits"]

    @property
    def loss(self) -> float:
        return float(self["loss"])

    @property
    def grads(self) -> dict:
        """Gradients by parameter name (``grad.`` stripped)."""
        return _strip(self, "grad.")

    @property
    def cache(self) -> dict:
        """Activations by TransformerLens hook name (``cache.`` stripped)."""
        return _strip(self, "cache.")

    @property
    def params(self) -> dict:
        """The parameters (every tensor that is not the batch, an output, a gradient, an
        activation or a per-step record)."""
        skip = ("grad.", "cache.", "step_")
        return {k: v for k, v in self.items() if k not in _NOT_PARAMS and not k.startswith(skip)}


def _strip(ts: Mapping[str, np.ndarray], prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in ts.items() if k.startswith(prefix)}


def as_array(name: str, value: Any) -> np.ndarray:
    """Anything array-like (numpy, a torch tensor, a list) as a contiguous little-endian array."""
    if hasattr(value, "detach"):  # torch: leave autograd and the device behind
        value = value.detach().cpu().numpy()
    a = np.asarray(value)
    if not a.flags["C_CONTIGUOUS"]:
        a = a.copy(order="C")  # (np.ascontiguousarray would turn a 0-d loss into shape [1])
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    if a.dtype not in _TO_NAME:
        raise TypeError(f"tensor {name}: dtype {a.dtype} cannot be stored (allowed {sorted(set(_TO_NAME.values()))})")
    return a


def to_native(tensors: Mapping[str, Any]) -> list:
    out = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {name!r}")
        a = as_array(name, value)
        out.append((name, _TO_NAME[a.dtype], list(a.shape), a.tobytes()))
    return out


def from_native(items: list, metadata: Optional[str] = None) -> Tensors:
    import json

    ts = Tensors(metadata=json.loads(metadata) if metadata else None)
    for name, dtype, shape, data in items:
        ts[name] = np.frombuffer(data, dtype=_FROM_NAME[dtype]).reshape(shape).copy()
    return ts


Source = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))
