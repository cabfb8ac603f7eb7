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
from uir._src.numpy.util import no_out as _no_out

# --- Reductions ----------------------------------------------------------------


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return ops.reshape(out, shape)


def _reduce(opcode, name, a, axis, dtype, keepdims, initial, where, promote_integers, bool_result):
    x = asarray(a)
    if bool_result:
        x = _as_bool(x)
    elif dtype is not None:
        x = ops.convert(x, dtypes.canonicalize(dtype))
    elif (
        opcode in ("add", "multiply")
        and promote_integers
        and (dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4))
    ):
        # Sums of small ints and bools accumulate in the default int (as JAX).
        x = ops.convert(x, dtypes.default_int() if x.dtype.kind != "u" else np.dtype(np.uint32))
    elif opcode in ("add", "multiply") and dtypes.is_bool(x.dtype):
        x = ops.convert(x, dtypes.default_int())  # (JAX: bools sum as ints either way)
    axes = ops.normalize_axes(axis, x.ndim, name)
    extreme = opcode in ("maximum", "minimum")
    if where is not None:
        if extreme and initial is None:
            fail(
                name,
                f"reduction operation {name} does not have an identity, so to use a where mask "
                "one has to specify 'initial'",
            )
        mask = ops.broadcast_to(_as_bool(asarray(where)), x.shape, name)
        x = ops.select(mask, x, ops.broadcast_to(ops.reduction_identity(opcode, x.dtype), x.shape))
    if extreme and initial is None and builtins.any(x.shape[a] == 0 for a in axes):
        fail(name, f"zero-size reduction over axis {axis} of {ops.describe(x)} has no identity")
    out = ops.reduce(x, opcode, axes, name)
    if initial is not None:
        out = ops.binary(opcode, out, ops.convert(asarray(initial), out.dtype), name)
    return _keep(out, x, axes, keepdims)


def _reduction(opcode: str, name: str):
    """sum and prod, with jax.numpy's signature."""

    def f(
        a,
        axis=None,
        dtype=None,
        out=None,
        keepdims: bool = False,
        initial=None,
        where=None,
        promote_integers: bool = True,
    ):
        _no_out(name, out)
        return _reduce(
            opcode, name, a, axis, dtype, keepdims, initial, where, promote_integers, False
        )

    f.__name__ = name
    return eager(f)


def _extreme(opcode: str, name: str):
    """max and min, with jax.numpy's signature."""

    def f(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
        _no_out(name, out)
        x = asarray(a)
        if dtypes.is_complex(x.dtype):
            return _complex_extreme(opcode, name, x, axis, keepdims, initial, where)
        return _reduce(opcode, name, a, axis, None, keepdims, initial, where, True, False)

    f.__name__ = name
    return eager(f)


def _complex_extreme(opcode: str, name: str, x, axis, keepdims: bool, initial, where):
    """max/min of complex numbers in NumPy's order: the extreme real part,
    then the extreme imaginary part among the elements that have it."""
    from uir._src.lax.elementwise import _imag_part, _real_part
    from uir._src.lax.elementwise import complex as make_complex

    re, im = _real_part(x), _imag_part(x)
    best_re = _reduce(opcode, name, re, axis, None, True, None, where, True, False)
    ties = ops.compare(re, ops.broadcast_to(best_re, re.shape, name), "EQ", name)
    if where is not None:
        ties = ops.binary("and", ties, ops.broadcast_to(asarray(where), re.shape, name))
    far = np.inf if opcode == "minimum" else -np.inf
    candidates = ops.select(
        ties, im, ops.broadcast_to(ops.convert(asarray(far), im.dtype), im.shape, name)
    )
    best_im = _reduce(opcode, name, candidates, axis, None, True, None, None, True, False)
    out = make_complex(best_re, best_im)
    if initial is not None:
        combine = ufuncs.maximum if opcode == "maximum" else ufuncs.minimum
        out = combine(out, ops.convert(asarray(initial), out.dtype))
    if not keepdims:
        axes = ops.normalize_axes(axis, x.ndim, name) if axis is not None else list(range(x.ndim))
        out = ops.reshape(out, tuple(d for i, d in enumerate(out.shape) if i not in axes))
    return out


def _logical(opcode: str, name: str):
    """all and any, with jax.numpy's signature."""

    def f(a, axis=None, out=None, keepdims: bool = False, *, where=None):
        _no_out(name, out)
        # A masked-out element counts as the identity: True for all, False
        # for any.
        return _reduce(opcode, name, a, axis, None, keepdims, None, where, True, True)

    f.__name__ = name
    return eager(f)


sum = _reduction("add", "sum")
prod = _reduction("multiply", "prod")
max = _extreme("maximum", "max")
min = _extreme("minimum", "min")
amax, amin = max, min
all = _logical("and", "all")
any = _logical("or", "any")


def _count(x, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


def _counted(x, axes, where):
    """How many elements each result of a reduction over `axes` sums: all
    of them, or those `where` selects (a float array of counts)."""
    if where is None:
        return ops.asarray(_count(x, axes))
    mask = ops.broadcast_to(_as_bool(asarray(where)), x.shape, "mean")
    return sum(mask, axis=tuple(axes), keepdims=True)


@eager
def mean(a, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=None):
    _no_out("mean", out)
    x = asarray(a)
    if dtype is None and not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        dtype = dtypes.default_float()
    if dtype is not None:
        x = ops.convert(x, dtypes.canonicalize(dtype))
    axes = ops.normalize_axes(axis, x.ndim, "mean")
    s = sum(x, axis=tuple(axes), keepdims=True, where=where)
    n = ops.convert(_counted(x, axes, where), s.dtype)
    return _keep(
        ops.reshape(divide(s, n), tuple(d for i, d in enumerate(s.shape) if i not in axes)),
        x,
        axes,
        keepdims,
    )


@eager
def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    _no_out("var", out)
    if correction is not None:
        if ddof != 0:
            fail("var", "ddof and correction both given; they are the same (use correction)")
        ddof = correction
    x = asarray(a)
    if dtype is not None:
        x = ops.convert(x, dtypes.canonicalize(dtype))
    elif not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float())
    axes = ops.normalize_axes(axis, x.ndim, "var")
    center = (
        _mean(x, axis=tuple(axes), keepdims=True, where=where)
        if mean is None
        else ops.convert(asarray(mean), x.dtype)
    )
    centered = subtract(x, center)
    sq = (
        real(multiply(centered, conj(centered))) if dtypes.is_complex(x.dtype) else square(centered)
    )
    s = sum(sq, axis=tuple(axes), keepdims=True, where=where)
    n = subtract(
        ops.convert(_counted(x, axes, where), s.dtype), ops.convert(ops.asarray(ddof), s.dtype)
    )
    # No degrees of freedom left (count <= ddof): NaN, as JAX gives.
    nan = ops.convert(ops.asarray(np.nan), s.dtype)
    positive = ops.compare(n, ops.convert(ops.asarray(0), s.dtype), "GT", "gt")
    ratio = ops.select(positive, divide(s, n), ops.broadcast_to(nan, s.shape))
    out_shape = tuple(d for i, d in enumerate(s.shape) if i not in axes)
    return _keep(ops.reshape(ratio, out_shape), x, axes, keepdims)


_mean = mean


@eager
def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    return sqrt(
        var(
            a,
            axis=axis,
            dtype=dtype,
            out=out,
            ddof=ddof,
            keepdims=keepdims,
            where=where,
            mean=mean,
            correction=correction,
        )
    )


def _arg_reduce(name: str, take_greater: bool):
    def f(a, axis=None, out=None, keepdims=None):
        _no_out(name, out)
        x = _no_complex(a, name, "integer, boolean or floating (complex numbers have no order)")
        if axis is None:
            flat = ravel(x)
            found = _index_of_extreme(flat, 0, take_greater, dtypes.default_int(), name)
            return ops.reshape(found, (1,) * x.ndim) if keepdims else found
        ax = ops.normalize_axis(axis, x.ndim, name)
        found = _index_of_extreme(x, ax, take_greater, dtypes.default_int(), name)
        return _keep(found, x, [ax], bool(keepdims))

    f.__name__ = name
    return eager(f)


argmax = _arg_reduce("argmax", True)
argmin = _arg_reduce("argmin", False)


def _cumulative(opcode: str, name: str):
    def f(a, axis=None, dtype=None, out=None):
        _no_out(name, out)
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
def ptp(a, axis=None, out=None, keepdims: bool = False):
    """max - min."""
    _no_out("ptp", out)
    return max(a, axis=axis, keepdims=keepdims) - min(a, axis=axis, keepdims=keepdims)


@eager
def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of nonzero elements."""
    return sum(ufuncs.not_equal(asarray(a), 0), axis=axis, keepdims=keepdims).astype(
        dtypes.default_int()
    )


def _valid(a, where):
    """Where `a` is not NaN (and `where`, when given, holds)."""
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        return where
    valid = ufuncs.logical_not(ufuncs.isnan(a))
    return valid if where is None else ufuncs.logical_and(valid, where)


def _nan_reduce(name, fn):
    def f(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
        _no_out(name, out)
        a = asarray(a)
        return fn(
            a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=_valid(a, where)
        )

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{fn.__name__}, NaNs ignored (jax.numpy.{name})."
    return eager(f)


nansum = _nan_reduce("nansum", sum)
nanprod = _nan_reduce("nanprod", prod)


def _nan_extreme(name, fn, start):
    def f(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
        _no_out(name, out)
        a = asarray(a)
        if not dtypes.is_float(a.dtype):
            return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        valid = _valid(a, where)
        found = fn(
            a,
            axis=axis,
            keepdims=keepdims,
            initial=start if initial is None else initial,
            where=valid,
        )
        if initial is not None:
            return found
        # NaN where nothing was left to compare.
        return ufuncs.where(any(valid, axis=axis, keepdims=keepdims), found, np.nan).astype(a.dtype)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{fn.__name__}, NaNs ignored (NaN where all are; jax.numpy.{name})."
    return eager(f)


nanmax = _nan_extreme("nanmax", max, -np.inf)
nanmin = _nan_extreme("nanmin", min, np.inf)


@eager
def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax, NaNs ignored."""
    _no_out("nanargmax", out)
    a = asarray(a)
    return argmax(
        ufuncs.where(ufuncs.isnan(a), -np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        keepdims=keepdims,
    )


@eager
def nanargmin(a, axis=None, out=None, keepdims=None):
    """argmin, NaNs ignored."""
    _no_out("nanargmin", out)
    a = asarray(a)
    return argmin(
        ufuncs.where(ufuncs.isnan(a), np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        keepdims=keepdims,
    )


@eager
def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum with NaNs as 0."""
    _no_out("nancumsum", out)
    a = asarray(a)
    return cumsum(
        ufuncs.where(ufuncs.isnan(a), 0, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        dtype=dtype,
    )


@eager
def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod with NaNs as 1."""
    _no_out("nancumprod", out)
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
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """The sum of diagonal `offset`."""
    _no_out("trace", out)
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
