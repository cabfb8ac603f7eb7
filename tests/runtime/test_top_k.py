"""topk (XLA's op, and what lax.top_k traces to, as JAX's does) and sorts
whose results are read only through slices of their first positions (a
top-k written as sort and slice), compiled to the runtime's selection, against
a NumPy reference of XLA's order and against the evaluator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import uir
from uir import lax

DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "s8": np.int8,
    "u8": np.uint8,
    "s32": np.int32,
    "u32": np.uint32,
    "s64": np.int64,
    "u64": np.uint64,
    "pred": np.bool_,
}


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers in the order XLA ranks `x`'s values: for floats the total
    order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN)."""
    if x.dtype == np.bool_:
        return x.astype(np.int64)
    if np.issubdtype(x.dtype, np.integer):
        return x.copy()
    bits = x.view(np.dtype(f"int{x.dtype.itemsize * 8}")).astype(np.int64)
    magnitude = (1 << (x.dtype.itemsize * 8 - 1)) - 1
    return np.where(bits < 0, bits ^ magnitude, bits)


def reference_top_k(x: np.ndarray, k: int, largest: bool):
    key = total_order_key(x)
    order = np.argsort(~key if largest else key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


def topk_module(shape, dtype_name, k, largest):
    dims = ",".join(map(str, shape))
    out = ",".join(map(str, (*shape[:-1], k)))
    return uir.hlo.parse_module(
        f"ENTRY e {{\n  x = {dtype_name}[{dims}] parameter(0)\n"
        f"  ROOT t = ({dtype_name}[{out}], s32[{out}]) topk(x), k={k}, "
        f"largest={str(largest).lower()}\n}}"
    )


def draw_values(rng, shape, dtype, spread):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if spread else (max(info.min, -5), min(info.max, 5))
        return rng.integers(lo, hi, shape, dtype=np.int64 if hi < 2**63 else np.uint64).astype(
            dtype
        )
    x = (rng.standard_normal(shape) * (1e3 if spread else 1)).astype(dtype)
    if not spread:
        x = np.round(x * 2).astype(dtype)  # ties: index order shows
    flat = x.reshape(-1)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], np.float32).astype(dtype)
    for v in specials:
        if flat.size:
            flat[rng.integers(0, flat.size, 2)] = v
    return x


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


@st.composite
def topk_cases(draw):
    rank = draw(st.integers(1, 3))
    # Rows long enough for each selection path: a partial sort, an
    # insertion into the best few, a buffer cut back to the best.
    n = draw(st.sampled_from([1, 5, 33, 200, 700]))
    shape = [draw(st.integers(1, 4)) for _ in range(rank - 1)] + [n]
    k = draw(st.sampled_from(sorted({0, 1, min(n, 3), min(n, 16), min(n, 40), n})))
    return shape, draw(st.sampled_from(sorted(DTYPES))), k, draw(st.booleans())


@settings(max_examples=70, deadline=None)
@given(topk_cases(), st.booleans(), st.integers(0, 2**32 - 1))
@example(([3, 700], "f32", 16, True), False, 1)
@example(([2, 700], "f32", 40, False), False, 2)
@example(([700], "u64", 16, True), True, 3)
@example(([4, 200], "bf16", 16, True), False, 4)
def test_topk_compiles_to_the_runtimes_selection_and_matches_xlas_order(case, spread, seed):
    shape, name, k, largest = case
    dtype = DTYPES[name]
    x = draw_values(np.random.default_rng(seed), shape, dtype, spread)
    module = topk_module(shape, name, k, largest)
    exe = uir.compile(module)
    assert exe.fallbacks == []
    if k > 0:  # (an empty result needs no work)
        assert "topk" in exe.thunk_text and exe.thunk_kinds == {"sort": 1}, exe.thunk_text
    got = exe(x)
    assert_same(got, reference_top_k(x, k, largest))
    assert_same(got, uir.evaluate(module, x))


def test_topk_orders_floats_in_the_total_order_as_jax_does():
    # Recorded from jax 0.10.2: jax.lax.top_k of this row.
    nan = np.float32(np.nan)
    x = np.array([[-0.0, 0.0, 1.0, nan, -nan, -np.inf, np.inf, 0.0, -0.0]], np.float32)
    values, indices = uir.jit(lambda v: lax.top_k(v, 9))(x)
    np.testing.assert_array_equal(indices, [[3, 6, 2, 1, 7, 0, 8, 5, 4]])
    assert np.signbit(values[0, 8]) and np.isnan(values[0, 8])
    _, smallest = uir.evaluate(topk_module([1, 9], "f32", 9, False), x)
    np.testing.assert_array_equal(smallest, [[4, 5, 0, 8, 1, 7, 2, 6, 3]])


def test_lax_top_k_traces_to_xlas_topk_along_any_axis():
    rng = np.random.default_rng(3)
    x = rng.integers(-6, 6, (5, 40, 6)).astype(np.float32)
    for axis in (-1, 0, 1):
        f = uir.jit(lambda v, axis=axis: lax.top_k(v, 4, axis=axis))
        lowered = f.lower(x)
        assert "topk(" in lowered.as_text()
        compiled = lowered.compile()
        assert compiled.fallbacks == []
        values, indices = compiled(x)
        moved = np.moveaxis(x, axis, -1)
        want_v, want_i = reference_top_k(moved, 4, True)
        np.testing.assert_array_equal(values, np.moveaxis(want_v, -1, axis))
        np.testing.assert_array_equal(indices, np.moveaxis(want_i, -1, axis))


def test_lax_top_k_refuses_what_jax_refuses():
    with pytest.raises(uir.TraceError, match=r"k=5 must be in \[0, 4\]"):
        uir.jit(lambda v: lax.top_k(v, 5))(np.zeros((2, 4), np.float32))
    with pytest.raises(uir.TraceError, match="complex"):
        uir.jit(lambda v: lax.top_k(v, 1))(np.zeros(4, np.complex64))
    with pytest.raises(uir.TraceError, match="rank 1 or more"):
        uir.jit(lambda v: lax.top_k(v, 1))(np.float32(1))


def sort_slice_module(n, k, read_indices):
    root = (
        "ROOT t = (f32[6,{k}], s32[6,{k}]) tuple(v, i)"
        if read_indices
        else "ROOT v2 = f32[6,{k}] add(v, v)"
    ).format(k=k)
    return uir.hlo.parse_module(f"""HloModule m

gt {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ai = s32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER
}}

ENTRY e {{
  x = f32[6,{n}] parameter(0)
  iota = s32[6,{n}] iota(), iota_dimension=1
  s = (f32[6,{n}], s32[6,{n}]) sort(x, iota), dimensions={{1}}, is_stable=true, to_apply=gt
  g0 = f32[6,{n}] get-tuple-element(s), index=0
  v = f32[6,{k}] slice(g0), slice={{[0:6], [0:{k}]}}
  g1 = s32[6,{n}] get-tuple-element(s), index=1
  i = s32[6,{k}] slice(g1), slice={{[0:6], [0:{k}]}}
  {root}
}}
""")


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([9, 64, 300, 1000]),
    st.sampled_from([1, 5, 16, 40]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_a_sort_read_through_leading_slices_selects_only_those_positions(n, k, indices, seed):
    k = min(k, n)
    x = draw_values(np.random.default_rng(seed), (6, n), np.float32, spread=False)
    module = sort_slice_module(n, k, indices)
    exe = uir.compile(module)
    assert exe.fallbacks == []
    text = exe.thunk_text
    assert (f"first {k}" in text) == (k < n), text
    # The positions' result is not written when nothing reads it.
    assert ("1 unread" in text) == (not indices), text
    got, want = exe(x), uir.evaluate(module, x)
    assert_same(got if indices else (got,), want if indices else (want,))
    values, order = reference_top_k(x, k, True)
    if indices:
        assert_same(got, (values, order))
    else:
        assert_same((got,), (values + values,))
