"""Every fusion the default pipeline makes on XLA's core corpus modules lowers
to iGraphs or a library node (or falls back with its reason); every iGraph
verifies and round-trips, and the Kernel Graph runs like the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS, TOO_HEAVY, XLA_REJECTS, manifest_rows

import uir
import uir.igraph as ig
from uir._src.core.evaluate import random_arguments, required_replicas

CORE = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")

# Fallback reasons allowed: ops outside the list (gathers, scatters,
# dynamic slices, windows, collectives, complex numbers, ...). A fusion of
# the listed ops (elementwise, broadcast, reductions, transposes, reshapes,
# slices, concatenates, pads, select/compare/convert, iota, constants) must
# never fall back.
ALLOWED = (
    "gather",
    "scatter",
    "dynamic-slice",
    "dynamic-update-slice",
    "reduce-window",
    "select-and-scatter",
    "complex values",
    "bitcast-convert",
    "all-reduce",
    "map ",
    "no lowering for",
    "reducer %",
    "variadic reduce",
    "rng",
    "sort",
    "operand 0 is not an array",
    "custom-call",
    "reduce-precision",
    "stochastic-convert",
    "while",
    "conditional",
    "call ",
    "fft",
    "imag (",  # complex values, in the words of a fusion's reason
    "mulhi (",  # no iGraph form for the high half of a product yet
    "negative padding with interior padding",
    # A fusion reading one concatenate at two offsets (jnp.roll's slices):
    # the iGraph lowering indexes a concatenate along one dimension only.
    "%concatenate",
    # Likewise a pad read through a reshape that splits the padded
    # dimension (packbits' groups of eight bits).
    "%pad",
    # An empty array: no element to compute, no tile to cut.
    "a loop of zero iterations",
)


def _close(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _close(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "fc" or want.dtype.name in ("bfloat16",) or "float8" in want.dtype.name:
        narrow = want.dtype.itemsize <= 2
        wide = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        # Sums may run in another order (the evaluator's are pairwise): an
        # element that cancels to near zero is off by rounding of the
        # largest terms, so the absolute tolerance scales with the output.
        finite = np.abs(wide[np.isfinite(wide)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        np.testing.assert_allclose(
            got.astype(wide.dtype),
            wide,
            rtol=3e-2 if narrow else 1e-4,
            atol=(1e-2 if narrow else 1e-5) * scale,
            equal_nan=True,
        )
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CORE if n not in XLA_REJECTS])
def test_core_corpus_lowers_and_runs_like_the_evaluator(name):
    module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
    out = uir.passes.default_pipeline().run(module)
    kg = ig.lower(out)
    for node in kg.nodes:
        if node.kind == "fallback":
            assert node.reason.startswith(ALLOWED), f"{node.name}: {node.reason}"
        for g in node.igraphs:
            g.verify()
            assert ig.parse(g.to_text()) == g
            assert ig.plan(g.unplanned()) == g
    if name in TOO_HEAVY or required_replicas(out) > 1:
        return  # the evaluator cannot run these as one participant in test time
    args = random_arguments(out, 0)
    _close(ig.interpret(kg, *args), uir.evaluate(out, *args))


@pytest.mark.slow
def test_tracing_tests_functions_run_on_their_kernel_graphs(tmp_path):
    """Every function the tracing tests compile also runs on its Kernel Graph
    (UIR_FLAGS=--check_kernel_graph), and no fusion of the listed ops falls
    back to the evaluator."""
    import os
    import pathlib
    import subprocess
    import sys

    log = tmp_path / "nodes.tsv"
    tests = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, UIR_FLAGS=f"--check_kernel_graph --kernel_graph_log={log}")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            str(tests / "trace"),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = [line.split("\t") for line in log.read_text().splitlines()]
    kinds = {kind for _, kind, _, _ in rows}
    assert "kernel" in kinds and len(rows) > 100
    bad = [r for r in rows if r[1] == "fallback" and not r[3].startswith(ALLOWED)]
    assert not bad, bad[:10]
