"""uir.report and `uir report`: a whole compile as one offline HTML page."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import uir
import uir.examples
import uir.nn as unn
from uir._tools.cli import main

HAS_DOT = shutil.which("dot") is not None


def mlp(x, w1, w2):
    return unn.log_softmax(unn.relu(x @ w1) @ w2, axis=-1)


RNG = np.random.default_rng(0)
ARGS = (
    RNG.standard_normal((32, 64)).astype(np.float32),
    RNG.standard_normal((64, 128)).astype(np.float32) * 0.1,
    RNG.standard_normal((128, 10)).astype(np.float32) * 0.1,
)

SECTIONS = [
    "summary",
    "the pipeline, pass by pass",
    "fusion: every producer",
    "the optimized module",
    "buffer assignment",
    "the Kernel Graph and its iGraphs",
    "thunks",
    "a profiled run",
]


def _check_page(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page.lower() and "http" not in page and "@import" not in page
    assert "unavailable" not in page  # every part rendered
    for name in SECTIONS:
        assert name in page, name
    for anchor in re.findall(r'href="#([\w-]+)"', page):
        assert f'id="{anchor}"' in page
    if HAS_DOT:
        assert page.count("<svg") >= 3


def test_report_of_a_traced_function(tmp_path):
    r = uir.report(mlp, *ARGS)
    _check_page(r.html)
    assert "input: the traced module, with source lines" in r.html
    assert "return unn.log_softmax" in r.html  # the user's line beside its ops
    assert 'aria-label="timeline"' in r.html
    path = r.save(tmp_path / "mlp.html")
    with open(path, encoding="utf-8") as f:
        assert f.read() == r.html
    inner = r._repr_html_()
    assert inner.startswith('<div class="uir-x">') and "<body>" not in inner


def test_report_of_a_module_without_a_run():
    m = uir.hlo.load(uir.examples.path("mlp.hlo"))
    r = uir.report(m, profile=False)
    assert "a profiled run" not in r.html and "input: the module" in r.html
    assert m.name in r.html


def test_uir_report_writes_the_page(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(uir.examples.path("mlp.hlo")), "-o", str(out)]) == 0
    _check_page(out.read_text(encoding="utf-8"))
    assert "wrote" in capsys.readouterr().out


def test_uir_report_on_bad_text_says_where(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT r = f32[2] nonsense()\n}\n")
    code = main(["report", str(bad), "-o", str(tmp_path / "r.html")])
    assert code != 0
    assert "3:" in capsys.readouterr().err  # line and column of the error
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("profile", [True, False])
def test_report_with_pytrees(profile):
    def f(d):
        return {"y": d["a"] * 2 + d["b"]}

    r = uir.report(f, {"a": np.ones(8, np.float32), "b": np.zeros(8, np.float32)}, profile=profile)
    assert ("a profiled run" in r.html) == profile and "unavailable" not in r.html
