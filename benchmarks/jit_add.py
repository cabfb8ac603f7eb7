"""out = a + b over float32, the JIT smoke kernel beside NumPy and JAX.

JAX's XLA:CPU joins when JAX is installed. Sizes run from L2-resident to
DRAM-sized arrays."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
import roofline

from uir import _core

SIZES = [1 << 14, 1 << 17, 1 << 20, 1 << 22, 1 << 24]


def _median_seconds(fn: Callable[[], object], min_time: float = 0.2) -> float:
    fn()  # warm up: first touch of the output pages, JIT and cache effects
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < min_time and len(samples) < 200):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def _import_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_platforms", "cpu")
    return jax


def _measure(kernel, jax, n: int, threads: int) -> dict[str, object]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    assert np.array_equal(kernel(a, b), a + b)
    out = np.empty_like(a)
    nbytes = 3 * a.nbytes
    level, roof = roofline.streaming_roof_gbs(nbytes, threads)
    t_uir = _median_seconds(lambda: kernel(a, b))
    # NumPy with a preallocated output is its fastest form; uir allocates.
    t_np = _median_seconds(lambda: np.add(a, b, out=out))
    row: dict[str, object] = {
        "n": n,
        "level": level,
        "uir_ms": t_uir * 1e3,
        "numpy_ms": t_np * 1e3,
        "uir_GBs": nbytes / t_uir / 1e9,
        "roofline_fraction": nbytes / t_uir / 1e9 / roof,
        "numpy_over_uir": t_np / t_uir,
    }
    if jax is not None:
        jax_add = jax.jit(lambda x, y: x + y)
        ja, jb = jax.device_put(a), jax.device_put(b)
        t_jax = _median_seconds(lambda: jax_add(ja, jb).block_until_ready())
        row["jax_ms"] = t_jax * 1e3
        row["jax_over_uir"] = t_jax / t_uir
    return row


def run() -> list[dict[str, object]]:
    kernel = _core.codegen.SmokeAddKernel(3)
    threads = _core.runtime.num_threads()
    jax = _import_jax()
    return [_measure(kernel, jax, n, threads) for n in SIZES]


if __name__ == "__main__":
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from run import print_table

    print_table(run())
