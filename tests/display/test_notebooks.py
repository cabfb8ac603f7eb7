"""The walkthrough notebooks in notebooks/: stored without outputs, and each
runs from top to bottom on a Jupyter kernel, its rich displays included."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_nine_walkthroughs_are_there():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"0{k}" for k in range(1, 10)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_stored_without_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.name} cell {k} keeps its outputs"
            assert cell["execution_count"] is None, f"{path.name} cell {k} keeps its count"
    assert nb["cells"][0]["cell_type"] == "markdown"  # each opens with its story


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the test extra's nbformat runs notebooks")
    nbclient = pytest.importorskip("nbclient", reason="the test extra's nbclient runs notebooks")
    pytest.importorskip("ipykernel", reason="the test extra's ipykernel is the notebooks' kernel")
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    html = [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "data" in o and "text/html" in o["data"]
    ]
    assert any('class="uir-x"' in h for h in html), f"{path.name} shows no rich display"
    for h in html:
        assert "<script" not in h.lower()
    assert os.environ.get("JUPYTER_PLATFORM_DIRS") == "1"
