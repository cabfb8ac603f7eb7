"""The oracle where XLA leaves the order open: floating-point sums are
pairwise, so their rounding error is of XLA:CPU's order of magnitude (a
single accumulator stops counting float ones at 2^24), narrow floats
round each partial sum to their type, and NaN payloads survive printing
and parsing in every IEEE-like type."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir


def _sum_module(dtype: str, dims: list[int], reduce_dims: list[int]) -> str:
    shape = ",".join(map(str, dims))
    kept = [d for k, d in enumerate(dims) if k not in reduce_dims]
    out = ",".join(map(str, kept))
    return f"""HloModule sum
add {{
  a = {dtype}[] parameter(0)
  b = {dtype}[] parameter(1)
  ROOT s = {dtype}[] add(a, b)
}}
ENTRY e {{
  x = {dtype}[{shape}] parameter(0)
  z = {dtype}[] constant(0)
  ROOT r = {dtype}[{out}] reduce(x, z), dimensions={{{",".join(map(str, reduce_dims))}}}, to_apply=add
}}
"""


def test_a_sum_of_two_to_the_25_float_ones_is_exact():
    n = 1 << 25
    m = uir.hlo.parse_module(_sum_module("f32", [n], [0]))
    x = np.ones(n, np.float32)
    assert float(uir.evaluate(m, x)) == float(n)
    assert float(uir.compile(m, backend="cpu")(x)) == float(n)


def test_a_column_sum_is_pairwise_too():
    m = uir.hlo.parse_module(_sum_module("f32", [1 << 22, 4], [0]))
    x = np.ones((1 << 22, 4), np.float32)
    np.testing.assert_array_equal(uir.evaluate(m, x), np.full(4, 1 << 22, np.float32))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@settings(max_examples=25, deadline=None)
@given(
    dims=st.lists(st.integers(1, 40), min_size=1, max_size=3),
    data=st.data(),
)
def test_sums_are_within_a_pairwise_bound_of_the_exact_sum(dtype, dims, data):
    reduce_dims = sorted(
        data.draw(st.sets(st.integers(0, len(dims) - 1), min_size=1, max_size=len(dims)))
    )
    np_dtype = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng(len(dims) * 7 + sum(dims))
    x = rng.standard_normal(dims).astype(np_dtype)
    m = uir.hlo.parse_module(_sum_module(dtype, dims, reduce_dims))
    got = np.asarray(uir.evaluate(m, x), np.float64)
    exact = x.astype(np.float64).sum(axis=tuple(reduce_dims))
    n = int(np.prod([dims[d] for d in reduce_dims]))
    bound = (
        np.finfo(np_dtype).eps
        * (np.log2(n) + 9)
        * np.abs(x).astype(np.float64).sum(axis=tuple(reduce_dims))
    )
    assert np.all(np.abs(got - exact) <= bound + 1e-30)


@pytest.mark.parametrize("dtype,np_dtype", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_a_narrow_float_sum_keeps_its_partial_sums_small(dtype, np_dtype):
    # 4096 halves: one f16 accumulator stops at 2048 - 0.5 steps round
    # away; pairwise partial sums stay exact.
    m = uir.hlo.parse_module(_sum_module(dtype, [8192], [0]))
    x = np.full(8192, 0.5, np_dtype)
    assert float(uir.evaluate(m, x)) == 4096.0


@pytest.mark.parametrize(
    "dtype,bits,uint",
    [
        ("f16", [0x7D01, 0xFE03, 0x7C01, 0x7E00], np.uint16),
        ("bf16", [0x7F81, 0xFFC3, 0x7FC0, 0x7F82], np.uint16),
        ("f32", [0x7F800001, 0xFFC00003, 0x7FC00000, 0x7FA00000], np.uint32),
    ],
)
def test_nan_payloads_survive_constant_folding_printing_and_parsing(dtype, bits, uint):
    width = np.dtype(uint).itemsize * 8
    text = f"""HloModule m
ENTRY e {{
  c = u{width}[4] constant({{{", ".join(str(b) for b in bits)}}})
  ROOT y = {dtype}[4] bitcast-convert(c)
}}
"""
    m = uir.hlo.parse_module(text)
    want = np.array(bits, uint)
    assert np.array_equal(np.asarray(uir.evaluate(m)).view(uint), want)
    folded = uir.passes.default_pipeline().run(m)
    again = uir.hlo.parse_module(folded.to_text())
    assert np.array_equal(np.asarray(uir.evaluate(again)).view(uint), want)
    assert np.array_equal(np.asarray(uir.compile(m, backend="cpu")()).view(uint), want)
