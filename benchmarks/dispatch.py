"""Dispatch overhead: microseconds per call of an already-compiled 1-op
function (x + 1 on 1,000 float32 elements), beside NumPy doing the op and
jax.jit where JAX is installed."""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

import numpy as np

import uir


def _per_call_us(fn, calls: int = 2000, repeats: int = 7) -> tuple[float, float]:
    """Median and spread (max - min) of microseconds per call."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples), max(samples) - min(samples)


def run() -> list[dict[str, object]]:
    x = np.arange(1000, dtype=np.float32)
    add_one = uir.jit(lambda v: v + 1)
    np.testing.assert_array_equal(add_one(x), x + 1)
    compiled = add_one.lower(x).compile()
    rows = []
    cases = [
        ("uir.jit call (evaluator)", lambda: add_one(x)),
        ("uir compiled call (evaluator)", lambda: compiled(x)),
        ("numpy x + 1", lambda: x + 1),
    ]
    try:
        import jax

        jadd = jax.jit(lambda v: v + 1)
        xj = jax.numpy.asarray(x)
        jadd(xj).block_until_ready()
        cases.append(("jax.jit call", lambda: jadd(xj).block_until_ready()))
    except ImportError:
        rows.append({"case": "jax.jit call", "us_per_call": "JAX not installed"})
    for name, fn in cases:
        median, spread = _per_call_us(fn)
        rows.append({"case": name, "us_per_call": median, "spread_us": spread})
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from run import print_table

    print_table(run())
