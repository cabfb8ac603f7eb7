"""Shapes cross from Python into C++ as (dims, dtype) pairs and lists of
them, never as text to re-parse; each form equals the shape parsed from
the same text, and bad forms raise a clear Python error."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir

Shape = uir.hlo.Shape


@pytest.mark.parametrize(
    "dtype, text",
    [
        (np.float32, "f32"),
        (np.dtype(np.int8), "s8"),
        ("f16", "f16"),
        ("float64", "f64"),
        (np.bool_, "pred"),
        (bool, "pred"),
        (np.complex64, "c64"),
        (ml_dtypes.bfloat16, "bf16"),
        (np.dtype(ml_dtypes.float8_e4m3fn), "f8e4m3fn"),
        (np.uint32, "u32"),
    ],
)
def test_array_shape_from_dims_and_dtype(dtype, text):
    for dims in [(), (3,), (2, 0, 5)]:
        want = Shape(f"{text}[{','.join(map(str, dims))}]")
        got = Shape(dims, dtype)
        assert got == want
        assert got.dims == dims
        assert got.element_type == text


def test_dims_take_any_integer_sequence():
    assert Shape([np.int64(2), 3], "f32") == Shape("f32[2,3]")
    assert Shape(range(3), np.float32) == Shape("f32[0,1,2]")


def test_tuple_shape_from_a_list_of_shapes():
    got = Shape.tuple([((2,), np.float32), "s32[]", [((), np.bool_)], Shape("f64[1]")])
    assert got == Shape("(f32[2], s32[], (pred[]), f64[1])")
    assert Shape.tuple([]) == Shape("()")


@pytest.mark.parametrize(
    "dims, dtype, error, message",
    [
        ((2, -1), np.float32, ValueError, "negative dimension -1"),
        ((2,), "f33", TypeError, "'f33' names no HLO element type"),
        ((2,), np.dtype("U3"), TypeError, "dtype <U3 has no HLO element type"),
        ((2,), object, TypeError, "dtype object has no HLO element type"),
    ],
)
def test_bad_shapes_raise(dims, dtype, error, message):
    with pytest.raises(error, match=message):
        Shape(dims, dtype)


def test_builder_takes_dims_and_dtype():
    mb = uir.hlo.ModuleBuilder("m")
    main = mb.computation("main")
    p = main.parameter(0, ((2, 3), np.float32), name="p")
    q = main.parameter(1, [((3,), "s32"), ((), np.bool_)], name="q")
    i = main.op("get-tuple-element", q, index=0)
    c = main.op("convert", i, shape=((3,), np.float32))
    b = main.op("broadcast", c, dimensions=[1], shape=((2, 3), np.float32))
    m = mb.build(main.build(main.op("add", p, b)))
    assert "%q = (s32[3]{0}, pred[]) parameter(1)" in m.to_text()
    got = uir.evaluate(
        m, np.ones((2, 3), np.float32), (np.arange(3, dtype=np.int32), np.array(True))
    )
    np.testing.assert_array_equal(got, 1 + np.arange(3, dtype=np.float32)[None, :].repeat(2, 0))


def test_builder_checks_the_given_shape_against_inference():
    mb = uir.hlo.ModuleBuilder("m")
    main = mb.computation("main")
    p = main.parameter(0, ((2, 3), np.float32))
    with pytest.raises(Exception, match=r"differs from the inferred f32\[2,3\]"):
        main.op("negate", p, shape=((3, 2), np.float32))


def test_a_shape_that_is_no_shape_is_a_type_error():
    mb = uir.hlo.ModuleBuilder("m")
    main = mb.computation("main")
    with pytest.raises(TypeError, match=r"a shape is an hlo\.Shape"):
        main.parameter(0, 3.5)
