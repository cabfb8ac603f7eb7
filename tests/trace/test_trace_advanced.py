"""einsum, cumulative ops, sorting, .at[] updates, and lax's convolution,
reduce_window, gather and scatter, traced and run against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from eval_util import conv_reference

import uir
import uir.numpy as jnp
from uir import lax

RNG = np.random.default_rng(4)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_matches_numpy(spec, shapes):
    xs = [rand(*s) for s in shapes]
    got = uir.jit(lambda *a: jnp.einsum(spec, *a))(*xs)
    np.testing.assert_allclose(got, np.einsum(spec, *xs), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumsum_and_cumprod(axis):
    x = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        uir.jit(lambda v: jnp.cumsum(v, axis=axis))(x), np.cumsum(x, axis=axis), rtol=1e-5
    )
    np.testing.assert_allclose(
        uir.jit(lambda v: jnp.cumprod(v, axis=axis))(x), np.cumprod(x, axis=axis), rtol=1e-5
    )
    b = RNG.integers(0, 2, 10).astype(bool)
    got = uir.jit(jnp.cumsum)(b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.cumsum(b))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_and_argsort_are_stable_with_nans_last(axis):
    x = RNG.integers(0, 4, (5, 6)).astype(np.float32)
    x[1, 2] = np.nan
    np.testing.assert_array_equal(
        uir.jit(lambda v: jnp.sort(v, axis=axis))(x), np.sort(x, axis=axis)
    )
    got = uir.jit(lambda v: jnp.argsort(v, axis=axis))(x)
    np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))


AT_CASES = [
    ("set", lambda v: v.at[1].set(0), lambda a: _np_set(a, 1, 0)),
    (
        "set_slice",
        lambda v: v.at[:, 1:3].set(-1.0),
        lambda a: _np_set(a, (slice(None), slice(1, 3)), -1),
    ),
    (
        "add_repeated",
        lambda v: v.at[np.array([0, 0, 2])].add(1.0),
        lambda a: _np_add_at(a, np.array([0, 0, 2]), 1.0),
    ),
    ("mul", lambda v: v.at[2, 3].multiply(10.0), lambda a: _np_op(a, (2, 3), np.multiply, 10.0)),
    ("min", lambda v: v.at[0].min(0.0), lambda a: _np_op(a, 0, np.minimum, 0.0)),
    ("max", lambda v: v.at[..., -1].max(0.5), lambda a: _np_op(a, (Ellipsis, -1), np.maximum, 0.5)),
    ("get", lambda v: v.at[1:, ::2].get(), lambda a: a[1:, ::2]),
]


def _np_set(a, idx, v):
    a = a.copy()
    a[idx] = v
    return a


def _np_add_at(a, idx, v):
    a = a.copy()
    np.add.at(a, idx, v)
    return a


def _np_op(a, idx, op, v):
    a = a.copy()
    a[idx] = op(a[idx], v)
    return a


@pytest.mark.parametrize("name,f,ref", AT_CASES, ids=[c[0] for c in AT_CASES])
def test_at_updates_match_numpy(name, f, ref):
    x = rand(3, 4)
    np.testing.assert_allclose(uir.jit(f)(x), ref(x), rtol=1e-6)


def test_at_with_traced_indices():
    x = rand(5, 3)
    i = np.int32(3)
    np.testing.assert_array_equal(uir.jit(lambda v, k: v.at[k].set(7.0))(x, i), _np_set(x, 3, 7))
    idx = np.array([4, 0, 4], np.int32)
    u = rand(3, 3)
    got = uir.jit(lambda v, k, w: v.at[k].add(w))(x, idx, u)
    want = x.copy()
    np.add.at(want, idx, u)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("padding", ["VALID", "SAME", ((1, 0), (0, 2))])
@pytest.mark.parametrize("strides", [(1, 1), (2, 1)])
def test_conv_general_dilated_nhwc(padding, strides):
    x, w = rand(2, 6, 5, 3), rand(3, 2, 3, 4)  # NHWC, HWIO
    got = uir.jit(
        lambda a, b: lax.conv_general_dilated(
            a,
            b,
            strides,
            padding,
            rhs_dilation=(1, 2) if padding != "SAME" else None,
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )
    )(x, w)
    rd = (1, 2) if padding != "SAME" else (1, 1)
    if padding == "VALID":
        pads = [(0, 0), (0, 0)]
    elif padding == "SAME":
        pads = []
        for n, k, s in zip((6, 5), (3, 2), strides, strict=True):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
    else:
        pads = list(padding)
    want = conv_reference(
        x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), strides, pads, [1, 1], rd, [0, 0]
    )
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_conv_default_layout_and_feature_groups():
    x, w = rand(1, 4, 6, 6), rand(8, 2, 3, 3)
    got = uir.jit(
        lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID", feature_group_count=2)
    )(x, w)
    want = conv_reference(x, w, [1, 1], [(0, 0), (0, 0)], [1, 1], [1, 1], [0, 0], fgc=2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_reduce_window_max_pool_and_sum():
    x = rand(1, 6, 6, 2)
    got = uir.jit(
        lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    )(x)
    want = x.reshape(1, 3, 2, 3, 2, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(got, want)
    s = uir.jit(lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"))(x)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    want_s = sum(padded[:, i : i + 6, j : j + 6] for i in range(3) for j in range(3))
    np.testing.assert_allclose(s, want_s, rtol=1e-5, atol=1e-5)


def test_lax_gather_with_batching_dims_takes_xlas_shape():
    # The result shape comes from the C++ shape inference (XLA's rule).
    x = rand(2, 3, 4)
    idx = np.array([[1], [2]], np.int32)
    dn = lax.GatherDimensionNumbers(
        offset_dims=(1,),
        collapsed_slice_dims=(1,),
        start_index_map=(1,),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )
    got = uir.jit(lambda a, i: lax.gather(a, i, dn, (1, 1, 4)))(x, idx)
    np.testing.assert_array_equal(got, np.stack([x[0, 1], x[1, 2]]))


def test_lax_gather_and_scatter_add_rows():
    x = rand(5, 3)
    idx = np.array([[4], [1], [4]], np.int32)
    dn = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    got = uir.jit(lambda a, i: lax.gather(a, i, dn, (1, 3)))(x, idx)
    np.testing.assert_array_equal(got, x[idx[:, 0]])
    sdn = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    u = rand(3, 3)
    got = uir.jit(lambda a, i, v: lax.scatter_add(a, i, v, sdn))(x, idx, u)
    want = x.copy()
    np.add.at(want, idx[:, 0], u)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # Plain scatter: the last update to a row wins.
    got = uir.jit(lambda a, i, v: lax.scatter(a, i, v, sdn))(x, idx, u)
    want = x.copy()
    want[1], want[4] = u[1], u[2]
    np.testing.assert_array_equal(got, want)
