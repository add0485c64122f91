"""The package ships its types (py.typed, _native.pyi) and its command line (python -m windtunnel)."""

import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

import windtunnel as wt
from windtunnel import _native

PKG = Path(wt.__file__).parent


def test_the_native_stub_names_exactly_the_module_s_functions_with_their_parameters():
    stub = ast.parse((PKG / "_native.pyi").read_text())
    stubbed = {f.name: [a.arg for a in f.args.args] for f in stub.body if isinstance(f, ast.FunctionDef)}
    native = {n: getattr(_native, n) for n in dir(_native) if callable(getattr(_native, n)) and not n.startswith("_")}
    assert set(stubbed) == set(native)
    for name, fn in native.items():
        params = list(inspect.signature(fn).parameters)
        assert stubbed[name] == params, f"{name}: stub {stubbed[name]} vs module {params}"
    assert (PKG / "py.typed").exists()


def run_module(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "windtunnel", *args], capture_output=True, text=True, env=env)


def test_python_m_windtunnel_is_the_command_line_tool_with_its_exit_codes():
    out = run_module("--version")
    assert out.returncode == 0 and out.stdout.startswith("windtunnel ") and "arithmetic 2" in out.stdout, out
    out = run_module("data", "--k", "3", "--n-b", "5")
    assert out.returncode == 0 and "sha_train" in out.stdout, out
    out = run_module("data", "--k", "0")
    assert out.returncode == 2 and "data.k" in out.stderr, out
    out = run_module("no-such-command")
    assert out.returncode == 2 and "no-such-command" in out.stderr, out
