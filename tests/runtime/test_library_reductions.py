"""The runtime's own reduction loops against the reference evaluator:
reduce-window (pooling with every window attribute, cumulative ops along
each axis and reversed, any layout) and arg-reduce (argmax/argmin, the
variadic reduce JAX writes, over each axis, NaNs and ties included). The
compiled executable must run them as "window" and "reduce" thunks, never on
the evaluator, which is what checks them here."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xla_util import assert_compiled_like_xla

import uir
import uir.numpy as unp
from uir import lax
from uir._src.core.evaluate import random_arguments

TYPES = {np.float32: "f32", np.float64: "f64", np.int32: "s32", np.int8: "s8", np.uint16: "u16"}
OPS = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply"}


def _inits(op, dtype):
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if np.issubdtype(dtype, np.floating):
        return "-inf" if op == "max" else "inf"
    info = np.iinfo(dtype)
    return info.min if op == "max" else info.max


def _out_size(n, w, s, lo, hi, base, wdil):
    padded = (n - 1) * base + 1 + lo + hi if n > 0 else lo + hi
    span = (w - 1) * wdil + 1
    return max(0, (padded - span) // s + 1) if padded >= span else 0


def _window_module(shape, dtype, op, sizes, strides, pads, base, wdil, layout=None):
    t = TYPES[dtype]
    out = [
        _out_size(n, w, s, lo, hi, b, d)
        for n, w, s, (lo, hi), b, d in zip(shape, sizes, strides, pads, base, wdil, strict=True)
    ]
    dims = lambda a: ",".join(map(str, a))  # noqa: E731
    lay = "" if layout is None else "{" + dims(layout) + "}"
    window = (
        f"size={'x'.join(map(str, sizes))} stride={'x'.join(map(str, strides))} "
        f"pad={'x'.join(f'{lo}_{hi}' for lo, hi in pads)} lhs_dilate={'x'.join(map(str, base))} "
        f"rhs_dilate={'x'.join(map(str, wdil))}"
    )
    text = f"""HloModule w

red {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] {OPS[op]}(a, b)
}}

ENTRY e {{
  x = {t}[{dims(shape)}]{lay} parameter(0)
  i = {t}[] constant({_inits(op, dtype)})
  ROOT w = {t}[{dims(out)}]{lay} reduce-window(x, i), window={{{window}}}, to_apply=red
}}
"""
    return uir.hlo.parse_module(text), out


def _data(rng, shape, dtype, op):
    if np.issubdtype(dtype, np.floating):
        x = rng.standard_normal(shape).astype(dtype)
        if op == "mul":
            x = (1 + 0.1 * x).astype(dtype)
        return x
    if op == "mul":
        return rng.integers(-2, 3, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)


def _compiled(module, kind, empty=False):
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    # The passes may fold a window away (one-element windows); an empty
    # result has nothing to run.
    if "reduce-window(" in exe.module.to_text() and not empty:
        assert exe.thunk_kinds.get(kind, 0) >= 1, exe.thunk_text
    return exe


def _close(got, want, dtype, op):
    if np.issubdtype(dtype, np.floating) and op in ("add", "mul"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def window_cases(draw, long=False):
    """Windows with every attribute over short dimensions or (`long`) over
    a long innermost one (with or without a channel row after it), where
    the loop sweeps each window position over all of a dimension's
    interior outputs and folds the clipped ones at its edges one by one."""
    rank = draw(st.integers(1, 4 if long else 3))
    shape = [draw(st.integers(1, 5 if long else 7)) for _ in range(rank)]
    if long:
        shape[-1] = draw(st.integers(6, 40))
        if rank >= 2 and draw(st.booleans()):  # a channel row after the swept dimension
            shape[-1], shape[-2] = draw(st.integers(1, 9)), draw(st.integers(6, 40))
    sizes = [draw(st.integers(1, 4)) for _ in range(rank)]
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    pads = [(draw(st.integers(-1, 3)), draw(st.integers(-1, 3))) for _ in range(rank)]
    base = [draw(st.sampled_from([1, 1, 1, 2] if long else [1, 2, 3])) for _ in range(rank)]
    wdil = [draw(st.sampled_from([1, 1, 2, 3] if long else [1, 2, 3])) for _ in range(rank)]
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32] if long else list(TYPES)))
    op = draw(st.sampled_from(list(OPS)))
    layout = draw(st.sampled_from([None, "reversed"]))
    return shape, sizes, strides, pads, base, wdil, dtype, op, layout


@settings(max_examples=140, deadline=None)
@given(st.one_of(window_cases(), window_cases(long=True)), st.integers(0, 2**32 - 1))
def test_reduce_window_with_every_attribute_matches_the_evaluator(case, seed):
    shape, sizes, strides, pads, base, wdil, dtype, op, layout = case
    lay = None if layout is None else list(range(len(shape)))  # minor-to-major reversed
    module, out = _window_module(shape, dtype, op, sizes, strides, pads, base, wdil, lay)
    x = _data(np.random.default_rng(seed), shape, dtype, op)
    want = uir.evaluate(module, x)
    got = _compiled(module, "window", empty=0 in out)(x)
    _close(got, want, dtype, op)


@pytest.mark.xla
@settings(max_examples=40, deadline=None)
@given(window_cases(), st.integers(0, 2**32 - 1))
def test_reduce_window_with_every_attribute_compiles_like_xla(case, seed):
    shape, sizes, strides, pads, base, wdil, dtype, op, layout = case
    lay = None if layout is None else list(range(len(shape)))
    module, _ = _window_module(shape, dtype, op, sizes, strides, pads, base, wdil, lay)
    assert_compiled_like_xla(module, [_data(np.random.default_rng(seed), shape, dtype, op)])


@pytest.mark.parametrize("layout", [None, [0, 1, 2, 3]])
def test_max_and_average_pooling_run_as_window_thunks(layout):
    rng = np.random.default_rng(1)
    shape = [2, 9, 11, 5]  # NHWC, 3x3 windows, stride 2, SAME-style padding
    for op in ("max", "add"):
        module, _ = _window_module(
            shape,
            np.float32,
            op,
            [1, 3, 3, 1],
            [1, 2, 2, 1],
            [(0, 0), (1, 1), (1, 1), (0, 0)],
            [1] * 4,
            [1] * 4,
            layout,
        )
        x = rng.standard_normal(shape).astype(np.float32)
        _close(_compiled(module, "window")(x), uir.evaluate(module, x), np.float32, op)


CUMULATIVE = {
    "cumsum": (lax.cumsum, lambda x, a: np.cumsum(x, axis=a)),
    "cumprod": (lax.cumprod, lambda x, a: np.cumprod(x, axis=a)),
    "cummax": (lax.cummax, lambda x, a: np.maximum.accumulate(x, axis=a)),
    "cummin": (lax.cummin, lambda x, a: np.minimum.accumulate(x, axis=a)),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cumulative_ops_scan_along_each_axis(name, axis, reverse, dtype):
    op, reference = CUMULATIVE[name]
    rng = np.random.default_rng(axis)
    x = (rng.standard_normal((4, 6, 5)) * (0.5 if name == "cumprod" else 3)).astype(dtype)
    if name == "cumprod" and dtype == np.float32:
        x = (1 + 0.1 * x).astype(dtype)
    f = uir.jit(lambda v: op(v, axis=axis, reverse=reverse))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == []
    assert "scan along" in compiled.executable.thunk_text, compiled.executable.thunk_text
    flip = lambda v: np.flip(v, axis) if reverse else v  # noqa: E731
    want = flip(reference(flip(x), axis)).astype(dtype)
    got = compiled(x)
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)
    # The evaluator folds each window from its start; the scan agrees with it.
    np.testing.assert_allclose(
        got, uir.evaluate(f.lower(x).module, x), rtol=1e-5 if dtype == np.float32 else 0
    )


@pytest.mark.xla
@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(CUMULATIVE)),
    st.lists(st.integers(1, 40), min_size=1, max_size=3),
    st.data(),
    st.booleans(),
    st.sampled_from([np.float32, np.int32, np.float64]),
)
def test_cumulative_ops_along_each_axis_compile_like_xla(name, shape, data, reverse, dtype):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    x = (1 + 0.05 * x) if name == "cumprod" else 3 * x
    x = x.astype(dtype)
    before = uir.config.read("enable_x64")
    uir.config.update("enable_x64", dtype == np.float64)
    try:
        f = uir.jit(lambda v: CUMULATIVE[name][0](v, axis=axis, reverse=reverse))
        module = f.lower(x).module
    finally:
        uir.config.update("enable_x64", before)
    assert_compiled_like_xla(module, [x])


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("cummax", np.bool_),
        ("cummin", np.bool_),
        ("cumsum", np.complex64),
        ("cumprod", np.complex64),
    ],
)
def test_cumulative_ops_of_bools_and_complex_numbers_scan_natively(name, dtype):
    op, reference = CUMULATIVE[name]
    rng = np.random.default_rng(4)
    if dtype == np.bool_:
        x = rng.random((5, 40)) < (0.05 if name == "cummax" else 0.95)
    else:
        x = (1 + 0.1 * (rng.standard_normal((5, 40)) + 1j * rng.standard_normal((5, 40)))).astype(
            dtype
        )
    f = uir.jit(lambda v: op(v, axis=1))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == []
    assert "scan along 1" in compiled.executable.thunk_text, compiled.executable.thunk_text
    got = compiled(x)
    np.testing.assert_allclose(got, reference(x, 1).astype(dtype), rtol=1e-5)
    np.testing.assert_allclose(got, uir.evaluate(f.lower(x).module, x), rtol=1e-5)


def test_max_pooling_of_bools_runs_natively():
    x = np.random.default_rng(5).random((6, 8)) < 0.2
    f = uir.jit(lambda v: lax.reduce_window(v, False, lax.max, (2, 2), (2, 2), "VALID"))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == [] and "window" in compiled.executable.thunk_text
    np.testing.assert_array_equal(compiled(x), x.reshape(3, 2, 4, 2).any(axis=(1, 3)))


def test_cumulative_logsumexp_and_associative_scan_compile_without_fallbacks():
    x = np.random.default_rng(2).standard_normal((3, 50)).astype(np.float32)
    for fn, want in [
        (lambda v: lax.cumlogsumexp(v, axis=1), np.logaddexp.accumulate(x, axis=1)),
        (lambda v: unp.cumsum(v, axis=1), np.cumsum(x, axis=1)),
    ]:
        compiled = uir.jit(fn).lower(x).compile()
        assert compiled.fallbacks == []
        np.testing.assert_allclose(compiled(x), want, rtol=1e-5, atol=1e-5)


def test_a_long_cumsum_is_a_scan_not_a_window_per_element():
    # n^2 work would be 10^12 adds here; the scan is 10^6.
    x = np.ones(1 << 20, np.float32)
    compiled = uir.jit(unp.cumsum).lower(x).compile()
    (thunk,) = [t for t in compiled.executable.thunk_text.splitlines() if "window" in t]
    assert "scan along 0" in thunk
    np.testing.assert_array_equal(compiled(x)[[0, 1000, -1]], [1, 1001, 1 << 20])


@st.composite
def arg_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 9)) for _ in range(rank)]
    axis = draw(st.integers(0, rank - 1))
    dtype = draw(
        st.sampled_from(
            [
                np.float32,
                np.int32,
                np.int8,
                np.uint8,
                np.float16,
                ml_dtypes.bfloat16,
                np.bool_,
                ml_dtypes.int4,
                ml_dtypes.uint4,
            ]
        )
    )
    nans = draw(st.integers(0, 3)) if dtype in (np.float32, np.float16, ml_dtypes.bfloat16) else 0
    return shape, axis, dtype, nans


@settings(max_examples=100, deadline=None)
@given(arg_cases(), st.integers(0, 2**32 - 1), st.sampled_from(["argmax", "argmin"]))
def test_argmax_and_argmin_match_numpy_and_the_evaluator(case, seed, which):
    shape, axis, dtype, nans = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape)  # few values: ties everywhere
    x = (x > 0) if dtype == np.bool_ else (x + 3 * (dtype == ml_dtypes.uint4)).astype(dtype)
    for _ in range(nans):
        x.flat[rng.integers(0, x.size)] = np.nan
    fn = unp.argmax if which == "argmax" else unp.argmin
    f = uir.jit(lambda v: fn(v, axis=axis))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == [], compiled.fallbacks
    assert compiled.executable.thunk_kinds.get("reduce") == 1, compiled.executable.thunk_text
    got = compiled(x)
    # Narrow types widened exactly, for NumPy.
    narrow = (np.float16, ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.uint4)
    wide = x.astype(np.float32) if dtype in narrow else x
    np.testing.assert_array_equal(got, (np.argmax if which == "argmax" else np.argmin)(wide, axis))
    np.testing.assert_array_equal(got, uir.evaluate(f.lower(x).module, x))


@pytest.mark.xla
@settings(max_examples=40, deadline=None)
@given(arg_cases(), st.integers(0, 2**32 - 1), st.sampled_from(["argmax", "argmin"]))
def test_argmax_and_argmin_compile_like_xla(case, seed, which):
    shape, axis, dtype, nans = case
    if dtype in (ml_dtypes.int4, ml_dtypes.uint4):
        dtype = np.int16  # jaxlib's arrays take no sub-byte NumPy types
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape)
    x = (x > 0) if dtype == np.bool_ else x.astype(dtype)
    for _ in range(nans):
        x.flat[rng.integers(0, x.size)] = np.nan
    fn = unp.argmax if which == "argmax" else unp.argmin
    assert_compiled_like_xla(uir.jit(lambda v: fn(v, axis=axis)).lower(x).module, [x])


@pytest.mark.parametrize("n", [63, 64, 700, 2048])
@pytest.mark.parametrize("nans", [0, 1, 3])
def test_long_rows_fold_in_vector_chunks_to_the_first_extreme(n, nans):
    # Past 63 elements a row folds in chunks of vector lanes; ties (few
    # distinct values) and NaNs anywhere must still give NumPy's first index.
    rng = np.random.default_rng(n + nans)
    x = rng.integers(-3, 4, (6, n)).astype(np.float32)
    for _ in range(nans):
        x[rng.integers(0, 6), rng.integers(0, n)] = np.nan
    for fn, ref in ((unp.argmax, np.argmax), (unp.argmin, np.argmin)):
        compiled = uir.jit(lambda v, fn=fn: fn(v, axis=1)).lower(x).compile()
        assert compiled.fallbacks == []
        np.testing.assert_array_equal(compiled(x), ref(x, axis=1))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 63])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("nans", [0, 5])
def test_many_short_rows_fold_in_groups_to_the_first_extreme(n, dtype, nans):
    # Below 64 elements float rows fold side by side, one row per vector
    # lane (8 of f32, 4 of f64), integer rows one at a time; ties, NaNs
    # anywhere (several in a row too) and a remainder of rows past the
    # last group must still give NumPy's first index.
    rng = np.random.default_rng(n * 7 + nans)
    x = rng.integers(-2, 3, (4099, n)).astype(dtype)
    if nans and np.issubdtype(dtype, np.floating):
        for _ in range(nans * 40):
            x[rng.integers(0, 4099), rng.integers(0, n)] = np.nan
    for fn, ref in ((unp.argmax, np.argmax), (unp.argmin, np.argmin)):
        compiled = uir.jit(lambda v, fn=fn: fn(v, axis=1)).lower(x).compile()
        assert compiled.fallbacks == []
        np.testing.assert_array_equal(compiled(x), ref(x, axis=1))


def _variadic(pick):
    return uir.hlo.parse_module(f"""HloModule v

pick {{
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
{pick}
  v = f32[] select(c, a, b)
  i = s32[] select(c, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}}

ENTRY e {{
  x = f32[6,40] parameter(0)
  io = s32[6,40] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[6], s32[6]) reduce(x, io, ninf, zero), dimensions={{1}}, to_apply=pick
  ROOT i = s32[6] get-tuple-element(r), index=1
}}
""")


def test_a_reducer_that_is_not_argmax_is_not_taken_for_one():
    x = np.random.default_rng(3).integers(0, 3, (6, 40)).astype(np.float32)
    # Strictly greater keeps the later of equal values: not argmax's first.
    last = _variadic("  c = pred[] compare(a, b), direction=GT")
    exe = uir.compile(last, backend="cpu")  # small: no warning by default
    assert exe.thunk_kinds.get("reduce", 0) == 0
    np.testing.assert_array_equal(exe(x), uir.evaluate(last, x))
    assert exe.fallbacks and "reduce" in exe.fallbacks[0]
    # NaN first, ties to the lower index, spelled another way: argmax.
    # (Without the NaN test it would not be: a NaN would lose.)
    first = _variadic(
        "  gt = pred[] compare(a, b), direction=GT\n"
        "  eq = pred[] compare(b, a), direction=EQ\n"
        "  lt = pred[] compare(bi, ai), direction=GT\n"
        "  tie = pred[] and(eq, lt)\n"
        "  a_nan = pred[] compare(a, a), direction=NE\n"
        "  better = pred[] or(tie, gt)\n"
        "  c = pred[] or(a_nan, better)"
    )
    exe = uir.compile(first, backend="cpu")
    assert exe.thunk_kinds.get("reduce") == 1
    np.testing.assert_array_equal(exe(x), np.argmax(x, axis=1))


@pytest.mark.parametrize("t", ["bf16", "f16", "f8e4m3fn"])
def test_narrow_float_argmax_returns_the_values_it_picked_bit_for_bit(t):
    # (f8e4m3fn has no infinity: its lowest finite value starts the fold.)
    module = uir.hlo.parse_module(f"""HloModule v

pick {{
  a = {t}[] parameter(0)
  ai = s32[] parameter(1)
  b = {t}[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  lt = pred[] compare(bi, ai), direction=GT
  tie = pred[] and(eq, lt)
  a_nan = pred[] compare(a, a), direction=NE
  better = pred[] or(tie, gt)
  c = pred[] or(a_nan, better)
  v = {t}[] select(c, a, b)
  i = s32[] select(c, ai, bi)
  ROOT r = ({t}[], s32[]) tuple(v, i)
}}

ENTRY e {{
  x = {t}[5,300] parameter(0)
  io = s32[5,300] iota(), iota_dimension=1
  low = {t}[] constant({"-448" if t == "f8e4m3fn" else "-inf"})
  zero = s32[] constant(0)
  ROOT r = ({t}[5], s32[5]) reduce(x, io, low, zero), dimensions={{1}}, to_apply=pick
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("reduce") == 1, exe.thunk_text
    (x,) = random_arguments(module, seed=5)
    x[0, :] = -0.0
    x[0, 7] = 0.0  # -0 and +0 tie: the first wins
    x[1, :] = 1.0
    x[1, 100] = np.nan
    x[2, :] = x[2, 0]  # all equal
    got, want = exe(x), uir.evaluate(module, x)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    np.testing.assert_array_equal(
        np.asarray(got[0]).view(np.uint8), np.asarray(want[0]).view(np.uint8)
    )
    assert list(np.asarray(got[1])[:3]) == [0, 100, 0]


def _magnitude_sort_module(n):
    # Ordered by x*x: a valid order the runtime's sort (keys compared as
    # they are, ascending or descending) does not take.
    return uir.hlo.parse_module(f"""HloModule s

cmp {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  aa = f32[] multiply(a, a)
  bb = f32[] multiply(b, b)
  ROOT lt = pred[] compare(aa, bb), direction=LT
}}

ENTRY e {{
  x = f32[{n}] parameter(0)
  ROOT s = f32[{n}] sort(x), dimensions={{0}}, is_stable=true, to_apply=cmp
}}
""")


def test_fallbacks_are_listed_profiled_and_governed_by_the_flag(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(4096).astype(np.float32)
    monkeypatch.setenv("UIR_FLAGS", "--fallback=off --executable_cache=0")
    module = _magnitude_sort_module(4096)
    exe = uir.compile(module, backend="cpu")
    assert [f.split(":")[0] for f in exe.fallbacks] == ["s"]
    assert "fallback s (evaluator: " in exe.thunk_text
    np.testing.assert_array_equal(exe(x), x[np.argsort(x * x, kind="stable")])
    profile = exe.profile(x)
    (row,) = [r for r in profile.rows if r.kind == "fallback"]
    assert row.op == "s" and 0 < profile.fallback_share <= 1
    assert "on the evaluator (fallbacks)" in str(profile)
    monkeypatch.setenv("UIR_FLAGS", "--fallback=error --executable_cache=0")
    with pytest.raises(uir.FallbackError, match="sort"):
        uir.compile(module, backend="cpu")
    monkeypatch.setenv("UIR_FLAGS", "--fallback=warn --executable_cache=0")
    with pytest.warns(uir.FallbackWarning, match="sort"):
        uir.compile(module, backend="cpu")
    # By default only a large fallback warns: this one reads and writes
    # 32 KiB, over a limit of 16 KiB.
    monkeypatch.setenv("UIR_FLAGS", "--executable_cache=0 --fallback_warn_bytes=16384")
    with pytest.warns(uir.FallbackWarning):
        uir.compile(module, backend="cpu")
    small = _magnitude_sort_module(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        uir.compile(small, backend="cpu")  # 64 bytes: no warning
    monkeypatch.setenv("UIR_FLAGS", "--fallback=sometimes")
    with pytest.raises(ValueError, match="--fallback must be one of"):
        uir.compile(small, backend="cpu")


def test_rng_draws_natively_in_range_and_anew_each_run():
    module = uir.hlo.parse_module("""HloModule r

ENTRY e {
  lo = f32[] parameter(0)
  hi = f32[] constant(1)
  ROOT r = f32[1024,512] rng(lo, hi), distribution=rng_uniform
}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("rng") == 1, exe.thunk_text
    assert "rng r uniform f32 x 524288" in exe.thunk_text
    first, second = np.asarray(exe(np.float32(0.5))), np.asarray(exe(np.float32(0.5)))
    for draws in first, second:
        assert draws.min() >= 0.5 and draws.max() < 1
        assert abs(draws.mean() - 0.75) < 0.002 and abs(draws.std() - 0.5 / 12**0.5) < 0.002
    assert (first != second).mean() > 0.99


@pytest.mark.parametrize(
    "t, lo, hi",
    [("f16", 1, 1.0009765625), ("bf16", -2, 3), ("f64", -1e-300, 1e-300), ("f32", 5, 5)],
)
def test_uniform_floats_stay_below_the_upper_bound_in_their_own_precision(t, lo, hi):
    # [1, 1 + 2^-10) holds one f16 value; an empty range gives the low bound.
    module = uir.hlo.parse_module(f"""HloModule r

ENTRY e {{
  lo = {t}[] parameter(0)
  hi = {t}[] parameter(1)
  ROOT r = {t}[5000] rng(lo, hi), distribution=rng_uniform
}}
""")
    dtype = {"f16": np.float16, "f64": np.float64, "f32": np.float32, "bf16": ml_dtypes.bfloat16}[t]
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    draws = np.asarray(exe(dtype(lo), dtype(hi))).astype(np.float64)
    assert draws.min() >= lo and (draws.max() < hi or lo == hi) and draws.max() <= hi
    if t == "f16":
        assert set(draws) == {1.0}
    elif lo < hi:
        assert len(set(draws)) > 100


@pytest.mark.parametrize("t", ["s8", "u8", "s32", "u32", "s64", "u64"])
def test_uniform_integers_cover_their_range_evenly(t):
    module = uir.hlo.parse_module(f"""HloModule r

ENTRY e {{
  lo = {t}[] parameter(0)
  hi = {t}[] parameter(1)
  ROOT r = {t}[60000] rng(lo, hi), distribution=rng_uniform
}}
""")
    dtype = np.dtype(t.replace("s", "int").replace("u", "uint"))
    lo, hi = (dtype.type(-3), dtype.type(3)) if t[0] == "s" else (dtype.type(250), dtype.type(255))
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    counts = np.unique(np.asarray(exe(lo, hi)), return_counts=True)
    assert list(counts[0]) == list(range(int(lo), int(hi)))
    even = 60000 / len(counts[0])
    assert counts[1].min() > 0.9 * even and counts[1].max() < 1.1 * even
    # An empty range gives the low bound.
    np.testing.assert_array_equal(exe(hi, lo), np.full(60000, hi))


def test_normal_draws_have_the_mean_and_deviation_asked_for():
    module = uir.hlo.parse_module("""HloModule r

ENTRY e {
  mu = f64[] parameter(0)
  sigma = f64[] parameter(1)
  ROOT r = f64[400000] rng(mu, sigma), distribution=rng_normal
}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    z = np.asarray(exe(np.float64(-3), np.float64(2)))
    assert abs(z.mean() + 3) < 0.02 and abs(z.std() - 2) < 0.02
    # The evaluator draws other numbers from the same distribution.
    ref = np.asarray(uir.evaluate(module, np.float64(-3), np.float64(2)))
    assert abs(ref.mean() - z.mean()) < 0.03 and abs(ref.std() - z.std()) < 0.03
    assert abs(np.mean(np.abs(z + 3) < 2) - 0.6827) < 0.005


def _scatter_module(combiner, window_first=False):
    body = {"add": "add(a, b)", "max": "maximum(a, b)", "replace": None}[combiner]
    # Replacing: the combiner returns the update, its second parameter.
    root = "" if body is None else f"ROOT r = f32[] {body}"
    updates, window = ("f32[3,7]", "0") if window_first else ("f32[7,3]", "1")
    return uir.hlo.parse_module(f"""HloModule s

comb {{
  a = f32[] parameter(0)
  {"ROOT " if body is None else ""}b = f32[] parameter(1)
  {root}
}}

ENTRY e {{
  x = f32[6,5] parameter(0)
  i = s32[7,1] parameter(1)
  u = {updates} parameter(2)
  ROOT s = f32[6,5] scatter(x, i, u), update_window_dims={{{window}}},
    inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1,
    to_apply=comb
}}
""")


@pytest.mark.parametrize("combiner", ["add", "max", "replace"])
@pytest.mark.parametrize("window_first", [False, True])
def test_scatter_combines_in_the_updates_order_and_skips_windows_out_of_bounds(
    combiner, window_first
):
    rng = np.random.default_rng(7)
    module = _scatter_module(combiner, window_first)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    i = np.array([[0], [2], [2], [5], [-1], [6], [2]], np.int32)  # repeats; two out of bounds
    u = rng.standard_normal((3, 7) if window_first else (7, 3)).astype(np.float32)
    exe = uir.compile(module, backend="cpu")
    assert exe.thunk_kinds.get("scatter") == 1 and exe.fallbacks == [], exe.thunk_text
    np.testing.assert_array_equal(exe(x, i, u), uir.evaluate(module, x, i, u))


SCATTER_TYPES = {
    "pred": ["or", "and", "add", "maximum", "replace"],
    "s4": ["add", "multiply", "maximum", "or"],
    "u4": ["add", "minimum", "and"],
    "s8": ["add", "multiply"],
    "u16": ["add", "maximum"],
    "f16": ["add", "multiply", "maximum"],
    "bf16": ["add", "minimum", "replace"],
    "f8e4m3fn": ["add", "maximum"],
    "f8e5m2": ["multiply"],
    "c64": ["add", "multiply", "replace"],
    "c128": ["add"],
    "f64": ["add", "minimum"],
}


@pytest.mark.parametrize(
    "t, op", [(t, op) for t, ops in SCATTER_TYPES.items() for op in ops], ids=str
)
def test_scatter_of_every_element_type_runs_natively_like_the_evaluator(t, op):
    root = "ROOT b = {t}[] parameter(1)" if op == "replace" else "b = {t}[] parameter(1)"
    body = "" if op == "replace" else f"ROOT r = {t}[] {op}(a, b)"
    module = uir.hlo.parse_module(f"""HloModule s

comb {{
  a = {t}[] parameter(0)
  {root.format(t=t)}
  {body}
}}

ENTRY e {{
  x = {t}[6,5] parameter(0)
  i = s32[9,1] parameter(1)
  u = {t}[9,5] parameter(2)
  ROOT s = {t}[6,5] scatter(x, i, u), update_window_dims={{1}}, inserted_window_dims={{0}},
    scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=comb
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("scatter") == 1, exe.thunk_text
    rng = np.random.default_rng(11)
    i = np.array([[0], [2], [2], [5], [-1], [6], [2], [0], [3]], np.int32)  # repeats, out of range
    x, u = random_arguments(module, seed=3)[::2]
    if t.startswith("c"):
        x = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(x.dtype)
        u = (rng.standard_normal((9, 5)) + 1j * rng.standard_normal((9, 5))).astype(u.dtype)
    if t in ("s4", "u4"):  # every value, negative ones kept in their low bits as NumPy keeps them
        lo, hi = (-8, 8) if t == "s4" else (0, 16)
        x = rng.integers(lo, hi, (6, 5)).astype(x.dtype)
        u = rng.integers(lo, hi, (9, 5)).astype(u.dtype)
    got, want = exe(x, i, u), uir.evaluate(module, x, i, u)
    if t in ("s4", "u4"):
        np.testing.assert_array_equal(np.asarray(got).astype(int), np.asarray(want).astype(int))
    else:
        np.testing.assert_array_equal(
            np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8), err_msg=t
        )


@st.composite
def sort_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 12)) for _ in range(rank)]
    axis = draw(st.integers(0, rank - 1))
    dtype = draw(st.sampled_from([np.float32, np.int32, np.uint8, np.int8]))
    return shape, axis, dtype


def _specials(rng, x):
    if np.issubdtype(x.dtype, np.floating) and x.size:
        for v in (np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf):
            x.flat[rng.integers(0, x.size)] = v
    return x


@settings(max_examples=60, deadline=None)
@given(sort_cases(), st.integers(0, 2**32 - 1))
def test_sort_argsort_and_top_k_run_natively_like_the_evaluator(case, seed):
    shape, axis, dtype = case
    rng = np.random.default_rng(seed)
    x = _specials(rng, rng.integers(-4, 5, shape).astype(dtype))  # ties: stability shows
    k = min(3, shape[-1])
    for fn in (
        lambda v: unp.sort(v, axis=axis),
        lambda v: unp.argsort(v, axis=axis),
        lambda v: lax.top_k(v, k),
    ):
        f = uir.jit(fn)
        compiled = f.lower(x).compile()
        assert compiled.fallbacks == [], compiled.fallbacks
        assert compiled.executable.thunk_kinds.get("sort") == 1, compiled.executable.thunk_text
        got, want = compiled(x), uir.evaluate(f.lower(x).module, x)
        for g, w in zip(
            got if isinstance(got, tuple) else (got,),
            want if isinstance(want, tuple) else (want,),
            strict=True,
        ):
            np.testing.assert_array_equal(g, w)


def test_a_sort_selects_only_the_positions_its_slices_read():
    rng = np.random.default_rng(9)
    x = _specials(rng, rng.integers(-20, 20, (64, 300)).astype(np.float32))
    f = uir.jit(lambda v: (unp.sort(v, axis=1)[:, :5], unp.argsort(v, axis=1)[:, :5]))
    compiled = f.lower(x).compile()
    assert "first 5" in compiled.executable.thunk_text, compiled.executable.thunk_text
    values, index = compiled(x)
    want_values, want_index = uir.evaluate(f.lower(x).module, x)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(index, want_index)
    # A sort whose whole result is read is sorted whole.
    g = uir.jit(lambda v: unp.sort(v, axis=1))
    assert "first" not in g.lower(x).compile().executable.thunk_text


def _sort_module(direction, compare_type=""):
    return uir.hlo.parse_module(f"""HloModule s

cmp {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ai = s32[] parameter(2)
  bi = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction={direction}{compare_type}
}}

ENTRY e {{
  x = f32[4,33] parameter(0)
  i = s32[4,33] iota(), iota_dimension=1
  ROOT s = (f32[4,33], s32[4,33]) sort(x, i), dimensions={{1}}, is_stable=true, to_apply=cmp
}}
""")


def test_descending_total_order_and_plain_less_comparators_all_sort_natively():
    rng = np.random.default_rng(5)
    x = _specials(rng, rng.integers(-3, 4, (4, 33)).astype(np.float32))
    for direction, kind in ((" GT", "sort"), (" LT", "sort")):
        module = _sort_module(direction.strip(), ", type=TOTALORDER")
        exe = uir.compile(module, backend="cpu")
        assert exe.thunk_kinds.get(kind) == 1, exe.thunk_text
        for g, w in zip(exe(x), uir.evaluate(module, x), strict=True):
            np.testing.assert_array_equal(g, w)
    # A plain less-than (or greater-than) is no order once NaNs are in, so
    # HLO fixes no place for them: it sorts natively, every other value in
    # the evaluator's order, NaNs last (first, descending), each line a
    # permutation of its input.
    for direction in ("LT", "GT"):
        module = _sort_module(direction)
        exe = uir.compile(module, backend="cpu")
        assert exe.thunk_kinds.get("sort") == 1 and exe.fallbacks == [], exe.thunk_text
        clean = np.where(np.isnan(x), np.float32(0.5), x)
        for g, w in zip(exe(clean), uir.evaluate(module, clean), strict=True):
            np.testing.assert_array_equal(g, w)
        values, index = exe(x)
        np.testing.assert_array_equal(np.take_along_axis(x, index, axis=1), values)
        np.testing.assert_array_equal(
            np.sort(index, axis=1), np.broadcast_to(np.arange(33), x.shape)
        )
        for row in values:
            nan = np.isnan(row)
            assert (
                nan[: nan.sum()].all() if direction == "GT" else nan[len(row) - nan.sum() :].all()
            )
            finite = row[~nan]
            assert (
                (np.diff(finite) >= 0).all() if direction == "LT" else (np.diff(finite) <= 0).all()
            )


def test_a_sort_keyed_by_a_later_operand_sorts_every_operand_by_it():
    module = uir.hlo.parse_module("""HloModule s

cmp {
  a0 = f64[] parameter(0)
  b0 = f64[] parameter(1)
  a1 = f64[] parameter(2)
  b1 = f64[] parameter(3)
  a2 = s32[] parameter(4)
  b2 = s32[] parameter(5)
  ROOT lt = pred[] compare(a1, b1), direction=LT
}

ENTRY e {
  x = f64[2,50] parameter(0)
  k = f64[2,50] parameter(1)
  i = s32[2,50] iota(), iota_dimension=1
  ROOT s = (f64[2,50], f64[2,50], s32[2,50]) sort(x, k, i), dimensions={1}, to_apply=cmp
}
""")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 50))
    k = rng.integers(-5, 5, (2, 50)).astype(np.float64)  # ties: stability shows
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("sort") == 1, exe.thunk_text
    got = exe(x, k)
    for g, w in zip(got, uir.evaluate(module, x, k), strict=True):
        np.testing.assert_array_equal(g, w)
    order = np.argsort(k, axis=1, kind="stable")
    np.testing.assert_array_equal(got[2], order)
    np.testing.assert_array_equal(got[0], np.take_along_axis(x, order, axis=1))


KEY_TYPES = {"s32": np.int32, "u8": np.uint8, "f32": np.float32, "f64": np.float64}


def _key_values(rng, t, n):
    if t in ("f32", "f64"):
        pool = np.array([-np.inf, -2.5, -1.0, -0.0, 0.0, 1.0, 2.5, np.inf, np.nan, 3.0])
        return rng.choice(pool, n).astype(KEY_TYPES[t])
    return rng.integers(0, 4, n).astype(KEY_TYPES[t])  # few values: many ties


@settings(max_examples=30, deadline=None)
@given(
    types=st.lists(st.sampled_from(sorted(KEY_TYPES)), min_size=2, max_size=3),
    data=st.data(),
)
def test_sorts_by_several_keys_in_any_priority_and_direction(types, data):
    m = len(types)
    priority = data.draw(st.permutations(range(m)))
    descending = [data.draw(st.booleans()) for _ in range(m)]
    total = [data.draw(st.booleans()) for _ in range(m)]
    keep = data.draw(st.sampled_from([0, 3]))
    n = 23
    params = []
    for k, t in enumerate(types):
        params += [f"a{k} = {t}[] parameter({2 * k})", f"b{k} = {t}[] parameter({2 * k + 1})"]
    params.append(f"ai = s32[] parameter({2 * m})")
    params.append(f"bi = s32[] parameter({2 * m + 1})")
    body = []
    for k, t in enumerate(types):
        kind = ", type=TOTALORDER" if t.startswith("f") and total[k] else ""
        if t.startswith("f") and not total[k]:
            kind = ", type=TOTALORDER"  # canonicalized first, as JAX does
            body += [
                f"z{k} = {t}[] constant(0)",
                f"nan{k} = {t}[] constant(nan)",
            ]
            for side in "ab":
                body += [
                    f"{side}z{k} = pred[] compare({side}{k}, z{k}), direction=EQ",
                    f"{side}s{k} = {t}[] select({side}z{k}, z{k}, {side}{k})",
                    f"{side}n{k} = pred[] compare({side}s{k}, {side}s{k}), direction=NE",
                    f"{side}c{k} = {t}[] select({side}n{k}, nan{k}, {side}s{k})",
                ]
            a, b = f"ac{k}", f"bc{k}"
        else:
            a, b = f"a{k}", f"b{k}"
        d = "GT" if descending[k] else "LT"
        body += [
            f"lt{k} = pred[] compare({a}, {b}), direction={d}{kind}",
            f"eq{k} = pred[] compare({a}, {b}), direction=EQ{kind}",
        ]
    last = priority[-1]
    root = f"lt{last}"
    for k in reversed(priority[:-1]):
        body += [f"and{k} = pred[] and(eq{k}, {root})", f"or{k} = pred[] or(lt{k}, and{k})"]
        root = f"or{k}"
    body[-1] = "ROOT " + body[-1]
    shapes = ", ".join(f"{t}[{n}]" for t in types)
    names = ", ".join(f"x{k}" for k in range(m))
    kept = ""
    if keep:
        kept = "".join(
            f"  g{k} = {t}[{n}] get-tuple-element(s), index={k}\n"
            f"  t{k} = {t}[{keep}] slice(g{k}), slice={{[0:{keep}]}}\n"
            for k, t in enumerate(types)
        )
        kept += f"  gi = s32[{n}] get-tuple-element(s), index={m}\n"
        kept += f"  ti = s32[{keep}] slice(gi), slice={{[0:{keep}]}}\n"
        outs = ", ".join(f"{t}[{keep}]" for t in types)
        kept += (
            f"  ROOT r = ({outs}, s32[{keep}]) tuple({', '.join(f't{k}' for k in range(m))}, ti)\n"
        )
    text = (
        "HloModule s\n\ncmp {\n  "
        + "\n  ".join(params + body)
        + "\n}\n\nENTRY e {\n"
        + "".join(f"  x{k} = {t}[{n}] parameter({k})\n" for k, t in enumerate(types))
        + f"  i = s32[{n}] iota(), iota_dimension=0\n"
        + f"  {'' if keep else 'ROOT '}s = ({shapes}, s32[{n}]) sort({names}, i), "
        + "dimensions={0}, is_stable=true, to_apply=cmp\n"
        + kept
        + "}\n"
    )
    module = uir.hlo.parse_module(text)
    rng = np.random.default_rng(m * 31 + sum(priority))
    args = [_key_values(rng, t, n) for t in types]
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("sort") == 1, exe.thunk_text
    for g, w in zip(exe(*args), uir.evaluate(module, *args), strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("t", ["pred", "s2", "s4", "u4"])
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_sorts_by_pred_and_sub_byte_keys_natively(t, direction):
    module = uir.hlo.parse_module(f"""HloModule s

cmp {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT o = pred[] compare(a, b), direction={direction}
}}

ENTRY e {{
  x = {t}[5,37] parameter(0)
  y = s32[5,37] iota(), iota_dimension=1
  ROOT s = ({t}[5,37], s32[5,37]) sort(x, y), dimensions={{1}}, is_stable=true, to_apply=cmp
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("sort") == 1, exe.thunk_text
    rng = np.random.default_rng(8)
    lo, hi = {"pred": (0, 2), "s2": (-2, 2), "s4": (-8, 8), "u4": (0, 16)}[t]
    dtype = {"pred": np.bool_, "s2": ml_dtypes.int2, "s4": ml_dtypes.int4, "u4": ml_dtypes.uint4}[t]
    x = rng.integers(lo, hi, (5, 37)).astype(
        dtype
    )  # negatives in their low bits, as NumPy keeps them
    values, order = exe(x)
    key = x.astype(np.int64) * (1 if direction == "LT" else -1)
    want = np.argsort(key, axis=1, kind="stable")
    np.testing.assert_array_equal(order, want)
    np.testing.assert_array_equal(
        values.astype(np.int64), np.take_along_axis(x, want, 1).astype(np.int64)
    )
    ref_values, ref_order = uir.evaluate(module, x)
    np.testing.assert_array_equal(order, ref_order)
    np.testing.assert_array_equal(values.astype(np.int64), ref_values.astype(np.int64))


def test_a_comparator_that_is_no_lexicographic_order_stays_on_the_evaluator():
    # "a < b or c < d" orders nothing consistently; it is no key order.
    module = uir.hlo.parse_module("""HloModule s

cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  l = pred[] compare(a, b), direction=LT
  m = pred[] compare(c, d), direction=LT
  ROOT o = pred[] or(l, m)
}

ENTRY e {
  x = s32[9] parameter(0)
  y = s32[9] parameter(1)
  ROOT s = (s32[9], s32[9]) sort(x, y), dimensions={0}, to_apply=cmp
}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.thunk_kinds.get("sort", 0) == 0 and len(exe.fallbacks) == 1, exe.thunk_text


@st.composite
def gather_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 6)) for _ in range(rank)]
    mapped = draw(st.permutations(range(rank)))[: draw(st.integers(1, rank))]
    collapsed = sorted(d for d in mapped if draw(st.booleans()))
    # A collapsed dimension takes a slice of one element, or of none (XLA
    # allows it; the result is then zeros).
    sizes = [
        draw(st.integers(0, 1)) if d in collapsed else draw(st.integers(0, shape[d]))
        for d in range(rank)
    ]
    batch = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(0, 2)))]
    vector_at = draw(st.integers(0, len(batch)))
    implicit = len(mapped) == 1 and draw(st.booleans())
    index_shape = list(batch) if implicit else [*batch[:vector_at], len(mapped), *batch[vector_at:]]
    vector_dim = len(batch) if implicit else vector_at
    kept = rank - len(collapsed)
    out_rank = len(batch) + kept
    offset = sorted(draw(st.permutations(range(out_rank)))[:kept])
    dtype = draw(st.sampled_from([np.float32, np.int8, np.float64]))
    layout = draw(st.booleans())
    return shape, mapped, collapsed, sizes, batch, index_shape, vector_dim, offset, dtype, layout


def _gather_module(case, seed):
    """A gather of random dimension numbers, its operand and its indices."""
    shape, mapped, collapsed, sizes, batch, index_shape, vector_dim, offset, dtype, layout = case
    t = {np.float32: "f32", np.int8: "s8", np.float64: "f64"}[dtype]
    kept = [d for d in range(len(shape)) if d not in collapsed]
    out, b = [], iter(batch)
    for d in range(len(batch) + len(kept)):
        out.append(sizes[kept[offset.index(d)]] if d in offset else next(b))
    dims = lambda a: ",".join(map(str, a))  # noqa: E731
    lay = "{" + dims(range(len(shape))) + "}" if layout else ""  # minor-to-major reversed
    module = uir.hlo.parse_module(f"""HloModule g

ENTRY e {{
  x = {t}[{dims(shape)}]{lay} parameter(0)
  i = s32[{dims(index_shape)}] parameter(1)
  ROOT g = {t}[{dims(out)}] gather(x, i), offset_dims={{{dims(offset)}}},
    collapsed_slice_dims={{{dims(collapsed)}}}, start_index_map={{{dims(mapped)}}},
    index_vector_dim={vector_dim}, slice_sizes={{{dims(sizes)}}}
}}
""")
    rng = np.random.default_rng(seed)
    x = rng.integers(-100, 100, shape).astype(dtype)
    # Out-of-range starts too: they clamp.
    i = rng.integers(-3, max(shape) + 3, index_shape).astype(np.int32)
    return module, x, i


@settings(max_examples=80, deadline=None)
@given(gather_cases(), st.integers(0, 2**32 - 1))
def test_gather_with_random_dimension_numbers_runs_natively_like_the_evaluator(case, seed):
    module, x, i = _gather_module(case, seed)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    np.testing.assert_array_equal(exe(x, i), uir.evaluate(module, x, i))


@pytest.mark.xla
@settings(max_examples=40, deadline=None)
@given(gather_cases(), st.integers(0, 2**32 - 1))
def test_gather_with_random_dimension_numbers_compiles_like_xla(case, seed):
    _, _, collapsed, sizes, *_ = case
    # A collapsed dimension's empty slice still gives the output elements:
    # uir (and its evaluator) write zeros there, XLA:CPU reads the operand.
    # The values are left unspecified, so they are not compared.
    assume(all(sizes[d] == 1 for d in collapsed))
    module, x, i = _gather_module(case, seed)
    assert_compiled_like_xla(module, [x, i])


@pytest.mark.parametrize("t", ["pred", "s4", "u2", "f8e4m3fn", "bf16", "c128"])
def test_gather_of_every_element_type_copies_bytes_natively(t):
    module = uir.hlo.parse_module(f"""HloModule g

ENTRY e {{
  x = {t}[6,5] parameter(0)
  i = s32[7,1] parameter(1)
  ROOT g = {t}[7,5] gather(x, i), offset_dims={{1}}, collapsed_slice_dims={{0}},
    start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,5}}
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("gather") == 1, exe.thunk_text
    x = random_arguments(module, seed=4)[0]
    i = np.array([[0], [5], [2], [2], [9], [-4], [3]], np.int32)  # clamped starts too
    got = np.asarray(exe(x, i))
    np.testing.assert_array_equal(
        got.view(np.uint8), np.asarray(uir.evaluate(module, x, i)).view(np.uint8)
    )
    np.testing.assert_array_equal(got.view(np.uint8), x[np.clip(i[:, 0], 0, 5)].view(np.uint8))


def test_batched_gather_runs_natively():
    # take_along_axis and vmap-style gathers carry batching dimensions.
    module = uir.hlo.parse_module("""HloModule g

ENTRY e {
  x = f32[3,5,4] parameter(0)
  i = s32[3,6,1] parameter(1)
  ROOT g = f32[3,6,4] gather(x, i), offset_dims={2}, collapsed_slice_dims={1},
    start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0},
    index_vector_dim=2, slice_sizes={1,1,4}
}
""")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    i = rng.integers(0, 5, (3, 6, 1)).astype(np.int32)
    exe = uir.compile(module, backend="cpu")
    assert exe.thunk_kinds.get("gather") == 1 and exe.fallbacks == [], exe.thunk_text
    np.testing.assert_array_equal(exe(x, i), x[np.arange(3)[:, None], i[..., 0]])
    np.testing.assert_array_equal(exe(x, i), uir.evaluate(module, x, i))


def test_argmax_does_not_write_the_indices_it_counts_itself():
    x = np.random.default_rng(8).standard_normal((64, 300)).astype(np.float32)
    compiled = uir.jit(lambda v: unp.argmax(v, axis=1)).lower(x).compile()
    # The module still has its iota; no thunk writes it.
    assert "iota(" in compiled.as_text()
    assert compiled.executable.thunk_kinds == {"reduce": 1}, compiled.executable.thunk_text
    np.testing.assert_array_equal(compiled(x), np.argmax(x, axis=1))
    # The same iota read by something else too (CSE makes them one) is
    # still written.
    both = uir.jit(
        lambda v: (unp.argmax(v, axis=1), lax.broadcasted_iota(np.int32, (64, 300), 1) + 1)
    )
    kinds = both.lower(x).compile().executable.thunk_kinds
    assert kinds.get("kernel") == 1 and kinds.get("reduce") == 1, kinds
    got = both(x)
    np.testing.assert_array_equal(got[0], np.argmax(x, axis=1))
    np.testing.assert_array_equal(got[1], np.broadcast_to(np.arange(1, 301), (64, 300)))
