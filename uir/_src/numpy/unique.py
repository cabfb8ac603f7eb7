"""jax.numpy.unique and the array API's unique_all/counts/inverse/values.
The number of unique elements depends on the data, so under uir.jit a
static `size` is required, as JAX requires it: the result holds the first
`size` unique elements (sorted), padded with fill_value (the smallest
unique element by default). Called on NumPy arrays outside jit, the size
is found from the data first. Sort-based: a stable sort, a mark where
each run of equal elements starts, a running count for each element's
group."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from uir._src.core import dtypes, ops, tracing
from uir._src.core.ops import fail
from uir._src.numpy import creation, manipulation, reductions, sorting, ufuncs
from uir._src.numpy.util import public_asarray


def _starts(s, equal_nan: bool):
    """Where each run of equal rows of sorted `s` [n, m] starts (bool [n])."""
    n = s.shape[0]
    differ = ufuncs.not_equal(s[1:], s[:-1])
    if equal_nan and (dtypes.is_float(s.dtype) or dtypes.is_complex(s.dtype)):
        both_nan = ufuncs.logical_and(ufuncs.isnan(s[1:]), ufuncs.isnan(s[:-1]))
        differ = ufuncs.logical_and(differ, ufuncs.logical_not(both_nan))
    differ = reductions.any(differ, axis=1)
    return manipulation.concatenate([creation.ones((min(n, 1),), bool), differ])


def _unique_rows(x, size: int, equal_nan: bool, fill_value):
    """Unique rows of x [n, m]: (values [size, m], first index [size],
    inverse [n], counts [size], how many are unique)."""
    n, m = x.shape
    if n == 0:
        # Nothing to sort: every slot is padding (0 without a fill_value).
        fill = 0 if fill_value is None else fill_value
        values = manipulation.broadcast_to(public_asarray(fill).astype(x.dtype), (size, m))
        index = creation.zeros((size,), np.int32)
        zero = public_asarray(np.int32(0))
        return values, index, creation.zeros((0,), np.int32), index, zero
    if m == 1:
        order = sorting.argsort(x[:, 0], stable=True)
    else:
        # Lexicographic by columns: lexsort's last key is the primary one.
        order = sorting.lexsort([x[:, j] for j in reversed(range(m))])
    s = x[order]
    starts = _starts(s, equal_nan)
    group = reductions.cumsum(starts.astype(np.int32)) - 1  # each sorted row's group
    count = reductions.sum(starts.astype(np.int32))
    # Scatter each run's first row to its group (groups past size drop).
    slot = ufuncs.where(starts, group, size)
    if fill_value is None:
        fill = manipulation.broadcast_to(s[0], (size, m))
    else:
        fill = manipulation.broadcast_to(public_asarray(fill_value).astype(x.dtype), (size, m))
    values = fill.at[slot].set(s, mode="drop")
    index = manipulation.broadcast_to(order[0], (size,)).astype(np.int32)
    index = index.at[slot].set(order.astype(np.int32), mode="drop")
    inverse = creation.zeros((n,), np.int32).at[order].set(group.astype(np.int32))
    counts = creation.zeros((size,), np.int32).at[group].add(1, mode="drop")
    return values, index, inverse, counts, count


def _static_size(name: str, x, size, axis, equal_nan: bool) -> int:
    if size is not None:
        if not isinstance(size, (int, np.integer)) or size < 0:
            fail(name, f"size must be a non-negative int, got {size!r}")
        return int(size)
    if tracing.current() is not None or isinstance(x, ops.Tracer):
        fail(
            name,
            "the number of unique elements depends on the data: under uir.jit give a static "
            "size (and optionally fill_value), as jax.numpy.unique requires",
        )
    # Outside jit: count them first, then take exactly that many.
    from uir._src.core.api import jit

    rows = _as_rows(public_asarray(x), axis)[0]
    return int(jit(lambda r: _unique_rows(r, r.shape[0], equal_nan, None)[4])(rows))


def _as_rows(x, axis):
    """x as rows [n, m] along `axis` (flattened for None), and how to put
    the unique rows back."""
    if axis is None:
        return manipulation.reshape(x, (-1, 1)), None
    axis = ops.normalize_axis(axis, x.ndim, "unique")
    moved = manipulation.moveaxis(x, axis, 0)
    return manipulation.reshape(moved, (moved.shape[0], -1)), (axis, moved.shape[1:])


def _run(name, ar, axis, equal_nan, size, fill_value):
    x = public_asarray(ar)
    size = _static_size(name, x, size, axis, equal_nan)
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda v: _traced(v, axis, equal_nan, size, fill_value))(x)
    return _traced(x, axis, equal_nan, size, fill_value)


def _traced(x, axis, equal_nan, size, fill_value):
    rows, back = _as_rows(x, axis)
    values, index, inverse, counts, _ = _unique_rows(rows, size, equal_nan, fill_value)
    if back is None:
        values = values[:, 0]
    else:
        ax, inner = back
        values = manipulation.moveaxis(manipulation.reshape(values, (size, *inner)), 0, ax)
    return values, index, inverse, counts


def unique(
    ar,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value=None,
    sorted: bool = True,
):
    """The sorted unique elements of ar (flattened, or the unique slices
    along `axis`), with the index of each one's first occurrence, the
    inverse (each element's position among them) and the counts, as asked.
    NaNs count as one (equal_nan)."""
    values, index, inverse, counts = _run("unique", ar, axis, equal_nan, size, fill_value)
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _inverse_shaped(inverse, x):
    return manipulation.reshape(inverse, np.shape(x))


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """(values, indices, inverse_indices, counts), the array API's form;
    inverse_indices has x's shape; NaNs are distinct, as the API says."""
    values, index, inverse, counts = _run("unique_all", x, None, False, size, fill_value)
    return UniqueAllResult(values, index, _inverse_shaped(inverse, x), counts)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    values, _, _, counts = _run("unique_counts", x, None, False, size, fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    values, _, inverse, _ = _run("unique_inverse", x, None, False, size, fill_value)
    return UniqueInverseResult(values, _inverse_shaped(inverse, x))


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    return _run("unique_values", x, None, False, size, fill_value)[0]


__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
