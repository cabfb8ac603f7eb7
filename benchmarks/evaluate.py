"""The reference evaluator on 10^6-element arrays: elementwise ops, a
reduction, a small dot, a while loop updating its state in place, and a
sort, beside NumPy doing the same work."""

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


# A scan-like loop writing one element per iteration into a 2^20-element
# array: the loop state is updated in place, not copied per iteration.
LOOP = f"""HloModule loop
cond {{
  s = (s32[], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10000)
  ROOT lt = pred[] compare(i, n), direction=LT
}}
body {{
  s = (s32[], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[{N}] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[] convert(i)
  u = f32[1] reshape(v)
  y = f32[{N}] dynamic-update-slice(x, u, i)
  ROOT t = (s32[], f32[{N}]) tuple(j, y)
}}
ENTRY e {{
  x = f32[{N}] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[{N}]) tuple(z, x)
  w = (s32[], f32[{N}]) while(t), condition=cond, body=body
  ROOT r = f32[{N}] get-tuple-element(w), index=1
}}"""

SORT = """HloModule sort
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  ROOT s = f32[1024,1024] sort(x), dimensions={1}, is_stable=true, to_apply=cmp
}"""


def _loop_reference(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[:10000] = np.arange(10000, dtype=np.float32)
    return out


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
        ("while: 10^4 single-element updates of 2^20 f32", LOOP, (x,), lambda: _loop_reference(x)),
        ("sort rows, 1024x1024 f32", SORT, (m,), lambda: np.sort(m, axis=1, kind="stable")),
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
