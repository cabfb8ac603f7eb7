"""uir.lax's elementwise, structural and reduction operations against NumPy
(and against jax.lax itself where JAX is installed: make test-xla), with
lax's rules: one dtype for all operands, no implicit broadcasting of
arrays, each op's dtypes checked when traced."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import uir
import uir.lax as lax

RNG = np.random.default_rng(0)
X = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
Y = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
INTS = RNG.integers(-50, 50, (3, 4)).astype(np.int32)
J = RNG.integers(1, 5, (3, 4)).astype(np.int32)

_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY = {
    "abs": np.abs,
    "acos": np.arccos,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cbrt": np.cbrt,
    "ceil": np.ceil,
    "cos": np.cos,
    "cosh": np.cosh,
    "erf": _erf,
    "erfc": lambda x: 1 - _erf(x),
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "floor": np.floor,
    "is_finite": np.isfinite,
    "log": np.log,
    "log1p": np.log1p,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "neg": np.negative,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sign": np.sign,
    "sin": np.sin,
    "sinh": np.sinh,
    "sqrt": np.sqrt,
    "square": np.square,
    "tan": np.tan,
    "tanh": np.tanh,
    "reciprocal": np.reciprocal,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float_ops_match_numpy(name):
    got = getattr(lax, name)(X)
    want = UNARY[name](X.astype(np.float64))
    assert got.dtype == (np.bool_ if name == "is_finite" else np.float32)
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=3e-7)


def test_acosh_matches_numpy():
    np.testing.assert_allclose(lax.acosh(X + 1), np.arccosh(X + 1.0), rtol=3e-6)


def _clz(v):
    return np.array([32 - (int(x) & 0xFFFFFFFF).bit_length() for x in v.ravel()], np.int32).reshape(
        v.shape
    )


def _popcount(v):
    return np.array([bin(int(x) & 0xFFFFFFFF).count("1") for x in v.ravel()], np.int32).reshape(
        v.shape
    )


@pytest.mark.parametrize(
    "name, ref",
    [
        ("clz", _clz),
        ("population_count", _popcount),
        ("bitwise_not", np.invert),
        ("neg", np.negative),
        ("abs", np.abs),
        ("sign", np.sign),
    ],
)
def test_unary_integer_ops_match_numpy(name, ref):
    got = getattr(lax, name)(INTS)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref(INTS))


BINARY_FLOAT = {
    "sub": np.subtract,
    "div": np.divide,
    "rem": np.fmod,
    "pow": np.power,
    "atan2": np.arctan2,
    "nextafter": np.nextafter,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
def test_binary_float_ops_match_numpy(name):
    got = getattr(lax, name)(X, Y)
    want = BINARY_FLOAT[name](X, Y)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6)


BINARY_INT = {
    "sub": np.subtract,
    "div": lambda a, b: np.trunc(a / b).astype(np.int32),  # C's division, as XLA's
    "rem": np.fmod,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "shift_left": np.left_shift,
    "shift_right_arithmetic": np.right_shift,
    "shift_right_logical": lambda a, b: (a.view(np.uint32) >> b.astype(np.uint32)).view(np.int32),
}


@pytest.mark.parametrize("name", sorted(BINARY_INT))
def test_binary_integer_ops_match_numpy(name):
    got = getattr(lax, name)(INTS, J)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, BINARY_INT[name](INTS, J))


@given(
    x=hnp.arrays(np.int32, st.integers(1, 40), elements=st.integers(-(2**31), 2**31 - 1)),
    s=st.integers(0, 40),
)
@settings(max_examples=60, deadline=None)
def test_shifts_past_the_width_follow_xla(x, s):
    shift = np.full(x.shape, s, np.int32)
    left = np.where(s >= 32, 0, (x.astype(np.int64) << min(s, 31)).astype(np.int32))
    arith = np.where(s >= 32, np.where(x < 0, -1, 0), x >> min(s, 31)).astype(np.int32)
    logical = np.where(s >= 32, 0, x.view(np.uint32) >> np.uint32(min(s, 31))).astype(np.uint32)
    np.testing.assert_array_equal(lax.shift_left(x, shift), left)
    np.testing.assert_array_equal(lax.shift_right_arithmetic(x, shift), arith)
    np.testing.assert_array_equal(lax.shift_right_logical(x, shift).view(np.uint32), logical)


STRUCTURAL = [
    ("reshape", lambda m: m.reshape(X, (4, 3)), lambda: X.reshape(4, 3)),
    ("reshape dims", lambda m: m.reshape(X, (4, 3), (1, 0)), lambda: X.T.reshape(4, 3)),
    ("transpose", lambda m: m.transpose(X, (1, 0)), lambda: X.T),
    ("rev", lambda m: m.rev(X, (0,)), lambda: X[::-1]),
    ("concatenate", lambda m: m.concatenate([X, Y], 1), lambda: np.concatenate([X, Y], 1)),
    (
        "pad",
        lambda m: m.pad(X, np.float32(0), [(1, 2, 1), (0, -1, 0)]),
        lambda: np.pad(np.insert(X, [1, 2], 0, axis=0)[:, :-1], [(1, 2), (0, 0)]),
    ),
    ("broadcast", lambda m: m.broadcast(X, (2,)), lambda: np.broadcast_to(X, (2, 3, 4))),
    ("expand_dims", lambda m: m.expand_dims(X, (0, 3)), lambda: X[None, :, :, None]),
    ("squeeze", lambda m: m.squeeze(X[None], (0,)), lambda: X),
    ("collapse", lambda m: m.collapse(X, 0, 2), lambda: X.ravel()),
    ("select_n", lambda m: m.select_n(X > 0.5, X, Y), lambda: np.where(X > 0.5, Y, X)),
    (
        "select_n three",
        lambda m: m.select_n(
            (INTS > 0).astype(np.int32) + (INTS > 20).astype(np.int32), X, Y, X * 2
        ),
        lambda: np.choose((INTS > 0).astype(np.int32) + (INTS > 20), [X, Y, X * 2]),
    ),
    ("full", lambda m: m.full((2, 3), 7.0, np.float32), lambda: np.full((2, 3), 7, np.float32)),
    ("full_like", lambda m: m.full_like(X, 3), lambda: np.full_like(X, 3)),
    (
        "broadcasted_iota",
        lambda m: m.broadcasted_iota(np.int32, (2, 3), 1),
        lambda: np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)),
    ),
    ("slice_in_dim", lambda m: m.slice_in_dim(X, 1, 3, 1, 1), lambda: X[:, 1:3]),
    ("index_in_dim", lambda m: m.index_in_dim(X, -1, 0, False), lambda: X[-1]),
    (
        "dynamic_slice_in_dim",
        lambda m: m.dynamic_slice_in_dim(X, np.int32(1), 2, 1),
        lambda: X[:, 1:3],
    ),
    (
        "dynamic_index_in_dim",
        lambda m: m.dynamic_index_in_dim(X, np.int32(2), 0, False),
        lambda: X[2],
    ),
    (
        "dynamic_update_slice_in_dim",
        lambda m: m.dynamic_update_slice_in_dim(X, Y[:1], np.int32(1), 0),
        lambda: np.concatenate([X[:1], Y[:1], X[2:]]),
    ),
    (
        "dynamic_update_index_in_dim",
        lambda m: m.dynamic_update_index_in_dim(X, Y[0], np.int32(2), 0),
        lambda: np.concatenate([X[:2], Y[:1]]),
    ),
    ("reduce_sum", lambda m: m.reduce_sum(X, (1,)), lambda: X.sum(1)),
    ("reduce_max", lambda m: m.reduce_max(X, (0, 1)), lambda: X.max()),
    ("reduce_min", lambda m: m.reduce_min(INTS, (0,)), lambda: INTS.min(0)),
    ("reduce_prod", lambda m: m.reduce_prod(X, (1,)), lambda: X.prod(1)),
    ("reduce_and", lambda m: m.reduce_and(X > 0.2, (1,)), lambda: (X > 0.2).all(1)),
    ("reduce_and int", lambda m: m.reduce_and(INTS, (1,)), lambda: np.bitwise_and.reduce(INTS, 1)),
    ("reduce_or", lambda m: m.reduce_or(X > 0.8, (1,)), lambda: (X > 0.8).any(1)),
    ("reduce_xor", lambda m: m.reduce_xor(INTS, (1,)), lambda: np.bitwise_xor.reduce(INTS, 1)),
    ("argmax", lambda m: m.argmax(X, 1, np.int32), lambda: X.argmax(1).astype(np.int32)),
    ("argmin", lambda m: m.argmin(X, 0, np.int32), lambda: X.argmin(0).astype(np.int32)),
    ("cumsum", lambda m: m.cumsum(X, 1), lambda: X.cumsum(1)),
    ("cumsum reverse", lambda m: m.cumsum(X, 1, True), lambda: X[:, ::-1].cumsum(1)[:, ::-1]),
    ("cumprod", lambda m: m.cumprod(X, 0), lambda: X.cumprod(0)),
    ("cummax", lambda m: m.cummax(X, 1), lambda: np.maximum.accumulate(X, 1)),
    (
        "cummin reverse",
        lambda m: m.cummin(INTS, 0, True),
        lambda: np.minimum.accumulate(INTS[::-1], 0)[::-1],
    ),
    ("sort", lambda m: m.sort(X, 1), lambda: np.sort(X, 1)),
    (
        "sort_key_val",
        lambda m: m.sort_key_val(X, INTS, 1)[1],
        lambda: np.take_along_axis(INTS, X.argsort(1), 1),
    ),
    ("top_k values", lambda m: m.top_k(X, 2)[0], lambda: -np.sort(-X, 1)[:, :2]),
    (
        "top_k indices",
        lambda m: m.top_k(X, 2)[1],
        lambda: np.argsort(-X, 1, kind="stable")[:, :2].astype(np.int32),
    ),
    ("dot", lambda m: m.dot(X, Y.T), lambda: X @ Y.T),
    (
        "batch_matmul",
        lambda m: m.batch_matmul(np.stack([X, Y]), np.stack([Y.T, X.T])),
        lambda: np.stack([X @ Y.T, Y @ X.T]),
    ),
    ("split", lambda m: m.split(X, (1, 3), 1)[1], lambda: X[:, 1:]),
    ("clamp", lambda m: m.clamp(np.float32(0.3), X, np.float32(0.6)), lambda: np.clip(X, 0.3, 0.6)),
    ("integer_pow", lambda m: m.integer_pow(X, 3), lambda: X**3),
    ("integer_pow negative", lambda m: m.integer_pow(X, -2), lambda: X**-2.0),
    (
        "round",
        lambda m: m.round(np.array([0.5, 1.5, -2.5, 2.4], np.float32)),
        lambda: np.array([1, 2, -3, 2], np.float32),
    ),
    (
        "round to even",
        lambda m: m.round(np.array([0.5, 1.5, 2.5], np.float32), m.RoundingMethod.TO_NEAREST_EVEN),
        lambda: np.array([0, 2, 2], np.float32),
    ),
    ("complex", lambda m: m.complex(X, Y), lambda: X + 1j * Y),
    (
        "reduce_precision",
        lambda m: m.reduce_precision(X, 5, 10),
        lambda: X.astype(np.float16).astype(np.float32),
    ),
    ("optimization_barrier", lambda m: m.optimization_barrier((X, Y))[1], lambda: Y),
    ("stop_gradient", lambda m: m.stop_gradient(X), lambda: X),
    ("broadcast_to_rank", lambda m: m.broadcast_to_rank(X, 4), lambda: X[None, None]),
]


@pytest.mark.parametrize("name, op, want", STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_structural_and_reduction_ops_match_numpy(name, op, want):
    got, expected = np.asarray(op(lax)), np.asarray(want())
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


def test_ops_inside_jit_equal_the_eager_ones():
    @uir.jit
    def f(x, y):
        return lax.cumsum(lax.exp(x) - y, 1), lax.top_k(x, 3)[1], lax.reduce_max(x, (0,))

    for got, want in zip(
        f(X, Y),
        (lax.cumsum(lax.exp(X) - Y, 1), lax.top_k(X, 3)[1], lax.reduce_max(X, (0,))),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "name, ref", [("add", np.add), ("mul", np.multiply), ("max", np.maximum), ("min", np.minimum)]
)
def test_add_mul_max_min_run_eagerly_too(name, ref):
    np.testing.assert_array_equal(getattr(lax, name)(X, Y), ref(X, Y))


# --- lax's rules -------------------------------------------------------------------------


def test_operands_of_different_dtypes_are_refused():
    with pytest.raises(
        uir.TraceError,
        match=r"lax\.sub requires arguments to have the same dtypes, got float32, int32",
    ):
        lax.sub(X, INTS)


def test_arrays_of_different_shapes_are_not_broadcast():
    with pytest.raises(
        uir.TraceError, match=r"sub got incompatible shapes for broadcasting: \(3, 4\), \(4,\)"
    ):
        lax.sub(X, X[0])
    # Python scalars take the array's dtype and shape.
    np.testing.assert_allclose(lax.sub(X, 1.0), X - 1)


@pytest.mark.parametrize(
    "op, arg, words",
    [
        (lax.exp, INTS, "exp does not accept dtype int32"),
        (lax.floor, INTS, "floor does not accept dtype int32"),
        (lax.clz, X, "clz does not accept dtype float32"),
        (lambda a: lax.shift_left(a, a), X, "shift_left does not accept dtype float32"),
    ],
)
def test_ops_refuse_dtypes_they_do_not_take(op, arg, words):
    with pytest.raises(TypeError, match=words):
        op(arg)


@pytest.mark.xla
@pytest.mark.parametrize("name, op, want", STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_structural_ops_match_jax_lax(name, op, want, jax_x32):
    jax = jax_x32
    got, expected = np.asarray(op(lax)), np.asarray(op(jax.lax))
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


# --- convolutions, FFTs, scans and shape helpers ---------------------------------------


def _conv_nchw(x, w, stride, pads, lhs_dilation=(1, 1), rhs_dilation=(1, 1)):
    """A direct NCHW x OIHW convolution in float64, for reference."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    if lhs_dilation != (1, 1):
        d = np.zeros(
            (
                *x.shape[:2],
                (x.shape[2] - 1) * lhs_dilation[0] + 1,
                (x.shape[3] - 1) * lhs_dilation[1] + 1,
            )
        )
        d[:, :, :: lhs_dilation[0], :: lhs_dilation[1]] = x
        x = d
    if rhs_dilation != (1, 1):
        d = np.zeros(
            (
                *w.shape[:2],
                (w.shape[2] - 1) * rhs_dilation[0] + 1,
                (w.shape[3] - 1) * rhs_dilation[1] + 1,
            )
        )
        d[:, :, :: rhs_dilation[0], :: rhs_dilation[1]] = w
        w = d
    x = np.pad(x, [(0, 0), (0, 0), *pads])
    kh, kw = w.shape[2:]
    oh = (x.shape[2] - kh) // stride[0] + 1
    ow = (x.shape[3] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


IMG = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
KER = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
CPLX = (RNG.standard_normal((4, 8)) + 1j * RNG.standard_normal((4, 8))).astype(np.complex64)
V = RNG.standard_normal((6, 5)).astype(np.float32)

MORE = [
    (
        "conv same",
        lambda m: m.conv(IMG, KER, (1, 1), "SAME"),
        lambda: _conv_nchw(IMG, KER, (1, 1), [(1, 1), (1, 1)]),
    ),
    (
        "conv strided",
        lambda m: m.conv(IMG, KER, (2, 2), "VALID"),
        lambda: _conv_nchw(IMG, KER, (2, 2), [(0, 0), (0, 0)]),
    ),
    (
        "conv_with_general_padding",
        lambda m: m.conv_with_general_padding(IMG, KER, (2, 1), [(1, 1), (0, 2)], (1, 1), (2, 1)),
        lambda: _conv_nchw(IMG, KER, (2, 1), [(1, 1), (0, 2)], rhs_dilation=(2, 1)),
    ),
    (
        "conv_transpose",
        lambda m: m.conv_transpose(
            IMG,
            KER.transpose(2, 3, 1, 0),
            (2, 2),
            "VALID",
            dimension_numbers=("NCHW", "HWIO", "NCHW"),
        ),
        lambda: _conv_nchw(IMG, KER, (1, 1), [(2, 2), (2, 2)], lhs_dilation=(2, 2)),
    ),
    ("tile", lambda m: m.tile(V, (2, 1)), lambda: np.tile(V, (2, 1))),
    ("stack", lambda m: m.stack([V, V * 2], 1), lambda: np.stack([V, V * 2], 1)),
    ("unstack", lambda m: m.unstack(V, 1)[3], lambda: V[:, 3]),
    (
        "cumlogsumexp",
        lambda m: m.cumlogsumexp(V, 1),
        lambda: np.logaddexp.accumulate(V.astype(np.float64), 1),
    ),
    (
        "cumlogsumexp reverse",
        lambda m: m.cumlogsumexp(V, 0, True),
        lambda: np.logaddexp.accumulate(V[::-1].astype(np.float64), 0)[::-1],
    ),
    (
        "mulhi",
        lambda m: m.mulhi(
            np.array([2**30, -5, 123456789], np.int32),
            np.array([7, 2**31 - 1, 987654321], np.int32),
        ),
        lambda: (
            (
                np.array([2**30, -5, 123456789], np.int64)
                * np.array([7, 2**31 - 1, 987654321], np.int64)
            )
            >> 32
        ).astype(np.int32),
    ),
    ("approx_max_k", lambda m: m.approx_max_k(V, 2)[0], lambda: -np.sort(-V, 1)[:, :2]),
    ("approx_min_k", lambda m: m.approx_min_k(V, 3)[0], lambda: np.sort(V, 1)[:, :3]),
    (
        "approx_min_k along dim 0",
        lambda m: m.approx_min_k(V, 2, reduction_dimension=0),
        lambda: (np.sort(V, 0)[:2], np.argsort(V, 0, kind="stable")[:2]),
    ),
    (
        "associative_scan",
        lambda m: m.associative_scan(lambda a, b: a + b, V, axis=1),
        lambda: np.cumsum(V, 1),
    ),
    (
        "associative_scan reverse",
        lambda m: m.associative_scan(lambda a, b: a * b, V, reverse=True),
        lambda: np.cumprod(V[::-1], 0)[::-1],
    ),
    (
        "index_take",
        lambda m: m.index_take(V, (np.array([0, 2], np.int32), np.array([1, 4], np.int32)), (0, 1)),
        lambda: V[[0, 2], [1, 4]],
    ),
    ("fft", lambda m: m.fft(CPLX, m.FftType.FFT, (8,)), lambda: np.fft.fft(CPLX)),
    ("ifft", lambda m: m.fft(CPLX, m.FftType.IFFT, (8,)), lambda: np.fft.ifft(CPLX)),
    ("rfft", lambda m: m.fft(V, m.FftType.RFFT, (5,)), lambda: np.fft.rfft(V)),
    (
        "irfft",
        lambda m: m.fft(CPLX[:, :5], m.FftType.IRFFT, (8,)),
        lambda: np.fft.irfft(CPLX[:, :5], 8),
    ),
    ("empty", lambda m: m.empty((2, 3), np.float32).shape, lambda: (2, 3)),
]


@pytest.mark.parametrize("name, op, want", MORE, ids=[m[0] for m in MORE])
def test_more_ops_match_numpy(name, op, want):
    got, expected = np.asarray(op(lax)), np.asarray(want())
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_shape_helpers_compute_lax_shapes():
    assert lax.broadcast_shapes((3, 1), (1, 4)) == (3, 4)
    assert lax.padtype_to_pads((8, 7), (3, 2), (2, 2), "SAME") == [(0, 1), (0, 1)]
    assert lax.padtype_to_pads((8, 7), (3, 2), (2, 2), "VALID") == [(0, 0), (0, 0)]
    assert lax.conv_shape_tuple(IMG.shape, KER.shape, (2, 2), "SAME") == (2, 4, 4, 4)
    assert lax.conv_general_shape_tuple(
        (2, 8, 8, 3), (3, 3, 3, 4), (1, 1), [(1, 1), (1, 1)], ("NHWC", "HWIO", "NHWC")
    ) == (2, 8, 8, 4)
    assert lax.reduce_window_shape_tuple((8, 7), (3, 2), (2, 1), [(1, 1), (0, 0)]) == (4, 6)
    dn = lax.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert (dn.lhs_spec, dn.rhs_spec, dn.out_spec) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))


@pytest.mark.xla
@pytest.mark.parametrize("name, op, want", MORE, ids=[m[0] for m in MORE])
def test_more_ops_match_jax_lax(name, op, want, jax_x32):
    jax = jax_x32
    got, expected = np.asarray(op(lax)), np.asarray(op(jax.lax))
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
