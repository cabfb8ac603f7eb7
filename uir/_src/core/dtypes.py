"""Dtypes as JAX has them: the type-promotion lattice with weak types for
Python scalars, and 64-bit types off unless `enable_x64` is set."""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from uir import _core
from uir._src.core import config

# The lattice JAX promotes on: a type promotes to any type reachable from
# it, and two types promote to their least upper bound. "i*", "f*" and "c*"
# are the weak types of Python int, float and complex.
_LATTICE: dict[str, tuple[str, ...]] = {
    "bool": ("i*",),
    "i*": ("uint8", "int8"),
    "uint8": ("int16", "uint16"),
    "uint16": ("int32", "uint32"),
    "uint32": ("int64", "uint64"),
    "uint64": ("f*",),
    "int8": ("int16",),
    "int16": ("int32",),
    "int32": ("int64",),
    "int64": ("f*",),
    "f*": ("c*", "float8_e4m3fn", "float8_e5m2", "bfloat16", "float16"),
    "float8_e4m3fn": ("float32",),
    "float8_e5m2": ("float32",),
    "bfloat16": ("float32",),
    "float16": ("float32",),
    "float32": ("float64", "complex64"),
    "float64": ("complex128",),
    "c*": ("complex64",),
    "complex64": ("complex128",),
    "complex128": (),
}
WEAK = {"i*": "int", "f*": "float", "c*": "complex"}


@functools.cache
def _upper_bounds(t: str) -> frozenset[str]:
    if t not in _LATTICE:
        raise TypeError(f"uir has no type promotion rule for {t}")
    out = {t}
    for u in _LATTICE[t]:
        out |= _upper_bounds(u)
    return frozenset(out)


@functools.cache
def _join(a: str, b: str) -> str:
    if a == b:  # also for types outside the lattice (int4, the other float8s)
        return a
    common = _upper_bounds(a) & _upper_bounds(b)
    # The least element: the one every other common bound is above.
    for c in common:
        if all(c2 in _upper_bounds(c) for c2 in common):
            return c
    raise TypeError(f"no common type for {a} and {b}")


def _key(dtype: np.dtype, weak: bool) -> str:
    name = np.dtype(dtype).name
    if weak:
        kind = np.dtype(dtype).kind
        return (
            {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}.get(kind, name) if name != "bool" else name
        )
    return name


def _from_key(key: str) -> tuple[np.dtype, bool]:
    if key in WEAK:
        return canonicalize({"i*": np.int64, "f*": np.float64, "c*": np.complex128}[key]), True
    return canonicalize(np.dtype(getattr(ml_dtypes, key, None) or key)), False


def promote(*types: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """The (dtype, weak) that values of `types` combine to."""
    key = _key(*types[0])
    for t in types[1:]:
        key = _join(key, _key(*t))
    return _from_key(key)


def canonicalize(dtype) -> np.dtype:
    """`dtype` as uir computes with it: 64-bit types become 32-bit ones
    unless enable_x64 is set (as in JAX)."""
    dtype = np.dtype(dtype)
    if config.read("enable_x64"):
        return dtype
    return {
        "float64": np.dtype(np.float32),
        "int64": np.dtype(np.int32),
        "uint64": np.dtype(np.uint32),
        "complex128": np.dtype(np.complex64),
    }.get(dtype.name, dtype)


def default_float() -> np.dtype:
    return canonicalize(np.float64)


def default_int() -> np.dtype:
    return canonicalize(np.int64)


def is_float(dtype) -> bool:
    d = np.dtype(dtype)
    return d.kind == "f" or d.name.startswith(("bfloat", "float"))


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_int(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype) -> bool:
    return np.dtype(dtype) == np.bool_


# Every HLO element type with a Python dtype, from primitive_type.def (the
# only table): HLO name -> dtype, and dtype name -> HLO name.
def _element_type_table() -> dict[str, np.dtype]:
    table = {}
    for name, dtype_name, source, *_ in _core.hlo.element_types():
        if source == "numpy":
            table[name] = np.dtype(dtype_name)
        elif source == "ml_dtypes":
            table[name] = np.dtype(getattr(ml_dtypes, dtype_name))
    return table


NUMPY_DTYPES: dict[str, np.dtype] = _element_type_table()
_HLO: dict[str, str] = {d.name: name for name, d in NUMPY_DTYPES.items()}


def numpy_dtype(element_type: str) -> np.dtype:
    """The NumPy (or ml_dtypes) dtype that carries values of an HLO element type."""
    try:
        return NUMPY_DTYPES[element_type]
    except KeyError:
        raise TypeError(f"HLO element type {element_type} has no NumPy dtype") from None


def hlo_type(dtype) -> str:
    """The HLO element type name of `dtype`."""
    try:
        return _HLO[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"uir has no HLO type for dtype {np.dtype(dtype)}") from None


def shape_text(shape: tuple[int, ...], dtype) -> str:
    """HLO text of an array shape, for messages and reprs (never handed to C++,
    which takes shapes as (dims, dtype))."""
    return f"{hlo_type(dtype)}[{','.join(map(str, shape))}]"


def finfo(dtype):
    """Machine limits of a float dtype, ml_dtypes' types (bfloat16, the f8
    types) included."""
    d = np.dtype(dtype)
    if d.kind == "f" and d.name in ("float16", "float32", "float64"):
        return np.finfo(d)
    import ml_dtypes

    return ml_dtypes.finfo(d)
