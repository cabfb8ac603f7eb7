"""Ops that ran on the evaluator until they had code of their own: mulhi
(the high half of a double-width product), reductions by exclusive or, and
pads whose negative edges cut into interior padding. Each compiles with no
fallback and matches the evaluator and exact NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
NP = {t: np.dtype(("i" if t[0] == "s" else "u") + str(int(t[1:]) // 8)) for t in INTS}


def _compile_and_check(module, *args):
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = np.asarray(exe(*args))
    want = np.asarray(uir.evaluate(module, *args))
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.parametrize("t", INTS)
def test_mulhi_is_the_high_half_of_the_exact_product(t):
    bits = int(t[1:])
    rng = np.random.default_rng(bits)
    info = np.iinfo(NP[t])
    x = rng.integers(info.min, info.max, 203, dtype=NP[t], endpoint=True)
    y = rng.integers(info.min, info.max, 203, dtype=NP[t], endpoint=True)
    x[:4] = [info.min, info.max, info.min, 0]  # the extremes of the product
    y[:4] = [info.min, info.max, info.max, info.min]
    module = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  a = {t}[203] parameter(0)
  b = {t}[203] parameter(1)
  n = {t}[203] negate(b)
  ROOT h = {t}[203] mulhi(a, n)
}}
""")
    got = _compile_and_check(module, x, y)
    n = [(-int(v)) % (1 << bits) for v in y]
    n = [v - (1 << bits) if t[0] == "s" and v >= 1 << (bits - 1) else v for v in n]
    exact = [(int(a) * b) >> bits for a, b in zip(x, n, strict=True)]
    want = np.array([v % (1 << bits) for v in exact], dtype=np.uint64).astype(NP[t])
    np.testing.assert_array_equal(got, want)


@settings(max_examples=25, deadline=None)
@given(
    t=st.sampled_from([*INTS, "pred"]),
    dims=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    data=st.data(),
)
def test_xor_reductions_over_any_axes(t, dims, data):
    rank = len(dims)
    axes = sorted(data.draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    rng = np.random.default_rng(len(dims) * 7 + sum(dims))
    if t == "pred":
        x = rng.integers(0, 2, dims).astype(bool)
        init, zero = "false", np.False_
    else:
        info = np.iinfo(NP[t])
        x = rng.integers(info.min, info.max, dims, dtype=NP[t], endpoint=True)
        init, zero = "0", NP[t].type(0)
    kept = [d for k, d in enumerate(dims) if k not in axes]
    shape = ",".join(map(str, dims))
    out = ",".join(map(str, kept))
    module = uir.hlo.parse_module(f"""HloModule m

x_or {{
  p = {t}[] parameter(0)
  q = {t}[] parameter(1)
  ROOT r = {t}[] xor(p, q)
}}

ENTRY e {{
  a = {t}[{shape}] parameter(0)
  b = {t}[{shape}] not(a)
  z = {t}[] constant({init})
  ROOT r = {t}[{out}] reduce(b, z), dimensions={{{",".join(map(str, axes))}}}, to_apply=x_or
}}
""")
    got = _compile_and_check(module, x)
    want = np.bitwise_xor.reduce(np.bitwise_not(x), axis=tuple(axes)) ^ zero
    np.testing.assert_array_equal(got, want)


def _numpy_pad(x, value, config):
    """XLA's pad: interior padding first, then edges (negative ones cut)."""
    out = x
    for d, (lo, hi, interior) in enumerate(config):
        n = out.shape[d]
        grown = list(out.shape)
        grown[d] = n + max(n - 1, 0) * interior
        spread = np.full(grown, value, x.dtype)
        index = [slice(None)] * out.ndim
        index[d] = slice(None, None, interior + 1)
        spread[tuple(index)] = out
        edges = [(0, 0)] * out.ndim
        edges[d] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, edges, constant_values=value)
        index = [slice(None)] * out.ndim
        index[d] = slice(max(-lo, 0), spread.shape[d] - max(-hi, 0))
        out = spread[tuple(index)]
    return out


@settings(max_examples=40, deadline=None)
@given(
    dims=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    data=st.data(),
)
def test_pads_that_cut_into_interior_padding(dims, data):
    config = []
    for n in dims:
        interior = data.draw(st.integers(0, 3))
        full = n + (n - 1) * interior
        lo = data.draw(st.integers(-full + 1, 3))
        hi = data.draw(st.integers(-(full + lo) + 1 if full + lo > 1 else 0, 3))
        config.append((lo, hi, interior))
    x = np.arange(np.prod(dims), dtype=np.float32).reshape(dims) + 1
    want = _numpy_pad(np.sqrt(x), np.float32(-0.5), config)
    shape = ",".join(map(str, dims))
    out = ",".join(map(str, want.shape))
    padding = "x".join(f"{lo}_{hi}_{i}" for lo, hi, i in config)
    module = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  a = f32[{shape}] parameter(0)
  s = f32[{shape}] sqrt(a)
  v = f32[] constant(-0.5)
  p = f32[{out}] pad(s, v), padding={padding}
  ROOT r = f32[{out}] multiply(p, p)
}}
""")
    got = _compile_and_check(module, x)
    np.testing.assert_allclose(got, want * want, rtol=1e-6)
