"""uir.numpy.unique and the array API's unique_* against NumPy: sorted
values, first indices, inverse and counts, NaNs equal or not, along an
axis; a static size pads with fill_value (the smallest unique element by
default) under jit, and eagerly the size comes from the data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as jnp


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 1.0, -2.5, 3.0, np.nan, 7.0]), min_size=1, max_size=12),
    st.booleans(),
    st.integers(0, 4),
)
def test_unique_matches_numpy(values, equal_nan, extra):
    x = np.array(values, np.float32)
    want = np.unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan
    )
    got = jnp.unique(
        x, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    n = len(want[0])
    padded = uir.jit(
        lambda v: jnp.unique(v, return_counts=True, size=n + extra, equal_nan=equal_nan)
    )(x)
    np.testing.assert_array_equal(padded[0][:n], want[0])
    np.testing.assert_array_equal(padded[0][n:], np.full(extra, want[0][0]))
    np.testing.assert_array_equal(padded[1], np.concatenate([want[3], np.zeros(extra, int)]))


def test_unique_rows_and_fill_value():
    a = np.array([[1, 2], [1, 2], [0, 5], [1, 0]], np.int32)
    np.testing.assert_array_equal(jnp.unique(a, axis=0), np.unique(a, axis=0))
    np.testing.assert_array_equal(jnp.unique(a.T, axis=1), np.unique(a.T, axis=1))
    got = uir.jit(lambda v: jnp.unique(v, size=6, fill_value=-1))(a)
    np.testing.assert_array_equal(got, [0, 1, 2, 5, -1, -1])
    short = uir.jit(lambda v: jnp.unique(v, size=2))(a)  # the first two unique elements
    np.testing.assert_array_equal(short, [0, 1])


def test_array_api_forms():
    x = np.array([[2, 1], [2, 3]], np.int32)
    values, indices, inverse, counts = jnp.unique_all(x)
    want = np.unique_all(x)
    for g, w in zip((values, indices, inverse, counts), want, strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jnp.unique_counts(x).counts, np.unique_counts(x).counts)
    np.testing.assert_array_equal(
        jnp.unique_inverse(x).inverse_indices, np.unique_inverse(x).inverse_indices
    )
    # (NumPy 2 leaves unique_values unsorted; JAX, and uir, sort them.)
    np.testing.assert_array_equal(jnp.unique_values(x), np.sort(np.unique_values(x)))


def test_under_jit_a_size_is_required():
    with pytest.raises(uir.TraceError, match="give a static size"):
        uir.jit(jnp.unique)(np.array([1, 2, 2]))


A = np.array([5, 1, 3, 3, np.nan, 8], np.float32)
B = np.array([3, 7, 5, np.nan, 3], np.float32)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_functions_match_numpy_and_pad_to_a_size(name):
    want = getattr(np, name)(A, B)
    np.testing.assert_array_equal(getattr(jnp, name)(A, B), want)
    n = len(want)
    padded = uir.jit(lambda x, y: getattr(jnp, name)(x, y, size=n + 2, fill_value=-9))(A, B)
    np.testing.assert_array_equal(padded, np.concatenate([want, [-9, -9]]))
    with pytest.raises(uir.TraceError, match="static size"):
        uir.jit(getattr(jnp, name))(A, B)


def test_intersect1d_indices_and_jax_default_fills():
    values, in_a, in_b = jnp.intersect1d(A, B, return_indices=True)
    want = np.intersect1d(A, B, return_indices=True)
    for g, w in zip((values, in_a, in_b), want, strict=True):
        np.testing.assert_array_equal(g, w)
    # JAX's defaults: intersect1d/union1d/setxor1d pad with the smallest
    # result, setdiff1d with 0; indices with the arrays' sizes.
    got = jnp.intersect1d(A, B, size=4, return_indices=True)
    np.testing.assert_array_equal(got[0], [3, 5, 3, 3])
    np.testing.assert_array_equal(got[1], [2, 0, 6, 6])
    np.testing.assert_array_equal(got[2], [0, 2, 5, 5])
    np.testing.assert_array_equal(jnp.setdiff1d(A, B, size=4), [1, 8, np.nan, 0])


def test_compress_and_extract():
    a = np.arange(6).reshape(2, 3)
    keep = np.array([True, False, True])
    np.testing.assert_array_equal(jnp.compress(keep, a, axis=1), np.compress(keep, a, axis=1))
    np.testing.assert_array_equal(jnp.compress(keep, a), np.compress(keep, a))
    got = uir.jit(lambda c, v: jnp.compress(c, v, axis=1, size=3, fill_value=-1))(keep, a)
    np.testing.assert_array_equal(got, [[0, 2, -1], [3, 5, -1]])
    cond = np.array([1, 0, 1, 1])
    np.testing.assert_array_equal(jnp.extract(cond, np.arange(4)), np.extract(cond, np.arange(4)))
    np.testing.assert_array_equal(
        uir.jit(lambda c, v: jnp.extract(c, v, size=2))(cond, np.arange(4)), [0, 2]
    )


def test_trim_zeros_outside_jit_as_numpy():
    x = np.array([0, 0, 1, 2, 0, 3, 0])
    for trim in ("fb", "f", "b"):
        np.testing.assert_array_equal(jnp.trim_zeros(x, trim), np.trim_zeros(x, trim))
    grid = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(jnp.trim_zeros(grid), np.trim_zeros(grid))
    np.testing.assert_array_equal(jnp.trim_zeros(grid, axis=1), [[0], [1], [0]])
    assert jnp.trim_zeros(np.zeros(3)).shape == (0,)
    with pytest.raises(uir.TraceError, match=r"outside uir\.jit"):
        uir.jit(jnp.trim_zeros)(x)


def test_roots_as_numpy_and_under_jit_without_stripping():
    for p in (
        [1.0, -6.0, 11.0, -6.0],
        [0.0, 1.0, -3.0, 2.0],
        [1.0, 0.0, 0.0],
        [2.0],
        [1.0, 0.0, 1.0],
    ):
        got = np.sort_complex(np.asarray(jnp.roots(np.array(p))))
        np.testing.assert_allclose(got, np.sort_complex(np.roots(p)), atol=1e-4)
    got = uir.jit(lambda c: jnp.roots(c, strip_zeros=False))(np.array([1.0, -3.0, 2.0], np.float32))
    np.testing.assert_allclose(np.sort_complex(np.asarray(got)), [1, 2], atol=1e-5)
    with pytest.raises(uir.TraceError, match="strip_zeros=False"):
        uir.jit(jnp.roots)(np.array([1.0, 2.0]))


def test_empty_inputs():
    empty = np.array([], np.float32)
    np.testing.assert_array_equal(jnp.unique(empty), np.unique(empty))
    values, counts = jnp.unique(empty.astype(np.int32), return_counts=True, size=2)
    np.testing.assert_array_equal(values, [0, 0])
    np.testing.assert_array_equal(counts, [0, 0])
    np.testing.assert_array_equal(jnp.union1d(empty, np.array([3.0, 1.0])), [1.0, 3.0])
    assert jnp.intersect1d(np.array([1.0, 2.0]), empty).shape == (0,)
