"""Dynamic slices on the CPU backend without the evaluator: inside a fusion,
a dynamic-slice of a parameter taking a contiguous block at scalar start
indices becomes a window into the parameter's memory, placed on each run
(igraph/dynamic_slice.h); alone, dynamic-slice and dynamic-update-slice are
block copies at start indices read on each run. XLA clamps start indices so
the block stays inside the operand; both must agree with the evaluator."""

from __future__ import annotations

from pathlib import Path

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
    # Moved values are exact; computed ones (exp) within the backend's ulp.
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    for g, w in pairs:
        np.testing.assert_allclose(g, w, rtol=2.5e-7, atol=0)
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


def test_a_block_that_is_not_contiguous_is_not_fused_and_runs_as_a_copy():
    text = """HloModule m
ENTRY e {
  x = f32[8,8] parameter(0)
  i = s32[] parameter(1)
  s = f32[2,2] dynamic-slice(x, i, i), dynamic_slice_sizes={2,2}
  ROOT y = f32[2,2] negate(s)
}
"""
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    assert "(dynamic copy)" in exe.thunk_text, exe.thunk_text
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    for i in (3, 7, -2):
        j = min(max(i, 0), 6)
        np.testing.assert_array_equal(exe(x, np.int32(i)), -x[j : j + 2, j : j + 2])


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


def _update_fusion(index_type, whole, block, index_expr=""):
    """A fusion computing an update and writing it with its root
    dynamic-update-slice, as JAX's `ys.at[i].set(f(x))` fuses. The operand
    is an entry parameter, which copy insertion copies (the caller's array
    is only read) so that the fusion updates the copy in place, as buffer
    assignment has a dynamic-update-slice do."""
    w = ",".join(map(str, whole))
    b = ",".join(map(str, block))
    rank = len(whole)
    params = "\n".join(f"  i{d} = {index_type}[] parameter({d + 2})" for d in range(rank))
    names = ", ".join(f"i{d}" for d in range(rank))
    return f"""HloModule m
f {{
  x = f32[{w}] parameter(0)
  v = f32[{b}] parameter(1)
{params}
  e = f32[{b}] exponential(v){index_expr}
  ROOT u = f32[{w}] dynamic-update-slice(x, e, {names})
}}
ENTRY e {{
  x = f32[{w}] parameter(0)
  v = f32[{b}] parameter(1)
{params}
  ROOT u = f32[{w}] fusion(x, v, {names}), kind=kLoop, calls=f
}}
"""


@pytest.mark.parametrize("whole,block", [((9, 4), (1, 4)), ((6, 7), (2, 3)), ((5,), (2,))])
def test_a_fused_dynamic_update_slice_writes_the_computed_update(whole, block):
    # A contiguous block is written through a window of the output, any
    # other through a block copy; the caller's array is untouched.
    text = _update_fusion("s32", whole, block)
    x = np.arange(np.prod(whole), dtype=np.float32).reshape(whole) / 10
    v = np.linspace(-1, 1, int(np.prod(block)), dtype=np.float32).reshape(block)
    original = x.copy()
    for starts in [(0, 0), (3, 1), (100, 100), (-5, 2)]:
        starts = starts[: len(whole)]
        exe, got = _compile_and_compare(text, [x, v, *[np.int32(s) for s in starts]])
        want = x.copy()
        at = tuple(
            slice(min(max(s, 0), n - k), min(max(s, 0), n - k) + k)
            for s, n, k in zip(starts, whole, block, strict=True)
        )
        want[at] = np.exp(v)
        np.testing.assert_allclose(got, want, rtol=2.5e-7)
        np.testing.assert_array_equal(x, original)
    text = exe.kernel_graph.to_text()
    assert "the iGraphs compute the update, written into the output" in text
    contiguous = len(whole) == 1 or block[0] == 1
    assert ("through a block copy" in text) != contiguous


@pytest.mark.parametrize("op", ["remainder", "divide"])
@pytest.mark.parametrize("index_type", ["s32", "u32", "s8"])
def test_index_programs_divide_and_take_remainders_as_xla_does(op, index_type):
    # x / 0 = -1, x % 0 = x; the start then clamped.
    expr = f"""
  k = {index_type}[] constant(3)
  z = {index_type}[] constant(0)
  q = {index_type}[] {op}(i0, k)
  q0 = {index_type}[] {op}(i1, z)"""
    text = _update_fusion(index_type, (12, 4), (1, 4), index_expr=expr)
    text = text.replace("dynamic-update-slice(x, e, i0, i1)", "dynamic-update-slice(x, e, q, q0)")
    x = np.zeros((12, 4), np.float32)
    v = np.ones((1, 4), np.float32)
    dtype = INDEX_TYPES[index_type]
    info = np.iinfo(dtype)
    for i0, i1 in [(7, 0), (35, 5), (int(info.min), 2), (int(info.max), 0)]:
        _compile_and_compare(text, [x, v, dtype(i0), dtype(i1)])


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dims=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    data=st.data(),
    index_type=st.sampled_from(sorted(INDEX_TYPES)),
    fused=st.booleans(),
)
def test_random_dynamic_update_slices_match_the_evaluator(dims, data, index_type, fused):
    # Fused (the update computed, then written through a window or a block
    # copy) or alone (a block copy), any block, start indices in or out of
    # range.
    sizes = [data.draw(st.integers(1, d)) for d in dims]
    info = np.iinfo(INDEX_TYPES[index_type])
    starts = [data.draw(st.integers(max(int(info.min), -9), min(int(info.max), 12))) for _ in dims]
    rank = len(dims)
    text = _update_fusion(index_type, dims, sizes)
    if not fused:
        w = ",".join(map(str, dims))
        b = ",".join(map(str, sizes))
        params = "\n".join(f"  i{d} = {index_type}[] parameter({d + 2})" for d in range(rank))
        names = ", ".join(f"i{d}" for d in range(rank))
        text = f"""HloModule m
ENTRY e {{
  x0 = f32[{w}] parameter(0)
  x = f32[{w}] negate(x0)
  v = f32[{b}] parameter(1)
{params}
  ROOT u = f32[{w}] dynamic-update-slice(x, v, {names})
}}
"""
    x = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims)
    v = -np.arange(1, int(np.prod(sizes)) + 1, dtype=np.float32).reshape(sizes) / 4
    args = [x, v] + [INDEX_TYPES[index_type](s) for s in starts]
    _, got = _compile_and_compare(text, args)
    want = x.copy() if fused else -x
    block = tuple(
        slice(min(max(s, 0), n - k), min(max(s, 0), n - k) + k)
        for s, n, k in zip(starts, dims, sizes, strict=True)
    )
    want[block] = np.exp(v) if fused else v
    np.testing.assert_allclose(got, want, rtol=2.5e-7)


def test_a_gather_runs_on_the_buffers_and_clamps_as_xla_does():
    # An embedding lookup: rows of a table at indices, out-of-range ones
    # clamped into range (XLA's gather), beside NumPy's take with clip.
    text = """HloModule m
ENTRY e {
  table = f32[50,8] parameter(0)
  ids = s32[12] parameter(1)
  ROOT rows = f32[12,8] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
"""
    table = np.random.default_rng(7).standard_normal((50, 8)).astype(np.float32)
    ids = np.array([0, 3, 49, 50, 1000, -1, -(2**31), 7, 7, 12, 25, 2**31 - 1], np.int32)
    exe, got = _compile_and_compare(text, [table, ids])
    np.testing.assert_array_equal(got, np.take(table, ids, axis=0, mode="clip"))
    assert "library %rows = gather" in exe.kernel_graph.to_text()


def test_traced_indexing_and_take_along_axis_gather_without_the_evaluator():
    import uir.numpy as unp

    x = np.random.default_rng(8).standard_normal((6, 9)).astype(np.float32)
    order = np.argsort(x, axis=1).astype(np.int32)
    rows = np.array([5, 0, 3, 3], np.int32)
    f = uir.jit(lambda x, order, rows: (unp.take_along_axis(x, order, axis=1), x[rows]))
    compiled = f.lower(x, order, rows).compile()
    assert compiled.fallbacks == [], compiled.fallbacks
    sorted_rows, picked = compiled(x, order, rows)
    np.testing.assert_array_equal(sorted_rows, np.sort(x, axis=1))
    np.testing.assert_array_equal(picked, x[rows])


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n=st.integers(1, 9),
    m=st.integers(1, 6),
    k=st.integers(0, 7),
    data=st.data(),
    index_type=st.sampled_from(sorted(INDEX_TYPES)),
)
def test_random_point_gathers_match_numpy(n, m, k, data, index_type):
    # x[i, j] for k index pairs (a gather of 1x1 slices, both dims
    # collapsed), each index clamped into range.
    info = np.iinfo(INDEX_TYPES[index_type])
    lo, hi = max(int(info.min), -4), min(int(info.max), 12)
    pairs = data.draw(
        st.lists(st.tuples(st.integers(lo, hi), st.integers(lo, hi)), min_size=k, max_size=k)
    )
    idx = np.array(pairs, INDEX_TYPES[index_type]).reshape(k, 2)
    text = f"""HloModule m
ENTRY e {{
  x = f32[{n},{m}] parameter(0)
  i = {index_type}[{k},2] parameter(1)
  ROOT g = f32[{k}] gather(x, i), offset_dims={{}}, collapsed_slice_dims={{0,1}},
      start_index_map={{0,1}}, index_vector_dim=1, slice_sizes={{1,1}}
}}
"""
    x = np.arange(n * m, dtype=np.float32).reshape(n, m)
    _, got = _compile_and_compare(text, [x, idx])
    want = [x[min(max(int(a), 0), n - 1), min(max(int(b), 0), m - 1)] for a, b in pairs]
    np.testing.assert_array_equal(got, np.array(want, np.float32).reshape(k))


@pytest.mark.parametrize(
    "combiner,numpy_op",
    [("add", np.add), ("maximum", np.maximum), ("multiply", np.multiply), ("assign", None)],
)
def test_a_scatter_runs_on_the_buffers_in_xlas_order(combiner, numpy_op):
    # Rows of updates combined into a table at indices, repeated indices in
    # order, out-of-range windows skipped; beside NumPy's ufunc.at.
    root = "ROOT " if combiner == "assign" else ""
    body = "" if combiner == "assign" else f"\n  ROOT r = f32[] {combiner}(a, b)"
    text = f"""HloModule m
comb {{
  a = f32[] parameter(0)
  {root}b = f32[] parameter(1){body}
}}
ENTRY e {{
  t0 = f32[10,3] parameter(0)
  t = f32[10,3] negate(t0)
  ids = s32[7,1] parameter(1)
  upd = f32[7,3] parameter(2)
  ROOT s = f32[10,3] scatter(t, ids, upd), update_window_dims={{1}},
      inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1,
      to_apply=comb
}}
"""
    rng = np.random.default_rng(9)
    table = rng.standard_normal((10, 3)).astype(np.float32)
    ids = np.array([[2], [9], [2], [-1], [10], [0], [9]], np.int32)
    upd = rng.standard_normal((7, 3)).astype(np.float32)
    exe, got = _compile_and_compare(text, [table, ids, upd])
    want = -table
    keep = (ids[:, 0] >= 0) & (ids[:, 0] < 10)
    if numpy_op is None:
        for i, row in zip(ids[keep, 0], upd[keep], strict=True):
            want[i] = row
    else:
        numpy_op.at(want, ids[keep, 0], upd[keep])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert "library %s = scatter" in exe.kernel_graph.to_text()


def test_traced_at_add_scatters_without_the_evaluator():
    import uir.numpy as unp

    x = np.zeros(6, np.float32)
    idx = np.array([1, 4, 1, 5, 0], np.int32)
    vals = np.arange(1, 6, dtype=np.float32)
    compiled = uir.jit(lambda x, i, v: x.at[i].add(v)).lower(x, idx, vals).compile()
    assert compiled.fallbacks == [], compiled.fallbacks
    want = x.copy()
    np.add.at(want, idx, vals)
    np.testing.assert_array_equal(compiled(x, idx, vals), want)
    del unp


@pytest.mark.parametrize("reducer,init", [("maximum", "-inf"), ("add", "0")])
def test_a_reduce_window_runs_on_the_buffers(reducer, init):
    # A 3x3 pool with stride 2 and padding 1 over NHWC, as a CNN's max pool
    # (ResNet's) or a sum pool; beside NumPy over the padded input.
    text = f"""HloModule m
r {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] {reducer}(a, b)
}}
ENTRY e {{
  x = f32[2,7,7,3] parameter(0)
  i = f32[] constant({init})
  ROOT p = f32[2,4,4,3] reduce-window(x, i), window={{size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}}, to_apply=r
}}
"""
    x = np.random.default_rng(10).standard_normal((2, 7, 7, 3)).astype(np.float32)
    exe, got = _compile_and_compare(text, [x])
    fill = -np.inf if reducer == "maximum" else 0.0
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=fill)
    want = np.empty((2, 4, 4, 3), np.float32)
    for i in range(4):
        for j in range(4):
            win = padded[:, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3, :]
            want[:, i, j, :] = (
                win.max(axis=(1, 2)) if reducer == "maximum" else win.sum(axis=(1, 2))
            )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert "library %p = reduce-window" in exe.kernel_graph.to_text()


def test_a_parameter_read_whole_and_through_a_window_in_one_fusion():
    # What multi-output fusion makes of x[1] and x[i] (with JAX's
    # wrap-around of a negative index): a slice and a dynamic-slice of one
    # parameter in one fusion. The slice reads the parameter whole, the
    # dynamic-slice a window of it.
    text = """HloModule m
f {
  x = f32[4,5,6] parameter(0)
  z = s32[] parameter(1)
  i = s32[] parameter(2)
  s = f32[1,5,6] slice(x), slice={[1:2], [0:5], [0:6]}
  sb = f32[5,6] bitcast(s)
  neg = pred[] compare(i, z), direction=LT
  four = s32[] constant(4)
  wrapped = s32[] add(i, four)
  at = s32[] select(neg, wrapped, i)
  d = f32[1,5,6] dynamic-slice(x, at, z, z), dynamic_slice_sizes={1,5,6}
  db = f32[5,6] bitcast(d)
  ROOT t = (f32[5,6], f32[5,6]) tuple(sb, db)
}
ENTRY e {
  x = f32[4,5,6] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT r = (f32[5,6], f32[5,6]) fusion(x, z, i), kind=kLoop, calls=f
}
"""
    x = np.random.default_rng(12).standard_normal((4, 5, 6)).astype(np.float32)
    for i in (2, -1, 9):
        exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
        assert exe.fallbacks == [], exe.fallbacks
        whole, window = exe(x, np.int32(i))
        np.testing.assert_array_equal(whole, x[1])
        np.testing.assert_array_equal(window, x[min(i + 4 if i < 0 else i, 3)])


def test_a_loop_over_windows_of_no_elements_compiles_and_runs():
    path = Path(__file__).parent.parent / "data" / "empty_window_loop.hlo"
    module = uir.hlo.parse_module(path.read_text())
    rng = np.random.default_rng(2)
    args = [
        rng.standard_normal((3, 1, 1)).astype(np.float32),
        np.zeros((0, 3, 2), np.int32),
        rng.integers(0, 9, (3, 1, 1)).astype(np.int32),
        np.zeros((0, 3, 0, 2), np.float32),
        np.zeros((0, 3, 0, 2), np.int32),
    ]
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    for got, want in zip(exe(*args), (args[0], args[2]), strict=True):
        np.testing.assert_array_equal(got, want)
