"""scatter and select-and-scatter against NumPy: np.add.at for scatter-add
(repeated indices accumulate), fancy assignment, point scatters, batching
dims, windows that would leave the operand (skipped whole, as XLA does),
variadic and non-commutative combiners, and max-pool gradients."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from eval_util import hlo_type
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

ADD = "add {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT r = $T[] add(a, b)\n}\n"
ASSIGN = "assign {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT r = $T[] copy(b)\n}\n"
SUB = "sub {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT r = $T[] subtract(a, b)\n}\n"


def scatter(x, idx, upd, dnums: str, comp: str, name: str):
    t = hlo_type(x).split("[")[0]
    text = comp.replace("$T", t) + (
        f"ENTRY e {{\n  x = {hlo_type(x)} parameter(0)\n  i = {hlo_type(idx)} parameter(1)\n"
        f"  u = {hlo_type(upd)} parameter(2)\n"
        f"  ROOT r = {hlo_type(x)} scatter(x, i, u), {dnums}, to_apply={name}\n}}"
    )
    return uir.evaluate(uir.hlo.parse_module(text), x, idx, upd)


ROWS = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 6), cols=st.integers(0, 4), k=st.integers(0, 10), seed=st.integers(0, 99)
)
def test_row_scatter_add_matches_numpy_add_at_and_skips_out_of_bounds(rows, cols, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    idx = rng.integers(-2, rows + 2, (k, 1)).astype(np.int32)
    upd = rng.standard_normal((k, cols)).astype(np.float32)
    want = x.copy()
    ok = (idx[:, 0] >= 0) & (idx[:, 0] < rows)
    np.add.at(want, idx[ok, 0], upd[ok])
    got = scatter(x, idx, upd, ROWS, ADD, "add")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_assignment_scatter_is_fancy_assignment_and_last_write_wins():
    x = np.zeros((5, 2), np.int64)
    idx = np.array([[3], [1], [3]], np.int32)
    upd = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    got = scatter(x, idx, upd, ROWS, ASSIGN, "assign")
    np.testing.assert_array_equal(got, [[0, 0], [3, 4], [0, 0], [5, 6], [0, 0]])


def test_non_commutative_combiner_applies_updates_in_order():
    x = np.full(4, 10, np.int32)
    idx = np.array([2, 2, 0], np.int32)  # index_vector_dim == rank: a trailing 1 is implied
    upd = np.array([1, 2, 3], np.int32)
    dnums = "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    got = scatter(x, idx, upd, dnums, SUB, "sub")
    np.testing.assert_array_equal(got, [7, 10, 7, 10])


def test_point_scatter_with_two_index_components():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 9, (4, 5)).astype(np.int16)
    idx = np.array([[0, 1], [3, 4], [0, 1], [2, 0]], np.int64)
    upd = np.array([5, 6, 7, 8], np.int16)
    dnums = "update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1"
    want = x.copy()
    np.add.at(want, (idx[:, 0], idx[:, 1]), upd)
    np.testing.assert_array_equal(scatter(x, idx, upd, dnums, ADD, "add"), want)


def test_window_reaching_outside_the_operand_is_skipped_whole():
    x = np.zeros(6, np.float64)
    idx = np.array([[2], [4], [-1]], np.int32)
    upd = np.ones((3, 3))
    dnums = "update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    got = scatter(x, idx, upd, dnums, ADD, "add")
    np.testing.assert_array_equal(got, [0, 0, 1, 1, 1, 0])  # starts 4 and -1 would overflow


def test_batching_dims_scatter_within_each_batch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 7)).astype(np.float32)
    idx = rng.integers(0, 7, (3, 4, 1)).astype(np.int32)
    upd = rng.standard_normal((3, 4)).astype(np.float32)
    dnums = (
        "update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
        "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2"
    )
    want = x.copy()
    for b in range(3):
        np.add.at(want[b], idx[b, :, 0], upd[b])
    np.testing.assert_allclose(scatter(x, idx, upd, dnums, ADD, "add"), want, rtol=1e-6)


def test_bfloat16_scatter_add_rounds_after_each_update():
    x = np.zeros(2, ml_dtypes.bfloat16)
    idx = np.zeros((300, 1), np.int32)
    upd = np.ones(300, ml_dtypes.bfloat16)
    dnums = "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    got = scatter(x, idx, upd, dnums, ADD, "add")
    assert got.dtype == ml_dtypes.bfloat16
    # 256 + 1 rounds back to 256 in bfloat16, so the sum stops there.
    np.testing.assert_array_equal(got.astype(np.float32), [256, 0])


VARIADIC = """
argmin {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  le = pred[] compare(av, bv), direction=LE
  v = f32[] select(le, av, bv)
  i = s32[] select(le, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  xv = f32[4] parameter(0)
  xi = s32[4] parameter(1)
  idx = s32[6,1] parameter(2)
  uv = f32[6] parameter(3)
  ui = s32[6] parameter(4)
  ROOT r = (f32[4], s32[4]) scatter(xv, xi, idx, uv, ui), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmin
}
"""


def test_variadic_scatter_keeps_the_minimum_and_its_index():
    xv = np.full(4, np.inf, np.float32)
    xi = np.full(4, -1, np.int32)
    idx = np.array([[1], [1], [3], [1], [3], [0]], np.int32)
    uv = np.array([5, 2, 9, 2, 1, 4], np.float32)
    ui = np.arange(6, dtype=np.int32)
    v, i = uir.evaluate(uir.hlo.parse_module(VARIADIC), xv, xi, idx, uv, ui)
    np.testing.assert_array_equal(v, [4, 2, np.inf, 1])
    np.testing.assert_array_equal(i, [5, 1, -1, 4])  # ties keep the earlier update


def select_and_scatter(x, src, window: str, select_dir: str = "GE"):
    t = hlo_type(x).split("[")[0]
    text = (
        f"sel {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
        f"  ROOT r = pred[] compare(a, b), direction={select_dir}\n}}\n"
        + ADD.replace("$T", t)
        + f"ENTRY e {{\n  x = {hlo_type(x)} parameter(0)\n  s = {hlo_type(src)} parameter(1)\n"
        f"  z = {t}[] constant(0)\n"
        f"  ROOT r = {hlo_type(x)} select-and-scatter(x, s, z), window={{{window}}}, select=sel, scatter=add\n}}"
    )
    return uir.evaluate(uir.hlo.parse_module(text), x, src)


def maxpool_grad_reference(x, src, size, stride, pad_lo):
    out = np.zeros_like(x)
    for oi in range(src.shape[0]):
        for oj in range(src.shape[1]):
            best = None
            for wi in range(size[0]):
                for wj in range(size[1]):
                    i, j = oi * stride[0] + wi - pad_lo[0], oj * stride[1] + wj - pad_lo[1]
                    inside = 0 <= i < x.shape[0] and 0 <= j < x.shape[1]
                    if inside and (best is None or not x[best] >= x[i, j]):
                        best = (i, j)
            if best is not None:
                out[best] += src[oi, oj]
    return out


@pytest.mark.parametrize(
    "window,size,stride,pad,out",
    [
        ("size=2x2 stride=2x2", (2, 2), (2, 2), (0, 0), (2, 3)),
        ("size=3x3 stride=1x1", (3, 3), (1, 1), (0, 0), (2, 4)),
        ("size=3x2 stride=2x1 pad=1_1x0_1", (3, 2), (2, 1), (1, 0), (2, 6)),
    ],
)
def test_select_and_scatter_is_the_max_pool_gradient(window, size, stride, pad, out):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, (4, 6)).astype(np.float32)  # ties: the first maximum wins
    src = rng.standard_normal(out).astype(np.float32)
    got = select_and_scatter(x, src, window)
    want = maxpool_grad_reference(x, src, size, stride, pad)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
