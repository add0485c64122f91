"""windtunnel in a port's own test suite, in one line.

A *port* is a callable ``port(params, tokens, labels) -> outputs``: ``params`` maps TransformerLens
names (``embed.W_E``, ``blocks.0.attn.W_Q``, …) to numpy arrays, ``tokens``/``labels`` are int64
[B, T] (label −100: not scored), and ``outputs`` maps names to arrays the port computed —
``logits``, ``loss``, ``grad.<param name>`` and, to locate a difference, ``cache.<hook name>``.
Only the names the port returns are compared.

    from windtunnel.testing import check_port
    def test_my_port():
        check_port(my_port)                      # f32; check_port(my_port, dtype="f64") for f64

With the package installed, pytest also has the fixture ``windtunnel_check`` (the same function):

    def test_my_port(windtunnel_check):
        windtunnel_check(my_port)
"""

from typing import Any, Callable, Mapping, Optional

import windtunnel as wt

try:
    import pytest
except ImportError:  # check_port works without pytest; only the fixture needs it
    pytest = None

Port = Callable[[Mapping[str, Any], Any, Any], Mapping[str, Any]]


def reference_case(dtype: str = "f32", batch_size: int = 8, seed: int = 0, init: Optional[int] = None) -> wt.Tensors:
    """windtunnel's parameters (canonical model, init ``init`` or the config's) and a batch of
    ``batch_size`` canonical examples (``seed``), with its logits, loss, gradients and activations."""
    params = wt.init(init, dtype=dtype)
    b = wt.batch(batch_size, seed)
    return wt.reference(params, b["tokens"], b["labels"], dtype=dtype, hooks=True)


def check_port(port: Port, dtype: str = "f32", batch_size: int = 8, seed: int = 0, **verify: Any) -> wt.Report:
    """Run ``port`` on windtunnel's reference case and assert its outputs match (``AssertionError``
    naming the first divergence otherwise). ``verify`` goes to ``wt.verify`` (``preset``,
    ``rtol``/``atol``, ``exclude``, ``rename``)."""
    ref = reference_case(dtype, batch_size, seed)
    params = ref.params
    out = dict(port(params, ref["tokens"], ref["labels"]))
    if not out:
        raise AssertionError("the port returned no outputs (expected logits, loss, grad.*, cache.*)")
    unknown = sorted(k for k in out if k not in ref)
    if unknown:
        raise AssertionError(f"the port returned names windtunnel does not have: {unknown[:5]} (TransformerLens names)")
    mine = {**params, "tokens": ref["tokens"], "labels": ref["labels"], **out}
    expected = {k: ref[k] for k in mine}
    return wt.assert_matches(expected, mine, **verify)


if pytest is not None:

    @pytest.fixture
    def windtunnel_check() -> Callable[..., wt.Report]:
        """``check_port`` as a pytest fixture (registered by the package's ``pytest11`` entry point)."""
        return check_port
