"""windtunnel from Python: the paper's data, the reference model's forward/backward and training
trajectory, and ``verify`` of another implementation against it -- numpy in, numpy out.

    import windtunnel as wt
    ref = wt.reference(mine)            # windtunnel on your parameters and batch
    wt.assert_matches(ref, mine)        # raises with the first divergence if your port differs

Every function is the Rust library's own (the CLI's ``data``, ``export``, ``export --steps`` and
``verify``), so results are bit-identical to the command line. See docs/interop.md.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Union

import numpy as np

from . import _native

try:  # the installed distribution's version (pyproject.toml), e.g. for bug reports
    from importlib.metadata import version as _version

    __version__ = _version("windtunnel")
except Exception:  # pragma: no cover - running from a source tree that was never installed
    __version__ = "unknown"
from ._report import Report
from ._tensors import Source, Tensors, as_array, from_native, is_path, to_native
from .metrics import metrics, metrics_frame

#: The arithmetic version of this build (docs/determinism.md); recorded in every file it writes.
ARITHMETIC: int = _native.ARITHMETIC

__all__ = [
    "ARITHMETIC", "Data", "Report", "Tensors", "assert_matches", "batch", "data", "init", "load", "metrics",
    "metrics_frame", "reference", "save", "trajectory", "verify",
]

PathLike = Union[str, "os.PathLike[str]"]


def load(path: PathLike) -> Tensors:
    """Read a safetensors file (any dtype safetensors has; f16/bf16 widen to f32)."""
    items, meta = _native.read(os.fspath(path))
    return from_native(items, meta)


def save(path: PathLike, tensors: Mapping[str, Any], metadata: Optional[dict] = None) -> None:
    """Write tensors (numpy, torch or array-likes; float32, float64 or int64) to a safetensors
    file, atomically."""
    for name, value in tensors.items():
        if name == "__metadata__":
            raise ValueError("invalid tensor name `__metadata__`: safetensors keeps it for the file's metadata (pass metadata=)")
        dt = as_array(name, value).dtype
        if dt not in (np.float32, np.float64, np.int64):
            raise TypeError(f"tensor {name}: dtype {dt} cannot be written (allowed float32, float64, int64)")
    meta = json.dumps(metadata) if metadata is not None else None
    _native.write(os.fspath(path), to_native(tensors), meta)


@dataclass(frozen=True)
class Data:
    """The training set of a config, in train order, and the author's hashes of it."""

    tokens: np.ndarray  # int64 [D, T]
    labels: np.ndarray  # int64 [D, T]; -100 = not scored
    sha_gen: str
    sha_train: str
    k: int
    n_b: int
    z_length: int


def data(config: Optional[PathLike] = None, overrides: Optional[Mapping[str, Any]] = None) -> Data:
    """The paper's data for a run config (default: the canonical K = 10 run), e.g.
    ``data(overrides={"data.k": 20})``."""
    items, hashes = _native.data(_path(config), _sets(overrides))
    ts, h = from_native(items), json.loads(hashes)
    return Data(ts["tokens"], ts["labels"], h["sha_gen"], h["sha_train"], h["k"], h["n_b"], h["z_length"])


def batch(
    size: int, seed: int = 0, config: Optional[PathLike] = None, overrides: Optional[Mapping[str, Any]] = None
) -> Tensors:
    """``tokens`` and ``labels`` of ``export --batch-size SIZE --batch-seed SEED``: the first
    ``size`` examples of windtunnel's seeded permutation of the train set."""
    return from_native(_native.batch(size, seed, _path(config), _sets(overrides)))


def init(
    seed: Union[None, int, PathLike] = None,
    dtype: str = "f32",
    config: Optional[PathLike] = None,
    overrides: Optional[Mapping[str, Any]] = None,
) -> Tensors:
    """A model's parameters under TransformerLens names: windtunnel's init with ``seed`` (default:
    the config's ``train.init``, seed 42 for the canonical run, as ``export``), or the weights of a
    file (e.g. golden/tl/init_f32.safetensors, the author's TransformerLens init)."""
    items, meta = _native.init(_init_spec(seed), dtype, _path(config), _sets(overrides))
    return from_native(items, meta)


def reference(
    params: Source,
    tokens: Any = None,
    labels: Any = None,
    dtype: Optional[str] = None,
    hooks: Optional[bool] = None,
    config: Optional[PathLike] = None,
    overrides: Optional[Mapping[str, Any]] = None,
) -> Tensors:
    """windtunnel's forward and backward of ``params`` (a mapping or a file, TL names; extra
    entries ignored) on ``tokens``/``labels`` (int [B, T]; default: those in ``params``): the
    parameters, batch, ``logits``, ``loss``, ``grad.*`` and, with ``hooks``, ``cache.*``, in the
    names a port's file uses. ``hooks`` defaults to what ``params`` provides: activations
    (``cache.*``) when it holds any, so ``reference(mine)`` compares like with like.
    ``dtype`` defaults to f64 when the parameters are float64. The
    model config is ``config``/``overrides`` if given, else the one a loaded file records, else
    the canonical model."""
    src = load(params) if is_path(params) else params
    if hooks is None:
        hooks = any(str(k).startswith("cache.") for k in src)
    given = {"tokens": tokens, "labels": labels}
    batch = {}
    for k, v in given.items():
        if v is None and k not in src:
            raise ValueError(f"invalid `{k}`: not given and not in params (pass tokens= and labels=, int [B, T])")
        batch[k] = _integers(k, src[k] if v is None else v)
    tensors = Tensors(src).params  # outputs, gradients and activations of a port's file stay behind
    dtype = dtype or _dtype_of(tensors)
    recorded = getattr(src, "metadata", None)  # a loaded file's model config, unless config/overrides say otherwise
    meta_json = json.dumps(recorded) if isinstance(recorded, dict) and "model" in recorded else None
    items, meta = _native.reference(
        to_native({**tensors, **batch}), dtype, hooks, _path(config), _sets(overrides), meta_json
    )
    return from_native(items, meta)


def trajectory(
    steps: int,
    dtype: str = "f64",
    init: Union[None, int, PathLike, Mapping[str, Any]] = None,
    every: Optional[int] = None,
    config: Optional[PathLike] = None,
    overrides: Optional[Mapping[str, Any]] = None,
) -> Tensors:
    """A trajectory reference (``export --steps``): ``steps`` training steps from ``init`` (a seed,
    a weights file or a mapping of parameters; default the config's) with the config's data order
    and schedule. Holds ``losses``, ``lr``, ``grad_norm_sq`` per step and the parameters after the
    last step (with ``every``, also after every ``every`` steps as ``step_NNNNNN.<name>``)."""
    spec, params = (None, to_native(init)) if isinstance(init, Mapping) else (_init_spec(init), None)
    items, meta = _native.trajectory(steps, dtype, spec, params, every, _path(config), _sets(overrides))
    return from_native(items, meta)


def verify(
    reference: Source,
    other: Source,
    preset: Optional[str] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    keys: Iterable[str] = (),
    exclude: Iterable[str] = (),
    rename: Optional[Mapping[str, str]] = None,
) -> Report:
    """Compare ``other`` with ``reference`` tensor by tensor, as ``windtunnel verify`` does: a
    preset (``bits``, ``f64``, ``f32``; default from the reference's dtype) or elementwise
    ``rtol``/``atol``; rows in forward-graph order; the report names the first divergence."""
    label = os.fspath(other) if is_path(other) else "other"
    ref = load(reference) if is_path(reference) else reference
    oth = load(other) if is_path(other) else other
    passed, js, text, short = _native.verify(
        to_native(ref), to_native(oth), preset, rtol, atol, _names("keys", keys), _names("exclude", exclude),
        sorted((rename or {}).items()), label,
    )
    return Report(passed, json.loads(js), text, short)


def assert_matches(reference: Source, other: Source, **kw: Any) -> Report:
    """``verify``, raising ``AssertionError`` with the first divergence and the failing rows when
    ``other`` differs (for pytest). Returns the report when it matches."""
    report = verify(reference, other, **kw)
    if not report.passed:
        message = report.failures()
        if not any(str(k).startswith("cache.") for side in (reference, other) if not is_path(side) for k in side):
            message += (
                "\nonly outputs were compared: add activations (`cache.<hook name>`, e.g. "
                "cache.blocks.0.attn.hook_pattern) to both sides to locate where the port first differs"
            )
        raise AssertionError(message)
    return report


def _names(field: str, names: Union[str, Iterable[str]]) -> list:
    """Name prefixes: one string is one prefix (not its characters)."""
    out = [names] if isinstance(names, str) else list(names)
    bad = [n for n in out if not isinstance(n, str)]
    if bad:
        raise TypeError(f"invalid `{field}`: {bad[0]!r} (allowed a name prefix or a list of them)")
    return out


def _integers(field: str, value: Any) -> np.ndarray:
    """Token ids or labels as int64, refusing values an int64 would change (2.5, NaN, 2**70)."""
    a = np.asarray(_numpy(value))
    if a.dtype.kind in "iu" or a.size == 0:
        if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"invalid `{field}`: {a.max()} does not fit int64")
        return a.astype(np.int64)
    if a.dtype.kind == "b" or a.dtype.kind not in "f":
        raise TypeError(f"invalid `{field}`: dtype {a.dtype} (allowed integer token ids, int [B, T])")
    whole = np.isfinite(a) & (a == np.round(a)) & (np.abs(a) < 2.0**63)
    if not whole.all():
        i = tuple(int(j) for j in np.argwhere(~whole)[0])
        raise ValueError(f"invalid `{field}`: {a[i]} at {list(i)} is not an integer (allowed integer token ids)")
    return a.astype(np.int64)


def _numpy(x: Any) -> Any:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def _dtype_of(tensors: Mapping[str, Any]) -> str:
    floats = [np.asarray(_numpy(v)).dtype for v in tensors.values() if np.asarray(_numpy(v)).dtype.kind == "f"]
    return "f64" if floats and all(d == np.float64 for d in floats) else "f32"


def _path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def _init_spec(init: Union[None, int, PathLike]) -> Optional[str]:
    if init is None:
        return None
    if isinstance(init, bool) or not isinstance(init, (int, str, os.PathLike)):
        raise TypeError(f"invalid `init`: {init!r} (allowed a seed, a weights file or a mapping of parameters)")
    return f"seed:{init}" if isinstance(init, int) else os.fspath(init)


def _sets(overrides: Optional[Mapping[str, Any]]) -> list:
    """{"data.k": 20} -> ["data.k=20"]: config overrides as the CLI's --set takes them (TOML values)."""
    out = []
    for key, value in (overrides or {}).items():
        if isinstance(value, bool):
            v = "true" if value else "false"
        elif isinstance(value, (int, float)):
            if not math.isfinite(value):
                raise ValueError(f"invalid `{key}`: {value} (allowed a finite number)")
            v = repr(value)
        elif isinstance(value, (str, os.PathLike)):
            v = json.dumps(os.fspath(value))
        else:
            raise TypeError(f"invalid `{key}`: {value!r} (allowed a bool, number, string or path)")
        out.append(f"{key}={v}")
    return out
