"""Files, errors and the optional helpers."""
import json
import sys

import numpy as np
import pytest

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


def test_a_bool_tensor_cannot_be_compared_unless_excluded(tmp_path):
    ref = {"x": np.ones(3), "mask": np.array([True, False])}
    assert not wt.verify(ref, ref).passed
    assert wt.verify(ref, ref, exclude=["mask"]).passed


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

    with pytest.raises(ImportError, match="transformer-lens"):
        hooked_transformer(wt.init(0))


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
