"""uir.numpy's ufunc objects (add, multiply, maximum, logaddexp, ... and
ufunc(func, nin, nout) of a user's function): calls and the methods
reduce, accumulate, at, reduceat and outer, against NumPy's ufuncs,
eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.numpy as jnp

RNG = np.random.default_rng(6)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal(4).astype(np.float32)
INTS = RNG.integers(0, 50, (3, 4)).astype(np.int32)
ARITHMETIC = ["add", "subtract", "multiply", "maximum", "minimum", "logaddexp", "logaddexp2"]


def close(got, want):
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ARITHMETIC)
def test_methods_match_numpy(name):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    assert isinstance(ours, jnp.ufunc) and ours.nin == 2 and ours.nout == 1
    close(ours(X, Y), theirs(X, Y))
    for axis in (0, 1):
        close(ours.reduce(X, axis=axis), theirs.reduce(X, axis=axis))
        close(ours.reduce(X, axis=axis, keepdims=True), theirs.reduce(X, axis=axis, keepdims=True))
        close(ours.accumulate(X, axis=axis), theirs.accumulate(X, axis=axis))
    close(ours.outer(Y, Y[:3]), theirs.outer(Y, Y[:3]))
    index = (np.array([0, 0, 2]), np.array([1, 1, 3]))
    want = X.copy()
    theirs.at(want, index, np.float32(2.0))
    close(ours.at(X, index, np.float32(2.0), inplace=False), want)
    close(
        ours.reduceat(np.arange(8.0, dtype=np.float32) / 3, [0, 4, 1, 5]),
        theirs.reduceat(np.arange(8.0) / 3, [0, 4, 1, 5]),
    )


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logaddexp"])
def test_reduce_over_every_axis_with_initial_and_where(name):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    close(ours.reduce(X, axis=None), theirs.reduce(X, axis=None))
    close(ours.reduce(X, axis=(0, 1)), theirs.reduce(X, axis=(0, 1)))
    mask = X > -0.5
    close(
        ours.reduce(X, axis=1, initial=0.25, where=mask),
        theirs.reduce(X, axis=1, initial=0.25, where=mask),
    )


@pytest.mark.parametrize(
    "name", ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"]
)
def test_integer_and_boolean_ufuncs(name):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    x = INTS > 20 if name.startswith("logical") else INTS
    np.testing.assert_array_equal(ours.reduce(x, axis=1), theirs.reduce(x, axis=1))
    np.testing.assert_array_equal(ours.accumulate(x, axis=0), theirs.accumulate(x, axis=0))
    assert ours.identity == theirs.identity


def test_unary_ufunc_at_applies_once_per_occurrence():
    want = X.copy()
    np.negative.at(want, np.array([0, 0, 2]))
    close(jnp.negative.at(X, np.array([0, 0, 2]), inplace=False), want)
    with pytest.raises(ValueError, match="binary"):
        jnp.negative.reduce(X)


def test_a_users_function_as_a_ufunc():
    f = jnp.ufunc(lambda a, b: a * 2 + b, 2, 1, name="twice_plus")
    g = np.frompyfunc(lambda a, b: a * 2 + b, 2, 1)
    close(f(X, Y), X * 2 + Y)
    close(f.reduce(X, axis=1), g.reduce(X.astype(object), axis=1).astype(np.float32))
    close(f.accumulate(X, axis=0), g.accumulate(X.astype(object), axis=0).astype(np.float32))
    close(f.outer(Y, Y), np.multiply.outer(Y, np.ones_like(Y)) * 2 + Y)
    want = X.copy()
    for r, c in [(0, 1), (0, 1)]:
        want[r, c] = want[r, c] * 2 + 1
    close(f.at(X, (np.array([0, 0]), np.array([1, 1])), np.float32(1), inplace=False), want)
    a = np.arange(8.0, dtype=np.float32)
    close(
        f.reduceat(a, [0, 4, 1, 5]), g.reduceat(a.astype(object), [0, 4, 1, 5]).astype(np.float32)
    )
    h = jnp.ufunc(lambda a, b: a + b, 2, 1, identity=0)
    close(h.reduce(X, axis=(0, 1)), X.sum())


def test_under_jit_and_refusals():
    f = uir.jit(lambda a: jnp.add.reduce(a, axis=0) + jnp.maximum.accumulate(a, axis=1)[0])
    close(f(X), np.add.reduce(X, axis=0) + np.maximum.accumulate(X, axis=1)[0])
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.add.at(X, np.array([0]), 1.0)
    with pytest.raises(uir.TraceError, match="out"):
        jnp.add(X, X, out=X)
    with pytest.raises(uir.TraceError, match="where"):
        jnp.add(X, X, where=X > 0)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        jnp.add(X)
