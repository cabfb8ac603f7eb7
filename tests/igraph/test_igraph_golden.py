"""Golden lowering tests: each case of golden/*.hlo is lowered for the
reference CPU model and its Kernel Graph text is checked by FileCheck; the
Kernel Graph also runs to the evaluator's results."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from golden_util import cases, filecheck_text

import uir
import uir.igraph as ig
from uir._src.core.evaluate import random_arguments

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
CASES = [c for p in sorted(GOLDEN.glob("*.hlo")) for c in cases(p)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_lowering(case, tmp_path):
    module = uir.hlo.parse_module(case.text, file=case.file.name)
    out = uir.passes.default_pipeline().run(module)
    kg = ig.lower(out, "reference-cpu")
    text = kg.to_text()
    result = filecheck_text(case.text, text, tmp_path / f"{case.file.stem}_{case.index}.hlo")
    assert result.returncode == 0, (
        f"{case.id}: {case.title}\n{result.stderr}\n--- output ---\n{text}"
    )
    args = random_arguments(out, 0)
    got, want = ig.interpret(kg, *args), uir.evaluate(out, *args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
    else:
        got, want = (got,), (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_at_least_six_golden_cases():
    assert len(CASES) >= 6
