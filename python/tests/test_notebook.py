"""examples/verify_a_port.ipynb runs as written: its code cells in order, in one namespace, in a
scratch directory (each cell asserts what it shows). Stored without outputs, so what a reader
sees after running it is what this test checked."""
import json

from conftest import ROOT

NOTEBOOK = ROOT / "examples" / "verify_a_port.ipynb"


def code_cells():
    nb = json.loads(NOTEBOOK.read_text())
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_the_notebook_is_stored_without_outputs():
    cells = code_cells()
    assert len(cells) >= 4
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in cells)


def test_the_notebook_runs_and_finds_the_planted_bug(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, cell in enumerate(code_cells()):
        exec(compile("".join(cell["source"]), f"{NOTEBOOK.name}[{i}]", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "no divergence" in printed and "cache.blocks.0.ln1.hook_scale" in printed, printed
    assert (tmp_path / "numpy_port64.safetensors").exists()
