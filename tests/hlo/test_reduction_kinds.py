"""The one description of each reduction kind (csrc/hlo/reduction_kind.def):
its names, and its identity checked against NumPy, which must leave every
value of the element type unchanged bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
from uir import _core

KINDS = [name for name, _ in _core.hlo.reduction_kinds()]

NUMPY_OP = {
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
# On pred, add is or and multiply is and (C++'s bool arithmetic, as XLA).
BOOL_OP = {
    "add": np.logical_or,
    "mul": np.logical_and,
    "max": np.logical_or,
    "min": np.logical_and,
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}
TYPES = {
    "pred": np.bool_,
    "s8": np.int8,
    "s16": np.int16,
    "s32": np.int32,
    "s64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "c64": np.complex64,
    "c128": np.complex128,
}


def test_the_kinds_are_the_iop_reductions_with_their_hlo_opcodes():
    assert _core.hlo.reduction_kinds() == [
        ("add", "add"),
        ("mul", "multiply"),
        ("max", "maximum"),
        ("min", "minimum"),
        ("and", "and"),
        ("or", "or"),
        ("xor", "xor"),
    ]


def test_every_kind_parses_as_a_reduce_iop_and_runs_as_numpy_folds():
    for kind in KINDS:
        dt = "s32" if kind in ("and", "or", "xor") else "fp32"
        text = (
            f"igraph r_{kind} {{\n"
            "  hardware cpu (numGroup=1, numUnit=1) reg=2048 sram=524288 vector=64\n"
            "  parallel (numParallel=1, numLoop=1) [pid=1] [lid=1]\n"
            f"  x = iPointer(0, dram, {dt}, 4)\n"
            f"  out = iPointer(1, dram, {dt}, 1)\n"
            f"  t = iPointer(2, reg, {dt}, 4)\n"
            f"  p = iPointer(3, reg, {dt}, 1)\n"
            "  xs = iSlice(x, 0, (1, 4), (4, 1))\n"
            "  os = iSlice(out, 0, (1, 1), (1, 1))\n"
            "  ts = iSlice(t, 0, (1, 4), (4, 1))\n"
            "  ps = iSlice(p, 0, (1, 1), (1, 1))\n"
            "body:\n"
            f"  move.dram.reg.{dt} ts, xs\n"
            f"  reduce.{kind}.row.unit.{dt} ps, ts\n"
            f"  move.reg.dram.{dt} os, ps\n"
            "}\n"
        )
        g = uir.igraph.parse(text)
        assert f"reduce.{kind}.row.unit.{dt}" in str(g)
        x = np.array([3, 5, 6, 12], np.int32 if dt == "s32" else np.float32)
        out = np.zeros(1, x.dtype)
        uir.igraph.interpret(g, {0: x, 1: out})
        assert out[0] == NUMPY_OP[kind].reduce(x), kind


@pytest.mark.parametrize("kind", KINDS)
def test_kinds_without_an_identity_are_the_ones_numpy_cannot_do_either(kind):
    for type_name in TYPES:
        identity = _core.hlo.reduction_identity(kind, type_name)
        complex_order = type_name.startswith("c") and kind in ("max", "min")
        float_bits = type_name[0] in "fbc" and kind in ("and", "or", "xor")
        assert (identity is None) == (complex_order or float_bits), (kind, type_name)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    type_name=st.sampled_from(sorted(TYPES)),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_identity_leaves_every_value_unchanged(kind, type_name, seed):
    identity = _core.hlo.reduction_identity(kind, type_name)
    if identity is None:
        return
    dtype = np.dtype(TYPES[type_name])
    identity = np.asarray(identity)
    assert identity.dtype == dtype and identity.shape == ()
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=64 * dtype.itemsize, dtype=np.uint8)
    x = raw[:64] % 2 == 1 if dtype == np.bool_ else raw.view(dtype)[:64].copy()
    if dtype.kind in "fc" or dtype == ml_dtypes.bfloat16:
        # the special values of a float, with both zeros, and no NaN (whose
        # payload NumPy's min and max need not keep)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0]).astype(dtype)
        x = np.concatenate([x, specials])
        with np.errstate(invalid="ignore"):
            x = x[~np.isnan(x.astype(np.complex128))]
    op = BOOL_OP[kind] if dtype == np.bool_ else NUMPY_OP[kind]
    if dtype.kind == "c" and kind == "mul":
        # 1 + 0i: the cross terms of a complex product make inf * 0 NaN and
        # lose the sign of zeros, so it is the identity of finite values.
        x = x[np.isfinite(x)]
        for out in (op(x, identity), op(identity, x)):
            np.testing.assert_array_equal(out, x)
        return
    for out in (op(x, identity), op(identity, x)):
        out = np.asarray(out).astype(dtype)
        assert out.tobytes() == x.tobytes(), (kind, type_name)


def test_float_add_starts_from_negative_zero():
    for type_name in ("f16", "bf16", "f32", "f64"):
        identity = np.asarray(_core.hlo.reduction_identity("add", type_name))
        assert identity == 0 and np.signbit(identity.astype(np.float64))


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="no reduction kind"):
        _core.hlo.reduction_identity("sub", "f32")
    with pytest.raises(ValueError, match="no element type"):
        _core.hlo.reduction_identity("add", "f33")
