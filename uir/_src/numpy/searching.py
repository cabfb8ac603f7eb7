"""jax.numpy's search and selection: searchsorted, digitize, select, choose,
bincount, interp."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy import manipulation, reductions, ufuncs
from uir._src.numpy.ufuncs import _floats
from uir._src.numpy.util import no_out

# --- search and selection -----------------------------------------------------------------


@eager
def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Indices where v's elements would go into sorted a (by counting)."""
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        fail("searchsorted", f"a must be one-dimensional, got {ops.describe(a)}")
    if sorter is not None:
        a = np_indexing._take(a, sorter)
    if side not in ("left", "right"):
        fail("searchsorted", f"side must be 'left' or 'right', got {side!r}")
    a, v = ops.promote("searchsorted", a, v)
    cmp = ufuncs.less if side == "left" else ufuncs.less_equal
    before = cmp(a, manipulation.expand_dims(v, -1))
    return reductions.sum(before, axis=-1).astype(
        dtypes.default_int() if dtypes.default_int() == np.int64 else np.int32
    )


@eager
def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """The bin of each element (bins increasing or decreasing); method as
    searchsorted's."""
    bins = asarray(bins)
    side = "left" if right else "right"
    how = "scan" if method is None else method
    increasing = searchsorted(bins, x, side=side, method=how)
    decreasing = bins.shape[0] - searchsorted(
        manipulation.flip(bins), x, side="right" if right else "left", method=how
    )
    first, last = bins[0], bins[-1]
    return ufuncs.where(first <= last, increasing, decreasing)


@eager
def select(condlist, choicelist, default=0):
    """The choice of the first true condition, elementwise."""
    if len(condlist) != len(choicelist):
        fail("select", "condlist and choicelist must have the same length")
    out = asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        out = ufuncs.where(cond, choice, out)
    return out


@eager
def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[k] where condlist[k] holds (the last true condition wins),
    each entry a function of x (given *args and **kw) or a value; one more
    function than conditions is the value where none holds, else 0. The
    result has x's dtype. As jax.numpy.piecewise: every function is traced
    over all of x and the results selected."""
    x = asarray(x)
    if isinstance(condlist, (bool, np.bool_)) or (
        hasattr(condlist, "ndim") and asarray(condlist).ndim == x.ndim
    ):
        condlist = [condlist]
    conds = [ops.broadcast_to(ufuncs._as_bool(asarray(c)), x.shape, "piecewise") for c in condlist]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:
        anything = conds[0]
        for c in conds[1:]:
            anything = ufuncs.logical_or(anything, c)
        conds = [ufuncs.logical_not(anything), *conds]
        funcs = [funcs[-1], *funcs[:-1]]
    elif len(funcs) != len(conds):
        fail(
            "piecewise",
            f"with {len(conds)} conditions, funclist must have {len(conds)} or {len(conds) + 1} "
            f"entries, got {len(funcs)}",
        )
    out = ops.broadcast_to(ops.convert(ops.asarray(0), x.dtype), x.shape)
    for cond, func in zip(conds, funcs, strict=True):
        value = func(x, *args, **kw) if callable(func) else func
        value = ops.broadcast_to(ops.convert(asarray(value), x.dtype), x.shape, "piecewise")
        out = ufuncs.where(cond, value, out)
    return out


@eager
def choose(a, choices, out=None, mode: str = "raise"):
    """choices[a] elementwise (indices clipped or wrapped; 'raise' clips, as JAX)."""
    no_out("choose", out)
    a = asarray(a)
    xs = [asarray(c) for c in choices]
    n = len(xs)
    idx = ufuncs.remainder(a, n) if mode == "wrap" else ufuncs.clip(a, 0, n - 1)
    out = xs[-1]
    for i in range(n - 2, -1, -1):
        out = ufuncs.where(ufuncs.equal(idx, i), xs[i], out)
    return out


@eager
def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """Counts of each value of non-negative ints x (length must be given
    inside jit, where the largest value is not known)."""
    x = asarray(x)
    if length is None:
        fail(
            "bincount",
            "needs length= (the number of bins): the largest value is not known while tracing",
        )
    n = builtins.max(int(length), int(minlength))
    bins = ops.iota(x.dtype, (n,), 0)
    hits = ufuncs.equal(
        manipulation.expand_dims(manipulation.ravel(x), 0), manipulation.expand_dims(bins, 1)
    )
    if weights is None:
        return reductions.sum(hits, axis=1).astype(dtypes.default_int())
    w = manipulation.ravel(asarray(weights))
    return reductions.sum(ufuncs.where(hits, w, 0), axis=1)


@eager
def interp(x, xp, fp, left=None, right=None, period=None):
    """Linear interpolation of (xp, fp) at x (xp increasing)."""
    if period is not None:
        fail("interp", "period= is not supported yet")
    x, xp, fp = _floats(x), _floats(xp), _floats(fp)
    i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    x0, x1 = np_indexing._take(xp, i - 1), np_indexing._take(xp, i)
    y0, y1 = np_indexing._take(fp, i - 1), np_indexing._take(fp, i)
    dx = x1 - x0
    t = ufuncs.where(dx == 0, 0, (x - x0) / ufuncs.where(dx == 0, 1, dx))
    out = y0 + t * (y1 - y0)
    out = ufuncs.where(x < xp[0], fp[0] if left is None else left, out)
    return ufuncs.where(x > xp[-1], fp[-1] if right is None else right, out)


def _nonzero_flat(mask, size: int):
    """The flat positions of the first `size` true elements of the 1-D
    `mask`, in order, and -1 after them: each true element's rank among the
    true ones (a running count) is where its position is scattered."""
    n = mask.shape[0]
    index_type = dtypes.default_int()
    as_int = ops.convert(mask, index_type)
    rank = ufuncs.subtract(reductions.cumsum(as_int), ops.convert(ops.asarray(1), index_type))
    keep = ufuncs.logical_and(mask, ufuncs.less(rank, size))
    slot = ufuncs.where(keep, rank, size)  # (size is out of range: dropped)
    start = ops.broadcast_to(ops.convert(ops.asarray(-1), index_type), (size,))
    positions = ops.iota(index_type, (n,), 0)
    reducer = ops.scalar_computation("nonzero_set", index_type, lambda a, b: b)
    return ops._comp().emit(
        "scatter",
        start,
        ops.reshape(slot, (n, 1)),
        positions,
        update_window_dims=[],
        inserted_window_dims=[0],
        scatter_dims_to_operand_dims=[0],
        index_vector_dim=1,
        to_apply=reducer,
        shape=((size,), index_type),
        op_name="nonzero",
    )


def _need_size(name: str, size):
    if size is None:
        fail(
            name,
            "the number of nonzero elements depends on the data: give size= (the result's "
            "length; fill_value pads it), as under jax.jit",
        )
    size = int(size)
    if size < 0:
        fail(name, f"size must be non-negative, got {size}")
    return size


@eager(static=("size",))
def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of a, one array per dimension,
    each of length `size`: the first `size` found (row-major), then
    `fill_value` (0 by default; one per dimension when a tuple), as
    jax.numpy.nonzero under jit."""
    size = _need_size("nonzero", size)
    x = asarray(a)
    if x.ndim == 0:
        fail("nonzero", "needs an array of rank 1 or more (as JAX)")
    mask = ufuncs.not_equal(manipulation.ravel(x), ops.convert(ops.asarray(0), x.dtype))
    flat = _nonzero_flat(mask, size)
    fills = tuple(fill_value) if isinstance(fill_value, (tuple, list)) else (fill_value,) * x.ndim
    if len(fills) != x.ndim:
        fail("nonzero", f"fill_value has {len(fills)} entries for {x.ndim} dimensions")
    found = ufuncs.greater_equal(flat, 0)
    out = []
    stride = x.size
    for d, n in enumerate(x.shape):
        stride //= n
        coordinate = ufuncs.remainder(ufuncs.floor_divide(flat, max(stride, 1)), max(n, 1))
        fill = ops.convert(ops.asarray(0 if fills[d] is None else fills[d]), flat.dtype)
        out.append(ufuncs.where(found, coordinate, fill))
    return tuple(out)


@eager(static=("size",))
def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one row each: (size, a.ndim),
    as jax.numpy.argwhere under jit."""
    x = asarray(a)
    if x.ndim == 0:
        x = ops.reshape(x, (1,))
        return manipulation.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)[:, :0]
    return manipulation.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)


@eager(static=("size",))
def flatnonzero(a, *, size=None, fill_value=None):
    """The flat indices of the nonzero elements (jax.numpy.flatnonzero)."""
    return nonzero(manipulation.ravel(asarray(a)), size=size, fill_value=fill_value)[0]


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """x where condition holds, else y; with neither, nonzero(condition,
    size=, fill_value=) (jax.numpy.where)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        fail("where", "takes both x and y, or neither")
    if size is not None or fill_value is not None:
        fail("where", "size and fill_value are for the one-argument form")
    return ufuncs.where(condition, x, y)


__all__ = [
    "argwhere",
    "bincount",
    "choose",
    "digitize",
    "flatnonzero",
    "interp",
    "nonzero",
    "piecewise",
    "searchsorted",
    "select",
]
