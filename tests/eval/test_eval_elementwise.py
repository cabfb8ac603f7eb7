"""The evaluator's elementwise ops against NumPy references written to XLA's
rules, on inputs with NaN, ±inf, -0.0, integer min/max, empty arrays and
scalars."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from eval_util import edge_floats, edge_ints, one_op
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import uir

FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def same(got, want, exact=True):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
        if np.issubdtype(want.dtype, np.floating):  # -0.0 vs 0.0 too
            assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
    else:
        np.testing.assert_allclose(
            got, want, rtol=2e-6 if want.dtype == np.float32 else 1e-13, equal_nan=True
        )


EXACT_FLOAT_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,  # propagates NaN, as XLA's does
    "minimum": np.minimum,
    "remainder": np.fmod,  # C semantics: the sign of the dividend
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(EXACT_FLOAT_BINARY))
def test_float_binary_ops_match_numpy_bit_for_bit(op, dtype):
    x = edge_floats(dtype, seed=1)
    y = np.roll(edge_floats(dtype, seed=2), 5)
    with np.errstate(all="ignore"):
        want = EXACT_FLOAT_BINARY[op](x, y)
    same(one_op(op, x, y), want)


def _afz(x):
    return np.where(np.isfinite(x), np.copysign(np.floor(np.abs(x) + 0.5), x), x).astype(x.dtype)


FLOAT_UNARY = {
    "negate": (np.negative, True),
    "abs": (np.abs, True),
    "sqrt": (np.sqrt, True),
    "floor": (np.floor, True),
    "ceil": (np.ceil, True),
    "round-nearest-even": (np.rint, True),
    "round-nearest-afz": (_afz, True),
    "exponential": (np.exp, False),
    "exponential-minus-one": (np.expm1, False),
    "log": (np.log, False),
    "log-plus-one": (np.log1p, False),
    "tanh": (np.tanh, False),
    "sine": (np.sin, False),
    "cosine": (np.cos, False),
    "rsqrt": (lambda v: 1 / np.sqrt(v), False),
    "logistic": (lambda v: 1 / (1 + np.exp(-v)), False),
    "cbrt": (np.cbrt, False),
    "tan": (np.tan, False),
    "sinh": (np.sinh, False),
    "cosh": (np.cosh, False),
    "asin": (np.arcsin, False),
    "acos": (np.arccos, False),
    "asinh": (np.arcsinh, False),
    "acosh": (np.arccosh, False),
    "atanh": (np.arctanh, False),
    "erf": (np.vectorize(math.erf, otypes=[np.float64]), False),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
def test_float_unary_ops_match_numpy(op, dtype):
    x = edge_floats(dtype, seed=3)
    ref, exact = FLOAT_UNARY[op]
    with np.errstate(all="ignore"):
        want = ref(x).astype(dtype)
    same(one_op(op, x), want, exact=exact)


FLOAT_BINARY_APPROX = {"atan2": np.arctan2, "power": np.power}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(FLOAT_BINARY_APPROX))
def test_float_atan2_and_power_match_numpy(op, dtype):
    # C semantics on the edges: pow(x, 0) = 1 even for NaN, atan2 of signed zeros and infinities.
    x = edge_floats(dtype, seed=4)
    y = np.roll(edge_floats(dtype, seed=5), 3)
    with np.errstate(all="ignore"):
        want = FLOAT_BINARY_APPROX[op](x, y).astype(dtype)
    same(one_op(op, x, y), want, exact=False)


def test_is_finite():
    x = edge_floats(np.float32)
    np.testing.assert_array_equal(one_op("is-finite", x, result="pred[64]"), np.isfinite(x))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_mulhi_is_the_high_half_of_the_full_product(dtype):
    x, y = edge_ints(dtype, seed=6), np.roll(edge_ints(dtype, seed=7), 2)
    bits = np.iinfo(dtype).bits
    mask = (1 << bits) - 1
    want = [((int(a) * int(b)) >> bits) & mask for a, b in zip(x, y, strict=True)]
    np.testing.assert_array_equal(
        one_op("mulhi", x, y), np.array(want, dtype=f"u{bits // 8}").view(dtype)
    )


@pytest.mark.parametrize("target,e,m", [(ml_dtypes.bfloat16, 8, 7), (np.float16, 5, 10)])
def test_reduce_precision_rounds_like_the_narrow_type(target, e, m):
    rng = np.random.default_rng(8)
    x = np.concatenate(
        [edge_floats(np.float32), (rng.standard_normal(200) * 100).astype(np.float32)]
    )
    got = one_op("reduce-precision", x, attrs=f"exponent_bits={e}, mantissa_bits={m}")
    with np.errstate(all="ignore"):
        want = x.astype(target).astype(np.float32)
    # Subnormals of the narrow type flush to zero in reduce-precision.
    normal = np.abs(want) >= ml_dtypes.finfo(target).tiny
    np.testing.assert_array_equal(
        got[normal | ~np.isfinite(want)], want[normal | ~np.isfinite(want)]
    )
    assert (got[~normal & np.isfinite(want)] == 0).all()


def test_round_nearest_even_and_afz_on_ties():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998], np.float32)
    np.testing.assert_array_equal(one_op("round-nearest-even", x), [0, 2, 2, -0.0, -2, -2, 2])
    np.testing.assert_array_equal(one_op("round-nearest-afz", x), [1, 2, 3, -1, -2, -3, 2])


def test_sign_keeps_negative_zero_and_nan():
    x = np.array([-0.0, 0.0, -3.0, 2.0, np.nan, -np.inf], np.float32)
    got = one_op("sign", x)
    np.testing.assert_array_equal(got, [-0.0, 0.0, -1, 1, np.nan, -1])
    assert np.signbit(got[0]) and not np.signbit(got[1])


def _trunc_div(x, y, dtype):
    info = np.iinfo(dtype)
    out = []
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        if b == 0:
            out.append(-1 if info.min < 0 else info.max)
        elif a == info.min and b == -1:
            out.append(a)
        else:
            q = abs(a) // abs(b)
            out.append(q if (a < 0) == (b < 0) else -q)
    return np.array(out, dtype=dtype)


def _trunc_rem(x, y, dtype):
    info = np.iinfo(dtype)
    out = []
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        if b == 0:
            out.append(a)
        elif a == info.min and b == -1:
            out.append(0)
        else:
            r = abs(a) % abs(b)
            out.append(-r if a < 0 else r)
    return np.array(out, dtype=dtype)


def _wrap(values, dtype):
    bits = np.iinfo(dtype).bits
    info = np.iinfo(dtype)
    out = [(v - info.min) % (1 << bits) + info.min for v in values]
    return np.array(out, dtype=dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_arithmetic_wraps_and_divides_like_xla(dtype):
    x = edge_ints(dtype, seed=4)
    y = np.roll(edge_ints(dtype, seed=5), 3)
    y[:4] = [0, 0, 1, 0]
    xs, ys = x.tolist(), y.tolist()
    same(one_op("add", x, y), _wrap([a + b for a, b in zip(xs, ys, strict=True)], dtype))
    same(one_op("subtract", x, y), _wrap([a - b for a, b in zip(xs, ys, strict=True)], dtype))
    same(one_op("multiply", x, y), _wrap([a * b for a, b in zip(xs, ys, strict=True)], dtype))
    same(one_op("divide", x, y), _trunc_div(x, y, dtype))
    same(one_op("remainder", x, y), _trunc_rem(x, y, dtype))
    same(one_op("maximum", x, y), np.maximum(x, y))
    same(one_op("minimum", x, y), np.minimum(x, y))
    same(one_op("and", x, y), x & y)
    same(one_op("or", x, y), x | y)
    same(one_op("xor", x, y), x ^ y)


def test_int_min_divided_by_minus_one_is_int_min():
    x = np.array([np.iinfo(np.int32).min, 7, -7], np.int32)
    y = np.array([-1, 0, 0], np.int32)
    np.testing.assert_array_equal(one_op("divide", x, y), [np.iinfo(np.int32).min, -1, -1])
    np.testing.assert_array_equal(one_op("remainder", x, y), [0, 7, -7])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint32, np.int64])
def test_shifts_by_out_of_range_amounts(dtype):
    bits = np.iinfo(dtype).bits
    x = np.array([1, -1 if np.iinfo(dtype).min < 0 else 5, 6, np.iinfo(dtype).max], dtype)
    amounts = np.array([bits, bits, 1, bits + 3], dtype)
    left = one_op("shift-left", x, amounts)
    logical = one_op("shift-right-logical", x, amounts)
    arith = one_op("shift-right-arithmetic", x, amounts)
    np.testing.assert_array_equal(left, [0, 0, 12, 0])
    np.testing.assert_array_equal(logical, [0, 0, 3, 0])
    # Out of range, an arithmetic shift fills with the sign bit, read as
    # signed even for unsigned types (XLA's emitter does the same).
    signed = np.iinfo(dtype).min < 0
    expected = [0, -1 if signed else 0, 3, 0 if signed else np.iinfo(dtype).max]
    np.testing.assert_array_equal(arith, np.array(expected).astype(dtype))


def test_integer_abs_and_negate_of_min_wrap():
    x = np.array([np.iinfo(np.int8).min, -5, 5], np.int8)
    np.testing.assert_array_equal(one_op("abs", x), [-128, 5, 5])
    np.testing.assert_array_equal(one_op("negate", x), [-128, 5, -5])


def test_popcnt_clz_not():
    x = np.array([0, 1, 255, 16, 0x7F], np.uint8)
    np.testing.assert_array_equal(one_op("popcnt", x), [0, 1, 8, 1, 7])
    np.testing.assert_array_equal(one_op("count-leading-zeros", x), [8, 7, 0, 3, 1])
    np.testing.assert_array_equal(one_op("not", x), ~x)
    b = np.array([True, False])
    np.testing.assert_array_equal(one_op("not", b), [False, True])


def test_compare_float_and_totalorder():
    x = np.array([np.nan, -0.0, 0.0, 1.0, -np.inf, np.nan], np.float32)
    y = np.array([np.nan, 0.0, -0.0, 2.0, -np.inf, 1.0], np.float32)
    with np.errstate(invalid="ignore"):
        eq = one_op("compare", x, y, result="pred[6]", attrs="direction=EQ")
        lt = one_op("compare", x, y, result="pred[6]", attrs="direction=LT")
    np.testing.assert_array_equal(eq, x == y)
    np.testing.assert_array_equal(lt, x < y)
    # TOTALORDER: -0 < +0, NaN equals itself and is above +inf.
    teq = one_op("compare", x, y, result="pred[6]", attrs="direction=EQ, type=TOTALORDER")
    tlt = one_op("compare", x, y, result="pred[6]", attrs="direction=LT, type=TOTALORDER")
    np.testing.assert_array_equal(teq, [True, False, False, False, True, False])
    np.testing.assert_array_equal(tlt, [False, True, False, True, False, False])


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_narrow_float_nans_keep_their_sign(dtype):
    # Widening keeps the bits' sign: -NaN sorts below -inf in the total
    # order, and converts to a negative f32 NaN.
    x = np.array([-np.nan, np.nan, -np.inf, 0.0], dtype)
    x[0] = np.array(0xFFC0 if dtype == ml_dtypes.bfloat16 else 0xFE00, np.uint16).view(dtype)
    y = np.array([-np.inf, -np.nan, np.nan, -0.0], dtype)
    y[1] = x[0]
    name = "bf16" if dtype == ml_dtypes.bfloat16 else "f16"
    text = f"""HloModule m
ENTRY e {{
  x = {name}[4] parameter(0)
  y = {name}[4] parameter(1)
  lt = pred[4] compare(x, y), direction=LT, type=TOTALORDER
  eq = pred[4] compare(x, x), direction=EQ, type=TOTALORDER
  w = f32[4] convert(x)
  ROOT t = (pred[4], pred[4], f32[4]) tuple(lt, eq, w)
}}
"""
    lt, eq, w = uir.evaluate(uir.hlo.parse_module(text), x, y)
    np.testing.assert_array_equal(lt, [True, False, True, False])
    np.testing.assert_array_equal(eq, [True, True, True, True])
    assert np.isnan(w[0]) and np.signbit(w[0]) and not np.signbit(w[1])


def test_select_and_clamp():
    p = np.array([True, False, True])
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([-1.0, -2.0, -3.0], np.float32)
    np.testing.assert_array_equal(one_op("select", p, a, b, result="f32[3]"), [1, -2, 3])
    lo = np.float32(0.0)
    hi = np.float32(2.5)
    x = np.array([-1.0, 1.0, 4.0, np.nan], np.float32)
    got = one_op("clamp", np.array(lo), x, np.array(hi), result="f32[4]")
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.5, np.nan])


CONVERT_CASES = [
    (np.array([1.7, -1.7, 1e20, -1e20, np.nan, np.inf, -np.inf, -0.0], np.float32), np.int32),
    (np.array([300.5, -5.5, np.nan, 255.9], np.float64), np.uint8),
    (np.array([1e19, -1e19, 9.3e18], np.float64), np.int64),
]


@pytest.mark.parametrize(("x", "to"), CONVERT_CASES)
def test_float_to_int_conversion_saturates_and_nan_is_zero(x, to):
    info = np.iinfo(to)
    want = np.where(
        np.isnan(x),
        0,
        np.clip(
            np.trunc(np.nan_to_num(x, nan=0, posinf=np.inf, neginf=-np.inf)), info.min, info.max
        ),
    )
    want = np.array(
        [
            info.max if v >= info.max else info.min if v <= info.min else int(v)
            for v in want.tolist()
        ],
        to,
    )
    got = one_op(
        "convert",
        x,
        result=f"{ {np.int32: 's32', np.uint8: 'u8', np.int64: 's64'}[to] }[{x.size}]".replace(
            " ", ""
        ),
    )
    np.testing.assert_array_equal(got, want)


NARROW = [ml_dtypes.bfloat16, np.float16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]


@pytest.mark.parametrize("dtype", NARROW)
def test_narrow_float_arithmetic_rounds_each_op_like_ml_dtypes(dtype):
    x = edge_floats(np.float32, seed=6)
    y = edge_floats(np.float32, seed=7)
    finite = np.isfinite(x) & np.isfinite(y) & (np.abs(x) < 200) & (np.abs(y) < 200)
    xa, ya = x[finite].astype(dtype), y[finite].astype(dtype)
    for op, ref in [("add", np.add), ("multiply", np.multiply), ("subtract", np.subtract)]:
        want = ref(xa.astype(np.float32), ya.astype(np.float32)).astype(dtype)
        got = one_op(op, xa, ya)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize(
    "to", [ml_dtypes.bfloat16, np.float16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2fnuz]
)
def test_convert_to_narrow_floats_matches_ml_dtypes(to):
    x = edge_floats(np.float32, seed=8)
    x = x[np.isfinite(x) & (np.abs(x) < 50)]
    name = {
        ml_dtypes.bfloat16: "bf16",
        np.float16: "f16",
        ml_dtypes.float8_e4m3fn: "f8e4m3fn",
        ml_dtypes.float8_e5m2fnuz: "f8e5m2fnuz",
    }[to]
    got = one_op("convert", x, result=f"{name}[{x.size}]")
    np.testing.assert_array_equal(got.astype(np.float32), x.astype(to).astype(np.float32))


def test_complex_ops():
    x = np.array([1 + 2j, -3 + 0.5j, 0j], np.complex64)
    y = np.array([2 - 1j, 1 + 1j, 1 + 0j], np.complex64)
    np.testing.assert_allclose(one_op("multiply", x, y), x * y)
    np.testing.assert_allclose(one_op("divide", x, y), x / y)
    np.testing.assert_allclose(one_op("abs", x, result="f32[3]"), np.abs(x), rtol=1e-6)
    np.testing.assert_array_equal(one_op("real", x, result="f32[3]"), x.real)
    np.testing.assert_array_equal(one_op("imag", x, result="f32[3]"), x.imag)
    re = np.array([1.0, 2.0], np.float32)
    im = np.array([3.0, -4.0], np.float32)
    np.testing.assert_array_equal(one_op("complex", re, im, result="c64[2]"), re + 1j * im)


def test_empty_and_scalar_operands():
    e = np.zeros((0, 3), np.float32)
    assert one_op("add", e, e).shape == (0, 3)
    s = np.array(2.5, np.float32)
    assert one_op("multiply", s, s) == np.float32(6.25)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    ),
    st.sampled_from(["add", "multiply", "maximum", "subtract"]),
)
def test_float_binary_ops_on_random_shapes(x, op):
    y = np.flip(x).copy() if x.ndim else x.copy()
    with np.errstate(all="ignore"):
        want = EXACT_FLOAT_BINARY[op](x, y)
    same(one_op(op, x, y), want)
