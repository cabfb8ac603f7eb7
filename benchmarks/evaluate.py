"""The reference evaluator on 10^6-element arrays: elementwise ops, a
reduction, and a small dot, beside NumPy doing the same work."""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

import numpy as np

import uir

N = 1 << 20

ELEMENTWISE = f"""HloModule elementwise
ENTRY e {{
  x = f32[{N}] parameter(0)
  y = f32[{N}] parameter(1)
  a = f32[{N}] multiply(x, y)
  b = f32[{N}] add(a, x)
  c = f32[{N}] exponential(b)
  ROOT d = f32[{N}] maximum(c, y)
}}"""

REDUCE = """HloModule reduce
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(x, z), dimensions={1}, to_apply=add
}"""

DOT = """HloModule dot
ENTRY e {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  ROOT d = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""


def _median(fn, repeats: int = 5) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def run() -> list[dict[str, object]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    m = rng.standard_normal((1024, 1024)).astype(np.float32)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    cases = [
        (
            "4 elementwise ops, 2^20 f32",
            ELEMENTWISE,
            (x, y),
            lambda: np.maximum(np.exp(x * y + x), y),
        ),
        ("row sums, 1024x1024 f32", REDUCE, (m,), lambda: m.sum(axis=1)),
        ("dot 256x256x256 f32", DOT, (a, b), lambda: a @ b),
    ]
    rows = []
    for name, text, args, reference in cases:
        module = uir.hlo.parse_module(text)
        t_uir = _median(lambda module=module, args=args: uir.evaluate(module, *args))
        t_np = _median(reference)
        rows.append(
            {
                "case": name,
                "evaluate_ms": t_uir * 1e3,
                "numpy_ms": t_np * 1e3,
                "ratio": t_uir / t_np,
            }
        )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from run import print_table

    print_table(run())
