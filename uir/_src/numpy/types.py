"""jax.numpy's type functions and constants: result_type, promote_types,
finfo, iinfo, can_cast, issubdtype, isdtype, isscalar, pi, e, inf, nan."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from uir._src.core import dtypes, ops

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


def result_type(*args):
    """The dtype values of `args` combine to (JAX's promotion)."""
    return dtypes.promote(
        *[
            ops.weak_dtype_of(a)
            if not isinstance(a, type) and not isinstance(a, np.dtype)
            else (dtypes.canonicalize(a), False)
            for a in args
        ]
    )[0]


def promote_types(a, b):
    return dtypes.promote((dtypes.canonicalize(a), False), (dtypes.canonicalize(b), False))[0]


# --- types and constants -------------------------------------------------------------------

euler_gamma = np.euler_gamma


def finfo(dtype):
    """Machine limits of a float type."""
    return dtypes.finfo(dtypes.canonicalize(dtype) if not isinstance(dtype, np.dtype) else dtype)


def iinfo(int_type):
    """Machine limits of an integer type (int4 and the other narrow ones too)."""
    return ml_dtypes.iinfo(np.dtype(int_type) if not hasattr(int_type, "dtype") else int_type.dtype)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether NumPy's casting rule allows from_ to become `to`."""
    return bool(np.can_cast(from_.dtype if hasattr(from_, "dtype") else from_, to, casting))


def issubdtype(arg1, arg2) -> bool:
    """NumPy's subtype relation (bfloat16 and the f8 types are floating)."""
    try:
        d = np.dtype(arg1)
    except TypeError:
        return bool(np.issubdtype(arg1, arg2))
    if arg2 in (np.floating, np.inexact, np.number, np.generic) and dtypes.is_float(d):
        return True
    return bool(np.issubdtype(d, arg2))


def isdtype(dtype, kind) -> bool:
    """The array API's dtype kinds ('bool', 'integral', 'real floating', ...)."""
    d = np.dtype(dtype)
    kinds = (kind,) if not isinstance(kind, tuple) else kind
    for k in kinds:
        if not isinstance(k, str):
            if d == np.dtype(k):
                return True
            continue
        if (
            (k == "bool" and d == np.bool_)
            or (k == "signed integer" and d.kind == "i")
            or (k == "unsigned integer" and d.kind == "u")
            or (k == "integral" and d.kind in "iu")
            or (k == "real floating" and dtypes.is_float(d))
            or (k == "complex floating" and d.kind == "c")
            or (k == "numeric" and (d.kind in "iuc" or dtypes.is_float(d)))
        ):
            return True
    return False


def isscalar(element) -> bool:
    """Whether element is a Python or NumPy scalar or a 0-d array."""
    if hasattr(element, "shape"):
        return element.shape == ()
    return isinstance(element, (int, float, complex, bool, np.generic))


def iterable(y) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


__all__ = [
    "can_cast",
    "e",
    "euler_gamma",
    "finfo",
    "iinfo",
    "inf",
    "isdtype",
    "isscalar",
    "issubdtype",
    "iterable",
    "nan",
    "newaxis",
    "pi",
    "promote_types",
    "result_type",
]
