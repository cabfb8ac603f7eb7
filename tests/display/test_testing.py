"""uir.testing (assertions, Hypothesis strategies) and uir's pytest plugin
(uir_backend, uir_report, --uir-dump), the last through the example
project's own pytest files run as a user runs them."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings

import uir
import uir.examples
import uir.numpy as unp
from uir.testing import assert_fusion, assert_matches_evaluator, assert_passes_preserve
from uir.testing import strategies as us

ROOT = pathlib.Path(__file__).resolve().parents[2]
X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)


def f(x):
    return unp.tanh(x) * 2 + x.sum(axis=-1, keepdims=True)


def test_assert_matches_evaluator_passes_and_names_what_differs(monkeypatch):
    assert_matches_evaluator(f, X, backends=["cpu", "eval"])
    assert_matches_evaluator(uir.hlo.load(uir.examples.path("mlp.hlo")))  # random inputs
    from uir._src.core import backend

    real = backend.compile

    def off_by_one(module, name=None):
        exe = real(module, name)
        return lambda *a: np.asarray(exe(*a)) + np.float32(1e-2)

    monkeypatch.setattr(backend, "compile", off_by_one)
    with pytest.raises(AssertionError, match=r"on cpu: output 0 differs .* first at \(0, 0\)"):
        assert_matches_evaluator(f, X)
    with pytest.raises(ValueError, match="unknown backend"):
        assert_matches_evaluator(f, X, backends=["tpu"])


def _broken(module) -> bool:
    entry = module.entry
    for inst in entry.instructions:
        if inst.opcode == "multiply":
            x, y = inst.operands
            entry.replace_instruction(inst, entry.builder().op("add", x, y))
            return True
    return False


def test_assert_passes_preserve_names_the_pass():
    m = uir.jit(f).lower(X).module
    assert_passes_preserve(m)
    assert_passes_preserve(m, ["algsimp", "dce"])
    uir.passes.register("breaks-multiply-for-test", _broken)
    try:
        with pytest.raises(AssertionError, match="pass 'breaks-multiply-for-test'"):
            assert_passes_preserve(m, ["dce", "breaks-multiply-for-test"])
    finally:
        uir.passes.unregister("breaks-multiply-for-test")


def test_assert_fusion_counts_kernels_and_says_why_not():
    assert_fusion(f, X, kernels=1)
    with pytest.raises(AssertionError, match=r"runs as 1 kernels, not 3"):
        assert_fusion(f, X, kernels=3)


@settings(max_examples=40, deadline=None)
@given(us.hlo_modules())
def test_random_modules_parse_verify_and_compile_like_the_evaluator(text):
    m = uir.hlo.parse_module(text)
    m.verify()
    assert_matches_evaluator(m, rtol=1e-4, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(us.arrays(us.dtypes(), us.shapes(max_dims=3)))
def test_arrays_are_finite_and_of_uir_dtypes(a):
    assert a.dtype.name in ("float32", "float64", "int32", "int64", "uint8", "bool")
    if a.dtype.kind == "f":
        assert np.isfinite(a).all()
    out = np.asarray(uir.jit(lambda v: v)(a))  # 64-bit types narrow, as in JAX
    np.testing.assert_array_equal(out, a.astype(out.dtype))


def _pytest(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_example_project_passes_with_the_plugin(tmp_path):
    dump = tmp_path / "dump"
    done = _pytest("examples/pytest_experiments", f"--uir-dump={dump}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # uir_backend ran the evaluator test once per backend.
    assert "5 passed" in done.stdout, done.stdout[-2000:]
    names = sorted(p.name for p in dump.iterdir())
    assert any("matches_the_evaluator_cpu" in n for n in names), names
    assert any(p.suffix == ".txt" for p in dump.rglob("*"))


def test_uir_report_keeps_the_report_of_a_failing_test(tmp_path):
    test = tmp_path / "test_fails.py"
    test.write_text(
        "import numpy as np\n"
        "import uir.numpy as unp\n"
        "from uir.testing import assert_fusion\n"
        "def test_two_kernels(uir_report):\n"
        "    x = np.ones((4, 8), np.float32)\n"
        "    f = lambda v: unp.exp(v) * 2\n"
        "    uir_report(f, x)\n"
        "    assert_fusion(f, x, kernels=2)\n"
    )
    done = _pytest(str(test), "-rA", f"--basetemp={tmp_path / 'base'}", cwd=tmp_path)
    assert done.returncode == 1
    assert "uir report: " in done.stdout, done.stdout[-3000:]
    reports = list((tmp_path / "base").rglob("uir-report-0.html"))
    assert len(reports) == 1 and "<!DOCTYPE html>" in reports[0].read_text()
