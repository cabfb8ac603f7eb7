"""Sub-byte integers (s1, s2, s4 and the unsigned ones, one per byte as
ml_dtypes holds them) compiled against the evaluator and against their
values worked out in NumPy: arithmetic wraps in the type's width,
comparisons and conversions see the sign."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir

TYPES = {
    "s4": (ml_dtypes.int4, -8, 8),
    "u4": (ml_dtypes.uint4, 0, 16),
    "s2": (ml_dtypes.int2, -2, 2),
    "u2": (ml_dtypes.uint2, 0, 4),
}
BODIES = {
    "add": "ROOT r = {t}[37] add(a, b)",
    "multiply": "ROOT r = {t}[37] multiply(a, b)",
    "maximum": "ROOT r = {t}[37] maximum(a, b)",
    "minimum": "ROOT r = {t}[37] minimum(a, b)",
    "xor": "ROOT r = {t}[37] xor(a, b)",
    "negate": "ROOT r = {t}[37] negate(a)",
    "divide": "ROOT r = {t}[37] divide(a, b)",
    "remainder": "ROOT r = {t}[37] remainder(a, b)",
    "to_s32": "ROOT r = s32[37] convert(a)",
    "from_s32": "c = s32[37] convert(a)\n  c2 = s32[37] multiply(c, c)\n  ROOT r = {t}[37] convert(c2)",
    "compare": "ROOT r = pred[37] compare(a, b), direction=LT",
    "select": "p = pred[37] compare(a, b), direction=GT\n  ROOT r = {t}[37] select(p, a, b)",
    "sum": "z = {t}[] constant(0)\n  ROOT r = {t}[] reduce(a, z), dimensions={{0}}, to_apply=add",
}


def _module(t, body):
    return uir.hlo.parse_module(f"""HloModule m

add {{
  x = {t}[] parameter(0)
  y = {t}[] parameter(1)
  ROOT s = {t}[] add(x, y)
}}

ENTRY e {{
  a = {t}[37] parameter(0)
  b = {t}[37] parameter(1)
  {body.format(t=t)}
}}
""")


def _wrap(v, t):
    _, lo, hi = TYPES[t]
    return (v - lo) % (hi - lo) + lo


def _numpy(op, t, x, y):
    """The op on exact integers, wrapped into the type."""
    a, b = x.astype(np.int64), y.astype(np.int64)
    exact = {
        "add": lambda: _wrap(a + b, t),
        "multiply": lambda: _wrap(a * b, t),
        "maximum": lambda: np.maximum(a, b),
        "minimum": lambda: np.minimum(a, b),
        "xor": lambda: _wrap(a ^ b, t),
        "negate": lambda: _wrap(-a, t),
        "divide": lambda: _wrap(np.trunc(a / b).astype(np.int64), t),
        "remainder": lambda: _wrap(np.fmod(a, b), t),
        "to_s32": lambda: a,
        "from_s32": lambda: _wrap(a * a, t),
        "compare": lambda: a < b,
        "select": lambda: np.where(a > b, a, b),
        "sum": lambda: _wrap(a.sum(), t),
    }
    return exact[op]()


@pytest.mark.parametrize("t", sorted(TYPES))
@pytest.mark.parametrize("op", sorted(BODIES))
def test_sub_byte_integers_compile_and_wrap_in_their_width(t, op):
    np_type, lo, hi = TYPES[t]
    rng = np.random.default_rng(7)
    x = rng.integers(lo, hi, 37).astype(np_type)
    y = rng.integers(lo, hi, 37)
    if op in ("divide", "remainder"):
        y = np.where(y == 0, 1, y)
        y = np.where((x.astype(np.int64) == lo) & (y == -1), 1, y)  # no overflow
    y = y.astype(np_type)
    module = _module(t, BODIES[op])
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = np.asarray(exe(x, y))
    want = np.asarray(uir.evaluate(module, x, y))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))
    np.testing.assert_array_equal(got.astype(np.int64), _numpy(op, t, x, y))


def test_the_evaluator_reads_negative_int4_arguments_by_their_sign():
    # ml_dtypes holds int4(-8) as the byte 0x08: its low bits alone.
    x = np.array([-8, -1, 7, 3], ml_dtypes.int4)
    module = uir.hlo.parse_module("""HloModule m

ENTRY e {
  a = s4[4] parameter(0)
  ROOT c = s32[4] convert(a)
}
""")
    np.testing.assert_array_equal(uir.evaluate(module, x), [-8, -1, 7, 3])


@pytest.mark.parametrize(
    ("narrow", "wide", "count"),
    [("s4", "s8", 2), ("u4", "u8", 2), ("s2", "u8", 4), ("u4", "s32", 8), ("s4", "f32", 8)],
)
def test_bitcast_converts_between_sub_byte_and_whole_byte_types_compile(narrow, wide, count):
    np_type, lo, hi = TYPES[narrow]
    rng = np.random.default_rng(count)
    x = rng.integers(lo, hi, (5, count)).astype(np_type)
    pack = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  a = {narrow}[5,{count}] parameter(0)
  n = {narrow}[5,{count}] negate(a)
  ROOT b = {wide}[5] bitcast-convert(n)
}}
""")
    exe = uir.compile(pack, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    packed = np.asarray(exe(x))
    want = np.asarray(uir.evaluate(pack, x))
    np.testing.assert_array_equal(packed.view(np.uint8), want.view(np.uint8))
    unpack = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  a = {wide}[5] parameter(0)
  ROOT b = {narrow}[5,{count}] bitcast-convert(a)
}}
""")
    exe = uir.compile(unpack, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    back = np.asarray(exe(packed))
    np.testing.assert_array_equal(
        back.astype(np.int64), np.asarray(uir.evaluate(unpack, packed)).astype(np.int64)
    )
    np.testing.assert_array_equal(back.astype(np.int64), _wrap(-x.astype(np.int64), narrow))
