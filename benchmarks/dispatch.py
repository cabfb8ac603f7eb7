"""Dispatch overhead: microseconds per call of an already-compiled 1-op
function (x + 1 on 1,000 float32 elements), beside NumPy doing the op and
jax.jit where JAX is installed; and the thunk executor's cost per thunk:
the slope of the call time over chains of 2 to 402 tiny kernels (one
negate each on 4 elements, a scheduled module so nothing fuses them),
and over two independent chains of them, tiny (forced onto the DAG) or on
16K elements each (run as a dependency DAG on the worker threads, and
forced in order)."""

from __future__ import annotations

import os
import statistics
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
    evaluated = add_one.lower(x).compile("eval")
    rows = []
    cases = [
        ("uir.jit call", lambda: add_one(x)),
        ("uir compiled call", lambda: compiled(x)),
        ("uir compiled call (evaluator)", lambda: evaluated(x)),
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
    rows += _per_thunk_rows()
    return rows


def _module(count: int, size: int, chains: int):
    """A scheduled module of `count` negates of f32[size] in `chains`
    independent chains, each from the one parameter; the result is the
    last value of each chain."""
    lines = ["HloModule thunks, is_scheduled=true", "ENTRY e {", f"  p = f32[{size}] parameter(0)"]
    last = ["p"] * chains
    for i in range(count):
        c = i % chains
        lines.append(f"  n{i} = f32[{size}] negate({last[c]})")
        last[c] = f"n{i}"
    shapes = ", ".join(f"f32[{size}]" for _ in last)
    lines.append(f"  ROOT r = ({shapes}) tuple({', '.join(last)})")
    lines.append("}")
    return uir.hlo.parse_module("\n".join(lines))


def _compile(module, concurrent_bytes):
    from uir._src.core.backend import Executable

    saved = os.environ.get("UIR_FLAGS")
    if concurrent_bytes is not None:
        os.environ["UIR_FLAGS"] = f"--cpu_concurrent_bytes={concurrent_bytes}"
    try:
        return Executable(module, "cpu", optimized=True)
    finally:
        if saved is None:
            os.environ.pop("UIR_FLAGS", None)
        else:
            os.environ["UIR_FLAGS"] = saved


def _per_thunk_rows() -> list[dict[str, object]]:
    """The slope of the call time from 2 to 402 kernels: the cost of a thunk
    (its dispatch and its tiny kernel), in order and on the DAG; and two
    chains of larger kernels run side by side against in order."""
    rows = []
    cases = (
        ("1 chain", 4, 1, None),
        ("2 chains, DAG forced", 4, 2, 0),
        ("2 chains", 1 << 14, 2, None),
        ("2 chains, in order forced", 1 << 14, 2, 1 << 62),
    )
    for label, size, chains, concurrent_bytes in cases:
        times = {}
        for count in (2, 402):
            exe = _compile(_module(count, size, chains), concurrent_bytes)
            x = np.ones(size, np.float32)
            times[count], _ = _per_call_us(lambda exe=exe, x=x: exe(x), calls=500)
            mode = "concurrent" if exe.concurrent else "in order"
        rows.append(
            {
                "case": f"400 kernels, {label} ({mode}, f32[{size}] each)",
                "us_per_call": times[402],
                "ns_per_thunk": (times[402] - times[2]) / 400 * 1e3,
            }
        )
    return rows
