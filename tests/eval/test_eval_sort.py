"""sort against NumPy: ascending and descending, along any dimension,
multi-operand (argsort), JAX's NaN-canonicalizing TOTALORDER comparator,
stability, and comparators that are not a single key (called per pair)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from eval_util import edge_floats, edge_ints, hlo_type
from hypothesis import given, settings
from hypothesis import strategies as st

import uir


def comparator(t: str, direction: str = "LT", compare_type: str = "", nparams: int = 2) -> str:
    params = "\n".join(f"  p{i} = {t if i < 2 else 's32'}[] parameter({i})" for i in range(nparams))
    ct = f", type={compare_type}" if compare_type else ""
    return f"cmp {{\n{params}\n  ROOT r = pred[] compare(p0, p1), direction={direction}{ct}\n}}\n"


def sort(x: np.ndarray, dim: int, direction: str = "LT", compare_type: str = "", stable=True):
    t = hlo_type(x).split("[")[0]
    text = comparator(t, direction, compare_type) + (
        f"ENTRY e {{\n  p = {hlo_type(x)} parameter(0)\n"
        f"  ROOT s = {hlo_type(x)} sort(p), dimensions={{{dim}}}, is_stable={str(stable).lower()},"
        " to_apply=cmp\n}"
    )
    return uir.evaluate(uir.hlo.parse_module(text), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64])
@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
def test_sort_ascending_and_descending_match_numpy(dtype, shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(len(shape))
    if np.issubdtype(dtype, np.floating):
        x = (rng.standard_normal(shape) * 5).astype(dtype)
    else:
        x = rng.integers(0, 50, shape).astype(dtype)
    np.testing.assert_array_equal(sort(x, dim), np.sort(x, axis=dim))
    np.testing.assert_array_equal(sort(x, dim, "GT"), np.flip(np.sort(x, axis=dim), axis=dim))


def test_sort_of_edge_integers():
    for dtype in (np.int8, np.int32, np.uint32, np.int64, np.uint64):
        x = edge_ints(dtype)
        np.testing.assert_array_equal(sort(x, 0), np.sort(x))


def test_totalorder_puts_negative_zero_first_and_nans_at_the_ends():
    x = np.array([1.0, np.nan, -0.0, 0.0, -np.nan, -np.inf, np.inf, -1.0], np.float32)
    got = sort(x, 0, compare_type="TOTALORDER")
    # Total order: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN.
    assert np.signbit(got[0]) and np.isnan(got[0])
    np.testing.assert_array_equal(got[1:7], [-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf])
    assert np.signbit(got[3]) and not np.signbit(got[4])
    assert np.isnan(got[7]) and not np.signbit(got[7])


def test_sort_of_bfloat16_edge_values_matches_numpy_in_float32():
    x = edge_floats(np.float32).astype(ml_dtypes.bfloat16)
    got = sort(x, 0, compare_type="TOTALORDER")
    assert got.dtype == ml_dtypes.bfloat16
    want = np.sort(x.astype(np.float32))  # NaN last; -0.0 and 0.0 compare equal here
    np.testing.assert_array_equal(got.astype(np.float32)[: len(x) - 1], want[: len(x) - 1])


JAX_ARGSORT = """
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  a_nan = pred[] compare(a, a), direction=NE
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(a_zero, zero, a)
  ka = f32[] select(a_nan, qnan, a0)
  b_nan = pred[] compare(b, b), direction=NE
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(b_zero, zero, b)
  kb = f32[] select(b_nan, qnan, b0)
  ROOT lt = pred[] compare(ka, kb), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[3,40] parameter(0)
  i = s32[3,40] iota(), iota_dimension=1
  ROOT s = (f32[3,40], s32[3,40]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
}
"""


def test_jax_argsort_comparator_matches_numpy_stable_argsort():
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, (3, 40)).astype(np.float32)  # many ties: tests stability
    x[0, :12] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan, -0.0, 1, 2, 0.0, -1, -np.nan]
    values, order = uir.evaluate(uir.hlo.parse_module(JAX_ARGSORT), x)
    want = np.argsort(x, axis=1, kind="stable")  # NumPy: -0.0 == 0.0, NaNs last
    np.testing.assert_array_equal(order, want)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=1))


LEXICOGRAPHIC = """
cmp {
  a0 = s32[] parameter(0)
  b0 = s32[] parameter(1)
  a1 = f64[] parameter(2)
  b1 = f64[] parameter(3)
  lt0 = pred[] compare(a0, b0), direction=LT
  eq0 = pred[] compare(a0, b0), direction=EQ
  gt1 = pred[] compare(a1, b1), direction=GT
  tie = pred[] and(eq0, gt1)
  ROOT r = pred[] or(lt0, tie)
}
ENTRY e {
  k = s32[50] parameter(0)
  v = f64[50] parameter(1)
  ROOT s = (s32[50], f64[50]) sort(k, v), dimensions={0}, to_apply=cmp
}
"""


def test_comparator_that_is_not_one_key_is_called_per_pair():
    rng = np.random.default_rng(2)
    k = rng.integers(0, 5, 50).astype(np.int32)
    v = rng.standard_normal(50)
    got_k, got_v = uir.evaluate(uir.hlo.parse_module(LEXICOGRAPHIC), k, v)
    order = np.lexsort((-v, k))  # by k ascending, then v descending
    np.testing.assert_array_equal(got_k, k[order])
    np.testing.assert_array_equal(got_v, v[order])


def test_comparator_that_is_not_a_strict_order_does_not_crash():
    # LE makes every element "less" than its equals; any permutation is a
    # valid answer, but the evaluator must return one, not fail.
    x = np.tile(np.arange(5, dtype=np.int32), 40)
    got = sort(x, 0, direction="LE", stable=False)
    np.testing.assert_array_equal(np.sort(got), np.sort(x))


def test_empty_and_single_element_sorts():
    assert sort(np.zeros((0, 3), np.float32), 0).shape == (0, 3)
    assert sort(np.zeros((4, 0), np.float32), 1).shape == (4, 0)
    np.testing.assert_array_equal(sort(np.array([5.0], np.float32), 0), [5.0])
