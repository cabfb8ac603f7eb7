"""Compiled code agrees with the evaluator where it once did not: layouts
of loop state and async copies, packed sub-byte types, arguments in any
byte order or stride, signed zeros, ops written in their short forms, and a
pipeline check that knows NaN equals NaN."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir


def _same(got, want):
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _compiled_like_evaluator(text: str, *args):
    m = uir.hlo.parse_module(text)
    want = uir.evaluate(m, *args)
    got = uir.compile(m, backend="cpu")(*args)
    _same(got, want)
    return got


TRANSPOSED_LOOP = """HloModule transposed_state
body {
  st = (s32[], f32[8,8]{L}) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  v = f32[8,8]{L} get-tuple-element(st), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  t = f32[8,8]{L} transpose(v), dimensions={1,0}
  n = f32[8,8]{L} negate(t)
  ROOT r = (s32[], f32[8,8]{L}) tuple(j, n)
}
cond {
  st = (s32[], f32[8,8]{L}) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  x = f32[8,8]{L} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[8,8]{L}) tuple(zero, x)
  w = (s32[], f32[8,8]{L}) while(t), condition=cond, body=body
  ROOT o = f32[8,8]{L} get-tuple-element(w), index=1
}
"""


@pytest.mark.parametrize("layout", ["0,1", "1,0"])
def test_transposed_loop_state_is_not_written_while_read_transposed(layout):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    got = _compiled_like_evaluator(TRANSPOSED_LOOP.replace("{L}", "{" + layout + "}"), x)
    np.testing.assert_array_equal(got, -x.T)


def test_a_transpose_in_a_fusion_never_shares_its_operands_buffer():
    text = """HloModule m
ENTRY e {
  x = f32[8,8]{1,0} parameter(0)
  c = f32[8,8]{0,1} copy(x)
  t = f32[8,8]{0,1} transpose(c), dimensions={1,0}
  n = f32[8,8]{0,1} negate(t)
  ROOT o = f32[8,8]{1,0} copy(n)
}
"""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    got = _compiled_like_evaluator(text, x)
    np.testing.assert_array_equal(got, -x.T)


@pytest.mark.parametrize("src,dst", [("0,1", "1,0"), ("1,0", "0,1"), ("1,0", "1,0")])
def test_copy_start_and_done_honour_layouts(src, dst):
    text = f"""HloModule m
ENTRY e {{
  x = f32[4,6]{{{src}}} parameter(0)
  s = (f32[4,6]{{{dst}}}, f32[4,6]{{{src}}}, u32[]) copy-start(x)
  ROOT d = f32[4,6]{{{dst}}} copy-done(s)
}}
"""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = _compiled_like_evaluator(text, x)
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("dtype", ["s4", "u4", "s2", "u2"])
def test_packed_sub_byte_copies_compile(dtype):
    text = f"""HloModule m
ENTRY e {{
  x = {dtype}[100,9]{{1,0:E({dtype[1:]})}} parameter(0)
  ROOT c = {dtype}[100,9]{{1,0:E({dtype[1:]})}} copy(x)
}}
"""
    np_dtype = {
        "s4": ml_dtypes.int4,
        "u4": ml_dtypes.uint4,
        "s2": ml_dtypes.int2,
        "u2": ml_dtypes.uint2,
    }[dtype]
    x = (np.arange(900) % 3).reshape(100, 9).astype(np_dtype)
    got = _compiled_like_evaluator(text, x)
    np.testing.assert_array_equal(got.astype(np.int8), x.astype(np.int8))


def test_packed_sub_byte_arithmetic_compiles():
    text = """HloModule m
ENTRY e {
  x = s4[33]{0:E(4)} parameter(0)
  y = s4[33]{0:E(4)} parameter(1)
  a = s4[33]{0:E(4)} add(x, y)
  ROOT t = (s4[33]{0:E(4)}, s4[33]{0:E(4)}) tuple(a, x)
}
"""
    x = (np.arange(33) % 7 - 3).astype(ml_dtypes.int4)
    y = (np.arange(33) % 5 - 2).astype(ml_dtypes.int4)
    _compiled_like_evaluator(text, x, y)


ADD = """HloModule m
ENTRY e {
  x = f32[5,7] parameter(0)
  ROOT a = f32[5,7] add(x, x)
}
"""


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.astype(">f4"),
        lambda x: np.asfortranarray(x),
        lambda x: np.repeat(x, 2, axis=1)[:, ::2],
        lambda x: x.T.copy().T,
        lambda x: np.frombuffer(b"\0" + x.tobytes(), dtype=np.float32, offset=1).reshape(5, 7),
    ],
    ids=["big_endian", "fortran", "strided", "transposed_view", "unaligned"],
)
def test_arguments_of_any_byte_order_and_stride_are_read_as_their_values(make):
    x = np.arange(35, dtype=np.float32).reshape(5, 7) - 17.5
    arg = make(x)
    np.testing.assert_array_equal(arg, x)
    m = uir.hlo.parse_module(ADD)
    np.testing.assert_array_equal(uir.evaluate(m, arg), 2 * x)
    np.testing.assert_array_equal(uir.compile(m, backend="cpu")(arg), 2 * x)
    np.testing.assert_array_equal(uir.jit(lambda v: v + v)(arg), 2 * x)


def test_a_big_endian_argument_is_left_as_it_was():
    x = np.arange(8, dtype=">f4")
    before = x.tobytes()
    m = uir.hlo.parse_module(
        "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT n = f32[8] negate(x)\n}\n"
    )
    np.testing.assert_array_equal(uir.compile(m, backend="cpu")(x), -np.arange(8, dtype=np.float32))
    assert x.tobytes() == before and x.dtype == np.dtype(">f4")


@pytest.mark.parametrize(
    "op", ["exponential-minus-one", "log-plus-one", "tanh", "sine", "tan", "sqrt", "cbrt", "negate"]
)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_signed_zeros_keep_their_sign_compiled(op, dtype):
    text = f"""HloModule m
ENTRY e {{
  x = {dtype}[4] parameter(0)
  ROOT y = {dtype}[4] {op}(x)
}}
"""
    x = np.array([-0.0, 0.0, -0.0, 0.0], dtype=np.float32 if dtype == "f32" else np.float64)
    _compiled_like_evaluator(text, x)


def test_a_scalar_broadcast_without_dimensions_compiles():
    text = """HloModule m
ENTRY e {
  c = f32[] parameter(0)
  b = f32[3,4] broadcast(c)
  ROOT a = f32[3,4] add(b, b)
}
"""
    got = _compiled_like_evaluator(text, np.float32(1.5))
    np.testing.assert_array_equal(got, np.full((3, 4), 3.0, np.float32))


@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32"])
def test_the_pipeline_check_takes_nan_for_nan(dtype):
    text = f"""HloModule m
ENTRY e {{
  x = {dtype}[6] parameter(0)
  z = {dtype}[6] subtract(x, x)
  q = {dtype}[6] divide(z, z)
  ROOT a = {dtype}[6] add(q, x)
}}
"""
    m = uir.hlo.parse_module(text)
    uir.passes.default_pipeline().run(m, check=True)


def test_a_copy_done_declared_in_another_layout_relays_out():
    # Found by the compile fuzzer: the start copies in one layout, the done
    # declares another; the values must come through, not the bytes.
    text = """HloModule m, entry_computation_layout={(f32[12,5]{1,0})->f32[12,5]{1,0}}
ENTRY e {
  x = f32[12,5]{1,0} parameter(0)
  s = (f32[12,5]{1,0}, f32[12,5]{1,0}, u32[]) copy-start(x)
  ROOT d = f32[12,5]{0,1} copy-done(s)
}
"""
    x = np.arange(60, dtype=np.float32).reshape(12, 5)
    got = _compiled_like_evaluator(text, x)
    np.testing.assert_array_equal(got, x)
    uir.passes.default_pipeline().run(uir.hlo.parse_module(text), check=True)


def test_a_bitcast_of_a_parameter_reads_the_layout_it_declares():
    # Found by the compile fuzzer: the entry layout differs from the one the
    # parameter declares; layout assignment must not change what the
    # bitcast reads.
    text = """HloModule m, entry_computation_layout={(f32[3,4]{1,0})->f32[3,4,1]{2,1,0}}
ENTRY e {
  x = f32[3,4]{0,1} parameter(0)
  ROOT b = f32[3,4,1]{2,1,0} bitcast(x)
}
"""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _compiled_like_evaluator(text, x)
    uir.passes.default_pipeline().run(uir.hlo.parse_module(text), check=True)
