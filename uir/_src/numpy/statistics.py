"""jax.numpy's statistics: average, quantiles, percentiles, median, diff,
gradient, trapezoid, cov and corrcoef."""

from __future__ import annotations

import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, products, reductions, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy import sorting as np_sorting
from uir._src.numpy.creation import diagonal
from uir._src.numpy.manipulation import atleast_2d, size
from uir._src.numpy.ufuncs import _floats


@eager
def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The (weighted) mean."""
    a = asarray(a)
    if weights is None:
        avg = reductions.mean(a, axis=axis, keepdims=keepdims)
        count = creation.full_like(
            avg,
            a.size
            if axis is None
            else size(a, axis)
            if isinstance(axis, int)
            else math.prod(a.shape[i] for i in axis),
        )
        return (avg, count) if returned else avg
    w = asarray(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            fail("average", "weights of another shape need a single axis and one dimension")
        ax = ops.normalize_axis(axis, a.ndim, "average")
        w = manipulation.reshape(w, [a.shape[ax] if i == ax else 1 for i in range(a.ndim)])
    total = reductions.sum(w * creation.ones_like(a), axis=axis, keepdims=keepdims)
    avg = reductions.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


@eager
def nanmean(a, axis=None, dtype=None, out=None, keepdims: bool = False, where=None):
    """mean, NaNs ignored (NaN where all are; jax.numpy.nanmean)."""
    a = asarray(a)
    return reductions.mean(
        a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=reductions._valid(a, where)
    )


@eager
def nanvar(
    a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False, where=None, mean=None
):
    """var, NaNs ignored (jax.numpy.nanvar)."""
    a = asarray(a)
    return reductions.var(
        a,
        axis=axis,
        dtype=dtype,
        out=out,
        ddof=ddof,
        keepdims=keepdims,
        where=reductions._valid(a, where),
        mean=mean,
    )


@eager
def nanstd(
    a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False, where=None, mean=None
):
    """std, NaNs ignored (jax.numpy.nanstd)."""
    return ufuncs.sqrt(
        nanvar(
            a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean
        )
    )


@eager
def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The n-th differences along `axis` (after prepending and appending
    values, scalars broadcast across the other axes)."""
    a = asarray(a)
    ax = ops.normalize_axis(axis, a.ndim, "diff")

    def along(extra):
        e = asarray(extra)
        if e.ndim == 0:
            shp = list(a.shape)
            shp[ax] = 1
            e = manipulation.broadcast_to(e, shp)
        return e

    pieces = [a]
    if prepend is not None:
        pieces.insert(0, along(prepend))
    if append is not None:
        pieces.append(along(append))
    if len(pieces) > 1:
        a = manipulation.concatenate(pieces, axis=ax)
    for _ in range(n):
        m = a.shape[ax]
        a = np_indexing._take(a, creation.arange(1, m), axis=ax) - np_indexing._take(
            a, creation.arange(0, m - 1), axis=ax
        )
    return a


@eager
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with values before and after."""
    d = diff(manipulation.ravel(asarray(ary)))
    parts = []
    if to_begin is not None:
        parts.append(manipulation.ravel(asarray(to_begin)).astype(d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(manipulation.ravel(asarray(to_end)).astype(d.dtype))
    return manipulation.concatenate(parts) if len(parts) > 1 else d


@eager
def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """The trapezoidal integral along `axis`."""
    y = _floats(y)
    ax = ops.normalize_axis(axis, y.ndim, "trapezoid")
    n = y.shape[ax]
    mid = (
        np_indexing._take(y, creation.arange(1, n), axis=ax)
        + np_indexing._take(y, creation.arange(0, n - 1), axis=ax)
    ) / 2
    if x is None:
        return reductions.sum(mid, axis=ax) * dx
    d = diff(asarray(x), axis=-1 if asarray(x).ndim == 1 else ax)
    if d.ndim == 1:
        d = manipulation.reshape(d, [d.shape[0] if i == ax else 1 for i in range(y.ndim)])
    return reductions.sum(mid * d, axis=ax)


def _inverted_cdf(s, order, weights, qs, valid):
    """The smallest sorted value whose cumulative weight reaches q of the
    total (NumPy's inverted_cdf; equal weights without `weights`)."""
    if weights is None:
        if valid is None:
            w = creation.ones_like(s)
        else:
            w = np_indexing.take_along_axis(valid, order, axis=-1).astype(s.dtype)
    else:
        w = np_indexing.take_along_axis(weights, order, axis=-1)
        if valid is not None:
            w = ufuncs.where(np_indexing.take_along_axis(valid, order, axis=-1), w, 0)
    running = reductions.cumsum(w, axis=-1)
    target = qs * running[..., -1:]
    q_shape = target.shape[: target.ndim - running.ndim]
    below = ufuncs.less(manipulation.broadcast_to(running, q_shape + running.shape), target)
    index = ufuncs.minimum(reductions.sum(below.astype(np.int32), axis=-1), s.shape[-1] - 1)
    sb = manipulation.broadcast_to(s, index.shape + s.shape[-1:])
    return np_indexing._take_along_axis_at(sb, manipulation.expand_dims(index, -1), axis=-1)[..., 0]


def _quantiles(a, q, axis, method: str, keepdims: bool, nan: bool, weights=None):
    a = _floats(a)
    q = asarray(q).astype(a.dtype)
    if weights is not None:
        if method != "inverted_cdf":
            fail("quantile", f"weights need method='inverted_cdf', not {method!r} (as JAX)")
        weights = manipulation.broadcast_to(asarray(weights).astype(a.dtype), a.shape)
        if axis is None:
            weights = manipulation.ravel(weights)
    kept_shape = None
    if axis is None:
        kept_shape = (1,) * a.ndim
        a, axis = manipulation.ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "quantile")
    a = manipulation.moveaxis(a, ax, -1)
    n = a.shape[-1]
    if method == "inverted_cdf":
        if weights is not None:
            weights = manipulation.moveaxis(weights, ax, -1)
        valid = ufuncs.logical_not(ufuncs.isnan(a)) if nan else None
        keyed = ufuncs.where(valid, a, np.inf) if nan else a
        order = np_sorting.argsort(keyed, axis=-1)
        s = np_indexing.take_along_axis(keyed, order, axis=-1)
        qs = manipulation.reshape(q, q.shape + (1,) * (a.ndim - 1) + (1,))
        out = _inverted_cdf(s, order, weights, qs, valid)
        if nan:
            empty = reductions.sum(valid, axis=-1) == 0
            out = ufuncs.where(empty, np.nan, out)
        return _keep(out, q, ax, keepdims, kept_shape)
    if nan:
        valid = ufuncs.logical_not(ufuncs.isnan(a))
        count = reductions.sum(valid, axis=-1, keepdims=True).astype(a.dtype)
        s = np_sorting.sort(ufuncs.where(valid, a, np.inf), axis=-1)
    else:
        count = asarray(np.array(n, a.dtype))
        s = np_sorting.sort(a, axis=-1)
    qs = manipulation.reshape(q, q.shape + (1,) * (a.ndim - 1) + (1,))  # q dims, batch dims, 1
    pos = qs * (count - 1)
    lo = ufuncs.floor(pos)
    hi = ufuncs.ceil(pos)
    if method == "linear":
        pass
    elif method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    elif method == "nearest":
        lo = hi = ufuncs.round(pos)
    elif method == "midpoint":
        pass
    else:
        fail(
            "quantile",
            f"method {method!r} is not supported "
            "(linear, lower, higher, nearest, midpoint, inverted_cdf)",
        )
    li = ufuncs.clip(lo, 0, n - 1).astype(np.int32)
    hi_i = ufuncs.clip(hi, 0, n - 1).astype(np.int32)
    sb = manipulation.broadcast_to(s, q.shape + s.shape)
    vlo = np_indexing._take_along_axis_at(
        sb, manipulation.broadcast_to(li, q.shape + s.shape[:-1] + (1,)), axis=-1
    )[..., 0]
    vhi = np_indexing._take_along_axis_at(
        sb, manipulation.broadcast_to(hi_i, q.shape + s.shape[:-1] + (1,)), axis=-1
    )[..., 0]
    frac = (pos - lo)[..., 0]
    out = (vlo + vhi) / 2 if method == "midpoint" else vlo + (vhi - vlo) * frac
    if nan:
        out = ufuncs.where(count[..., 0] == 0, np.nan, out)
    return _keep(out, q, ax, keepdims, kept_shape)


def _keep(out, q, ax: int, keepdims: bool, kept_shape):
    """keepdims: the reduced axis back (every axis, as 1s, for axis=None)."""
    if not keepdims:
        return out
    if kept_shape is not None:
        return manipulation.reshape(out, q.shape + kept_shape)
    return manipulation.expand_dims(out, q.ndim + ax)


@eager
def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights=None,
):
    """The q-th quantiles along `axis` (NumPy's methods linear, lower, higher, nearest, midpoint)."""
    return _quantiles(a, q, axis, method, keepdims, nan=False, weights=weights)


@eager
def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights=None,
):
    """quantile, NaNs ignored."""
    return _quantiles(a, q, axis, method, keepdims, nan=True, weights=weights)


@eager
def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights=None,
):
    """quantile with q in percent."""
    return _quantiles(a, asarray(q) / 100, axis, method, keepdims, nan=False, weights=weights)


@eager
def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights=None,
):
    """nanquantile with q in percent."""
    return _quantiles(a, asarray(q) / 100, axis, method, keepdims, nan=True, weights=weights)


@eager
def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median along `axis`."""
    return _quantiles(a, 0.5, axis, "linear", keepdims, nan=False)


@eager
def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """median, NaNs ignored."""
    return _quantiles(a, 0.5, axis, "linear", keepdims, nan=True)


@eager
def cov(
    m,
    y=None,
    rowvar: bool = True,
    bias: bool = False,
    ddof=None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    """The covariance matrix of the rows (variables) of m, each observation
    weighted by fweights (repeat counts) and aweights, as NumPy's."""
    x = _floats(atleast_2d(asarray(m)))
    if dtype is not None:
        x = x.astype(dtypes.canonicalize(np.dtype(dtype)))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _floats(atleast_2d(asarray(y)))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = manipulation.concatenate([x, yy], axis=0)
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    if fweights is None and aweights is None:
        centered = x - reductions.mean(x, axis=1, keepdims=True)
        out = products.matmul(centered, ufuncs.conj(centered).T) / (n - ddof)
        return manipulation.squeeze(out) if out.shape == (1, 1) else out
    w = None
    for given, name in ((fweights, "fweights"), (aweights, "aweights")):
        if given is None:
            continue
        v = asarray(given)
        if v.ndim != 1 or v.shape[0] != n:
            fail("cov", f"{name} must be one weight per observation ({n}), got {ops.describe(v)}")
        v = v.astype(x.dtype)
        w = v if w is None else w * v
    total = reductions.sum(w)
    average = reductions.sum(x * w, axis=1, keepdims=True) / total
    if ddof == 0:
        fact = total
    elif aweights is None:
        fact = total - ddof
    else:
        fact = total - ddof * reductions.sum(w * asarray(aweights).astype(x.dtype)) / total
    centered = x - average
    out = products.matmul(centered * w, ufuncs.conj(centered).T) / fact
    return manipulation.squeeze(out) if out.shape == (1, 1) else out


@eager
def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients of the rows of x."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = ufuncs.sqrt(diagonal(c))
    return ufuncs.clip(c / d[:, None] / d[None, :], -1, 1)


@eager
def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """Central differences inside, one-sided at the edges (unit spacing or
    scalar spacings per axis)."""
    f = _floats(f)
    axes = (
        list(range(f.ndim)) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    )
    spacings = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacings) == 1 and len(axes) > 1:
        spacings = spacings * len(axes)
    if edge_order != 1:
        fail("gradient", "edge_order=1 only")
    out = []
    for ax, h in zip(axes, spacings, strict=True):
        ax = ops.normalize_axis(ax, f.ndim, "gradient")
        n = f.shape[ax]
        if n < 2:
            fail("gradient", "each axis needs at least two points")

        def take(lo, hi, ax=ax):
            return np_indexing._take(f, creation.arange(lo, hi), axis=ax)

        first = (take(1, 2) - take(0, 1)) / h
        last = (take(n - 1, n) - take(n - 2, n - 1)) / h
        inner = (take(2, n) - take(0, n - 2)) / (2 * h)
        out.append(manipulation.concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out


__all__ = [
    "average",
    "corrcoef",
    "cov",
    "diff",
    "ediff1d",
    "gradient",
    "median",
    "nanmean",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nanstd",
    "nanvar",
    "percentile",
    "quantile",
    "trapezoid",
]
