"""convolution against a NumPy reference written from the StableHLO
definition: pad (negative padding crops) and base-dilate the input, slide a
strided, dilated, optionally reversed window over it, contract with the
kernel; feature and batch groups split and concatenate."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from eval_util import conv_case, conv_reference, hlo_type, window_text
from hypothesis import given, settings
from hypothesis import strategies as st

import uir


def conv(lhs, rhs, out_shape, window, labels, extra="", out_type=None):
    out_type = out_type or hlo_type(lhs).split("[")[0]
    text = (
        f"ENTRY e {{\n  l = {hlo_type(lhs)} parameter(0)\n  r = {hlo_type(rhs)} parameter(1)\n"
        f"  ROOT c = {out_type}[{','.join(map(str, out_shape))}] convolution(l, r), "
        f"window={{{window}}}, dim_labels={labels}{extra}\n}}"
    )
    return uir.evaluate(uir.hlo.parse_module(text), lhs, rhs)


@settings(max_examples=40, deadline=None)
@given(case=conv_case(), seed=st.integers(0, 1000))
def test_convolution_windows_match_the_reference(case, seed):
    sizes, strides, pads, lhs_dil, rhs_dil, reversal, in_sizes = case
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal((2, 3, *in_sizes)).astype(np.float32)
    rhs = rng.standard_normal((4, 3, *sizes)).astype(np.float32)
    want = conv_reference(lhs, rhs, strides, pads, lhs_dil, rhs_dil, reversal)
    sp = "".join(str(d) for d in range(len(sizes)))
    got = conv(
        lhs,
        rhs,
        want.shape,
        window_text(sizes, strides, pads, lhs_dil, rhs_dil, reversal),
        f"bf{sp}_oi{sp}->bf{sp}",
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_nhwc_layout_labels_permute_dimensions():
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)  # b01f
    rhs = rng.standard_normal((3, 2, 3, 5)).astype(np.float32)  # 01io
    want = conv_reference(
        lhs.transpose(0, 3, 1, 2),
        rhs.transpose(3, 2, 0, 1),
        [2, 1],
        [(1, 1), (0, 1)],
        [1, 1],
        [1, 1],
        [0, 0],
    ).transpose(0, 2, 3, 1)  # back to b01f
    got = conv(lhs, rhs, want.shape, "size=3x2 stride=2x1 pad=1_1x0_1", "b01f_01io->b01f")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_depthwise_convolution_uses_feature_groups():
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    rhs = rng.standard_normal((12, 1, 3, 3)).astype(np.float32)  # multiplier 2
    want = conv_reference(lhs, rhs, [1, 1], [(1, 1), (1, 1)], [1, 1], [1, 1], [0, 0], fgc=6)
    got = conv(
        lhs, rhs, want.shape, "size=3x3 pad=1_1x1_1", "bf01_oi01->bf01", ", feature_group_count=6"
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_grouped_convolution_with_several_features_per_group():
    rng = np.random.default_rng(2)
    lhs = rng.standard_normal((2, 6, 4)).astype(np.float64)
    rhs = rng.standard_normal((4, 3, 2)).astype(np.float64)  # 2 groups of 3 -> 2
    want = conv_reference(lhs, rhs, [1], [(0, 0)], [1], [1], [0], fgc=2)
    got = conv(lhs, rhs, want.shape, "size=2", "bf0_oi0->bf0", ", feature_group_count=2")
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_batch_groups_split_the_input_batch():
    # What a filter gradient looks like: the batch is split across output features.
    rng = np.random.default_rng(3)
    lhs = rng.standard_normal((4, 2, 5)).astype(np.float32)
    rhs = rng.standard_normal((8, 2, 3)).astype(np.float32)
    want = conv_reference(lhs, rhs, [1], [(0, 0)], [1], [1], [0], bgc=4)
    got = conv(lhs, rhs, want.shape, "size=3", "bf0_oi0->bf0", ", batch_group_count=4")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_integer_convolution_is_exact():
    rng = np.random.default_rng(4)
    lhs = rng.integers(-50, 50, (1, 2, 9)).astype(np.int32)
    rhs = rng.integers(-50, 50, (3, 2, 4)).astype(np.int32)
    want = conv_reference(lhs, rhs, [2], [(2, 1)], [1], [2], [0])
    got = conv(lhs, rhs, want.shape, "size=4 stride=2 pad=2_1 rhs_dilate=2", "bf0_oi0->bf0")
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_bfloat16_convolution_rounds_once_from_a_wide_sum():
    rng = np.random.default_rng(5)
    lhs = rng.standard_normal((1, 16, 8)).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((4, 16, 3)).astype(ml_dtypes.bfloat16)
    want = conv_reference(
        lhs.astype(np.float64), rhs.astype(np.float64), [1], [(1, 1)], [1], [1], [0]
    )
    got = conv(lhs, rhs, want.shape, "size=3 pad=1_1", "bf0_oi0->bf0")
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got, want.astype(ml_dtypes.bfloat16))


def test_mixed_operand_types_convert_to_the_result_type():
    lhs = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    rhs = np.array([[[True, False, True]]])
    got = conv(lhs, rhs, (1, 1, 4), "size=3", "bf0_oi0->bf0", out_type="f32")
    np.testing.assert_array_equal(got, [[[2, 4, 6, 8]]])


@pytest.mark.parametrize("shape", [(0, 2, 5), (2, 0, 5)])
def test_empty_convolutions(shape):
    lhs = np.zeros(shape, np.float32)
    rhs = np.zeros((3, shape[1], 2), np.float32)
    got = conv(lhs, rhs, (shape[0], 3, 4), "size=2", "bf0_oi0->bf0")
    np.testing.assert_array_equal(got, np.zeros((shape[0], 3, 4)))
