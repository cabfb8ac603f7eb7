"""The rich displays in a real browser: headless Chromium (Debian's
`chromium`, installed by the project's setup) renders a `uir report` page
and a notebook's displays; the screenshot is not blank and the DOM holds
the drawings."""

from __future__ import annotations

import os
import pathlib
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

import uir
import uir.examples
import uir.nn as unn

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt install chromium)"
)
HAS_DOT = shutil.which("dot") is not None


def _chromium(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    # The browser is a tool here, not under test: no sanitizer runtime
    # preloaded into it (make asan preloads one for the Python process).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # root in containers
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def png_ink(path: pathlib.Path) -> tuple[int, int, float]:
    """Width, height and the share of non-zero bytes in the PNG's filtered
    image data: a blank page filters to rows of zeros, a drawn one does not."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[pos + 8 : pos + 16])
        elif kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), np.uint8)
    return width, height, float(np.count_nonzero(raw)) / raw.size


def _shot(page: pathlib.Path, png: pathlib.Path, size: str = "1000,900") -> float:
    done = _chromium(f"--screenshot={png}", f"--window-size={size}", page.as_uri())
    assert png.exists(), done.stderr[-2000:]
    width, height, ink = png_ink(png)
    assert (width, height) == tuple(int(v) for v in size.split(","))
    return ink


def _not_blank(ink: float, tmp_path: pathlib.Path) -> None:
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    empty = _shot(blank, tmp_path / "blank.png")
    assert ink > 0.005 and ink > 10 * empty, (ink, empty)


def test_a_report_renders_with_its_drawings(tmp_path):
    page = tmp_path / "report.html"
    uir.report(uir.hlo.load(uir.examples.path("mlp.hlo")), profile=False).save(page)
    dom = _chromium("--dump-dom", page.as_uri()).stdout
    assert "uir report: mlp" in dom and "the pipeline, pass by pass" in dom
    if HAS_DOT:
        assert dom.count("<svg") >= 3
    _not_blank(_shot(page, tmp_path / "report.png"), tmp_path)


def test_a_display_renders_as_a_notebook_shows_it(tmp_path):
    x = np.ones((16, 64), np.float32)
    compiled = uir.jit(lambda v: unn.softmax(v, axis=-1)).lower(x).compile()
    page = tmp_path / "display.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + compiled.module._repr_html_()
        + "</body></html>",
        encoding="utf-8",
    )
    _check_display_page(page, tmp_path)


@pytest.mark.slow
def test_a_notebooks_outputs_render(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the test extra's nbformat runs notebooks")
    nbclient = pytest.importorskip("nbclient", reason="the test extra's nbclient runs notebooks")
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    path = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "02_pipeline.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3").execute()
    html = [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "data" in o and "text/html" in o["data"]
    ]
    page = tmp_path / "notebook.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        + "".join(html)
        + "</body></html>",
        encoding="utf-8",
    )
    _check_display_page(page, tmp_path)
    assert "Pipeline trace" in _chromium("--dump-dom", page.as_uri()).stdout


def _check_display_page(page: pathlib.Path, tmp_path: pathlib.Path) -> None:
    dom = _chromium("--dump-dom", page.as_uri()).stdout
    assert "HloModule" in dom
    if HAS_DOT:
        assert "<svg" in dom and ("kInput" in dom or "kLoop" in dom)
    _not_blank(_shot(page, tmp_path / "display.png"), tmp_path)
