"""jax.lax's keywords: negative start indices of the dynamic slices
(allow_negative_indices), accuracy on the transcendental functions, unroll
and batch_size on the loops, precision on dot_general and convolutions, and
the parameter names of the special functions; against jax.lax where it is
installed."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import uir
from uir import lax

jlax = pytest.importorskip("jax.lax")


@pytest.mark.parametrize("start", [-1, -3, -7, 2])
def test_dynamic_slices_count_negative_starts_from_the_end_as_jax_does(start):
    x = np.arange(20.0, dtype=np.float32).reshape(5, 4)
    u = np.full((2, 2), -1.0, np.float32)
    for traced in (False, True):
        if traced:
            got = uir.jit(
                lambda v, i: (
                    lax.dynamic_slice(v, [i, 1], [2, 2]),
                    lax.dynamic_update_slice(v, u, [i, 1]),
                    lax.dynamic_index_in_dim(v, i, 0, keepdims=False),
                )
            )(x, np.int32(start))
        else:
            got = (
                lax.dynamic_slice(x, [start, 1], [2, 2]),
                lax.dynamic_update_slice(x, u, [start, 1]),
                lax.dynamic_index_in_dim(x, start, 0, keepdims=False),
            )
        want = (
            jlax.dynamic_slice(x, [start, 1], [2, 2]),
            jlax.dynamic_update_slice(x, u, [start, 1]),
            jlax.dynamic_index_in_dim(x, start, 0, keepdims=False),
        )
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, np.asarray(w))


def test_negative_starts_without_allow_negative_indices():
    x = np.arange(5.0, dtype=np.float32)
    with pytest.raises(uir.TraceError, match="out of bounds for dimension 5 if allow_negative"):
        lax.dynamic_slice(x, [-1], [1], allow_negative_indices=False)
    # Traced: clamped to 0 by the op, as in XLA (and jax.jit).
    got = uir.jit(lambda v, i: lax.dynamic_slice(v, [i], [2], allow_negative_indices=False))(
        x, np.int32(-1)
    )
    np.testing.assert_array_equal(got, [0, 1])
    y = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = lax.dynamic_slice(y, [-1, 2], [1, 1], allow_negative_indices=[True, False])
    np.testing.assert_array_equal(got, [[5.0]])  # the row counted from the end
    with pytest.raises(uir.TraceError, match="out of bounds for dimension 3"):
        lax.dynamic_slice(y, [-1, -1], [1, 1], allow_negative_indices=[True, False])


def test_accuracy_unroll_batch_size_and_precision_are_taken():
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    for name in ("exp", "exp2", "log1p", "tanh", "sqrt", "cbrt", "logistic"):
        f = getattr(lax, name)
        v = np.abs(x) + 0.5 if name in ("sqrt",) else x
        np.testing.assert_array_equal(f(v, accuracy=None), f(v))
    total = lax.fori_loop(0, 4, lambda i, c: c + i, np.int32(0), unroll=2)
    assert int(total) == 6
    _, ys = lax.scan(lambda c, t: (c + t, c), np.float32(0), x, unroll=True)
    np.testing.assert_allclose(ys, np.cumsum(x) - x, atol=1e-6)
    np.testing.assert_array_equal(lax.map(lambda t: t * 2, x, batch_size=4), x * 2)
    with pytest.raises(uir.TraceError, match="unroll must be"):
        lax.fori_loop(0, 4, lambda i, c: c, 0, unroll=0)
    with pytest.raises(uir.TraceError, match="batch_size must be"):
        lax.map(lambda t: t, x, batch_size=-1)
    a = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(
        lax.dot_general(a, a.T, (([1], [0]), ([], [])), precision="highest"), a @ a.T
    )


NAMES = [
    *("lgamma", "digamma", "igamma", "igammac", "betainc", "zeta", "polygamma"),
    *("bessel_i0e", "bessel_i1e", "unstack", "exp", "exp2", "tanh", "fori_loop", "scan", "map"),
    *("dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim"),
    *("dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "dot_general"),
    "conv_general_dilated",
]


@pytest.mark.parametrize("name", NAMES)
def test_signatures_name_jax_laxs_parameters(name):
    theirs = inspect.signature(getattr(jlax, name)).parameters
    ours = inspect.signature(getattr(lax, name)).parameters
    # (out_sharding: sharding is outside uir's one device.)
    skip = {"out_sharding"}
    assert [p for p in theirs if p not in ours and not p.startswith("_") and p not in skip] == []


def test_special_functions_take_their_arguments_by_name():
    a, x = np.float32(2.0), np.float32(1.5)
    np.testing.assert_allclose(lax.igamma(a=a, x=x), np.asarray(jlax.igamma(a, x)), rtol=1e-5)
    np.testing.assert_allclose(
        lax.zeta(x=np.float32(3), q=x), np.asarray(jlax.zeta(3.0, 1.5)), rtol=1e-5
    )
    with pytest.raises(uir.TraceError, match=r"takes \(x, q\)"):
        lax.zeta(np.float32(3))
    assert isinstance(lax.unstack(np.ones((2, 3))), tuple)
