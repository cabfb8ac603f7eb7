"""uir.numpy traced by uir.jit against NumPy on random inputs: elementwise
math, broadcasting, reductions, shape manipulation, products, creation and
indexing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import uir
import uir.numpy as jnp

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, low=-3.0, high=3.0):
    return RNG.uniform(low, high, shape).astype(dtype)


UNARY = {
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "log1p": (np.log1p, (-0.5, 5)),
    "expm1": (np.expm1, (-3, 3)),
    "sqrt": (np.sqrt, (0, 5)),
    "cbrt": (np.cbrt, (-5, 5)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1, 1)),
    "tanh": (np.tanh, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)),
    "cosh": (np.cosh, (-3, 3)),
    "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)),
    "arctan": (np.arctan, (-3, 3)),
    "arcsinh": (np.arcsinh, (-3, 3)),
    "arccosh": (np.arccosh, (1.1, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)),
    "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "rint": (np.rint, (-3, 3)),
    "round": (np.round, (-3, 3)),
    "trunc": (np.trunc, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "negative": (np.negative, (-3, 3)),
    "sign": (np.sign, (-3, 3)),
    "square": (np.square, (-3, 3)),
    "reciprocal": (np.reciprocal, (0.5, 3)),
    "exp2": (np.exp2, (-3, 3)),
    "log2": (np.log2, (0.1, 5)),
    "log10": (np.log10, (0.1, 5)),
    "rsqrt": (lambda v: 1 / np.sqrt(v), (0.1, 5)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_matches_numpy(name):
    ref, (lo, hi) = UNARY[name]
    x = rand(3, 5, low=lo, high=hi)
    got = uir.jit(getattr(jnp, name))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref(x).astype(np.float32), rtol=2e-6, atol=2e-6)


def test_erf_matches_math_erf():
    import math

    x = rand(20)
    np.testing.assert_allclose(uir.jit(jnp.erf)(x), [math.erf(v) for v in x], rtol=1e-6, atol=1e-7)


BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": np.power,
    "arctan2": np.arctan2,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "fmod": np.fmod,
}

broadcastable = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=8, deadline=None)
@given(shapes=broadcastable)
def test_binary_math_broadcasts_like_numpy(name, shapes):
    a_shape, b_shape = shapes.input_shapes
    x = rand(*a_shape, low=0.5, high=3)
    y = rand(*b_shape, low=0.5, high=3)
    got = uir.jit(getattr(jnp, name))(x, y)
    np.testing.assert_allclose(got, BINARY[name](x, y), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_floor_division_and_modulo_follow_python(name):
    x = np.array([7, -7, 7, -7, 0, 5], np.int32)
    y = np.array([2, 2, -2, -2, 3, -5], np.int32)
    np.testing.assert_array_equal(uir.jit(getattr(jnp, name))(x, y), getattr(np, name)(x, y))


COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("name", COMPARE)
def test_comparisons(name):
    x = RNG.integers(0, 3, (4, 3)).astype(np.float32)
    y = RNG.integers(0, 3, (3,)).astype(np.float32)
    got = uir.jit(getattr(jnp, name))(x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, getattr(np, name)(x, y))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops(name):
    a, b = RNG.integers(0, 2, 8).astype(bool), RNG.integers(0, 2, 8).astype(bool)
    np.testing.assert_array_equal(uir.jit(getattr(jnp, name))(a, b), getattr(np, name)(a, b))
    np.testing.assert_array_equal(uir.jit(jnp.logical_not)(a), ~a)


@pytest.mark.parametrize(
    "name", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
)
def test_bitwise_ops(name):
    a = RNG.integers(-100, 100, 10).astype(np.int32)
    b = RNG.integers(0, 8, 10).astype(np.int32)
    np.testing.assert_array_equal(uir.jit(getattr(jnp, name))(a, b), getattr(np, name)(a, b))


def test_nan_inf_predicates_where_and_clip():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(uir.jit(jnp.isnan)(x), np.isnan(x))
    np.testing.assert_array_equal(uir.jit(jnp.isinf)(x), np.isinf(x))
    np.testing.assert_array_equal(uir.jit(jnp.isfinite)(x), np.isfinite(x))
    got = uir.jit(lambda v: jnp.where(v > 0, v, -v))(x)
    np.testing.assert_array_equal(got, np.where(x > 0, x, -x))
    np.testing.assert_array_equal(uir.jit(lambda v: jnp.clip(v, -1, 1))(x), np.clip(x, -1, 1))


REDUCTIONS = ["sum", "mean", "max", "min", "prod", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@settings(max_examples=10, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    data=st.data(),
)
def test_reductions_with_axis_and_keepdims(name, shape, data):
    x = rand(*shape, low=0.5, high=1.5)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keepdims = data.draw(st.booleans())
    got = uir.jit(lambda v: getattr(jnp, name)(v, axis=axis, keepdims=keepdims))(x)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_first_occurrence(name, axis):
    x = RNG.integers(0, 4, (5, 6)).astype(np.float32)
    got = uir.jit(lambda v: getattr(jnp, name)(v, axis=axis))(x)
    np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis))


def test_argmax_counts_nan_as_the_maximum():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert uir.jit(jnp.argmax)(x) == np.argmax(x) == 1


@pytest.mark.parametrize("name", ["any", "all"])
def test_any_all(name):
    x = RNG.integers(0, 2, (3, 4)).astype(bool)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(
            uir.jit(lambda v, a=axis: getattr(jnp, name)(v, axis=a))(x),
            getattr(np, name)(x, axis=axis),
        )


def test_sum_of_bools_and_small_ints_accumulates_in_int32():
    x = np.ones(300, np.int8)
    got = uir.jit(jnp.sum)(x)
    assert got.dtype == np.int32 and got == 300


SHAPE_CASES = [
    ("reshape", lambda v: jnp.reshape(v, (3, -1)), lambda a: a.reshape(3, -1)),
    ("reshape_method", lambda v: v.reshape(4, 6), lambda a: a.reshape(4, 6)),
    ("transpose", lambda v: jnp.transpose(v, (2, 0, 1)), lambda a: a.transpose(2, 0, 1)),
    ("transpose_method", lambda v: v.transpose(1, 2, 0), lambda a: a.transpose(1, 2, 0)),
    ("T", lambda v: v.T, lambda a: a.T),
    ("swapaxes", lambda v: jnp.swapaxes(v, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
    ("moveaxis", lambda v: jnp.moveaxis(v, 0, -1), lambda a: np.moveaxis(a, 0, -1)),
    ("expand_dims", lambda v: jnp.expand_dims(v, (0, 3)), lambda a: np.expand_dims(a, (0, 3))),
    (
        "squeeze",
        lambda v: jnp.squeeze(jnp.expand_dims(v, 1)),
        lambda a: np.squeeze(np.expand_dims(a, 1)),
    ),
    ("flip", lambda v: jnp.flip(v, 1), lambda a: np.flip(a, 1)),
    ("flip_all", jnp.flip, np.flip),
    ("tile", lambda v: jnp.tile(v, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2))),
    ("repeat", lambda v: jnp.repeat(v, 3, axis=1), lambda a: np.repeat(a, 3, axis=1)),
    ("repeat_flat", lambda v: jnp.repeat(v, 2), lambda a: np.repeat(a, 2)),
    (
        "pad",
        lambda v: jnp.pad(v, ((1, 0), (0, 2), (1, 1)), constant_values=-1),
        lambda a: np.pad(a, ((1, 0), (0, 2), (1, 1)), constant_values=-1),
    ),
    ("ravel", jnp.ravel, np.ravel),
    (
        "broadcast_to",
        lambda v: jnp.broadcast_to(v, (2, 2, 3, 4)),
        lambda a: np.broadcast_to(a, (2, 2, 3, 4)),
    ),
]


@pytest.mark.parametrize("name,uir_fn,np_fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_manipulation_matches_numpy(name, uir_fn, np_fn):
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(uir.jit(uir_fn)(x), np_fn(x))


def test_concatenate_stack_split():
    a, b = rand(2, 3), rand(4, 3)
    np.testing.assert_array_equal(
        uir.jit(lambda x, y: jnp.concatenate([x, y]))(a, b), np.concatenate([a, b])
    )
    np.testing.assert_array_equal(
        uir.jit(lambda x: jnp.stack([x, x * 2], axis=1))(a), np.stack([a, a * 2], axis=1)
    )
    parts = uir.jit(lambda x: jnp.split(x, [1, 3]))(b)
    for got, want in zip(parts, np.split(b, [1, 3]), strict=True):
        np.testing.assert_array_equal(got, want)
    halves = uir.jit(lambda x: jnp.split(x, 2))(b)
    np.testing.assert_array_equal(halves[1], b[2:])


@settings(max_examples=15, deadline=None)
@given(b=st.integers(1, 3), m=st.integers(1, 5), k=st.integers(1, 5), n=st.integers(1, 5))
def test_matmul_with_batches_and_vectors(b, m, k, n):
    x, y = rand(b, m, k), rand(k, n)
    np.testing.assert_allclose(uir.jit(lambda p, q: p @ q)(x, y), x @ y, rtol=1e-5, atol=1e-5)
    v = rand(k)
    np.testing.assert_allclose(uir.jit(jnp.matmul)(x, v), x @ v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(uir.jit(jnp.matmul)(v, y), v @ y, rtol=1e-5, atol=1e-5)


def test_dot_tensordot_outer_vdot():
    a, b = rand(3, 4), rand(4, 5)
    np.testing.assert_allclose(uir.jit(jnp.dot)(a, b), np.dot(a, b), rtol=1e-5, atol=1e-5)
    c, d = rand(2, 3, 4), rand(3, 4, 5)
    np.testing.assert_allclose(
        uir.jit(lambda p, q: jnp.tensordot(p, q, axes=2))(c, d),
        np.tensordot(c, d, axes=2),
        rtol=1e-5,
        atol=1e-4,  # a sum near zero keeps the float32 rounding of its terms
    )
    np.testing.assert_allclose(
        uir.jit(lambda p, q: jnp.tensordot(p, q, axes=([0, 1], [1, 0])))(a, a.T.copy()),
        np.tensordot(a, a.T, axes=([0, 1], [1, 0])),
        rtol=1e-5,
        atol=1e-4,
    )
    u, v = rand(3), rand(4)
    np.testing.assert_allclose(uir.jit(jnp.outer)(u, v), np.outer(u, v), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(uir.jit(jnp.vdot)(u, u), np.vdot(u, u), rtol=1e-6, atol=1e-6)


def test_creation_functions():
    @uir.jit
    def make(x):
        return (
            jnp.arange(5),
            jnp.arange(2, 11, 3),
            jnp.arange(0.0, 1.0, 0.25),
            jnp.zeros((2, 3)),
            jnp.ones(4, dtype=jnp.int32),
            jnp.full((2, 2), 7.5),
            jnp.eye(3, 4, k=1),
            jnp.linspace(0, 1, 5),
            jnp.zeros_like(x),
            jnp.ones_like(x),
            jnp.full_like(x, 3),
        )

    x = rand(2, 2)
    got = make(x)
    want = (
        np.arange(5),
        np.arange(2, 11, 3),
        np.arange(0.0, 1.0, 0.25),
        np.zeros((2, 3)),
        np.ones(4),
        np.full((2, 2), 7.5),
        np.eye(3, 4, k=1),
        np.linspace(0, 1, 5),
        np.zeros_like(x),
        np.ones_like(x),
        np.full_like(x, 3),
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert got[0].dtype == np.int32 and got[3].dtype == np.float32 and got[4].dtype == np.int32


def test_basic_and_dynamic_indexing():
    x = rand(4, 5, 6)

    @uir.jit
    def index(v, i):
        return v[1], v[:, 2:4], v[..., ::2], v[::-1, 1], v[None, 0, :, -1], v[i], v[1:3, i]

    i = np.int32(2)
    got = index(x, i)
    want = (x[1], x[:, 2:4], x[..., ::2], x[::-1, 1], x[None, 0, :, -1], x[2], x[1:3, 2])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    # A traced index out of range is clamped, as in JAX.
    np.testing.assert_array_equal(uir.jit(lambda v, j: v[j])(x, np.int32(10)), x[3])
    np.testing.assert_array_equal(uir.jit(lambda v, j: v[j])(x, np.int32(-1)), x[-1])


def test_integer_array_indexing_take_and_take_along_axis():
    x = rand(5, 4)
    idx = np.array([3, 0, -1, 3], np.int32)
    np.testing.assert_array_equal(uir.jit(lambda v, i: v[i])(x, idx), x[idx])
    np.testing.assert_array_equal(uir.jit(lambda v, i: v[:, i])(x, idx), x[:, idx])
    np.testing.assert_array_equal(
        uir.jit(lambda v, i: jnp.take(v, i, axis=1))(x, idx), np.take(x, idx, axis=1)
    )
    order = np.argsort(x, axis=1).astype(np.int32)
    np.testing.assert_array_equal(
        uir.jit(lambda v, i: jnp.take_along_axis(v, i, axis=1))(x, order),
        np.take_along_axis(x, order, axis=1),
    )


PROMOTIONS = [
    (np.int32, np.float32, np.float32),
    (np.uint8, np.int8, np.int16),
    (np.int16, np.uint32, np.int32),  # int64 without x64
    (np.bool_, np.uint8, np.uint8),
    (np.float16, np.int8, np.float16),
]


@pytest.mark.parametrize("a,b,want", PROMOTIONS)
def test_type_promotion_follows_jax(a, b, want):
    x, y = np.ones(2, a), np.ones(2, b)
    assert uir.jit(jnp.add)(x, y).dtype == np.dtype(want)


def test_python_scalars_are_weak():
    x16 = np.ones(2, np.float16)
    assert uir.jit(lambda v: v * 2.5)(x16).dtype == np.float16
    i8 = np.ones(2, np.int8)
    assert uir.jit(lambda v: v + 3)(i8).dtype == np.int8
    assert uir.jit(lambda v: v + 1.5)(i8).dtype == np.float32


def test_64_bit_types_are_off_by_default_and_on_with_enable_x64():
    x = np.ones(3, np.float64)
    assert uir.jit(lambda v: v + 1)(x).dtype == np.float32
    uir.config.update("enable_x64", True)
    try:
        assert uir.jit(lambda v: v + 1)(x).dtype == np.float64
        assert uir.jit(lambda: jnp.arange(3))().dtype == np.int64
    finally:
        uir.config.update("enable_x64", False)


def test_functions_run_eagerly_on_numpy_arrays():
    x = rand(3, 4)
    np.testing.assert_allclose(jnp.sum(jnp.exp(x), axis=1), np.exp(x).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(jnp.transpose(x), x.T)
