"""jax.numpy's array creation: full, zeros, arange, linspace, eye, tri, the
index grids, and asarray."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.lax import _filled
from uir._src.lax.slicing import _take_along
from uir._src.numpy import manipulation, ufuncs
from uir._src.numpy.ufuncs import add, divide, equal, floor, multiply, subtract
from uir._src.numpy.util import _dtype_or, public_asarray

# --- Creation ----------------------------------------------------------------


def full(shape, fill_value, dtype=None):
    return _filled((shape,) if isinstance(shape, int) else tuple(shape), fill_value, dtype)


def zeros(shape, dtype=None):
    return full(shape, 0, _dtype_or(dtype, dtypes.default_float()))


def ones(shape, dtype=None):
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()))


def full_like(a, fill_value, dtype=None, shape=None):
    a_shape = a.shape if hasattr(a, "shape") else np.shape(a)
    a_dtype = a.dtype if hasattr(a, "dtype") else ops.weak_dtype_of(a)[0]
    return full(
        a_shape if shape is None else shape, fill_value, dtype if dtype is not None else a_dtype
    )


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """Static bounds only (the length must be known), as in jax.numpy."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            fail("arange", "bounds must be concrete (static) values, not traced arrays")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = np.arange(start, stop, step)
    d = _dtype_or(dtype, dtypes.canonicalize(values.dtype))
    n = len(values)
    if ops.tracing.current() is None:
        return values.astype(d)
    if builtins.all(isinstance(v, int) for v in (start, stop, step)) or not dtypes.is_float(d):
        i = ops.iota(dtypes.default_int() if not dtypes.is_float(d) else d, (n,), 0)
        out = add(multiply(i, step), start)
        return ops.convert(out, d)
    i = ops.iota(d, (n,), 0)
    return ops.convert(add(multiply(i, step), start), d)


def linspace(
    start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis=0
):
    """num values from start to stop (stop excluded without endpoint), as
    JAX computes them: start * (1 - t) + stop * t for t = i / div, the last
    one stop itself. start and stop may be arrays (traced or not); the
    values run along `axis`. retstep adds the step."""
    num = int(num)
    if num < 0:
        fail("linspace", f"num must be non-negative, got {num}")
    traced = ops.tracing.current() is not None or builtins.any(
        isinstance(v, Tracer) for v in (start, stop)
    )
    xp_start, xp_stop = (asarray(start), asarray(stop)) if traced else (start, stop)
    kinds = [np.result_type(getattr(v, "dtype", type(v))) for v in (start, stop)]
    inexact = np.result_type(*kinds)
    if not (np.issubdtype(inexact, np.floating) or np.issubdtype(inexact, np.complexfloating)):
        inexact = np.dtype(dtypes.default_float())
    compute = dtypes.canonicalize(inexact)
    d = _dtype_or(dtype, compute)
    # JAX computes in the result's inexact type; integers' values come from
    # start + i * step, exact for whole steps.
    integer = np.issubdtype(d, np.integer) or d == np.bool_
    if not integer:
        compute = d
    bounds = list(np.broadcast_shapes(np.shape(start), np.shape(stop)))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = list(bounds)
    shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if not traced:
        lo = np.broadcast_to(np.asarray(start, compute), bounds).reshape(shape)
        hi = np.broadcast_to(np.asarray(stop, compute), bounds).reshape(shape)
        if num > 1:
            delta = (np.asarray(stop, compute) - np.asarray(start, compute)) / compute.type(div)
            t_shape = [1] * len(shape)
            t_shape[axis] = div
            if integer:
                steps = np.arange(div, dtype=compute).reshape(t_shape)
                out = lo + steps * np.broadcast_to(delta, bounds).reshape(shape)
            else:
                t = (np.arange(div, dtype=np.finfo(compute).dtype) / div).astype(compute)
                t = t.reshape(t_shape)
                out = lo * (1 - t) + hi * t
            if endpoint:
                out = np.concatenate([out, hi], axis=axis)
        elif num == 1:
            delta = np.asarray(
                np.nan if endpoint else np.asarray(stop) - np.asarray(start), compute
            )
            out = lo
        else:
            empty = list(bounds)
            empty.insert(axis, 0)
            delta, out = np.asarray(np.nan, compute), np.zeros(empty, compute)
        if np.issubdtype(d, np.integer):
            out = np.floor(out)
        out = out.astype(d)
        return (out, delta) if retstep else out
    lo = ops.broadcast_to(ops.convert(xp_start, compute), tuple(bounds), "linspace")
    hi = ops.broadcast_to(ops.convert(xp_stop, compute), tuple(bounds), "linspace")
    lo, hi = ops.reshape(lo, tuple(shape)), ops.reshape(hi, tuple(shape))
    if num > 1:
        delta = divide(
            subtract(ops.convert(xp_stop, compute), ops.convert(xp_start, compute)),
            asarray(np.asarray(div, compute)),
        )
        t_shape = [1] * len(shape)
        t_shape[axis] = div
        real = np.finfo(compute).dtype
        if integer:
            steps = ops.reshape(ops.iota(compute, (div,), 0), tuple(t_shape))
            step = ops.reshape(ops.broadcast_to(delta, tuple(bounds), "linspace"), tuple(shape))
            out = add(lo, multiply(steps, step))
        else:
            t = divide(ops.iota(real, (div,), 0), asarray(np.asarray(div, real)))
            t = ops.reshape(ops.convert(t, compute), tuple(t_shape))
            one = asarray(np.asarray(1, compute))
            out = add(multiply(lo, subtract(one, t)), multiply(hi, t))
        if endpoint:
            out = ops.concatenate([out, hi], axis=axis, op="linspace")
    elif num == 1:
        delta = (
            asarray(np.asarray(np.nan, compute))
            if endpoint
            else subtract(ops.convert(xp_stop, compute), ops.convert(xp_start, compute))
        )
        out = lo
    else:
        empty = list(bounds)
        empty.insert(axis, 0)
        delta = asarray(np.asarray(np.nan, compute))
        out = ops.broadcast_to(asarray(np.asarray(0, compute)), tuple(empty), "linspace")
    if np.issubdtype(d, np.integer):
        out = floor(out)
    out = ops.convert(out, d)
    return (out, delta) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    M = N if M is None else M
    d = _dtype_or(dtype, dtypes.default_float())
    if ops.tracing.current() is None:
        return np.eye(N, M, k, dtype=d)
    r = ops.iota(dtypes.default_int(), (N, M), 0)
    c = ops.iota(dtypes.default_int(), (N, M), 1)
    return ops.convert(equal(add(r, k), c), d)


# --- creation ----------------------------------------------------------------------------


@eager
def empty(shape, dtype=None):
    """An array of `shape` (zeros: uir has no uninitialized memory)."""
    return zeros(shape, dtype)


@eager
def empty_like(prototype, dtype=None, shape=None):
    """An array like prototype (zeros)."""
    p = asarray(prototype)
    return zeros(p.shape if shape is None else shape, dtype or p.dtype)


@eager
def identity(n: int, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


@eager
def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    """Ones on and below diagonal k of an N x M matrix."""
    M = N if M is None else M
    rows = ops.iota(np.dtype(np.int32), (N, M), 0)
    cols = ops.iota(np.dtype(np.int32), (N, M), 1)
    return ufuncs.less_equal(cols, rows + k).astype(dtype or dtypes.default_float())


@eager
def tril(m, k: int = 0):
    """m with the elements above diagonal k zeroed (over the last two axes)."""
    m = asarray(m)
    if m.ndim < 2:
        fail("tril", f"needs at least two dimensions, got {ops.describe(m)}")
    mask = tri(m.shape[-2], m.shape[-1], k, np.bool_)
    return ufuncs.where(mask, m, zeros((), m.dtype))


@eager
def triu(m, k: int = 0):
    """m with the elements below diagonal k zeroed (over the last two axes)."""
    m = asarray(m)
    if m.ndim < 2:
        fail("triu", f"needs at least two dimensions, got {ops.describe(m)}")
    mask = tri(m.shape[-2], m.shape[-1], k - 1, np.bool_)
    return ufuncs.where(mask, zeros((), m.dtype), m)


@eager
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal `offset` of the plane (axis1, axis2), as the last axis."""
    a = asarray(a)
    ax1, ax2 = (
        ops.normalize_axis(axis1, a.ndim, "diagonal"),
        ops.normalize_axis(axis2, a.ndim, "diagonal"),
    )
    rest = [d for d in range(a.ndim) if d not in (ax1, ax2)]
    a = manipulation.transpose(a, (*rest, ax1, ax2))
    n, m = a.shape[-2], a.shape[-1]
    size = builtins.max(
        0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m)
    )
    if size == 0:
        return zeros((*a.shape[:-2], 0), a.dtype)
    rows = np.arange(size) + builtins.max(0, -offset)
    cols = np.arange(size) + builtins.max(0, offset)
    flat = manipulation.reshape(a, (*a.shape[:-2], n * m))
    return _take_along(flat, asarray((rows * m + cols).astype(np.int32)), flat.ndim - 1)


@eager
def diag(v, k: int = 0):
    """The diagonal k of a matrix, or a matrix with vector v on diagonal k."""
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        fail("diag", f"takes a vector or a matrix, got {ops.describe(v)}")
    n = v.shape[0] + builtins.abs(k)
    rows = ops.iota(np.dtype(np.int32), (n, n), 0)
    cols = ops.iota(np.dtype(np.int32), (n, n), 1)
    on = ufuncs.equal(cols - rows, k)
    index = ufuncs.clip(ufuncs.minimum(rows, cols), 0, v.shape[0] - 1)
    return ufuncs.where(
        on, _take_along(v, ops.convert(index, np.dtype(np.int32)), 0), zeros((), v.dtype)
    )


@eager
def diagflat(v, k: int = 0):
    """diag of v flattened."""
    return diag(manipulation.ravel(asarray(v)), k)


@eager
def vander(x, N: int | None = None, increasing: bool = False):
    """Columns x**(N-1), ..., x**0 (or increasing)."""
    x = asarray(x)
    n = x.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    return ufuncs.power(
        manipulation.expand_dims(x, 1),
        asarray(powers.astype(x.dtype if dtypes.is_int(x.dtype) else np.int32)),
    )


@eager
def logspace(
    start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0
):
    """base ** linspace(start, stop, num)."""
    if axis != 0:
        fail("logspace", "axis other than 0 is not supported yet")
    exps = linspace(start, stop, num, endpoint=endpoint)
    out = ufuncs.power(asarray(base).astype(exps.dtype), exps)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers spaced evenly on a log scale from start to stop (static ends)."""
    if not isinstance(start, (int, float, np.number)) or not isinstance(
        stop, (int, float, np.number)
    ):
        raise TypeError("geomspace takes Python or NumPy numbers for start and stop")
    if start == 0 or stop == 0 or (start < 0) != (stop < 0):
        raise ValueError("geomspace needs start and stop of one sign, neither 0")
    sign = -1.0 if start < 0 else 1.0
    out = logspace(
        math.log10(builtins.abs(start)),
        math.log10(builtins.abs(stop)),
        num,
        endpoint,
        10.0,
        None,
        axis,
    )
    out = ufuncs.multiply(out, sign)
    return out if dtype is None else public_asarray(out).astype(dtype)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [manipulation.ravel(public_asarray(x)) for x in xi]
    n = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * n
        shape[i] = x.shape[0]
        out.append(manipulation.reshape(x, shape))
    if indexing == "xy" and n >= 2:
        out = [manipulation.swapaxes(o, 0, 1) for o in out]
    if not sparse:
        full = np.broadcast_shapes(*[o.shape for o in out])
        out = [manipulation.broadcast_to(o, full) for o in out]
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    """The index arrays of a grid of shape `dimensions`."""
    dims = tuple(int(d) for d in dimensions)
    grids = meshgrid(
        *[arange(d, dtype=dtype or dtypes.default_int()) for d in dims],
        indexing="ij",
        sparse=sparse,
    )
    return tuple(grids) if sparse else manipulation.stack(grids)


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """The (row, column) indices of tril(ones(n, m), k)."""
    r, c = np.tril_indices(n, k, m)
    return public_asarray(r.astype(np.int64)), public_asarray(c.astype(np.int64))


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """The (row, column) indices of triu(ones(n, m), k)."""
    r, c = np.triu_indices(n, k, m)
    return public_asarray(r.astype(np.int64)), public_asarray(c.astype(np.int64))


def tril_indices_from(arr, k: int = 0):
    """tril_indices for arr's last two dimensions."""
    return tril_indices(arr.shape[-2], k, arr.shape[-1])


def triu_indices_from(arr, k: int = 0):
    """triu_indices for arr's last two dimensions."""
    return triu_indices(arr.shape[-2], k, arr.shape[-1])


def diag_indices(n: int, ndim: int = 2):
    """The indices of the main diagonal of an n x ... x n array."""
    i = arange(n)
    return (i,) * ndim


def diag_indices_from(arr):
    """diag_indices for a square array."""
    return diag_indices(arr.shape[0], arr.ndim)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function called on the index grids of `shape`."""
    grids = indices(shape, dtype=dtypes.canonicalize(dtype))
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


def mask_indices(n: int, mask_func, k: int = 0, *, size: int | None = None):
    """(rows, cols) where mask_func(ones((n, n)), k) is nonzero (e.g.
    mask_indices(3, uir.numpy.triu)): the mask is computed when called, from
    n and k alone."""
    mask = np.asarray(mask_func(np.ones((n, n)), k))
    rows, cols = np.nonzero(mask)
    if size is not None:
        rows, cols = rows[:size], cols[:size]
        pad = size - rows.shape[0]
        if pad > 0:
            rows = np.concatenate([rows, np.zeros(pad, rows.dtype)])
            cols = np.concatenate([cols, np.zeros(pad, cols.dtype)])
    int_type = np.dtype(dtypes.default_int())
    return public_asarray(rows.astype(int_type)), public_asarray(cols.astype(int_type))


__all__ = [
    "arange",
    "diag",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "diagonal",
    "empty",
    "empty_like",
    "eye",
    "fromfunction",
    "full",
    "full_like",
    "geomspace",
    "identity",
    "indices",
    "linspace",
    "logspace",
    "mask_indices",
    "meshgrid",
    "ones",
    "ones_like",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vander",
    "zeros",
    "zeros_like",
]
