"""reduce-window against a NumPy reference written from XLA's definition:
padding, strides, base and window dilation."""

from __future__ import annotations

import numpy as np
import pytest
from eval_util import hlo_type

import uir

COMPS = {
    "add": "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n",
    "max": "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n",
    # Not a plain binary op: goes through the generic path.
    "sumsq": "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  m = f32[] multiply(b, b)\n  ROOT r = f32[] add(a, m)\n}\n",
}


def reference(x, init, size, stride, pad, base, win, combine):
    # Build the padded, base-dilated input explicitly, then slide the window.
    n = x.shape[0]
    dilated = (n - 1) * base + 1 if n else 0
    full = np.full(dilated + pad[0] + pad[1], np.nan, np.float32)
    valid = np.zeros(full.shape, bool)
    for i in range(n):
        full[pad[0] + i * base] = x[i]
        valid[pad[0] + i * base] = True
    span = (size - 1) * win + 1
    count = max((full.size - span) // stride + 1, 0)
    out = np.full(count, init, np.float32)
    for o in range(count):
        for k in range(size):
            p = o * stride + k * win
            if valid[p]:
                out[o] = combine(out[o], full[p])
    return out


@pytest.mark.parametrize("op", ["add", "max", "sumsq"])
@pytest.mark.parametrize(
    ("size", "stride", "pad", "base", "win"),
    [
        (3, 1, (0, 0), 1, 1),
        (2, 2, (1, 2), 1, 1),
        (3, 2, (2, 1), 2, 1),
        (2, 1, (0, 0), 1, 3),
        (4, 3, (3, 3), 2, 2),
    ],
)
def test_reduce_window_1d(op, size, stride, pad, base, win):
    x = np.random.default_rng(size + stride).standard_normal(9).astype(np.float32)
    init = -np.inf if op == "max" else 0.0
    combine = {"add": lambda a, b: a + b, "max": max, "sumsq": lambda a, b: a + b * b}[op]
    want = reference(x, init, size, stride, pad, base, win, combine)
    window = (
        f"{{size={size} stride={stride} pad={pad[0]}_{pad[1]} lhs_dilate={base} rhs_dilate={win}}}"
    )
    text = (
        COMPS[op]
        + f"ENTRY e {{\n  x = {hlo_type(x)} parameter(0)\n  z = f32[] constant({'-inf' if op == 'max' else 0})\n"
        + f"  ROOT r = f32[{want.size}] reduce-window(x, z), window={window}, to_apply=f\n}}"
    )
    m = uir.hlo.parse_module(text)
    m.verify()
    np.testing.assert_allclose(uir.evaluate(m, x), want, rtol=1e-6)


def test_reduce_window_2d_max_pool():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    text = (
        COMPS["max"]
        + "ENTRY e {\n  x = f32[4,4] parameter(0)\n  z = f32[] constant(-inf)\n"
        + "  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=f\n}"
    )
    got = uir.evaluate(uir.hlo.parse_module(text), x)
    np.testing.assert_array_equal(got, x.reshape(2, 2, 2, 2).max(axis=(1, 3)))
