"""The evaluator's data-movement, reduction, dot and control-flow ops against
NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from eval_util import hlo_type
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import uir

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"


def run(body: str, *arrays, comps: str = ""):
    params = "\n".join(f"  p{i} = {hlo_type(a)} parameter({i})" for i, a in enumerate(arrays))
    module = uir.hlo.parse_module(f"{comps}ENTRY e {{\n{params}\n{body}\n}}")
    module.verify()
    return uir.evaluate(module, *arrays)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_transpose():
    np.testing.assert_array_equal(
        run("  ROOT r = f32[4,2,3] transpose(p0), dimensions={2,0,1}", X), X.transpose(2, 0, 1)
    )


def test_broadcast_including_size_one_stretch():
    v = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(
        run("  ROOT r = f32[2,3] broadcast(p0), dimensions={1}", v), np.broadcast_to(v, (2, 3))
    )
    one = np.array([5.0], np.float32)
    np.testing.assert_array_equal(
        run("  ROOT r = f32[3] broadcast(p0), dimensions={0}", one), [5, 5, 5]
    )
    s = np.array(7.0, np.float32)
    np.testing.assert_array_equal(
        run("  ROOT r = f32[2,2] broadcast(p0), dimensions={}", s), np.full((2, 2), 7)
    )


def test_reshape_and_bitcast_convert():
    np.testing.assert_array_equal(run("  ROOT r = f32[6,4] reshape(p0)", X), X.reshape(6, 4))
    f = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(
        run("  ROOT r = u32[2] bitcast-convert(p0)", f), f.view(np.uint32)
    )


def test_slice_with_strides():
    np.testing.assert_array_equal(
        run("  ROOT r = f32[1,2,2] slice(p0), slice={[1:2], [0:3:2], [1:4:2]}", X),
        X[1:2, 0:3:2, 1:4:2],
    )


def test_concatenate():
    a = np.ones((2, 2), np.float32)
    b = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(
        run("  ROOT r = f32[2,5] concatenate(p0, p1), dimensions={1}", a, b),
        np.concatenate([a, b], 1),
    )


def test_pad_with_negative_and_interior_padding():
    x = np.arange(1, 5, dtype=np.float32)
    got = run("  z = f32[] constant(0)\n  ROOT r = f32[8] pad(p0, z), padding=-1_2_1", x)
    # interior 1: 1 0 2 0 3 0 4; low -1 drops the 1; high 2 appends two zeros.
    np.testing.assert_array_equal(got, [0, 2, 0, 3, 0, 4, 0, 0])


def test_reverse_and_iota():
    np.testing.assert_array_equal(
        run("  ROOT r = f32[2,3,4] reverse(p0), dimensions={0,2}", X), X[::-1, :, ::-1]
    )
    got = run(
        "  ROOT r = s32[2,3] iota(), dimensions={}".replace(", dimensions={}", ", iota_dimension=1")
    )
    np.testing.assert_array_equal(got, [[0, 1, 2], [0, 1, 2]])


def test_dynamic_slice_clamps_start_indices():
    x = np.arange(10, dtype=np.int32)
    for start, want in [(2, [2, 3, 4]), (8, [7, 8, 9]), (-5, [0, 1, 2])]:
        got = run(
            "  ROOT r = s32[3] dynamic-slice(p0, p1), dynamic_slice_sizes={3}",
            x,
            np.array(start, np.int32),
        )
        np.testing.assert_array_equal(got, want)


def test_dynamic_update_slice_clamps_start_indices():
    x = np.zeros(6, np.float32)
    u = np.ones(2, np.float32)
    got = run("  ROOT r = f32[6] dynamic-update-slice(p0, p1, p2)", x, u, np.array(100, np.int64))
    np.testing.assert_array_equal(got, [0, 0, 0, 0, 1, 1])


@pytest.mark.parametrize("dims", [[0], [1], [2], [0, 2], [0, 1, 2], []])
def test_reduce_sum_matches_numpy(dims):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    out_shape = [d for i, d in enumerate(x.shape) if i not in dims]
    got = run(
        f"  z = f32[] constant(0)\n  ROOT r = f32[{','.join(map(str, out_shape))}] reduce(p0, z), dimensions={{{','.join(map(str, dims))}}}, to_apply=add",
        x,
        comps=ADD,
    )
    np.testing.assert_allclose(got, x.sum(axis=tuple(dims)), rtol=1e-5, atol=1e-5)


def test_reduce_max_propagates_nan_and_handles_empty():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], np.float32)
    maxc = "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
    got = run(
        "  z = f32[] constant(-inf)\n  ROOT r = f32[2] reduce(p0, z), dimensions={1}, to_apply=mx",
        x,
        comps=maxc,
    )
    np.testing.assert_array_equal(got, [np.nan, 5.0])
    e = np.zeros((0, 3), np.float32)
    got = run(
        "  z = f32[] constant(-inf)\n  ROOT r = f32[3] reduce(p0, z), dimensions={0}, to_apply=mx",
        e,
        comps=maxc,
    )
    np.testing.assert_array_equal(got, [-np.inf] * 3)


def test_variadic_reduce_is_argmax():
    comps = (
        "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(av, bv), direction=GE\n  v = f32[] select(gt, av, bv)\n  i = s32[] select(gt, ai, bi)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
    )
    x = np.array([[3, 9, 1], [7, 2, 8]], np.float32)
    idx = np.array([[0, 1, 2], [0, 1, 2]], np.int32)
    v, i = run(
        "  zv = f32[] constant(-inf)\n  zi = s32[] constant(-1)\n"
        "  ROOT r = (f32[2], s32[2]) reduce(p0, p1, zv, zi), dimensions={1}, to_apply=argmax",
        x,
        idx,
        comps=comps,
    )
    np.testing.assert_array_equal(v, [9, 8])
    np.testing.assert_array_equal(i, [1, 2])


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("outputs", [3, 12])
def test_variadic_reduce_over_many_outputs_matches_numpy_argmax(axis, outputs):
    # With many outputs the reducer runs once per step over all of them
    # ("lifted"); with few, once per element. Both must give NumPy's answer.
    comps = (
        "argmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  gt = pred[] compare(av, bv), direction=GE\n  v = f32[] select(gt, av, bv)\n  i = s32[] select(gt, ai, bi)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
    )
    rng = np.random.default_rng(axis)
    x = rng.integers(0, 6, (40, outputs)).astype(np.float32)
    x = x if axis == 0 else x.T.copy()
    idx = np.broadcast_to(
        np.arange(x.shape[axis], dtype=np.int32).reshape((-1, 1) if axis == 0 else (1, -1)), x.shape
    ).copy()
    n = x.shape[1 - axis]
    v, i = run(
        "  zv = f32[] constant(-inf)\n  zi = s32[] constant(-1)\n"
        f"  ROOT r = (f32[{n}], s32[{n}]) reduce(p0, p1, zv, zi), dimensions={{{axis}}}, to_apply=argmax",
        x,
        idx,
        comps=comps,
    )
    np.testing.assert_array_equal(i, np.argmax(x, axis=axis))
    np.testing.assert_array_equal(v, np.max(x, axis=axis))


def test_integer_reduce_wraps():
    comps = (
        "addi {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n  ROOT s = s8[] add(a, b)\n}\n"
    )
    x = np.array([100, 100, 100], np.int8)
    got = run(
        "  z = s8[] constant(0)\n  ROOT r = s8[] reduce(p0, z), dimensions={0}, to_apply=addi",
        x,
        comps=comps,
    )
    assert got == np.int8(44)  # 300 wraps to 44


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4), st.integers(0, 3))
def test_dot_matches_numpy_with_batch_dims(b, m, k, n):
    rng = np.random.default_rng(b * 100 + m * 10 + k)
    x = rng.standard_normal((b, m, k)).astype(np.float32)
    y = rng.standard_normal((b, k, n)).astype(np.float32)
    got = run(
        f"  ROOT r = f32[{b},{m},{n}] dot(p0, p1), lhs_batch_dims={{0}}, rhs_batch_dims={{0}}, "
        "lhs_contracting_dims={2}, rhs_contracting_dims={1}",
        x,
        y,
    )
    np.testing.assert_allclose(got, x @ y, rtol=1e-5, atol=1e-5)


def test_integer_dot_and_outer_product():
    x = np.array([1, 2, 3], np.int32)
    y = np.array([4, 5], np.int32)
    np.testing.assert_array_equal(run("  ROOT r = s32[3,2] dot(p0, p1)", x, y), np.outer(x, y))


def test_while_loop_counts_to_ten():
    comps = (
        "cond {\n  s = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
        "  ten = s32[] constant(10)\n  ROOT lt = pred[] compare(i, ten), direction=LT\n}\n"
        "body {\n  s = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
        "  x = f32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  two = f32[] constant(2)\n"
        "  i2 = s32[] add(i, one)\n  x2 = f32[] multiply(x, two)\n  ROOT t = (s32[], f32[]) tuple(i2, x2)\n}\n"
    )
    got = run(
        "  zero = s32[] constant(0)\n  t = (s32[], f32[]) tuple(zero, p0)\n"
        "  w = (s32[], f32[]) while(t), condition=cond, body=body\n  ROOT r = f32[] get-tuple-element(w), index=1",
        np.array(1.5, np.float32),
        comps=comps,
    )
    assert got == np.float32(1.5 * 1024)


@pytest.mark.parametrize(("index", "want"), [(0, 3.0), (1, -3.0), (7, -3.0), (-1, -3.0)])
def test_conditional_with_branch_index_out_of_range_runs_the_last_branch(index, want):
    comps = (
        "b0 {\n  a = f32[] parameter(0)\n  ROOT n = f32[] abs(a)\n}\n"
        "b1 {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
    )
    got = run(
        "  ROOT c = f32[] conditional(p0, p1, p1), branch_computations={b0, b1}",
        np.array(index, np.int32),
        np.array(3.0, np.float32),
        comps=comps,
    )
    assert got == np.float32(want)


def test_call_fusion_map_and_async():
    comps = (
        "sq {\n  a = f32[] parameter(0)\n  ROOT m = f32[] multiply(a, a)\n}\n"
        "fused {\n  a = f32[3] parameter(0)\n  ROOT n = f32[3] negate(a)\n}\n"
    )
    x = np.array([1.0, -2.0, 3.0], np.float32)
    got = run(
        "  m = f32[3] map(p0), dimensions={0}, to_apply=sq\n"
        "  f = f32[3] fusion(m), kind=kLoop, calls=fused\n"
        "  s = ((f32[3]), f32[3]) exponential-start(f)\n"
        "  d = f32[3] exponential-done(s)\n"
        "  ROOT c = f32[3] call(d), to_apply=fused",
        x,
        comps=comps,
    )
    np.testing.assert_allclose(got, -np.exp(-(x * x)), rtol=1e-6)


def test_tuples_pass_through():
    a = np.array([1, 2], np.int32)
    b = np.array(True)
    out = run(
        "  t = (s32[2], pred[]) tuple(p0, p1)\n  ROOT r = ((s32[2], pred[]), s32[2]) tuple(t, p0)",
        a,
        b,
    )
    (x, y), z = out
    np.testing.assert_array_equal(x, a)
    assert y == np.True_
    np.testing.assert_array_equal(z, a)


@settings(max_examples=30, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=1, max_dims=4, max_side=4),
        elements=st.floats(-10, 10, width=32),
    )
)
def test_transpose_reverse_random(x):
    perm = list(range(x.ndim))[::-1]
    got = run(
        f"  ROOT r = f32[{','.join(str(x.shape[p]) for p in perm)}] transpose(p0), dimensions={{{','.join(map(str, perm))}}}",
        x,
    )
    np.testing.assert_array_equal(got, x.transpose(perm))


LOOP_UPDATES = """
cond {
  s = (s32[], f32[50]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(20)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[50]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[50] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[] convert(j)
  u = f32[1] reshape(v)
  y = f32[50] dynamic-update-slice(x, u, i)
  ROOT t = (s32[], f32[50]) tuple(j, y)
}
ENTRY e {
  x = f32[50] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[50]) tuple(z, x)
  w = (s32[], f32[50]) while(t), condition=cond, body=body
  r = f32[50] get-tuple-element(w), index=1
  ROOT both = (f32[50], f32[50]) tuple(r, x)
}
"""


def test_loop_state_updated_in_place_never_touches_inputs_or_other_readers():
    # The loop's array is updated in place once the evaluator owns it; the
    # caller's array, and `x` read again after the loop, keep their values.
    x = np.arange(50, dtype=np.float32) * -1
    before = x.copy()
    r, again = uir.evaluate(uir.hlo.parse_module(LOOP_UPDATES), x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(again, before)
    want = before.copy()
    want[:20] = np.arange(1, 21)
    np.testing.assert_array_equal(r, want)


def test_update_of_an_array_read_later_leaves_the_later_reader_its_value():
    x = np.arange(4, dtype=np.int32)
    got = run(
        "  one = s32[1] constant({100})\n  at = s32[] constant(2)\n"
        "  y = s32[4] dynamic-update-slice(p0, one, at)\n"
        "  y2 = s32[4] dynamic-update-slice(y, one, at)\n"
        "  ROOT r = s32[4] add(y2, y)",
        x,
    )
    np.testing.assert_array_equal(got, [0, 2, 200, 6])


def test_bitcast_convert_packs_and_unpacks_sub_byte_integers():
    import ml_dtypes

    rng = np.random.default_rng(0)
    nibbles = rng.integers(-8, 8, (8, 2)).astype(ml_dtypes.int4)
    packed = uir.evaluate(
        uir.hlo.parse_module(
            "ENTRY e {\n  a = s4[8,2] parameter(0)\n  ROOT b = s8[8] bitcast-convert(a)\n}"
        ),
        nibbles,
    )
    low = nibbles[:, 0].astype(np.int8) & 0xF
    high = nibbles[:, 1].astype(np.int8) & 0xF
    np.testing.assert_array_equal(packed, (low | (high << 4)).astype(np.uint8).view(np.int8))
    back = uir.evaluate(
        uir.hlo.parse_module(
            "ENTRY e {\n  a = s8[8] parameter(0)\n  ROOT b = s4[8,2] bitcast-convert(a)\n}"
        ),
        packed,
    )
    assert back.dtype == ml_dtypes.int4
    np.testing.assert_array_equal(back, nibbles)


PASS_THROUGH = """
wrapped {
  a = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(a)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  tok = token[] after-all()
  dep = f32[2,3] add-dependency(x, tok)
  bar = (f32[2,3], token[]) opt-barrier((f32[2,3], token[]) tuple(dep, tok))
  y = f32[2,3] get-tuple-element(bar), index=0
  flat = f32[6] bitcast(y)
  two = s32[] constant(2)
  three = s32[] constant(3)
  back = f32[2,3] dynamic-reshape(flat, two, three)
  start = ((f32[2,3]), f32[2,3], s32[]) async-start(back), calls=wrapped
  update = ((f32[2,3]), f32[2,3], s32[]) async-update(start)
  done = f32[2,3] async-done(update)
  state = u64[2] rng-get-and-update-state(), delta=16
  state2 = u64[2] rng-get-and-update-state(), delta=1
  ROOT r = (f32[2,3], u64[2], u64[2]) tuple(done, state, state2)
}
"""


def test_tokens_barriers_bitcasts_and_async_chains_pass_values_along():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, state, state2 = uir.evaluate(uir.hlo.parse_module(PASS_THROUGH), x, seed=5)
    np.testing.assert_array_equal(got, -x)
    assert state.tolist() == [5, 0] and state2.tolist() == [5, 16]


def test_domain_passes_its_operand_through():
    m = uir.hlo.parse_module(
        "ENTRY e {\n  x = f32[2] parameter(0)\n"
        '  ROOT d = f32[2] domain(x), domain={kind="sharding", entry={maximal device=1}, exit={replicated}}\n}'
    )
    np.testing.assert_array_equal(uir.evaluate(m, np.array([1, -2], np.float32)), [1, -2])
