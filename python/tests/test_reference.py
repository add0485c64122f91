"""The reference model from Python: data, init, forward/backward and trajectories agree with the
committed TransformerLens dumps and with the CLI's definitions."""
import numpy as np
import pytest

import windtunnel as wt


def test_the_canonical_data_has_the_authors_hashes():
    d = wt.data()
    assert (d.sha_gen, d.sha_train) == ("d48263b03358a2c6", "42266227ef2e6b66")
    assert d.tokens.shape == d.labels.shape == (10_000, 16) and d.tokens.dtype == np.int64
    k20 = wt.data(overrides={"data.k": 20})
    assert (k20.k, k20.tokens.shape[0], k20.sha_gen) == (20, 20_000, "3c6cf62130e4cdbe")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_transformerlens_dumps_pass_their_preset(golden, dtype):
    dump = wt.load(golden / f"grads_{dtype}.safetensors")  # TL's logits, loss, grads; cache of 2 examples
    init = golden / f"init_{dtype}.safetensors"
    ref = wt.reference(init, dump["tokens"], dump["labels"], hooks=False)
    report = wt.assert_matches(dump, ref, exclude=["cache."])
    assert report.compared == 74 and report.first_divergence is None
    assert report.criterion.startswith(f"preset {dtype}")
    assert abs(ref.loss - float(dump["loss"])) <= 1e-5 * abs(ref.loss)
    two = wt.reference(init, dump["tokens"][:2], dump["labels"][:2], hooks=True)
    assert wt.assert_matches(dump, two, keys=["cache."]).compared == len(dump.cache) > 40


def test_the_loss_is_the_mean_cross_entropy_of_shifted_logits():
    d = wt.data()
    ref = wt.reference(wt.init(3, dtype="f64"), d.tokens[:16], d.labels[:16], hooks=True)
    logits, labels = ref.logits[:, :-1], d.labels[:16, 1:]
    scored = labels != -100
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    ce = -np.take_along_axis(logp, np.where(scored, labels, 0)[..., None], -1)[..., 0]
    assert ref.loss == pytest.approx(ce[scored].mean(), rel=1e-13)
    assert set(ref.grads) == set(ref.params) and len(ref.params) == 70
    assert ref.cache["blocks.0.attn.hook_pattern"].shape == (16, 4, 16, 16)


def test_the_same_inputs_give_the_same_bits():
    d = wt.data()
    a = wt.reference(wt.init(1), d.tokens[:4], d.labels[:4])
    b = wt.reference(wt.init(1), d.tokens[:4], d.labels[:4])
    assert wt.verify(a, b, preset="bits").passed
    c = wt.reference(wt.init(2), d.tokens[:4], d.labels[:4])
    assert not wt.verify(a, c, preset="bits").passed


def test_a_trajectory_replays_the_authors_pytorch_loop(golden):
    dump = golden / "traj_constant_f64.safetensors"
    traj = wt.trajectory(12, "f64", init=golden / "init_f64.safetensors", overrides={"train.data_order": str(dump)})
    assert traj["losses"].shape == (12,) and traj["lr"].shape == (12,)
    report = wt.assert_matches(dump, traj, exclude=["perm"])
    assert report.row("losses")["norm_rel"] < 1e-12


def test_trajectory_checkpoints_and_prefixes_are_consistent():
    long = wt.trajectory(4, "f32", init=5, every=2)
    short = wt.trajectory(2, "f32", init=wt.init(5))
    assert long["step_000002.blocks.0.attn.W_Q"].shape == (4, 128, 32)
    assert not any(k.startswith("step_000004.") for k in long)
    assert np.array_equal(long["losses"][:2], short["losses"])
    for name, value in short.params.items():
        assert np.array_equal(long[f"step_000002.{name}"], value), name


def test_a_files_recorded_model_config_is_used_unless_overridden(tmp_path):
    d = wt.data()
    small = wt.init(0, overrides={"model.n_layers": 2})
    assert small.metadata["model"]["n_layers"] == 2 and "blocks.2.ln1.w" not in small
    path = tmp_path / "small.safetensors"
    wt.save(path, small, metadata=small.metadata)
    ref = wt.reference(path, d.tokens[:2], d.labels[:2])
    assert "grad.blocks.1.mlp.W_in" in ref and "grad.blocks.2.mlp.W_in" not in ref
    with pytest.raises(ValueError, match="another config"):
        wt.reference(path, d.tokens[:2], d.labels[:2], overrides={"model.n_layers": 4})
    with pytest.raises(ValueError, match="missing"):
        wt.reference(dict(small), d.tokens[:2], d.labels[:2])  # bare arrays: the canonical model


def test_batch_is_the_cli_exports_batch(tmp_path):
    import subprocess

    from test_docs import windtunnel_bin

    path = tmp_path / "ref.safetensors"
    subprocess.run([windtunnel_bin(), "export", "--batch-size", "8", "--batch-seed", "3", "--out", str(path), "-q"], check=True)
    cli, b = wt.load(path), wt.batch(8, seed=3)
    assert np.array_equal(b["tokens"], cli["tokens"]) and np.array_equal(b["labels"], cli["labels"])
    assert not np.array_equal(wt.batch(8, seed=4)["tokens"], b["tokens"])
    with pytest.raises(ValueError, match="batch-size"):
        wt.batch(0)


def test_reference_compares_what_the_port_provides_and_says_how_to_locate_a_difference():
    d = wt.data()
    mine = dict(wt.reference(wt.init(1), d.tokens[:4], d.labels[:4], hooks=False))
    assert not any(k.startswith("cache.") for k in mine)
    ref = wt.reference(mine)  # no activations given: none computed, so nothing is missing
    assert not any(k.startswith("cache.") for k in ref)
    wt.assert_matches(ref, mine)
    mine["logits"] = mine["logits"] + 1e-2
    with pytest.raises(AssertionError, match=r"add activations \(`cache.<hook name>`"):
        wt.assert_matches(ref, mine)
    with_cache = dict(wt.reference(wt.init(1), d.tokens[:4], d.labels[:4], hooks=True))
    assert any(k.startswith("cache.") for k in wt.reference(with_cache))
