"""Bounded fuzzing of the Python entry points (hardening issue): every input gives a result or
an exception naming what was wrong (ValueError, TypeError, OSError); none crashes the
interpreter or passes a wrong input silently. Derandomised, so CI sees the same cases."""

import os
import tempfile

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import windtunnel as wt

BOUNDED = settings(max_examples=60, deadline=None, derandomize=True)
PARAMS = wt.init(0)


@BOUNDED
@given(st.one_of(st.binary(max_size=300), st.binary(max_size=40).map(lambda b: (8).to_bytes(8, "little") + b)))
def test_load_of_random_bytes_returns_or_raises_a_named_error(data):
    fd, path = tempfile.mkstemp(suffix=".safetensors")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        wt.load(path)
    except (ValueError, OSError) as e:
        assert str(e)
    finally:
        os.remove(path)


shapes = st.lists(st.integers(0, 20), min_size=0, max_size=3).map(tuple)
dtypes = st.sampled_from([np.int64, np.int32, np.uint8, np.float32, np.float64, np.bool_])


@BOUNDED
@given(shapes, dtypes, st.integers(-300, 300), st.booleans())
def test_reference_of_random_token_arrays_computes_or_refuses(shape, dtype, value, same_labels):
    tokens = np.full(shape, value).astype(dtype)
    labels = tokens if same_labels else np.full(shape, -100).astype(dtype)
    try:
        out = wt.reference(PARAMS, tokens, labels, hooks=False)
    except (ValueError, TypeError) as e:
        assert str(e)
        return
    # Accepted: a [B, T] batch of whole, in-vocabulary token ids, and a finite loss.
    assert len(shape) == 2 and shape[0] > 0 and shape[1] > 0
    assert np.isfinite(out["loss"]).all()


keys = st.sampled_from(["data.k", "data.n_b", "data.seed", "train.lr", "model.d_model", "data.kk", "k", "x.y", ""])
values = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=8), st.booleans(), st.none()
)


@BOUNDED
@given(keys, values)
def test_data_overrides_of_random_values_give_data_or_a_named_error(key, value):
    try:
        d = wt.data(overrides={key: value, "data.n_b": 20} if key != "data.n_b" else {key: value})
    except (ValueError, TypeError) as e:
        assert str(e)
        return
    assert d.k >= 1


@BOUNDED
@given(st.one_of(st.text(max_size=12), st.lists(st.text(max_size=8), max_size=3)))
def test_verify_with_random_key_selections_never_passes_a_wrong_port(selection):
    wrong = dict(PARAMS)
    wrong["embed.W_E"] = np.asarray(wrong["embed.W_E"]) + 1.0
    try:
        report = wt.verify(PARAMS, wrong, exclude=selection)
    except (ValueError, TypeError) as e:
        assert str(e)
        return
    excluded = [selection] if isinstance(selection, str) else selection
    if not any(s and "embed.W_E".startswith(s) for s in excluded):
        assert not report.passed, f"exclude={selection!r} let a changed embed.W_E pass"
