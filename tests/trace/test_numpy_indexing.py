"""NumPy's indexing in full, against NumPy: Hypothesis draws index
expressions mixing integers, slices (negative steps included), None,
Ellipsis, static boolean masks and integer index arrays that broadcast
together (adjacent or separated by slices), and reads and updates
(x.at[...].set/add/multiply/min/max) with them eagerly, under jit with the
arrays as constants, and under jit with the arrays traced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp


@st.composite
def index_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # The arrays' common shape: each array's shape is a broadcastable part of it.
    common = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    entries, axis = [], 0
    ellipsis = False
    while axis < rank and len(entries) < rank + 2:
        kind = draw(st.sampled_from(["int", "slice", "none", "array", "array", "mask", "ellipsis"]))
        n = shape[axis]
        if kind == "int":
            entries.append(int(rng.integers(-n, n)))
            axis += 1
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            entries.append(slice(start, stop, step))
            axis += 1
        elif kind == "none":
            entries.append(None)
        elif kind == "array":
            sub = tuple(d if draw(st.booleans()) else 1 for d in common)[
                draw(st.integers(0, len(common))) :
            ]
            entries.append(rng.integers(-n, n, sub).astype(np.int32))
            axis += 1
        elif kind == "mask":
            entries.append(rng.random(n) < 0.5)
            axis += 1
        elif not ellipsis:
            ellipsis = True
            entries.append(Ellipsis)
            axis += draw(st.integers(0, rank - axis))
    return shape, tuple(entries), draw(st.integers(0, 2**32 - 1))


def _numpy_or_none(fn):
    try:
        return fn()
    except (IndexError, ValueError):
        return None


def _traced_form(index):
    """The index with its integer arrays as arguments, and a function that
    puts traced values back in their places."""
    where = [k for k, e in enumerate(index) if isinstance(e, np.ndarray) and e.dtype != np.bool_]

    def rebuild(arrays):
        out = list(index)
        for k, a in zip(where, arrays, strict=True):
            out[k] = a
        return tuple(out)

    return [index[k] for k in where], rebuild


@settings(max_examples=150, deadline=None)
@given(index_cases())
@example(((3, 4, 5), (np.array([2, 0]), slice(2, 5)), 0))
@example(((3, 4, 5), (np.array([2, 0]), np.array([[1], [3]])), 0))
@example(((3, 4, 5), (np.array([2, 0]), slice(None), np.array([[1], [3]])), 0))
@example(((3, 4), (Ellipsis, None, np.array([1, -1])), 0))
# An Ellipsis of no axes still parts the advanced indices: theirs go first.
@example(((1, 1, 1), (slice(None), np.array([False]), Ellipsis, 0), 0))
@example(((2, 3, 4), (np.array([1, 0]), Ellipsis, np.array([2, 3])), 0))
def test_reading_matches_numpy(case):
    shape, index, seed = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    want = _numpy_or_none(lambda: x[index])
    assume(want is not None)
    np.testing.assert_array_equal(uir.jit(lambda v: v[index])(x), want)
    arrays, rebuild = _traced_form(index)
    traced = uir.jit(lambda v, *a: v[rebuild(a)])(x, *arrays)
    assert traced.shape == want.shape
    np.testing.assert_array_equal(traced, want)


@settings(max_examples=150, deadline=None)
@given(index_cases(), st.sampled_from(["set", "add", "multiply", "min", "max"]))
@example(((3, 4, 5), (np.array([2, 0]), 1), 0), "set")
@example(((6,), (np.array([1, 1, 4]),), 0), "add")
def test_updating_matches_numpy(case, op):
    shape, index, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    selected = _numpy_or_none(lambda: x[index])
    assume(selected is not None)
    # set: one value (repeated positions would make the winner arbitrary);
    # the combining updates: a value per selected element.
    values = (
        np.float32(2.5) if op == "set" else rng.standard_normal(selected.shape).astype(np.float32)
    )
    want = x.copy()
    if op == "set":
        want[index] = values
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[op]
        ufunc.at(want, index, values)
    np.testing.assert_allclose(uir.jit(lambda v: getattr(v.at[index], op)(values))(x), want)
    arrays, rebuild = _traced_form(index)
    traced = uir.jit(lambda v, u, *a: getattr(v.at[rebuild(a)], op)(u))(x, values, *arrays)
    np.testing.assert_allclose(traced, want, rtol=1e-6)


def test_out_of_range_reads_clamp_or_fill_and_writes_drop_or_clip_as_jax_does():
    x = np.arange(5.0, dtype=np.float32)
    i = np.array([0, 7, -1, -9])
    f = uir.jit(lambda v, k: (v[k], v.at[k].get(mode="fill", fill_value=-1.0)))
    clamped, filled = f(x, i)
    np.testing.assert_array_equal(clamped, [0, 4, 4, 0])
    np.testing.assert_array_equal(filled, [0, -1, 4, -1])
    g = uir.jit(lambda v, k: (v.at[k].set(9.0), v.at[k].set(9.0, mode="clip")))
    dropped, clipped = g(x, np.array([1, 7]))
    np.testing.assert_array_equal(dropped, [0, 9, 2, 3, 4])
    np.testing.assert_array_equal(clipped, [0, 9, 2, 3, 9])
    jnp = pytest.importorskip("jax.numpy")
    np.testing.assert_array_equal(jnp.asarray(x)[jnp.asarray(i)], clamped)
    np.testing.assert_array_equal(
        jnp.asarray(x).at[jnp.asarray(i)].get(mode="fill", fill_value=-1.0), filled
    )


def test_apply_divide_and_power_at_repeated_positions():
    x = np.arange(1.0, 6.0, dtype=np.float32)
    i = np.array([1, 1, 3])
    got = uir.jit(
        lambda v, k: (v.at[k].apply(lambda t: t * 10), v.at[k].divide(2.0), v.at[k].power(2.0))
    )(x, i)
    want_div, want_pow = x.copy(), x.copy()
    np.divide.at(want_div, i, 2.0)
    np.power.at(want_pow, i, 2.0)
    np.testing.assert_array_equal(got[0], [1, 200, 3, 40, 5])
    np.testing.assert_allclose(got[1], want_div)
    np.testing.assert_allclose(got[2], want_pow)


def test_bad_indices_are_refused_with_the_reason():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(uir.TraceError, match="traced boolean mask"):
        uir.jit(lambda v: v[v > 0])(x)
    with pytest.raises(uir.TraceError, match="does not match the indexed axes"):
        uir.jit(lambda v: v[np.array([True, False])])(x)
    with pytest.raises(uir.TraceError, match="too many indices"):
        uir.jit(lambda v: v[0, 0, np.array([0])])(x)
    with pytest.raises(uir.TraceError, match="out of bounds"):
        uir.jit(lambda v: v[5, np.array([0])])(x)
    with pytest.raises(uir.TraceError, match="mode must be one of"):
        uir.jit(lambda v: v.at[np.array([0])].set(1.0, mode="wrap"))(x)


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap", "promise_in_bounds"])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.bool_])
def test_take_and_take_along_axis_modes_match_jax(mode, dtype):
    jnp = pytest.importorskip("jax.numpy")
    x = (np.arange(12) % 7).astype(dtype).reshape(3, 4)
    i = np.array([[0, 5], [-1, 2], [3, -5]])
    inside = np.array([[0, 3], [-1, 2], [3, -4]])
    for a, b in ((i, "all"), (inside, "in range")):
        if mode == "promise_in_bounds":
            if b == "all":
                continue  # (out of range is undefined there)
            a = np.where(a < 0, a + 4, a)  # (and so, in JAX, are negative indices)
        takes = (
            []
            if mode == "promise_in_bounds"
            else [  # (a mode take has not, in JAX either)
                lambda m, v, k: m.take(v, k, axis=1, mode=mode),
                lambda m, v, k: m.take(v, k, mode=mode),
            ]
        )
        for fn in (
            *takes,
            *([] if mode == "wrap" else [lambda m, v, k: m.take_along_axis(v, k, 1, mode=mode)]),
        ):
            ours = uir.jit(lambda v, k, fn=fn: fn(unp, v, k))(x, a)
            np.testing.assert_array_equal(ours, np.asarray(fn(jnp, x, a)), err_msg=f"{mode} {b}")
    np.testing.assert_array_equal(
        unp.take(x, i, axis=1, fill_value=1), np.asarray(jnp.take(x, i, axis=1, fill_value=1))
    )
    if mode == "promise_in_bounds":
        with pytest.raises(uir.TraceError, match="mode must be one of"):
            unp.take(x, i, mode=mode)
    if mode == "wrap":  # (a mode take_along_axis has not, in JAX either)
        with pytest.raises(uir.TraceError, match='Unknown gather mode "wrap"'):
            unp.take_along_axis(x, i, 1, mode="wrap")
