"""The evaluator's scan against NumPy models of XLA's definition: step t
calls to_apply(slice t of each input..., carries...) -> (outputs...,
carries...), outputs are stacked at t along the scan dimension, a reverse
scan runs t from the end, and the result is (stacked outputs..., final
carries...)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

ADD_CARRY = """
add {
  x = s32[%(row)s] parameter(0)
  c = s32[%(row)s] parameter(1)
  s = s32[%(row)s] add(c, x)
  ROOT t = (s32[%(row)s], s32[%(row)s]) tuple(s, s)
}
"""


def cumulative_sum_module(shape: tuple[int, ...], dim: int, reverse: bool) -> str:
    row = list(shape)
    del row[dim]
    dims = ",".join(map(str, row))
    full = ",".join(map(str, shape))
    flags = ", is_reverse=true" if reverse else ""
    return (ADD_CARRY % {"row": dims}) + (
        f"ENTRY e {{\n  x = s32[{full}] parameter(0)\n  z = s32[{dims}] parameter(1)\n"
        f"  ROOT s = (s32[{full}], s32[{dims}]) scan(x, z), dimensions={{{dim}}}, num_carries=1, "
        f"to_apply=add{flags}\n}}"
    )


def model_cumulative_sum(x: np.ndarray, z: np.ndarray, dim: int, reverse: bool):
    """The stacked running sums (s32 wraps) and the final carry."""
    moved = np.moveaxis(x, dim, 0).astype(np.int64)
    if moved.shape[0] == 0:
        return x.copy(), z.copy()
    order = slice(None, None, -1) if reverse else slice(None)
    sums = (np.cumsum(moved[order], axis=0) + z)[order]
    final = sums[0] if reverse else sums[-1]
    return np.moveaxis(sums, 0, dim).astype(np.int32), final.astype(np.int32)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
    data=st.data(),
    reverse=st.booleans(),
)
def test_scan_is_a_cumulative_fold_along_its_dimension(shape, data, reverse):
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32)
    row = tuple(s for i, s in enumerate(shape) if i != dim)
    z = rng.integers(-100, 100, row).astype(np.int32)
    module = uir.hlo.parse_module(cumulative_sum_module(shape, dim, reverse))
    module.verify()
    got_stacked, got_final = uir.evaluate(module, x, z)
    want_stacked, want_final = model_cumulative_sum(x, z, dim, reverse)
    np.testing.assert_array_equal(got_stacked, want_stacked)
    np.testing.assert_array_equal(got_final, want_final)


def test_scan_with_two_inputs_two_carries_and_outputs_of_other_types():
    # Carries: the running maximum of x's rows and the count of y's
    # positives; outputs: the maximum so far, and whether y was positive.
    text = """
step {
  x = f32[2] parameter(0)
  y = s32[] parameter(1)
  m = f32[2] parameter(2)
  n = s32[] parameter(3)
  m2 = f32[2] maximum(m, x)
  zero = s32[] constant(0)
  pos = pred[] compare(y, zero), direction=GT
  one = s32[] constant(1)
  inc = s32[] select(pos, one, zero)
  n2 = s32[] add(n, inc)
  ROOT t = (f32[2], pred[], f32[2], s32[]) tuple(m2, pos, m2, n2)
}
ENTRY e {
  x = f32[6,2] parameter(0)
  y = s32[6] parameter(1)
  m = f32[2] constant({-inf, -inf})
  n = s32[] constant(0)
  ROOT s = (f32[6,2], pred[6], f32[2], s32[]) scan(x, y, m, n), dimensions={0}, num_carries=2,
    to_apply=step
}"""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 2)).astype(np.float32)
    y = rng.integers(-3, 4, 6).astype(np.int32)
    module = uir.hlo.parse_module(text)
    module.verify()
    maxes, positive, final_max, count = uir.evaluate(module, x, y)
    np.testing.assert_array_equal(maxes, np.maximum.accumulate(x, axis=0))
    np.testing.assert_array_equal(positive, y > 0)
    np.testing.assert_array_equal(final_max, x.max(axis=0))
    assert count == np.count_nonzero(y > 0)


def test_scan_without_inputs_takes_its_length_from_an_output():
    # A counter: the carry is emitted, then incremented (reverse fills from
    # the end).
    text = """
count {
  c = s32[] parameter(0)
  one = s32[] constant(1)
  n = s32[] add(c, one)
  ROOT t = (s32[], s32[]) tuple(c, n)
}
ENTRY e {
  z = s32[] parameter(0)
  ROOT s = (s32[5], s32[]) scan(z), dimensions={0}, num_carries=1, to_apply=count%s
}"""
    for reverse, want in ((False, [10, 11, 12, 13, 14]), (True, [14, 13, 12, 11, 10])):
        module = uir.hlo.parse_module(text % (", is_reverse=true" if reverse else ""))
        module.verify()
        stacked, final = uir.evaluate(module, np.int32(10))
        np.testing.assert_array_equal(stacked, want)
        assert final == 15


def test_scan_with_one_output_and_no_carry_returns_the_array_itself():
    text = """
double {
  x = f32[4] parameter(0)
  ROOT d = f32[4] add(x, x)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  ROOT s = f32[4,3] scan(x), dimensions={1}, num_carries=0, to_apply=double
}"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    module = uir.hlo.parse_module(text)
    module.verify()
    np.testing.assert_array_equal(uir.evaluate(module, x), 2 * x)


@pytest.mark.parametrize(
    "result,root,phrase",
    [
        ("(s32[4], s32[], s32[])", "(s32[], s32[])", "one value per result"),
        ("(s32[5], s32[])", "(s32[], s32[])", "length of the scan dimension"),
        ("(s32[4], f32[])", "(s32[], s32[])", "result 1"),
    ],
)
def test_scan_results_must_match_to_apply(result, root, phrase):
    text = f"""
body {{
  x = s32[] parameter(0)
  c = s32[] parameter(1)
  ROOT t = {root} tuple(x, c)
}}
ENTRY e {{
  x = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT s = {result} scan(x, z), dimensions={{0}}, num_carries=1, to_apply=body
}}"""
    with pytest.raises(uir.VerifyError) as e:
        uir.hlo.parse_module(text).verify()
    assert "%s" in str(e.value) and phrase in str(e.value)


def test_scan_over_a_dynamic_dimension_runs_its_actual_length():
    text = """
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(c, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  x = f32[<=6] parameter(0)
  y = f32[<=6] parameter(1)
  z = f32[] constant(0)
  s = (f32[<=6], f32[]) scan(x, z), dimensions={0}, num_carries=1, to_apply=add
  two = (f32[<=6], f32[]) scan(y, z), dimensions={0}, num_carries=1, to_apply=add
  ROOT t = ((f32[<=6], f32[]), (f32[<=6], f32[])) tuple(s, two)
}"""
    x = np.float32([1, 2, 3, 4])
    (stacked, total), (ys, ytotal) = uir.evaluate(uir.hlo.parse_module(text), x, x[:2])
    np.testing.assert_array_equal(stacked, np.cumsum(x))
    assert total == 10 and ytotal == 3
    np.testing.assert_array_equal(ys, [1, 3])


def test_scan_of_empty_slices_copies_nothing():
    # Each step's slice is s32[0]: nothing to copy (found under UBSan).
    module = uir.hlo.parse_module(cumulative_sum_module((3, 0), 0, False))
    stacked, final = uir.evaluate(module, np.zeros((3, 0), np.int32), np.zeros(0, np.int32))
    assert stacked.shape == (3, 0) and final.shape == (0,)
