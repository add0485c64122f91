"""verify from Python: correct ports pass, the four wrong ports of the calibration fail in both
dtypes and are named at their first divergence, and the report reads like the CLI's."""
import numpy as np
import pytest

import windtunnel as wt


@pytest.fixture(scope="module", params=["f32", "f64"])
def case(request):
    dtype = request.param
    d = wt.data()
    params = wt.init(f"{wt_root()}/golden/tl/init_{dtype}.safetensors", dtype=dtype)
    batch = dict(tokens=d.tokens[:16], labels=d.labels[:16])
    return dtype, params, batch, wt.reference(params, **batch, hooks=True)


def wt_root():
    import pathlib

    return pathlib.Path(__file__).resolve().parents[2]


def test_a_wrong_layer_norm_eps_is_found_at_the_first_scale(case):
    dtype, params, batch, ref = case
    port = wt.reference(params, **batch, hooks=True, overrides={"model.eps": 1e-6})
    report = wt.verify(ref, port)
    assert not report and report.first_divergence == "cache.blocks.0.ln1.hook_scale"


def test_another_activation_is_found_at_the_mlp(case):
    dtype, params, batch, ref = case
    port = wt.reference(params, **batch, hooks=True, overrides={"model.act_fn": "relu"})
    assert wt.verify(ref, port).first_divergence == "cache.blocks.0.mlp.hook_post"


def test_a_changed_weight_is_named(case):
    dtype, params, batch, ref = case
    nudged = dict(params)
    nudged["blocks.1.attn.W_V"] = params["blocks.1.attn.W_V"].copy()
    nudged["blocks.1.attn.W_V"].flat[0] += 1e-3
    report = wt.verify(ref, wt.reference(nudged, **batch, hooks=True))
    assert report.first_divergence == "blocks.1.attn.W_V"
    assert report.row("blocks.0.attn.W_V")["pass"] and not report.row("logits")["pass"]


def test_an_unshifted_loss_is_named(case):
    dtype, params, batch, ref = case
    port = dict(ref)
    logits, labels = ref.logits, batch["labels"]
    scored = labels != -100  # scored against the logits at the same position, not the one before
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    port["loss"] = np.asarray(-np.take_along_axis(logp, np.where(scored, labels, 0)[..., None], -1)[..., 0][scored].mean())
    report = wt.verify(ref, port)
    assert report.first_divergence == "loss" and report.failed == 1


def test_a_loss_saved_as_shape_1_and_torch_style_inputs_compare():
    ref = wt.reference(wt.init(0), *first_batch(2))
    other = dict(ref)
    other["loss"] = ref["loss"].reshape(1)
    other["logits"] = FakeTorch(ref["logits"])
    assert wt.verify(ref, other).passed


def test_assert_matches_raises_with_the_diagnosis(case):
    dtype, params, batch, ref = case
    port = wt.reference(params, **batch, hooks=True, overrides={"model.act_fn": "relu"})
    with pytest.raises(AssertionError) as e:
        wt.assert_matches(ref, port)
    text = str(e.value)
    assert text.startswith("first divergence: cache.blocks.0.mlp.hook_post") and "tensors compared" in text
    assert "  ok" not in text, "the assertion lists only the failing rows"


def test_the_report_reads_like_the_cli(tmp_path):
    ref = wt.reference(wt.init(0), *first_batch(2), hooks=False)
    path = tmp_path / "ref.safetensors"
    wt.save(path, ref)
    report = wt.verify(path, path)
    lines = str(report).splitlines()
    assert lines[0].startswith("no divergence (preset f32") and lines[1].split()[:2] == ["tensor", "shape"]
    names = [r["name"] for r in report.rows]
    assert names.index("embed.W_E") < names.index("logits") < names.index("loss") < names.index("grad.unembed.W_U")
    assert names.index("grad.unembed.W_U") < names.index("grad.embed.W_E"), "gradients in backward order"
    assert repr(report).startswith("<Report passed=True")


def test_other_names_get_a_hint_and_rename_maps_them():
    ref = wt.reference(wt.init(0), *first_batch(2), hooks=False)
    hf = {("transformer.wte.weight" if k == "embed.W_E" else k): v for k, v in ref.items()}
    report = wt.verify(ref, hf)
    assert report.missing == ["embed.W_E"] and "Hugging Face" in str(report)
    assert wt.verify(ref, hf, rename={"transformer.wte.weight": "embed.W_E"}).passed


def test_bad_arguments_are_errors_that_name_the_field():
    ref = wt.reference(wt.init(0), *first_batch(2), hooks=False)
    for kw, field in [({"preset": "f16"}, "preset"), ({"rtol": 1e-3}, "rtol"), ({"rtol": float("nan"), "atol": 0.0}, "rtol")]:
        with pytest.raises(ValueError, match=field):
            wt.verify(ref, ref, **kw)
    assert not wt.verify(ref, ref, keys=["no_such_tensor"]).passed, "a comparison of nothing is not a pass"


def first_batch(n):
    d = wt.data()
    return d.tokens[:n], d.labels[:n]


class FakeTorch:
    """What verify sees of a torch tensor: .detach().cpu().numpy()."""

    def __init__(self, a):
        self.a = a

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def test_the_readmes_three_line_check_on_transformerlens_outputs():
    golden = wt_root() / "golden" / "tl"
    dump = wt.load(golden / "grads_f64.safetensors")  # TransformerLens's logits, loss and gradients
    mine = {**wt.load(golden / "init_f64.safetensors"), **{k: v for k, v in dump.items() if not k.startswith("cache.")}}
    ref = wt.reference(mine, hooks=False)
    wt.assert_matches(ref, mine)
    mine["grad.blocks.2.mlp.b_in"] = mine["grad.blocks.2.mlp.b_in"] * (1 + 1e-9)
    with pytest.raises(AssertionError, match="first divergence: grad.blocks.2.mlp.b_in"):
        wt.assert_matches(ref, mine)
