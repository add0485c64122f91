"""Files, errors and the optional helpers."""
import json
import sys

import numpy as np
import pytest

from conftest import ROOT

import windtunnel as wt


def test_save_and_load_round_trip_every_dtype(tmp_path):
    ts = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array(0.1),
        "c": np.array([[-100, 3]], dtype=np.int64),
    }
    path = tmp_path / "x.safetensors"
    wt.save(path, ts, metadata={"note": "hi"})
    back = wt.load(path)
    assert back.metadata == {"note": "hi"} and set(back) == set(ts)
    for k, v in ts.items():
        assert back[k].dtype == v.dtype and np.array_equal(back[k], v), k
    back["a"][0, 0] = 7  # arrays are writable copies
    assert not list(tmp_path.glob("*.tmp")), "atomic writes leave no temp file"
    with pytest.raises(TypeError, match="mask.*bool"):
        wt.save(tmp_path / "y.safetensors", {"mask": np.array([True])})
    assert not (tmp_path / "y.safetensors").exists()


def test_integer_and_bool_tensors_load_and_compare_exactly(tmp_path):
    ref = {"x": np.ones(3), "mask": np.array([True, False]), "ids": np.array([3, -2], np.int8),
           "u": np.array([250], np.uint8), "i32": np.array([7], np.int32)}
    assert wt.verify(ref, ref).passed, "integers and bools compare as integers"
    flipped = {**ref, "mask": np.array([True, True])}
    report = wt.verify(ref, flipped)
    assert not report.passed and report.first_divergence == "mask"
    path = tmp_path / "ints.safetensors"
    save_file_raw(path, ref)
    back = wt.load(path)
    for k in ["mask", "ids", "u", "i32"]:
        assert back[k].dtype == np.int64 and np.array_equal(back[k], ref[k].astype(np.int64)), k
    assert wt.verify(path, ref).passed


def save_file_raw(path, tensors):
    """A safetensors file with the arrays' own dtypes (what torch or safetensors would write)."""
    names = {np.dtype(np.bool_): "BOOL", np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8",
             np.dtype(np.int32): "I32", np.dtype(np.float64): "F64"}
    header, blobs, at = {}, [], 0
    for k, v in tensors.items():
        b = np.ascontiguousarray(v).tobytes()
        header[k] = {"dtype": names[v.dtype], "shape": list(v.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    path.write_bytes(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def test_a_dtype_windtunnel_does_not_read_is_named(tmp_path):
    path = tmp_path / "u64.safetensors"
    h = json.dumps({"big": {"dtype": "U64", "shape": [1], "data_offsets": [0, 8]}}).encode()
    path.write_bytes(len(h).to_bytes(8, "little") + h + bytes(8))
    with pytest.raises(ValueError, match="tensor big has dtype U64"):
        wt.load(path)


def test_one_string_is_one_name_prefix():
    ref = {"logits": np.ones(3), "perm": np.arange(3)}
    wrong = {"logits": np.ones(3) * 2, "perm": np.arange(3) + 1}
    assert not wt.verify(ref, wrong, exclude="perm").passed, "perm left out, logits still compared"
    assert not wt.verify(ref, wrong, keys="logits").passed, "not the tensors starting l, o, g, i, t or s"
    assert wt.verify(ref, {**wrong, "logits": ref["logits"]}, exclude="perm").passed
    with pytest.raises(TypeError, match="keys"):
        wt.verify(ref, ref, keys=[1])


def test_tokens_are_integers_or_refused():
    params = wt.init(0)
    d = wt.data()
    tokens, labels = d.tokens[:2], d.labels[:2]
    as_float = wt.reference(params, tokens.astype(np.float32), labels.astype(np.float64), hooks=False)
    assert as_float["loss"] == wt.reference(params, tokens, labels, hooks=False)["loss"], "whole floats are ids"
    bad = tokens.astype(np.float64)
    bad[1, 3] = 2.5
    with pytest.raises(ValueError, match=r"tokens.*2.5 at \[1, 3\]"):
        wt.reference(params, bad, labels)
    with pytest.raises(TypeError, match="labels"):
        wt.reference(params, tokens, labels.astype(str))


def test_a_tensor_named_metadata_is_refused(tmp_path):
    with pytest.raises(ValueError, match="__metadata__"):
        wt.save(tmp_path / "m.safetensors", {"__metadata__": np.ones(1)})
    assert not (tmp_path / "m.safetensors").exists()


def test_bad_input_gives_clear_errors(tmp_path):
    with pytest.raises(OSError, match="missing.safetensors"):
        wt.load(tmp_path / "missing.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"this is not a safetensors file at all")
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        wt.load(junk)
    with pytest.raises(ValueError, match="dtype"):
        wt.init(0, dtype="f16")
    with pytest.raises(ValueError, match="did you mean `k`"):
        wt.data(overrides={"data.kk": 3})
    with pytest.raises(ValueError, match="data.k"):
        wt.data(overrides={"data.k": 0})
    with pytest.raises(ValueError, match="labels"):
        wt.reference(wt.init(0), np.zeros((2, 16), np.int64), np.zeros((3, 16), np.int64))
    with pytest.raises(ValueError, match="tokens"):
        wt.reference(wt.init(0))
    with pytest.raises(ValueError, match="steps"):
        wt.trajectory(0)
    with pytest.raises(TypeError, match="init"):
        wt.trajectory(1, init=1.5)
    with pytest.raises(ValueError, match="finite"):
        wt.data(overrides={"train.lr": float("inf")})


def test_metrics_reads_records_and_names_a_bad_line(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 50, "train_loss": 2.9}) + "\n\n" + json.dumps({"step": 100}) + "\n")
    assert [r["step"] for r in wt.metrics(tmp_path)] == [50, 100]
    (tmp_path / "metrics.jsonl").write_text('{"step": 50}\n{"step": \n')
    with pytest.raises(ValueError, match=r"metrics.jsonl:2"):
        wt.metrics(tmp_path)


def test_optional_helpers_say_what_they_need(tmp_path, monkeypatch):
    (tmp_path / "metrics.jsonl").write_text('{"step": 50}\n')
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pandas"):
        wt.metrics_frame(tmp_path)
    monkeypatch.setitem(sys.modules, "transformer_lens", None)
    from windtunnel.tl import hooked_transformer

    with pytest.raises(ImportError, match=r'transformer-lens.*pip install "\./python\[tl\]"'):
        hooked_transformer(wt.init(0))


def test_the_tl_extra_pins_transformerlens_below_4_where_hookedtransformer_exists():
    import tomllib

    extras = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (tl,) = [r for r in extras["tl"] if r.startswith("transformer-lens")]
    assert "<4" in tl and ">=2.16" in tl, tl
    assert any(r.startswith("torch") for r in extras["tl"]) and extras["jax"], extras


def test_hooked_transformer_reproduces_the_transformerlens_dump(golden):
    pytest.importorskip("transformer_lens")  # optional: needs torch and transformer-lens < 4
    import torch
    from windtunnel.tl import hooked_transformer

    model = hooked_transformer(golden / "init_f64.safetensors")
    dump = wt.load(golden / "grads_f64.safetensors")
    with torch.no_grad():
        logits = model(torch.from_numpy(dump["tokens"])).numpy()
    assert logits.dtype == np.float64
    assert np.abs(logits - dump["logits"]).max() <= 1e-12 * np.abs(dump["logits"]).max()


@pytest.mark.parametrize("var,value", [("WINDTUNNEL_SIMD", "avx3"), ("WINDTUNNEL_MAX_MEMORY", "lots")])
def test_a_malformed_windtunnel_variable_is_refused_at_import(var, value):
    import os
    import subprocess
    env = dict(os.environ, **{var: value})
    out = subprocess.run([sys.executable, "-c", "import windtunnel"], env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert var in out.stderr and "allowed" in out.stderr, out.stderr


def test_a_batch_too_large_for_the_memory_limit_raises_memory_error_not_abort(monkeypatch):
    # Hardening issue item 3: a large batch aborted the interpreter; the estimate is now checked
    # before the activations are allocated (read from the environment at each call).
    monkeypatch.setenv("WINDTUNNEL_MAX_MEMORY", "100M")
    tokens = np.ones((20000, 16), np.int64)
    with pytest.raises(MemoryError, match="an export of a batch of 20000 needs about"):
        wt.reference(wt.init(0), tokens, tokens, hooks=False)
