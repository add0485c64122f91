"""windtunnel.testing: a port's test suite checks it in one line (function or pytest fixture)."""

import numpy as np
import pytest

import windtunnel as wt
from windtunnel.testing import check_port


def windtunnel_as_a_port(params, tokens, labels):
    out = wt.reference(params, tokens, labels, hooks=True)
    return {k: v for k, v in out.items() if k in ("logits", "loss") or k.startswith(("grad.", "cache."))}


def off_by_one_ulp_in_layer_1(params, tokens, labels):
    out = dict(windtunnel_as_a_port(params, tokens, labels))
    k = "cache.blocks.1.attn.hook_pattern"
    out[k] = np.nextafter(out[k], np.float32(2.0)) * np.float32(1.01)
    return out


def test_a_correct_port_passes_in_one_line():
    report = check_port(windtunnel_as_a_port)
    assert report.passed and report.compared > 100


def test_the_fixture_is_registered_by_the_installed_package(windtunnel_check):
    assert windtunnel_check(windtunnel_as_a_port, dtype="f64").passed


def test_a_wrong_port_fails_naming_where_it_first_differs():
    with pytest.raises(AssertionError, match="blocks.1.attn.hook_pattern"):
        check_port(off_by_one_ulp_in_layer_1)


def test_a_port_returning_nothing_or_other_names_is_told_so():
    with pytest.raises(AssertionError, match="no outputs"):
        check_port(lambda p, t, l: {})
    with pytest.raises(AssertionError, match="does not have"):
        check_port(lambda p, t, l: {"transformer.wte.weight": np.zeros(3)})
