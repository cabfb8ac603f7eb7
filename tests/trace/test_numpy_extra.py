"""uir.numpy's histograms, partial sorts, bit packing, put, put_along_axis,
polyfit and mask_indices against NumPy and, where JAX is installed (make
test-xla), against jax.numpy with its dtypes and (for the partial sorts)
JAX's order within the groups."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as u

rng = np.random.default_rng(0)
x = rng.standard_normal((4, 9)).astype(np.float32)
ints = rng.integers(0, 7, (3, 10)).astype(np.int32)
bytes_ = rng.integers(0, 256, (3, 5)).astype(np.uint8)
pts = rng.standard_normal((50, 3)).astype(np.float32)


def _groups(a, kth, axis=-1):
    """A partition's three groups in a comparable form: the sorted values
    before kth, the kth value, the sorted values after."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    return np.sort(a[..., :kth], -1), a[..., kth], np.sort(a[..., kth + 1 :], -1)


def _put(m, a, ind, v, mode=None):
    if m is np:
        out = a.copy()
        np.put(out, ind, v, mode=mode or "raise")
        return out
    return m.put(a, ind, v, mode=mode, inplace=False)


def _put_along(m, a, ind, v, axis):
    if m is np:
        out = a.copy()
        np.put_along_axis(out, ind, v, axis)
        return out
    return m.put_along_axis(a, ind, v, axis, inplace=False)


CASES = {
    "histogram": lambda m: m.histogram(x),
    "histogram bins range": lambda m: m.histogram(x, bins=5, range=(-1.0, 1.0)),
    "histogram edges": lambda m: m.histogram(
        x, bins=np.array([-2.0, -0.5, 0.0, 0.3, 2.0], np.float32)
    ),
    "histogram weights density": lambda m: m.histogram(
        x, bins=4, weights=np.abs(x) + 1, density=True
    ),
    "histogram flat range": lambda m: m.histogram(np.full(5, 2.0, np.float32), bins=3),
    "histogram ints": lambda m: m.histogram(ints, bins=7),
    "histogram_bin_edges": lambda m: m.histogram_bin_edges(x, bins=6),
    "histogram2d": lambda m: m.histogram2d(pts[:, 0], pts[:, 1], bins=4),
    "histogram2d bins pair": lambda m: m.histogram2d(pts[:, 0], pts[:, 1], bins=(3, 5)),
    "histogram2d density weights": lambda m: m.histogram2d(
        pts[:, 0], pts[:, 1], bins=3, weights=np.abs(pts[:, 2]), density=True
    ),
    "histogramdd": lambda m: m.histogramdd(pts, bins=3),
    "histogramdd ranges": lambda m: m.histogramdd(
        pts, bins=(2, 3, 4), range=[(-1, 1), (-2, 2), (0, 1)]
    ),
    "partition": lambda m: _groups(m.partition(x, 3), 3),
    "partition axis 0": lambda m: _groups(m.partition(x, 1, axis=0), 1, axis=0),
    "partition ints": lambda m: _groups(m.partition(ints, 4), 4),
    "partition unsigned": lambda m: _groups(m.partition(bytes_, 2), 2),
    "argpartition": lambda m: _groups(
        np.take_along_axis(x, np.asarray(m.argpartition(x, 5)), -1), 5
    ),
    "argpartition axis 0": lambda m: _groups(
        np.take_along_axis(x, np.asarray(m.argpartition(x, 2, axis=0)), 0), 2, axis=0
    ),
    "packbits": lambda m: m.packbits(ints),
    "packbits axis little": lambda m: m.packbits(ints > 3, axis=1, bitorder="little"),
    "packbits axis 0": lambda m: m.packbits(ints, axis=0),
    "unpackbits": lambda m: m.unpackbits(bytes_),
    "unpackbits axis count": lambda m: m.unpackbits(bytes_, axis=1, count=13),
    "unpackbits little short": lambda m: m.unpackbits(bytes_, axis=0, count=5, bitorder="little"),
    "put": lambda m: _put(m, x, np.array([0, 5, 17]), np.array([1.0, 2.0, 3.0], np.float32)),
    "put repeat values": lambda m: _put(m, x, np.array([1, 2, 3, 4]), np.float32(7.0)),
    "put clip": lambda m: _put(m, x, np.array([-3, 40]), np.array([8.0, 9.0], np.float32), "clip"),
    "put wrap": lambda m: _put(m, x, np.array([-3, 40]), np.array([8.0, 9.0], np.float32), "wrap"),
    "put_along_axis": lambda m: _put_along(
        m, x, np.argmax(x, axis=1)[:, None], np.float32(-1.0), 1
    ),
    "put_along_axis axis 0": lambda m: _put_along(
        m, x, np.array([[0, 3, 1, 2, 0, 0, 1, 3, 2]]), np.arange(9, dtype=np.float32)[None], 0
    ),
    "put_along_axis none": lambda m: _put_along(
        m, x, np.array([3, 30, 35]), np.array([5.0, 6.0, 7.0], np.float32), None
    ),
    "polyfit": lambda m: m.polyfit(pts[:, 0], pts[:, 1] + 2 * pts[:, 0] ** 2, 2),
    "polyfit 2-D y weights": lambda m: m.polyfit(
        pts[:, 0], pts[:, 1:], 3, w=np.abs(pts[:, 2]) + 0.5
    ),
    "mask_indices triu": lambda m: m.mask_indices(4, m.triu),
    "mask_indices tril k": lambda m: m.mask_indices(4, m.tril, -1),
}


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _leaves(item)]
    return [np.asarray(out)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name):
    got, want = _leaves(CASES[name](u)), _leaves(CASES[name](np))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.xla
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_numpy_with_its_dtypes(name, jax_x32):
    jnp = jax_x32.numpy
    got, want = _leaves(CASES[name](u)), _leaves(CASES[name](jnp))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.xla
@pytest.mark.parametrize("kth", [0, 3, 8])
def test_partial_sorts_keep_jaxs_order_within_groups(kth, jax_x32):
    jnp = jax_x32.numpy
    data = np.array([[3, 1, 4, 1, 5, 9, 2, 6, 5]], np.float32)
    np.testing.assert_array_equal(u.partition(data, kth), jnp.partition(data, kth))
    np.testing.assert_array_equal(u.argpartition(data, kth), jnp.argpartition(data, kth))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 30),
    axis=st.sampled_from([None, 0, 1]),
    little=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_unpackbits_undoes_packbits(n, axis, little, seed):
    bits = np.random.default_rng(seed).integers(0, 2, (3, n)).astype(np.uint8)
    order = "little" if little else "big"
    packed = u.packbits(bits, axis=axis, bitorder=order)
    np.testing.assert_array_equal(packed, np.packbits(bits, axis=axis, bitorder=order))
    length = bits.size if axis is None else bits.shape[axis]
    back = u.unpackbits(packed, axis=axis, count=length, bitorder=order)
    np.testing.assert_array_equal(back, bits.ravel() if axis is None else bits)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), bins=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_histogram_counts_every_value_once(n, bins, seed):
    data = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    counts, edges = u.histogram(data, bins=bins)
    np.testing.assert_allclose(edges, np.histogram_bin_edges(data, bins=bins), rtol=1e-5, atol=1e-6)
    # The edges are float32 (as in JAX), NumPy's float64: a value on an
    # edge may fall either side, so the counts are checked on uir's edges.
    np.testing.assert_array_equal(counts, np.histogram(data, bins=edges)[0])
    assert counts.sum() == n


def test_the_functions_trace_inside_jit():
    @uir.jit
    def f(a, b):
        return u.histogram(a, bins=4)[0], u.partition(a, 2), u.packbits(b), u.polyfit(a[0], a[1], 1)

    got = f(x, ints)
    want = (
        u.histogram(x, bins=4)[0],
        u.partition(x, 2),
        u.packbits(ints),
        u.polyfit(x[0], x[1], 1),
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_misuse_is_named():
    with pytest.raises(uir.TraceError, match="put: cannot modify an array in place"):
        u.put(x, [0], [1.0])
    with pytest.raises(uir.TraceError, match="put_along_axis: cannot modify"):
        u.put_along_axis(x, np.zeros((4, 1), np.int32), 1.0, 1)
    with pytest.raises(uir.TraceError, match="unpackbits: needs a uint8 array"):
        u.unpackbits(ints)
    with pytest.raises(uir.TraceError, match="kth 9 is out of bounds"):
        u.partition(x, 9)
    with pytest.raises(uir.TraceError, match="string bins"):
        u.histogram(x, bins="auto")
    with pytest.raises(uir.TraceError, match="polyfit: needs deg >= 0"):
        u.polyfit(x[0], x[1], -1)


def test_one_bit_integers_are_mldtypes_int1_and_uint1():
    import ml_dtypes

    assert u.int1 is ml_dtypes.int1 and u.uint1 is ml_dtypes.uint1
    module = uir.hlo.parse_module(
        "ENTRY e { a = s1[4] parameter(0)  b = s1[4] parameter(1)  ROOT r = s1[4] add(a, b) }"
    )
    a = np.array([0, -1, 0, -1], ml_dtypes.int1)
    b = np.array([0, 0, -1, -1], ml_dtypes.int1)
    want = np.array([0, -1, -1, 0], ml_dtypes.int1)  # -1 + -1 wraps to 0
    for got in (uir.evaluate(module, a, b), uir.compile(module)(a, b)):
        assert got.dtype == ml_dtypes.int1
        np.testing.assert_array_equal(got.astype(np.int8), want.astype(np.int8))
    x = np.arange(4, dtype=np.int32)
    traced = uir.jit(lambda v: v.astype(u.uint1).astype(np.int32))(x)
    np.testing.assert_array_equal(traced, x.astype(ml_dtypes.uint1).astype(np.int32))


def test_partial_sorts_of_nan_and_infinities_are_permutations_in_xlas_order():
    data = np.array([np.nan, 1.0, -np.inf, 2.0, np.inf], np.float32)
    # XLA's TopK ranks in the total order (NaN above inf); recorded from jax 0.10.2.
    np.testing.assert_array_equal(u.partition(data, 0), [-np.inf, np.nan, np.inf, 2.0, 1.0])
    np.testing.assert_array_equal(u.argpartition(data, 2), [2, 1, 3, 0, 4])
    _, indices = uir.lax.top_k(np.array([np.nan, 1, -np.inf, 2, np.inf, -0.0, 0.0], np.float32), 7)
    np.testing.assert_array_equal(indices, [0, 4, 3, 1, 6, 5, 2])


def test_linspace_gives_whole_steps_exactly_for_integers():
    np.testing.assert_array_equal(u.linspace(1, 7, 7, dtype=np.int32), np.arange(1, 8))
    traced = uir.jit(lambda a: u.linspace(a, 7.0, 7, dtype=np.int32))(np.float32(1))
    np.testing.assert_array_equal(traced, np.arange(1, 8))
    step = uir.jit(lambda a: u.linspace(a, 5.0, 1, endpoint=False, retstep=True))(np.float32(1))[1]
    assert np.shape(step) == () and float(step) == 4.0


def test_lax_sort_orders_by_every_key():
    first = np.array([1, 0, 1, 0], np.int32)
    second = np.array([3.0, 2.0, 1.0, 4.0], np.float32)
    a, b = uir.lax.sort((first, second), num_keys=2)
    np.testing.assert_array_equal(a, [0, 0, 1, 1])
    np.testing.assert_array_equal(b, [2.0, 4.0, 1.0, 3.0])


def test_numpy_integer_scalars_are_static_sizes_outside_jit():
    # np.int64(3) bins or kth are sizes, as Python ints are (JAX needs them
    # concrete); uir.numpy outside jit once traced them as array arguments.
    np.testing.assert_array_equal(u.histogram(x, bins=np.int64(3))[0], np.histogram(x, bins=3)[0])
    np.testing.assert_array_equal(
        _groups(u.partition(x, np.int64(2)), 2)[1], _groups(np.partition(x, 2), 2)[1]
    )
    np.testing.assert_allclose(
        u.polyfit(x[0], x[1], np.int32(1)), np.polyfit(x[0], x[1], 1), rtol=1e-4
    )
