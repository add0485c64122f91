"""docs/interop.md runs as written: its sh and python blocks in order, in one scratch directory
(with golden/ and configs/ linked in), the `text` block after a command checked against what it
printed. `<!-- test: exit N -->` expects that exit code; `<!-- test: needs torch -->` blocks run
when torch and transformer-lens are importable, `<!-- test: needs jax -->` blocks when jax is
(required when WT_REQUIRE_JAX=1, as in CI, so they cannot be skipped there unnoticed)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

BLOCK = re.compile(r"(?:<!-- test: (?P<tag>[^>]*) -->\n)?```(?P<lang>sh|python|text)\n(?P<code>.*?)```", re.S)


def blocks():
    return [m.groupdict() for m in BLOCK.finditer((ROOT / "docs" / "interop.md").read_text())]


def windtunnel_bin():
    """WT_BIN, else the checkout's release binary, brought up to date first (a no-op when it is)."""
    if os.environ.get("WT_BIN"):
        return os.environ["WT_BIN"]
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "windtunnel"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "release" / "windtunnel")


def run_sh(code, exit_code, cwd, wt_bin):
    script = code.replace("cargo run --release --", wt_bin)
    p = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == exit_code, f"{code}\nexit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def shown_in(expected, printed):
    """Each line of a text block appears in a printed line (whitespace-normalised, as a prefix
    of the line's content for table rows shown cut short)."""
    out = [" ".join(l.split()) for l in printed.splitlines()]
    for line in expected.strip().splitlines():
        want = " ".join(line.split())
        assert any(o.startswith(want) for o in out), f"documented output not printed: {line!r}\n{printed}"


def test_interop_md_runs_as_written(tmp_path, monkeypatch):
    for d in ("golden", "configs"):
        (tmp_path / d).symlink_to(ROOT / d)
    monkeypatch.chdir(tmp_path)
    wt_bin = windtunnel_bin()
    has = {
        "torch": all(importlib.util.find_spec(m) for m in ("torch", "transformer_lens")),
        "jax": importlib.util.find_spec("jax") is not None,
    }
    if os.environ.get("WT_REQUIRE_JAX") == "1":
        assert has["jax"], "WT_REQUIRE_JAX=1 but jax is not importable: the JAX snippets would be skipped"
    namespace, ran, printed, skipped = {}, {"sh": 0, "python": 0, "text": 0}, None, False
    for b in blocks():
        tag = b["tag"] or ""
        needs = [m for m in has if f"needs {m}" in tag]
        # A text block shows the output of the command before it, and is skipped with it.
        skipped = skipped if b["lang"] == "text" else any(not has[m] for m in needs)
        if skipped:
            continue
        if b["lang"] == "sh":
            exit_code = int(tag.split("exit")[1]) if "exit" in tag else 0
            printed = run_sh(b["code"], exit_code, tmp_path, wt_bin)
        elif b["lang"] == "python":
            exec(compile(b["code"], "docs/interop.md", "exec"), namespace)
            printed = None
        else:
            assert printed is not None, f"a text block must follow a command:\n{b['code']}"
            shown_in(b["code"], printed)
        ran[b["lang"]] += 1
    assert ran["sh"] >= 5 and ran["python"] >= 5 and ran["text"] >= 4, ran
    shown = ", ".join(f"{m} snippets: {'yes' if ok else 'no'}" for m, ok in has.items())
    print(f"ran {ran} ({shown}, python {sys.version.split()[0]})")
