"""XLA:CPU as a second oracle for the runtime's kernels (the `xla`-marked
tests, `make test-xla`): runs an HLO module through the installed jaxlib
(tools/xla_reference.py) and compares its results with uir's compiled
executable within the tolerance of each element type."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import uir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))


def run_xla(module, args) -> list[np.ndarray]:
    """The flattened results of `module` (an HloModule or its text) on
    `args` under XLA:CPU; skips the test where JAX is not installed. JAX's
    64-bit setting is put back as it was."""
    jax = pytest.importorskip("jax")
    import xla_reference

    text = module if isinstance(module, str) else module.to_text()
    before = jax.config.jax_enable_x64
    try:
        return xla_reference.run_hlo(text, [np.asarray(a) for a in args])
    finally:
        jax.config.update("jax_enable_x64", before)


def assert_compiled_like_xla(module, args) -> None:
    """uir's compiled `module` (no fallback) gives XLA:CPU's results on `args`."""
    import xla_reference

    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    want = run_xla(module, args)
    problem = xla_reference.compare(xla_reference.flatten(exe(*args)), want)
    assert problem is None, problem
