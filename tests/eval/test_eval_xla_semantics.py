"""Evaluator fixes found by running XLA:CPU beside uir, each checked against
a NumPy model of XLA's documented semantics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from eval_util import one_op
from hypothesis import given, settings
from hypothesis import strategies as st

import uir


def xla_reduce_precision_f32(x: np.ndarray, e: int, m: int) -> np.ndarray:
    """XLA's ReducePrecision on f32 bits: round to nearest even at mantissa
    bit m, then overflow above bias + (2^(e-1) - 1) and flush at or below
    bias - (2^(e-1) - 1)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    if m < 23:
        last = 1 << (23 - m)
        bias = (last >> 1) - 1 + ((bits & last) >> (23 - m))
        bits = (bits + bias) & ~np.uint64(last - 1) & np.uint64(0xFFFFFFFF)
    if e < 8:
        sign = bits & np.uint64(0x80000000)
        exp = bits & np.uint64(0x7F800000)
        rb = (1 << (e - 1)) - 1
        over = exp > np.uint64((127 + rb) << 23)
        under = exp <= np.uint64((127 - rb) << 23)
        bits = np.where(over, sign | np.uint64(0x7F800000), bits)
        bits = np.where(under, sign, bits)
    out = bits.astype(np.uint32).view(np.float32)
    nan = np.isnan(x)
    return np.where(nan, x if m > 0 else np.copysign(np.float32(np.inf), x), out)


@pytest.mark.parametrize("e,m", [(5, 10), (8, 7), (4, 3), (5, 2), (2, 1), (8, 23)])
def test_reduce_precision_keeps_the_smallest_normal_binade(e, m):
    rng = np.random.default_rng(e * 100 + m)
    bias = (1 << (e - 1)) - 1
    smallest_normal = np.float32(2.0 ** (1 - bias))
    x = np.concatenate(
        [
            smallest_normal * np.float32([1.0, 1.25, 1.5, 1.9]),  # kept: normal in the reduced type
            smallest_normal * np.float32([0.5, 0.99]),  # below: flushed
            rng.standard_normal(200).astype(np.float32)
            * np.float32(4.0) ** rng.integers(-20, 20, 200),
            np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -1e-45]),
        ]
    ).astype(np.float32)
    got = one_op("reduce-precision", x, attrs=f"exponent_bits={e}, mantissa_bits={m}")
    want = xla_reduce_precision_f32(x, e, m)
    np.testing.assert_array_equal(
        got.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)]
    )
    assert np.isnan(got[np.isnan(want)]).all()
    if e < 8:
        assert got[0] == smallest_normal


def test_reduce_precision_to_f16_matches_the_f16_conversion_on_normals():
    x = np.float32(2.0**-14) * np.float32([1.0, 1.5, 1.75, 3.0])
    got = one_op("reduce-precision", x, attrs="exponent_bits=5, mantissa_bits=10")
    np.testing.assert_array_equal(got, x.astype(np.float16).astype(np.float32))


def bitcast_model(x: np.ndarray, in_m2m, out_dims, out_m2m) -> np.ndarray:
    """The bytes of x laid out by in_m2m (minor to major), read as out_dims
    laid out by out_m2m."""
    in_order = list(reversed(in_m2m))
    out_order = list(reversed(out_m2m))
    physical = np.ascontiguousarray(x.transpose(in_order)).ravel()
    reread = physical.reshape([out_dims[d] for d in out_order])
    inverse = np.argsort(out_order)
    return reread.transpose(inverse)


def layout(m2m) -> str:
    return "{" + ",".join(map(str, m2m)) + "}"


@settings(max_examples=60, deadline=None)
@given(
    dims=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_bitcast_reads_memory_order_under_both_layouts(dims, data):
    n = int(np.prod(dims))
    in_m2m = data.draw(st.permutations(range(len(dims))))
    # A result of another rank with the same element count.
    out_dims = data.draw(st.sampled_from(_factorizations(n)))
    out_m2m = data.draw(st.permutations(range(len(out_dims))))
    x = np.arange(n, dtype=np.float32).reshape(dims)
    text = (
        f"ENTRY e {{ x = f32[{','.join(map(str, dims))}]{layout(in_m2m)} parameter(0)\n"
        f"  ROOT b = f32[{','.join(map(str, out_dims))}]{layout(out_m2m)} bitcast(x) }}"
    )
    got = uir.evaluate(uir.hlo.parse_module(text), x)
    np.testing.assert_array_equal(got, bitcast_model(x, in_m2m, out_dims, out_m2m))


def _factorizations(n: int) -> list[list[int]]:
    out = [[n]]
    for a in range(1, n + 1):
        if n % a == 0:
            out.append([a, n // a])
            for b in range(1, n // a + 1):
                if (n // a) % b == 0:
                    out.append([a, b, n // a // b])
    return out


def test_bitcast_between_element_types_keeps_the_bytes_in_memory_order():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    text = "ENTRY e { x = f32[2,3]{0,1} parameter(0)  ROOT b = s32[3,2]{1,0} bitcast(x) }"
    got = uir.evaluate(uir.hlo.parse_module(text), x)
    np.testing.assert_array_equal(got, x.T.copy().view(np.int32))


def test_add_subtract_and_multiply_on_pred_are_or_xor_and():
    a = np.array(list(itertools.product([False, True], repeat=2)))
    x, y = a[:, 0].copy(), a[:, 1].copy()
    np.testing.assert_array_equal(one_op("add", x, y), x | y)
    np.testing.assert_array_equal(one_op("multiply", x, y), x & y)
    np.testing.assert_array_equal(one_op("subtract", x, y), x ^ y)


def stochastic_convert_model(x: np.ndarray, r: np.ndarray, out: np.dtype) -> np.ndarray:
    info = np.iinfo(out)
    bits = r.dtype.itemsize * 8
    result = np.zeros(x.shape, np.int64)
    for i, (v, rv) in enumerate(zip(x.astype(np.float64), r, strict=True)):
        if np.isnan(v):
            result[i] = 0
        elif v >= info.max:
            result[i] = info.max
        elif v <= info.min:
            result[i] = info.min
        else:
            a = abs(v)
            whole = int(a)
            frac = a - whole
            if frac != 0 and int(rv) < int(np.ldexp(frac, bits)):
                whole += 1
            result[i] = -whole if v < 0 else whole
    return result.astype(out)


@pytest.mark.parametrize("out", [np.int8, np.int32])
def test_stochastic_convert_rounds_up_when_the_bits_fall_below_the_fraction(out):
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [rng.uniform(-200, 200, 500), [0.5, -0.5, 1.0, np.nan, np.inf, -np.inf, 127.5, -128.5]]
    ).astype(np.float32)
    r = rng.integers(0, 2**32, x.size, dtype=np.uint64).astype(np.uint32)
    t = "s8" if out == np.int8 else "s32"
    got = one_op("stochastic-convert", x, r, result=f"{t}[{x.size}]")
    np.testing.assert_array_equal(got, stochastic_convert_model(x, r, np.dtype(out)))


def test_stochastic_convert_rounds_up_with_the_fraction_as_probability():
    x = np.full(20000, 2.25, np.float32)
    r = np.random.default_rng(2).integers(0, 2**32, x.size, dtype=np.uint64).astype(np.uint32)
    got = one_op("stochastic-convert", x, r, result=f"s32[{x.size}]")
    assert set(np.unique(got)) == {2, 3}
    assert abs((got == 3).mean() - 0.25) < 0.02


ADD = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }\n"


@pytest.mark.parametrize(
    "groups,expected",
    [
        ("mesh['axis_0'=2,'axis_1'=2] {'axis_1'}", [[0, 1], [2, 3]]),
        ("mesh['axis_0'=2,'axis_1'=2] {'axis_0'}", [[0, 2], [1, 3]]),
        ("mesh['a'=4] {'a':(2)2}", [[0, 1], [2, 3]]),
        ("mesh['a'=4] {'a':(1)2}", [[0, 2], [1, 3]]),
        ("mesh['x'=2,'y'=2], device_ids=(3,1,0,2) {'x'}", [[3, 0], [1, 2]]),
        ("[2,2]<=[2,2]T(1,0)", [[0, 2], [1, 3]]),
    ],
)
def test_replica_groups_in_mesh_and_iota_form_expand_like_xla(groups, expected):
    text = (
        ADD + "ENTRY e { x = f32[2] parameter(0)  r = u32[] replica-id()\n"
        "  c = f32[] convert(r)  b = f32[2] broadcast(c), dimensions={}\n"
        f"  ROOT s = f32[2] all-reduce(b), replica_groups={groups}, to_apply=add }}"
    )
    module = uir.hlo.parse_module(text)
    assert module.to_text().count("replica_groups=") == 1
    got = uir.evaluate(module, np.zeros(2, np.float32), replicas=4)
    for group in expected:
        for member in group:
            assert got[member][0] == sum(group), (member, group)
