"""Dynamic slices on the CPU backend without the evaluator: inside a fusion,
a dynamic-slice of a parameter taking a contiguous block at scalar start
indices becomes a window into the parameter's memory, placed on each run
(igraph/dynamic_slice.h); alone, dynamic-slice and dynamic-update-slice are
block copies at start indices read on each run. XLA clamps start indices so
the block stays inside the operand; both must agree with the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir

INDEX_TYPES = {"s32": np.int32, "s64": np.int64, "u32": np.uint32, "s8": np.int8, "u8": np.uint8}


def _compile_and_compare(text, args):
    m = uir.hlo.parse_module(text)
    exe = uir.compile(m, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = exe(*args)
    want = uir.evaluate(exe.module, *args)
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_array_equal(got, want)
    return exe, got


def _row_of(xs, i):
    """XLA's xs[i] for a [n, k] operand: the start clamped into range."""
    return xs[min(max(int(i), 0), xs.shape[0] - 1)]


def test_a_fused_dynamic_slice_reads_a_window_of_its_parameter():
    # JAX's scan body: y = c * xs[i], the index wrapped for negatives first.
    text = """HloModule m
f {
  c = f32[3] parameter(0)
  xs = f32[50,3] parameter(1)
  i = s32[] parameter(2)
  zero = s32[] constant(0)
  n = s32[] constant(50)
  neg = pred[] compare(i, zero), direction=LT
  wrapped = s32[] add(i, n)
  at = s32[] select(neg, wrapped, i)
  row = f32[1,3] dynamic-slice(xs, at, zero), dynamic_slice_sizes={1,3}
  r = f32[3] bitcast(row)
  ROOT y = f32[3] multiply(c, r)
}
ENTRY e {
  c = f32[3] parameter(0)
  xs = f32[50,3] parameter(1)
  i = s32[] parameter(2)
  ROOT y = f32[3] fusion(c, xs, i), kind=kLoop, calls=f
}
"""
    rng = np.random.default_rng(0)
    c = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((50, 3)).astype(np.float32)
    exe = None
    for i in (0, 7, 49, 50, 1000, -1, -50, -51, -(2**31)):
        exe, got = _compile_and_compare(text, [c, xs, np.int32(i)])
        at = i + 50 if i < 0 else i
        np.testing.assert_array_equal(got, c * _row_of(xs, at))
    assert "dynamic-slice windows placed per run: %row = input 3 in input 1" in (
        exe.kernel_graph.to_text()
    )


@pytest.mark.parametrize("index_type", sorted(INDEX_TYPES))
def test_start_indices_of_every_integer_type_are_clamped_as_xla_does(index_type):
    t = index_type
    text = f"""HloModule m
f {{
  x = f32[6,4,5] parameter(0)
  i = {t}[] parameter(1)
  j = {t}[] parameter(2)
  z = {t}[] constant(0)
  s = f32[1,2,5] dynamic-slice(x, i, j, z), dynamic_slice_sizes={{1,2,5}}
  ROOT y = f32[1,2,5] add(s, s)
}}
ENTRY e {{
  x = f32[6,4,5] parameter(0)
  i = {t}[] parameter(1)
  j = {t}[] parameter(2)
  ROOT y = f32[1,2,5] fusion(x, i, j), kind=kLoop, calls=f
}}
"""
    x = np.arange(120, dtype=np.float32).reshape(6, 4, 5)
    dtype = INDEX_TYPES[t]
    info = np.iinfo(dtype)
    for i, j in [(0, 0), (5, 2), (6, 3), (info.max, info.max), (info.min, info.min), (2, 1)]:
        _, got = _compile_and_compare(text, [x, dtype(i), dtype(j)])
        i0 = min(max(int(i), 0), 5)
        j0 = min(max(int(j), 0), 2)
        np.testing.assert_array_equal(got, 2 * x[i0 : i0 + 1, j0 : j0 + 2, :])


def test_many_windows_of_one_parameter_at_indices_read_from_an_array():
    # As XLA's dynamic_slice_loop benchmark: slices of one operand at
    # positions taken from an index array, several outputs.
    text = """HloModule m
f {
  idx = s32[3] parameter(0)
  x = f32[1,40,8] parameter(1)
  z = s32[] constant(0)
  a = s32[1] slice(idx), slice={[0:1]}
  b = s32[1] slice(idx), slice={[2:3]}
  ia = s32[] reshape(a)
  ib = s32[] reshape(b)
  sa = f32[1,4,8] dynamic-slice(x, z, ia, z), dynamic_slice_sizes={1,4,8}
  sb = f32[1,4,8] dynamic-slice(x, z, ib, z), dynamic_slice_sizes={1,4,8}
  ROOT t = (f32[1,4,8], f32[1,4,8]) tuple(sa, sb)
}
ENTRY e {
  idx = s32[3] parameter(0)
  x = f32[1,40,8] parameter(1)
  ROOT y = (f32[1,4,8], f32[1,4,8]) fusion(idx, x), kind=kLoop, calls=f
}
"""
    x = np.arange(320, dtype=np.float32).reshape(1, 40, 8)
    idx = np.array([3, 99, 38], np.int32)
    _, (a, b) = _compile_and_compare(text, [idx, x])
    np.testing.assert_array_equal(a, x[:, 3:7])
    np.testing.assert_array_equal(b, x[:, 36:40])  # 38 clamped to 36


def test_a_block_that_is_not_contiguous_still_falls_back_with_its_reason():
    text = """HloModule m
f {
  x = f32[8,8] parameter(0)
  i = s32[] parameter(1)
  s = f32[2,2] dynamic-slice(x, i, i), dynamic_slice_sizes={2,2}
  ROOT y = f32[2,2] negate(s)
}
ENTRY e {
  x = f32[8,8] parameter(0)
  i = s32[] parameter(1)
  ROOT y = f32[2,2] fusion(x, i), kind=kLoop, calls=f
}
"""
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert any("dynamic-slice (%s)" in f for f in exe.fallbacks), exe.fallbacks
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    np.testing.assert_array_equal(exe(x, np.int32(3)), -x[3:5, 3:5])


@pytest.mark.parametrize("in_place", [True, False])
def test_a_lone_dynamic_update_slice_copies_its_block(in_place):
    # In place, the update is written over the operand's buffer; otherwise
    # the operand is copied first (it is still read afterwards).
    later = "" if in_place else "\n  s = f32[6,5] negate(x)"
    root = "u" if in_place else "t"
    tuple_line = "" if in_place else "\n  ROOT t = (f32[6,5], f32[6,5]) tuple(u, s)"
    text = f"""HloModule m
ENTRY e {{
  x0 = f32[6,5] parameter(0)
  x = f32[6,5] negate(x0)
  v = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  {"ROOT " if in_place else ""}u = f32[6,5] dynamic-update-slice(x, v, i, j){later}{tuple_line}
}}
"""
    del root
    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    v = -np.ones((2, 3), np.float32)
    for i, j in [(0, 0), (4, 2), (5, 4), (-3, 9)]:
        exe, got = _compile_and_compare(text, [x, v, np.int32(i), np.int32(j)])
        want = -x.copy()
        i0, j0 = min(max(i, 0), 4), min(max(j, 0), 2)
        want[i0 : i0 + 2, j0 : j0 + 3] = v
        np.testing.assert_array_equal(got if in_place else got[0], want)
    assert "a block copied at start indices read per run" in exe.kernel_graph.to_text()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dims=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    data=st.data(),
    index_type=st.sampled_from(sorted(INDEX_TYPES)),
)
def test_random_dynamic_slices_match_the_evaluator(dims, data, index_type):
    # A contiguous block (fused: a window) or any block (alone: a copy),
    # at random start indices of a random integer type, in or out of range.
    rank = len(dims)
    cut = data.draw(st.integers(0, rank - 1))
    contiguous = data.draw(st.booleans())
    sizes = []
    for d in range(rank):
        if contiguous:
            sizes.append(
                1 if d < cut else dims[d] if d > cut else data.draw(st.integers(1, dims[d]))
            )
        else:
            sizes.append(data.draw(st.integers(1, dims[d])))
    info = np.iinfo(INDEX_TYPES[index_type])
    starts = [data.draw(st.integers(max(int(info.min), -9), min(int(info.max), 12))) for _ in dims]
    shape = ",".join(map(str, dims))
    out = ",".join(map(str, sizes))
    params = "\n".join(f"  i{d} = {index_type}[] parameter({d + 1})" for d in range(rank))
    names = ", ".join(f"i{d}" for d in range(rank))
    ds = f"f32[{out}] dynamic-slice(x, {names}), dynamic_slice_sizes={{{out}}}"
    if contiguous:
        text = f"""HloModule m
f {{
  x = f32[{shape}] parameter(0)
{params}
  s = {ds}
  ROOT y = f32[{out}] multiply(s, s)
}}
ENTRY e {{
  x = f32[{shape}] parameter(0)
{params}
  ROOT y = f32[{out}] fusion(x, {names}), kind=kLoop, calls=f
}}
"""
    else:
        text = f"""HloModule m
ENTRY e {{
  x = f32[{shape}] parameter(0)
{params}
  ROOT s = {ds}
}}
"""
    x = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims) - 5
    args = [x] + [INDEX_TYPES[index_type](s) for s in starts]
    _, got = _compile_and_compare(text, args)
    block = tuple(
        slice(min(max(s, 0), n - k), min(max(s, 0), n - k) + k)
        for s, n, k in zip(starts, dims, sizes, strict=True)
    )
    want = x[block] * x[block] if contiguous else x[block]
    np.testing.assert_array_equal(got, want)


def test_a_traced_scan_runs_without_the_evaluator():
    # A scan writing one row per step (dynamic-update-slice) and reading one
    # (dynamic-slice): every node compiled, results as NumPy's.
    from uir import lax

    def f(xs):
        def body(i, carry):
            acc, ys = carry
            row = lax.dynamic_slice(xs, (i, 0), (1, 4))
            acc = acc * 0.5 + row[0]
            ys = lax.dynamic_update_slice(ys, acc[None, :], (i, 0))
            return acc, ys

        return lax.fori_loop(0, xs.shape[0], body, (xs[0] * 0, xs * 0))

    xs = np.random.default_rng(5).standard_normal((30, 4)).astype(np.float32)
    compiled = uir.jit(f).lower(xs).compile()
    assert compiled.fallbacks == [], compiled.fallbacks
    acc, ys = compiled(xs)
    want_acc = np.zeros(4, np.float32)
    want_ys = np.zeros_like(xs)
    for i in range(30):
        want_acc = want_acc * np.float32(0.5) + xs[i]
        want_ys[i] = want_acc
    np.testing.assert_allclose(ys, want_ys, rtol=1e-6)
    np.testing.assert_allclose(acc, want_acc, rtol=1e-6)
