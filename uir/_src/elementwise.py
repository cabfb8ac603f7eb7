"""The one table of elementwise operations that uir.lax and uir.numpy both
build on: for each of lax's elementwise functions, its HLO opcode and the
element kinds it takes. lax checks operands against the kinds as they come
(no promotion); NumPy's functions of the same op promote first, as JAX's
do, then check against the same row, so the two cannot disagree on what an
op accepts."""

from __future__ import annotations

import numpy as np

from uir._src import dtypes

FLOAT = "floating"
INEXACT = "floating or complex"
INT = "integer"
INT_BOOL = "integer or boolean"
NUMBER = "numeric"
SIGNED = "signed integer, floating or complex"
ANY = "any"


def accepts(dtype, kinds: str) -> bool:
    """Whether elements of `dtype` are of `kinds`."""
    dtype = np.dtype(dtype)
    if kinds == ANY:
        return True
    f, c, i, b = (
        dtypes.is_float(dtype),
        dtypes.is_complex(dtype),
        dtypes.is_int(dtype),
        dtype == np.bool_,
    )
    return {
        FLOAT: f,
        INEXACT: f or c,
        INT: i,
        INT_BOOL: i or b,
        NUMBER: f or c or i,
        SIGNED: f or c or (i and dtype.kind == "i"),
    }[kinds]


# lax name: (HLO opcode, the element kinds it takes).
UNARY: dict[str, tuple[str, str]] = {
    "abs": ("abs", SIGNED),
    "acos": ("acos", INEXACT),
    "acosh": ("acosh", INEXACT),
    "asin": ("asin", INEXACT),
    "asinh": ("asinh", INEXACT),
    "atanh": ("atanh", INEXACT),
    "cbrt": ("cbrt", FLOAT),
    "ceil": ("ceil", FLOAT),
    "clz": ("count-leading-zeros", INT),
    "cos": ("cosine", INEXACT),
    "cosh": ("cosh", INEXACT),
    "erf": ("erf", FLOAT),
    "exp": ("exponential", INEXACT),
    "expm1": ("exponential-minus-one", INEXACT),
    "floor": ("floor", FLOAT),
    "is_finite": ("is-finite", FLOAT),
    "log": ("log", INEXACT),
    "log1p": ("log-plus-one", INEXACT),
    "logistic": ("logistic", INEXACT),
    "neg": ("negate", NUMBER),
    "bitwise_not": ("not", INT_BOOL),
    "population_count": ("popcnt", INT),
    "rsqrt": ("rsqrt", INEXACT),
    "sign": ("sign", NUMBER),
    "sin": ("sine", INEXACT),
    "sinh": ("sinh", INEXACT),
    "sqrt": ("sqrt", INEXACT),
    "tan": ("tan", INEXACT),
    "tanh": ("tanh", INEXACT),
}
BINARY: dict[str, tuple[str, str]] = {
    "sub": ("subtract", NUMBER),
    "div": ("divide", NUMBER),
    "rem": ("remainder", NUMBER),
    "pow": ("power", INEXACT),
    "atan2": ("atan2", INEXACT),
    "bitwise_and": ("and", INT_BOOL),
    "bitwise_or": ("or", INT_BOOL),
    "bitwise_xor": ("xor", INT_BOOL),
    "shift_left": ("shift-left", INT),
    "shift_right_arithmetic": ("shift-right-arithmetic", INT),
    "shift_right_logical": ("shift-right-logical", INT),
}
