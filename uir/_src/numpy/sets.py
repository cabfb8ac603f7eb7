"""jax.numpy's set functions: isin, union1d, intersect1d, setdiff1d and
setxor1d, and the compactions extract and compress. Their results' sizes
depend on the data: under uir.jit a static `size` is required (the first
`size` results, padded with fill_value), as JAX requires it; outside jit
the size is found from the data."""

from __future__ import annotations

import numpy as np

from uir._src.core import ops, tracing
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, reductions, sorting, ufuncs
from uir._src.numpy.unique import _unique_rows


@eager
def isin(
    element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"
):
    """Whether each element occurs in test_elements (every method compares
    each element with every test element)."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        fail(
            "isin",
            f"method must be 'auto', 'compare_all', 'binary_search' or 'sort', got {method!r}",
        )
    e, t = asarray(element), manipulation.ravel(asarray(test_elements))
    hit = reductions.any(ufuncs.equal(manipulation.expand_dims(e, -1), t), axis=-1)
    return ufuncs.logical_not(hit) if invert else hit


def _compact(values, keep, size: int, fill):
    """The elements of `values` (1-D) where `keep` holds, in order, the
    first `size` of them, padded with `fill`."""
    slot = ufuncs.where(keep, reductions.cumsum(keep.astype(np.int32)) - 1, size)
    out = manipulation.broadcast_to(ops.convert(asarray(fill), values.dtype), (size,))
    return out.at[slot].set(values, mode="drop")


def _arrays(arrays):
    return [a if isinstance(a, ops.Tracer) else np.asarray(a) for a in arrays]


def _sized(name: str, size, count_fn, *arrays):
    """`size` checked, or (outside jit) the count `count_fn` finds."""
    if size is not None:
        if not isinstance(size, (int, np.integer)) or size < 0:
            fail(name, f"size must be a non-negative int, got {size!r}")
        return int(size)
    if tracing.current() is not None or any(isinstance(a, ops.Tracer) for a in arrays):
        fail(
            name,
            "the result's size depends on the data: under uir.jit give a static size "
            "(and optionally fill_value), as jax.numpy requires",
        )
    from uir._src.core.api import jit

    return int(jit(count_fn)(*_arrays(arrays)))


def _run(fn, *arrays):
    """fn on the arrays: at once inside a trace, as one program outside."""
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(fn)(*_arrays(arrays))
    return fn(*arrays)


def _unique_flat(x):
    """(sorted unique values padded to x.size, each one's first index,
    which of them are valid)."""
    flat = manipulation.ravel(x)
    n = flat.shape[0]
    values, index, _, _, count = _unique_rows(manipulation.reshape(flat, (n, 1)), n, True, None)
    return values[:, 0], index, creation.arange(n) < count


def _matches(values, other):
    """Whether each of `values` equals some element of `other` (NaN none)."""
    return reductions.any(ufuncs.equal(values[:, None], manipulation.ravel(other)[None, :]), axis=1)


def _smallest_or(fill_value, values, mask, n: int):
    """fill_value, or by default the smallest kept value (0 if none)."""
    if fill_value is not None:
        return fill_value
    return _compact(values, mask, max(n, 1), 0)[0]


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique elements of either array."""
    from uir._src.numpy.unique import unique

    def both(x, y):
        x, y = ops.promote("union1d", x, y)
        return manipulation.concatenate([manipulation.ravel(x), manipulation.ravel(y)])

    if size is None and tracing.current() is None:
        return unique(_run(both, ar1, ar2))
    return _run(lambda x, y: unique(both(x, y), size=size, fill_value=fill_value), ar1, ar2)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted unique elements of ar1 not in ar2 (padded with 0 by
    default, as JAX pads them)."""

    def keep(x, y):
        x, y = ops.promote("setdiff1d", x, y)
        values, _, valid = _unique_flat(x)
        return values, ufuncs.logical_and(valid, ufuncs.logical_not(_matches(values, y)))

    n = _sized("setdiff1d", size, lambda x, y: reductions.sum(keep(x, y)[1]), ar1, ar2)
    fill = 0 if fill_value is None else fill_value
    return _run(lambda x, y: _compact(*keep(x, y), n, fill), ar1, ar2)


def intersect1d(
    ar1,
    ar2,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size=None,
    fill_value=None,
):
    """The sorted unique elements in both arrays (padded with the smallest
    by default); with return_indices, each one's first index in ar1 and in
    ar2 (padded with the arrays' sizes)."""

    def keep(x, y):
        x, y = ops.promote("intersect1d", x, y)
        values, index, valid = _unique_flat(x)
        return values, index, ufuncs.logical_and(valid, _matches(values, y))

    n = _sized("intersect1d", size, lambda x, y: reductions.sum(keep(x, y)[2]), ar1, ar2)

    def run(x, y):
        values, index, mask = keep(x, y)
        out = _compact(values, mask, n, _smallest_or(fill_value, values, mask, n))
        if not return_indices:
            return out
        first_x = _compact(index, mask, n, x.size)
        flat_y = manipulation.ravel(y)
        hits = ufuncs.equal(out[:, None], flat_y[None, :])
        first_y = ufuncs.where(
            reductions.any(hits, axis=1), reductions.argmax(hits, axis=1), flat_y.shape[0]
        )
        first_y = ufuncs.where(creation.arange(n) < reductions.sum(mask), first_y, flat_y.shape[0])
        return out, first_x.astype(np.int32), first_y.astype(np.int32)

    return _run(run, ar1, ar2)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted unique elements in exactly one of the arrays (padded with
    the smallest by default)."""

    def keep(x, y):
        x, y = ops.promote("setxor1d", x, y)
        ux, _, vx = _unique_flat(x)
        uy, _, vy = _unique_flat(y)
        only_x = ufuncs.logical_and(vx, ufuncs.logical_not(_matches(ux, y)))
        only_y = ufuncs.logical_and(vy, ufuncs.logical_not(_matches(uy, x)))
        values = manipulation.concatenate([ux, uy])
        mask = manipulation.concatenate([only_x, only_y])
        order = sorting.argsort(values, stable=True)
        return values[order], mask[order]

    n = _sized("setxor1d", size, lambda x, y: reductions.sum(keep(x, y)[1]), ar1, ar2)

    def run(x, y):
        values, mask = keep(x, y)
        return _compact(values, mask, n, _smallest_or(fill_value, values, mask, n))

    return _run(run, ar1, ar2)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along `axis` (the flattened a for None) where
    condition holds; with size, the first `size` of them, padded with
    fill_value."""
    from uir._src.numpy.util import no_out

    no_out("compress", out)
    shape = np.shape(a)
    if axis is None:
        length = int(np.prod(shape))
    else:
        length = shape[ops.normalize_axis(axis, len(shape), "compress")]
    if np.size(condition) > length:
        fail("compress", f"condition has {np.size(condition)} entries for an axis of {length}")
    n = _sized(
        "compress", size, lambda c: reductions.sum(manipulation.ravel(c).astype(bool)), condition
    )
    if n > length:
        fail("compress", f"size must not exceed the axis' length {length}, got {n}")

    def run(c, v):
        c = manipulation.ravel(c).astype(bool)
        v, ax = (
            (manipulation.ravel(v), 0)
            if axis is None
            else (v, ops.normalize_axis(axis, v.ndim, "compress"))
        )
        keep = manipulation.concatenate([c, creation.zeros((length - c.shape[0],), bool)])
        slot = ufuncs.where(keep, reductions.cumsum(keep.astype(np.int32)) - 1, n)
        moved = manipulation.moveaxis(v, ax, 0)
        filled = manipulation.broadcast_to(
            ops.convert(asarray(fill_value), v.dtype), (n, *moved.shape[1:])
        )
        return manipulation.moveaxis(filled.at[slot].set(moved, mode="drop"), 0, ax)

    return _run(run, condition, a)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition holds (both flattened)."""
    return compress(condition, arr, None, size=size, fill_value=fill_value)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """filt without its leading ('f') and trailing ('b') zeros along each
    of `axis` (every axis for None). The result's shape is the data's, so,
    as in JAX, it needs concrete values: it runs outside uir.jit only."""
    if tracing.current() is not None or isinstance(filt, ops.Tracer):
        fail("trim_zeros", "the result's shape depends on the data: call it outside uir.jit")
    if not isinstance(trim, str) or not set(trim.lower()) <= {"f", "b"}:
        fail("trim_zeros", f"trim must hold 'f' and/or 'b', got {trim!r}")
    arr = np.asarray(filt)
    if arr.ndim == 0:
        fail("trim_zeros", "takes an array of at least one dimension")
    nonzero = np.asarray(_run(lambda x: ufuncs.not_equal(x, 0), arr))
    axes = (
        range(arr.ndim)
        if axis is None
        else [ops.normalize_axis(a, arr.ndim, "trim_zeros") for a in np.atleast_1d(axis)]
    )
    index = [slice(None)] * arr.ndim
    for ax in axes:
        others = tuple(i for i in range(arr.ndim) if i != ax)
        hit = np.flatnonzero(nonzero.any(axis=others) if others else nonzero)
        if hit.size == 0:
            index[ax] = slice(0, 0)
            continue
        lo = int(hit[0]) if "f" in trim.lower() else 0
        hi = int(hit[-1]) + 1 if "b" in trim.lower() else arr.shape[ax]
        index[ax] = slice(lo, hi)
    return arr[tuple(index)]


__all__ = [
    "compress",
    "extract",
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "trim_zeros",
    "union1d",
]
