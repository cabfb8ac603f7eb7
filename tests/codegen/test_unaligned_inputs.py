"""Coalesced kernels run one loop whatever their inputs' alignment (NumPy's
large arrays start 16 bytes into a line), keeping the output's
non-temporal stores: inputs at every offset within a line, of lengths
around the vector widths, give the results of the same executable on
aligned copies, and the evaluator's within the math's tolerance."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp


def at_offset(x: np.ndarray, offset_bytes: int) -> np.ndarray:
    """A copy of 1-D `x` whose data starts `offset_bytes` past a 64-byte line."""
    raw = np.empty(x.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_bytes
    out = raw[start : start + x.nbytes].view(x.dtype)
    out[...] = x
    assert out.ctypes.data % 64 == offset_bytes
    return out


FUNCTIONS = {
    "tanh(a*b+c)": lambda a, b, c: unp.tanh(a * b + c),
    "exp(a)/(b+c)": lambda a, b, c: unp.exp(a) / (b + c),
    "log1p(|a|)*b-c": lambda a, b, c: unp.log1p(unp.abs(a)) * b - c,
}


def test_heavy_coalesced_kernels_keep_one_loop_and_streaming_stores():
    a = np.ones(1 << 22, np.float32)  # past the streaming threshold
    for fn in (FUNCTIONS["tanh(a*b+c)"], lambda x, y, z: x * y + z):
        exe = uir.jit(fn).lower(a, a, a).compile().executable
        # No head loop up to the inputs' first aligned column: one column
        # loop in each variant (the plain kernel and its streaming twin).
        functions = [
            f for f in exe.llvm_ir_unoptimized.split("\ndefine ")[1:] if "@uir_kernel_" in f[:40]
        ]
        assert len(functions) == 2
        for function in functions:
            assert re.findall(r"^(columns\w*):", function, re.M) == ["columns"]
        streaming = exe.llvm_ir.split("_streaming(", 1)[1]
        assert "!nontemporal" in streaming


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(FUNCTIONS)),
    st.sampled_from([1, 7, 16, 17, 63, 64, 65, 1000, 4099, 70001]),
    st.integers(0, 15),
    st.integers(0, 15),
    st.integers(0, 2**32 - 1),
)
def test_inputs_at_any_offset_give_the_aligned_results(name, n, skew_a, skew_b, seed):
    rng = np.random.default_rng(seed)
    skew_a, skew_b = skew_a * 4, skew_b * 4
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    c = np.abs(c) + 1  # exp(a)/(b+c): away from a zero denominator
    exe = uir.jit(FUNCTIONS[name]).lower(a, b, c).compile()
    want = exe(at_offset(a, 0), at_offset(b, 0), at_offset(c, 0))
    got = exe(at_offset(a, skew_a), at_offset(b, skew_b), at_offset(c, skew_a))
    np.testing.assert_array_equal(got, want)
    reference = uir.evaluate(exe.lowered.module, a, b, c)
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("offset", [0, 4, 16, 60])
def test_a_large_numpy_input_at_each_offset(offset):
    rng = np.random.default_rng(offset)
    n = (1 << 20) + 3
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    f = uir.jit(FUNCTIONS["tanh(a*b+c)"])
    got = f(at_offset(a, offset), at_offset(b, offset), at_offset(c, offset))
    np.testing.assert_array_equal(got, f(at_offset(a, 0), at_offset(b, 0), at_offset(c, 0)))
    np.testing.assert_allclose(got, np.tanh(a * b + c), rtol=2e-6, atol=2e-6)
