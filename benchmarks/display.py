"""Time to render the rich displays of a 1,000-instruction module: the
traced module, its pipeline trace (a diff per changing pass), the
optimized module and the compiled function's summary, with and without
Graphviz's drawings (a module this size is listed, not drawn)."""

from __future__ import annotations

import os
import sys
import time

import numpy as np


def _chain(x, y):
    import uir.numpy as unp

    for k in range(85):
        x = unp.tanh(x * 1.01 + y) - 0.5 * x
        if k % 20 == 0:
            y = unp.sum(x, axis=0, keepdims=True) * 1e-3 + y
    return x


def _best(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list[dict]:
    import uir

    x = np.ones((64, 256), np.float32)
    y = np.ones((1, 256), np.float32)
    lowered = uir.jit(_chain).lower(x, y)
    module = lowered.module
    _, trace = uir.passes.default_pipeline().run(module, trace=True)
    compiled = lowered.compile()
    count = sum(c.instruction_count for c in module.computations)
    rows = []
    for name, obj in (
        ("traced module", module),
        ("pipeline trace", trace),
        ("optimized module", compiled.module),
        ("compiled summary", compiled),
    ):
        html = obj._repr_html_()
        rows.append(
            {
                "display": name,
                "instructions": count,
                "ms": _best(obj._repr_html_) * 1e3,
                "html_kb": len(html) / 1024,
            }
        )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    from run import print_table

    print_table(run())
