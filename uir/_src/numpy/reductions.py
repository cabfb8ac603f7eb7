"""jax.numpy's reductions: sum, prod, max, min, mean, var, std, argmax,
argmin, the nan-reductions and the cumulative ones."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.cumulative import _running
from uir._src.lax.lax import _index_of_extreme
from uir._src.numpy import creation, manipulation, ufuncs
from uir._src.numpy.creation import diagonal
from uir._src.numpy.manipulation import ravel
from uir._src.numpy.ufuncs import (
    _as_bool,
    _no_complex,
    conj,
    divide,
    equal,
    isclose,
    isnan,
    multiply,
    real,
    sqrt,
    square,
    subtract,
)

# --- Reductions ----------------------------------------------------------------


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return ops.reshape(out, shape)


def _reduction(opcode: str, name: str, bool_result=False):
    def f(a, axis=None, keepdims: bool = False, dtype=None):
        x = asarray(a)
        if bool_result:
            x = _as_bool(x)
        elif dtype is not None:
            x = ops.convert(x, dtypes.canonicalize(dtype))
        elif opcode in ("add", "multiply") and (
            dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4)
        ):
            # Sums of small ints and bools accumulate in the default int (as JAX).
            x = ops.convert(x, dtypes.default_int() if x.dtype.kind != "u" else np.dtype(np.uint32))
        axes = ops.normalize_axes(axis, x.ndim, name)
        if opcode in ("maximum", "minimum") and builtins.any(x.shape[a] == 0 for a in axes):
            fail(name, f"zero-size reduction over axis {axis} of {ops.describe(x)} has no identity")
        return _keep(ops.reduce(x, opcode, axes, name), x, axes, keepdims)

    f.__name__ = name
    return eager(f)


sum = _reduction("add", "sum")
prod = _reduction("multiply", "prod")
max = _reduction("maximum", "max")
min = _reduction("minimum", "min")
amax, amin = max, min
all = _reduction("and", "all", bool_result=True)
any = _reduction("or", "any", bool_result=True)


def _count(x, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


@eager
def mean(a, axis=None, keepdims: bool = False, dtype=None):
    x = asarray(a)
    if dtype is None and not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        dtype = dtypes.default_float()
    if dtype is not None:
        x = ops.convert(x, dtypes.canonicalize(dtype))
    axes = ops.normalize_axes(axis, x.ndim, "mean")
    s = sum(x, axis=tuple(axes), keepdims=keepdims)
    return divide(s, ops.convert(ops.asarray(_count(x, axes)), s.dtype))


@eager
def var(a, axis=None, keepdims: bool = False, ddof: int = 0, dtype=None):
    x = asarray(a)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float())
    axes = ops.normalize_axes(axis, x.ndim, "var")
    centered = subtract(x, mean(x, axis=tuple(axes), keepdims=True))
    sq = (
        real(multiply(centered, conj(centered))) if dtypes.is_complex(x.dtype) else square(centered)
    )
    s = sum(sq, axis=tuple(axes), keepdims=keepdims)
    return divide(s, ops.convert(ops.asarray(_count(x, axes) - ddof), s.dtype))


@eager
def std(a, axis=None, keepdims: bool = False, ddof: int = 0, dtype=None):
    return sqrt(var(a, axis=axis, keepdims=keepdims, ddof=ddof))


def _arg_reduce(name: str, take_greater: bool):
    def f(a, axis=None, keepdims: bool = False):
        x = _no_complex(a, name, "integer, boolean or floating (complex numbers have no order)")
        if axis is None:
            x = ravel(x)
            axis = 0
        ax = ops.normalize_axis(axis, x.ndim, name)
        out = _index_of_extreme(x, ax, take_greater, dtypes.default_int(), name)
        return _keep(out, x, [ax], keepdims)

    f.__name__ = name
    return eager(f)


argmax = _arg_reduce("argmax", True)
argmin = _arg_reduce("argmin", False)


def _cumulative(opcode: str, name: str):
    def f(a, axis=None, dtype=None):
        x = asarray(a)
        if axis is None:
            x = ravel(x)
            axis = 0
        if dtype is not None:
            x = ops.convert(x, dtypes.canonicalize(dtype))
        elif opcode in ("add", "multiply") and (
            dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4)
        ):
            x = ops.convert(x, dtypes.default_int())
        ax = ops.normalize_axis(axis, x.ndim, name)
        return _running(x, ax, opcode, name)

    f.__name__ = name
    return eager(f)


cumsum = _cumulative("add", "cumsum")
cumprod = _cumulative("multiply", "cumprod")


# --- statistics ---------------------------------------------------------------------------


@eager
def ptp(a, axis=None, keepdims: bool = False):
    """max - min."""
    return max(a, axis=axis, keepdims=keepdims) - min(a, axis=axis, keepdims=keepdims)


@eager
def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of nonzero elements."""
    return sum(ufuncs.not_equal(asarray(a), 0), axis=axis, keepdims=keepdims).astype(
        dtypes.default_int()
    )


def _nan_reduce(name, fn, fill):
    def f(a, axis=None, keepdims: bool = False, **kwargs):
        a = asarray(a)
        if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
            return fn(a, axis=axis, keepdims=keepdims, **kwargs)
        return fn(
            ufuncs.where(ufuncs.isnan(a), fill(a.dtype), a),
            axis=axis,
            keepdims=keepdims,
            **kwargs,
        )

    f.__name__ = name
    f.__doc__ = f"{fn.__name__}, NaNs ignored."
    return eager(f)


nansum = _nan_reduce("nansum", sum, lambda d: 0)
nanprod = _nan_reduce("nanprod", prod, lambda d: 1)


@eager
def nanmax(a, axis=None, keepdims: bool = False):
    """max, NaNs ignored (NaN where all are)."""
    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        return max(a, axis=axis, keepdims=keepdims)
    out = max(ufuncs.where(ufuncs.isnan(a), -np.inf, a), axis=axis, keepdims=keepdims)
    all_nan = all(ufuncs.isnan(a), axis=axis, keepdims=keepdims)
    return ufuncs.where(all_nan, np.nan, out).astype(a.dtype)


@eager
def nanmin(a, axis=None, keepdims: bool = False):
    """min, NaNs ignored (NaN where all are)."""
    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        return min(a, axis=axis, keepdims=keepdims)
    out = min(ufuncs.where(ufuncs.isnan(a), np.inf, a), axis=axis, keepdims=keepdims)
    all_nan = all(ufuncs.isnan(a), axis=axis, keepdims=keepdims)
    return ufuncs.where(all_nan, np.nan, out).astype(a.dtype)


@eager
def nanargmax(a, axis=None, keepdims: bool = False):
    """argmax, NaNs ignored."""
    a = asarray(a)
    out = argmax(
        ufuncs.where(ufuncs.isnan(a), -np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
    )
    return manipulation.expand_dims(out, axis) if keepdims and axis is not None else out


@eager
def nanargmin(a, axis=None, keepdims: bool = False):
    """argmin, NaNs ignored."""
    a = asarray(a)
    out = argmin(
        ufuncs.where(ufuncs.isnan(a), np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
    )
    return manipulation.expand_dims(out, axis) if keepdims and axis is not None else out


@eager
def nancumsum(a, axis=None, dtype=None):
    """cumsum with NaNs as 0."""
    a = asarray(a)
    return cumsum(
        ufuncs.where(ufuncs.isnan(a), 0, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        dtype=dtype,
    )


@eager
def nancumprod(a, axis=None, dtype=None):
    """cumprod with NaNs as 1."""
    a = asarray(a)
    return cumprod(
        ufuncs.where(ufuncs.isnan(a), 1, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        dtype=dtype,
    )


@eager
def cumulative_sum(x, axis=None, dtype=None, include_initial: bool = False):
    """cumsum, with a leading 0 when include_initial."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            fail("cumulative_sum", "an axis is needed for arrays of more than one dimension")
        axis = 0
    out = cumsum(x, axis=axis, dtype=dtype)
    if include_initial:
        zero_shape = list(out.shape)
        zero_shape[ops.normalize_axis(axis, out.ndim, "cumulative_sum")] = 1
        out = manipulation.concatenate([creation.zeros(zero_shape, out.dtype), out], axis=axis)
    return out


@eager
def cumulative_prod(x, axis=None, dtype=None, include_initial: bool = False):
    """cumprod, with a leading 1 when include_initial."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            fail("cumulative_prod", "an axis is needed for arrays of more than one dimension")
        axis = 0
    out = cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        one_shape = list(out.shape)
        one_shape[ops.normalize_axis(axis, out.ndim, "cumulative_prod")] = 1
        out = manipulation.concatenate([creation.ones(one_shape, out.dtype), out], axis=axis)
    return out


@eager
def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether every element isclose."""
    return all(isclose(a, b, rtol, atol, equal_nan))


@eager
def array_equal(a1, a2, equal_nan: bool = False):
    """Whether the arrays have one shape and equal elements."""
    a, b = asarray(a1), asarray(a2)
    if a.shape != b.shape:
        return asarray(np.bool_(False))
    eq = equal(a, b)
    if equal_nan and (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        eq = eq | (isnan(a) & isnan(b))
    return all(eq)


@eager
def array_equiv(a1, a2):
    """Whether the arrays broadcast to one shape with equal elements."""
    a, b = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return asarray(np.bool_(False))
    return all(equal(a, b))


@eager
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """The sum of diagonal `offset`."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


__all__ = [
    "all",
    "allclose",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "array_equal",
    "array_equiv",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmin",
    "nanprod",
    "nansum",
    "prod",
    "ptp",
    "std",
    "sum",
    "trace",
    "var",
]
