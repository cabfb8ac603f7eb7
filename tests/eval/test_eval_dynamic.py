"""Dynamic dimensions in the evaluator, against NumPy models of what XLA's
dynamic padder arranges: a bounded dimension (`<=N`) holds an actual size,
get-dimension-size reads it, and reduce, dot, concatenate and pad read only
the valid entries (the padding, which XLA leaves unspecified, never shows)."""

from __future__ import annotations

import numpy as np
import pytest
from corpus import CORPUS, needs_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

ADD = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"


def run(text: str, *args):
    module = uir.hlo.parse_module(text)
    module.verify()
    return uir.evaluate(module, *args)


def test_reduce_of_a_set_dimension_size_folds_the_valid_entries_only():
    # The example XLA:CPU and uir once disagreed on: 15, not 55.
    text = ADD + (
        "ENTRY e { v = f32[10] parameter(0)  n = s32[] parameter(1)\n"
        "  d = f32[<=10] set-dimension-size(v, n), dimensions={0}\n"
        "  z = f32[] constant(0)\n"
        "  r = f32[] reduce(d, z), dimensions={0}, to_apply=add\n"
        "  g = s32[] get-dimension-size(d), dimensions={0}\n"
        "  ROOT t = (f32[], s32[], f32[<=10]) tuple(r, g, d) }"
    )
    v = np.arange(1, 11, dtype=np.float32)
    total, size, d = run(text, v, np.int32(5))
    assert total == 15 and size == 5
    np.testing.assert_array_equal(d, v[:5])  # a dynamic result comes back at its size


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(0, 6),
    cols=st.integers(0, 4),
    reduced=st.sampled_from(["0", "1", "0,1"]),
    seed=st.integers(0, 2**31),
)
def test_reduce_over_dynamic_dimensions_matches_numpy_on_the_valid_region(
    rows, cols, reduced, seed
):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (6, 4)).astype(np.float32)  # integers: exact sums
    axes = tuple(int(a) for a in reduced.split(","))
    kept = [f"<={b}" for i, b in enumerate((6, 4)) if i not in axes]
    text = ADD + (
        "ENTRY e { x = f32[6,4] parameter(0)  r = s32[] parameter(1)  c = s32[] parameter(2)\n"
        "  a = f32[<=6,4] set-dimension-size(x, r), dimensions={0}\n"
        "  b = f32[<=6,<=4] set-dimension-size(a, c), dimensions={1}\n"
        "  z = f32[] constant(0)\n"
        f"  ROOT s = f32[{','.join(kept)}] reduce(b, z), dimensions={{{reduced}}}, to_apply=add }}"
    )
    got = run(text, x, np.int32(rows), np.int32(cols))
    np.testing.assert_array_equal(got, x[:rows, :cols].sum(axis=axes))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 5), m=st.integers(0, 3), seed=st.integers(0, 2**31))
def test_concatenate_joins_the_valid_entries_contiguously(n, m, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 2)).astype(np.float32)
    b = rng.standard_normal((m, 2)).astype(np.float32)
    c = rng.standard_normal((4, 2)).astype(np.float32)
    text = (
        "ENTRY e { a = f32[<=5,2] parameter(0)  b = f32[<=3,2] parameter(1)  c = f32[4,2] parameter(2)\n"
        "  j = f32[<=12,2] concatenate(a, c, b), dimensions={0}\n"
        "  g = s32[] get-dimension-size(j), dimensions={0}\n"
        "  ROOT t = (f32[<=12,2], s32[]) tuple(j, g) }"
    )
    joined, size = run(text, a, b, c)
    np.testing.assert_array_equal(joined, np.concatenate([a, c, b]))
    assert size == n + m + 4


def test_concatenate_along_a_static_dimension_keeps_the_shared_dynamic_size():
    a = np.arange(6, dtype=np.int32).reshape(3, 2)
    b = np.arange(9, dtype=np.int32).reshape(3, 3) + 100
    text = (
        "ENTRY e { a = s32[<=4,2] parameter(0)  b = s32[<=4,3] parameter(1)\n"
        "  ROOT j = s32[<=4,5] concatenate(a, b), dimensions={1} }"
    )
    np.testing.assert_array_equal(run(text, a, b), np.concatenate([a, b], axis=1))


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(0, 6),
    low=st.integers(-2, 3),
    high=st.integers(-2, 3),
    interior=st.integers(0, 2),
)
def test_pad_surrounds_the_valid_entries(n, low, high, interior):
    x = np.arange(1, n + 1, dtype=np.float32)
    size = low + high + n + max(n - 1, 0) * interior
    bound = low + high + 6 + 5 * interior
    if size < 0 or bound < 0:
        return  # shape inference rejects a negative size
    text = (
        "ENTRY e { x = f32[<=6] parameter(0)  p = f32[] constant(-7)\n"
        f"  ROOT r = f32[<={bound}] pad(x, p), padding={low}_{high}_{interior} }}"
    )
    # The model: interior padding first, then edges (negative edges cut).
    spaced = np.full(n + max(n - 1, 0) * interior, -7, np.float32)
    spaced[:: interior + 1] = x
    padded = np.concatenate(
        [np.full(max(low, 0), -7, np.float32), spaced, np.full(max(high, 0), -7, np.float32)]
    )
    want = padded[max(-low, 0) : len(padded) - max(-high, 0)]
    np.testing.assert_array_equal(run(text, x), want)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 4), k=st.integers(0, 5), seed=st.integers(0, 2**31))
def test_dot_contracts_only_the_valid_entries(m, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 9, (m, k)).astype(np.float32)
    b = rng.integers(-9, 9, (k, 3)).astype(np.float32)
    full = rng.integers(-9, 9, (5, 3)).astype(np.float32)
    text = (
        "ENTRY e { a = f32[<=4,<=5] parameter(0)  b = f32[<=5,3] parameter(1)\n"
        "  f = f32[5,3] parameter(2)\n"
        "  d = f32[<=4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        # A static operand meets a dynamic one: the padding reads as zero,
        # as the dynamic padder masks contracting dimensions.
        "  s = f32[<=4,3] dot(a, f), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  ROOT t = (f32[<=4,3], f32[<=4,3]) tuple(d, s) }"
    )
    dynamic, mixed = run(text, a, b, full)
    np.testing.assert_array_equal(dynamic, a @ b)
    np.testing.assert_array_equal(mixed, a @ full[:k])


@needs_corpus
def test_xla_modules_with_bounded_dimensions_run_at_an_actual_size():
    broadcast = (
        CORPUS / "xla_hlo_translate_hlo_to_mhlo_tests__import_bounded_dynamism__0.hlo"
    ).read_text()
    x = np.arange(7, dtype=np.float32).reshape(1, 1, 7)
    got = uir.evaluate(uir.hlo.parse_module(broadcast), x)
    np.testing.assert_array_equal(got, np.broadcast_to(x.reshape(1, 1, 1, 7), (1, 16, 1, 7)))
    reshape = (
        CORPUS / "xla_tools_multihost_hlo_runner_data__dynamic_shaped_arguments__0.hlo"
    ).read_text()
    y = np.arange(9, dtype=np.float32)
    np.testing.assert_array_equal(uir.evaluate(uir.hlo.parse_module(reshape), y), y)


def test_elementwise_ops_transpose_and_reshape_carry_the_dynamic_size():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    text = (
        "ENTRY e { x = f32[<=5,2] parameter(0)\n"
        "  y = f32[<=5,2] multiply(x, x)\n"
        "  t = f32[2,<=5] transpose(y), dimensions={1,0}\n"
        "  c = s32[2,<=5] convert(t)\n"
        "  ROOT r = s32[<=10] reshape(c) }"
    )
    np.testing.assert_array_equal(run(text, x), (x * x).T.astype(np.int32).reshape(-1))


def test_dynamic_reshape_takes_its_sizes_from_operands():
    text = (
        "ENTRY e { x = s32[<=12] parameter(0)  a = s32[] parameter(1)  b = s32[] parameter(2)\n"
        "  ROOT r = s32[<=4,3] dynamic-reshape(x, a, b) }"
    )
    x = np.arange(9, dtype=np.int32)
    np.testing.assert_array_equal(run(text, x, np.int32(3), np.int32(3)), x.reshape(3, 3))
    with pytest.raises(uir.ShapeError, match="9 elements to 6"):
        run(text, x, np.int32(2), np.int32(3))


@pytest.mark.parametrize(
    "text,args,error,phrase",
    [
        (
            "ENTRY e { a = f32[<=4] parameter(0)  b = f32[<=4] parameter(1)\n"
            "  ROOT s = f32[<=4] add(a, b) }",
            (np.zeros(2, np.float32), np.zeros(3, np.float32)),
            uir.ShapeError,
            "%s",
        ),
        (
            "ENTRY e { a = f32[4] parameter(0)  n = s32[] parameter(1)\n"
            "  ROOT s = f32[<=4] set-dimension-size(a, n), dimensions={0} }",
            (np.zeros(4, np.float32), np.int32(5)),
            uir.ShapeError,
            "outside its bound",
        ),
        (
            "ENTRY e { a = f32[<=4] parameter(0)  ROOT s = f32[<=4] negate(a) }",
            (np.zeros(5, np.float32),),
            ValueError,
            "<=4",
        ),
    ],
    ids=["sizes disagree", "size above the bound", "argument above the bound"],
)
def test_dynamic_sizes_that_do_not_fit_raise_a_clear_error(text, args, error, phrase):
    with pytest.raises(error, match=phrase):
        run(text, *args)
