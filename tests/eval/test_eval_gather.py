"""gather with XLA's dimension numbers, against NumPy indexing."""

from __future__ import annotations

import numpy as np
from eval_util import hlo_type

import uir


def gather(operand, indices, out_shape, attrs):
    text = (
        "ENTRY e {\n"
        f"  o = {hlo_type(operand)} parameter(0)\n"
        f"  i = {hlo_type(indices)} parameter(1)\n"
        f"  ROOT g = {out_shape} gather(o, i), {attrs}\n"
        "}"
    )
    m = uir.hlo.parse_module(text)
    m.verify()
    return uir.evaluate(m, operand, indices)


def test_gather_rows_like_take():
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([4, 0, 2, 2], np.int32)
    got = gather(
        x,
        idx,
        "f32[4,3]",
        "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
    )
    np.testing.assert_array_equal(got, x[idx])


def test_gather_points():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    idx = np.array([[0, 1], [3, 4], [2, 0]], np.int32)
    got = gather(
        x,
        idx,
        "s32[3]",
        "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}",
    )
    np.testing.assert_array_equal(got, x[idx[:, 0], idx[:, 1]])


def test_gather_clamps_start_indices():
    x = np.arange(6, dtype=np.float32)
    idx = np.array([[4], [-3]], np.int64)
    got = gather(
        x,
        idx,
        "f32[2,3]",
        "offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3}",
    )
    # Starts 4 and -3 clamp to 3 and 0 so the 3-wide slices stay inside.
    np.testing.assert_array_equal(got, [x[3:6], x[0:3]])


def test_gather_with_batching_dims():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    idx = np.array([[3], [1]], np.int32)
    got = gather(
        x,
        idx,
        "f32[2]",
        "offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
        "start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}",
    )
    np.testing.assert_array_equal(got, [x[0, 3], x[1, 1]])


def test_gather_random_rows_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 4, 3)).astype(np.float32)
    idx = rng.integers(0, 7, (5, 2)).astype(np.int32)
    got = gather(
        x,
        idx,
        "f32[5,2,4,3]",
        "offset_dims={2,3}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,4,3}",
    )
    np.testing.assert_array_equal(got, x[idx])
