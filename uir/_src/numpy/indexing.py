"""x[...] on traced arrays: integers, slices, None and Ellipsis lower to
slice/reshape/reverse, traced integer indices to dynamic-slice (clamped, as
in JAX); index arrays and static masks in any mix to one gather, and updates
(x.at[...]) to scatter (advanced_indexing.py)."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.slicing import _take_along
from uir._src.numpy import advanced_indexing, creation, manipulation, ufuncs
from uir._src.numpy.manipulation import ravel
from uir._src.numpy.ufuncs import (
    add,
    less,
    where,
)
from uir._src.numpy.util import no_out, public_asarray


def _expand_ellipsis(index: tuple, ndim: int) -> tuple:
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if sum(1 for i in index if i is Ellipsis) > 1:
        ops.fail("getitem", "an index can only have a single ellipsis")
    if n_real > ndim:
        ops.fail("getitem", f"too many indices ({n_real}) for an array of rank {ndim}")
    out = []
    for i in index:
        if i is Ellipsis:
            out += [slice(None)] * (ndim - n_real)
        else:
            out.append(i)
    if not any(i is Ellipsis for i in index):
        out += [slice(None)] * (ndim - n_real)
    return tuple(out)


def _is_int_array(i) -> bool:
    if isinstance(i, Tracer):
        return dtypes.is_int(i.dtype) and i.ndim > 0
    if isinstance(i, (list, np.ndarray)):
        return np.asarray(i).dtype.kind in "iu" and np.asarray(i).ndim > 0
    return False


def getitem(x: Tracer, index) -> Tracer:
    from uir._src.numpy import manipulation

    if not isinstance(index, tuple):
        index = (index,)
    # A 0-d integer array is an integer.
    index = tuple(
        int(i) if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu" else i
        for i in index
    )
    if any(
        isinstance(i, (list, tuple, np.ndarray))
        or (isinstance(i, Tracer) and (i.ndim > 0 or i.dtype == np.bool_))
        or isinstance(i, (bool, np.bool_))
        for i in index
    ):
        # Index arrays or masks: NumPy's advanced indexing, as one gather.
        expanded, entries = advanced_indexing.expand(x, index, "getitem")
        if any(advanced_indexing._is_index_array(e) for e in entries):
            return advanced_indexing.gather(expanded, entries, "getitem", getitem)
        x, index = expanded, tuple(entries)
    index = _expand_ellipsis(index, x.ndim)
    # Static slices first, then traced scalar indices with dynamic-slice.
    starts, limits, strides, flips = [], [], [], []
    dynamic = []  # (axis in x, traced index)
    squeeze_axes = []
    new_axes = []  # positions in the output
    out_pos = 0
    axis = 0
    for i in index:
        if i is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = x.shape[axis]
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step > 0:
                starts.append(start)
                limits.append(max(stop, start))
                strides.append(step)
                flips.append(False)
            else:
                # Reverse, then slice forward.
                count = len(range(start, stop, step))
                first = n - 1 - start
                starts.append(first)
                limits.append(first + (count - 1) * (-step) + 1 if count else first)
                strides.append(-step)
                flips.append(True)
            out_pos += 1
        elif isinstance(i, (int, np.integer)):
            k = int(i)
            if not -n <= k < n:
                ops.fail("getitem", f"index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
            starts.append(k)
            limits.append(k + 1)
            strides.append(1)
            flips.append(False)
            squeeze_axes.append(axis)
        elif isinstance(i, Tracer) and i.ndim == 0 and dtypes.is_int(i.dtype):
            starts.append(0)
            limits.append(n)
            strides.append(1)
            flips.append(False)
            dynamic.append((axis, i))
            squeeze_axes.append(axis)
        else:
            ops.fail("getitem", f"unsupported index {i!r} for {ops.describe(x)}")
        axis += 1
    out = x
    if any(flips):
        out = manipulation.flip(out, axis=tuple(a for a, f in enumerate(flips) if f))
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        out = manipulation.slice_static(out, starts, limits, strides)
    if dynamic:
        out = _dynamic_slice(out, dynamic)
    shape = [s for a, s in enumerate(out.shape) if a not in squeeze_axes]
    for p in new_axes:
        shape.insert(p, 1)
    return ops.reshape(out, shape)


def _dynamic_slice(x: Tracer, dynamic) -> Tracer:
    """Size-1 dynamic slices on the given axes; negative indices count from
    the end, and out-of-range starts are clamped (XLA's rule)."""
    from uir._src.numpy import ufuncs

    index_type = dtypes.default_int()
    starts = []
    by_axis = dict(dynamic)
    for a in range(x.ndim):
        if a in by_axis:
            i = ops.convert(by_axis[a], index_type)
            i = ufuncs.where(ufuncs.less(i, 0), ufuncs.add(i, x.shape[a]), i)
            starts.append(i)
        else:
            starts.append(ops.asarray(np.zeros((), index_type)))
    sizes = [1 if a in by_axis else s for a, s in enumerate(x.shape)]
    out = ops._comp().emit(
        "dynamic-slice",
        x,
        *starts,
        dynamic_slice_sizes=sizes,
        shape=(sizes, x.dtype),
        op_name="dynamic_slice",
    )
    out.weak_type = x.weak_type
    return out


_SCATTER_OPS = {
    "set": None,
    "add": "add",
    "multiply": "multiply",
    "divide": "divide",
    "power": "power",
    "min": "minimum",
    "max": "maximum",
}


def _static_in_bounds(shape, index) -> bool:
    """Whether NumPy takes `index` into an array of `shape` (tried on a
    zero-strided view: nothing of that size is allocated)."""
    try:
        np.broadcast_to(np.False_, shape)[index]
    except IndexError:
        return False
    return True


def scatter_update(x: Tracer, index, values, mode: str, scatter_mode=None, apply=None) -> Tracer:
    """x.at[index].<mode>(values), lowered to scatter. Static indices
    (ints, slices, None, Ellipsis, masks, integer arrays) select their
    elements by position; a traced integer index or index array on one axis
    (other axes whole) updates along that axis; any other mix scatters to
    the flat positions x[index] selects (advanced_indexing.positions).
    Repeated positions combine in turn (add, multiply, ...); for set, the
    last update wins. Out-of-range positions are dropped, or clamped with
    scatter_mode "clip". `apply` (mode "apply"): f(x) at each position."""
    from uir._src.numpy import ufuncs

    if scatter_mode not in advanced_indexing._MODES:
        ops.fail("at", f"mode must be one of {advanced_indexing._MODES}, got {scatter_mode!r}")
    if mode == "apply":
        values = ops.asarray(np.zeros((), x.dtype))
        opcode = None
    else:
        opcode = _SCATTER_OPS[mode]
        values = ops.convert(ops.asarray(values), x.dtype)

    def combiner(a, b):
        if apply is not None:
            return ops.convert(asarray(apply(a)), x.dtype)
        return b if opcode is None else ops.binary(opcode, a, b)

    reducer = ops.scalar_computation(f"scatter_{mode}", x.dtype, combiner)
    if not isinstance(index, tuple):
        index = (index,)
    if not any(isinstance(i, Tracer) for i in index) and not _static_in_bounds(x.shape, index):
        # out-of-range constant indices follow the scatter's mode (dropped
        # by default, as in JAX), as traced ones do
        index = tuple(
            ops.asarray(np.asarray(i))
            if isinstance(i, (int, np.integer, np.ndarray, list)) and not isinstance(i, bool)
            else i
            for i in index
        )
    traced = [i for i in index if isinstance(i, Tracer)]
    full = None if not traced else _expand_ellipsis(index, x.ndim)
    one_axis = (
        full is not None
        and len(traced) == 1
        and scatter_mode != "clip"
        and all(isinstance(i, Tracer) or (isinstance(i, slice) and i == slice(None)) for i in full)
        and dtypes.is_int(traced[0].dtype)
    )
    if traced and not one_axis:
        # Any mix: the flat positions x[index] selects, and a flat scatter.
        where_to = advanced_indexing.positions(x.shape, index, "at", getitem, scatter_mode)
        return _flat_scatter(x, where_to, values, reducer, mode)
    if not traced:
        positions = np.arange(x.size, dtype=np.int64).reshape(x.shape)[index]
        return _flat_scatter(
            x, ops.asarray(positions.astype(dtypes.default_int())), values, reducer, mode
        )
    axes = [a for a, i in enumerate(full) if isinstance(i, Tracer)]
    ax = axes[0]
    idx = ops.convert(traced[0], dtypes.default_int())
    idx = ufuncs.where(ufuncs.less(idx, 0), ufuncs.add(idx, x.shape[ax]), idx)
    window = [d for d in range(x.ndim) if d != ax]
    upd_shape = (*idx.shape, *[x.shape[d] for d in window])
    upd = ops.broadcast_to(values, x.shape[:ax] + idx.shape + x.shape[ax + 1 :], "at")
    # Move the indexed dims first: updates are [idx dims..., window dims...].
    k = idx.ndim
    perm = list(range(ax, ax + k)) + list(range(ax)) + list(range(ax + k, upd.ndim))
    upd = ops.transpose(upd, perm)
    out = ops._comp().emit(
        "scatter",
        x,
        idx,
        upd,
        update_window_dims=list(range(k, len(upd_shape))),
        inserted_window_dims=[ax],
        scatter_dims_to_operand_dims=[ax],
        index_vector_dim=k,
        to_apply=reducer,
        shape=(x.shape, x.dtype),
        op_name=f"scatter-{mode}",
    )
    out.weak_type = x.weak_type
    return out


def _flat_scatter(x, where_to, values, reducer, mode: str):
    """x with values (broadcast to where_to's shape) combined at the flat
    positions where_to (those out of range dropped)."""
    upd = ops.broadcast_to(values, where_to.shape, "at")
    count = int(np.prod(where_to.shape, dtype=np.int64))
    out = ops._comp().emit(
        "scatter",
        ops.reshape(x, (x.size,)),
        ops.reshape(where_to, (count, 1)),
        ops.reshape(upd, (count,)),
        update_window_dims=[],
        inserted_window_dims=[0],
        scatter_dims_to_operand_dims=[0],
        index_vector_dim=1,
        to_apply=reducer,
        shape=((x.size,), x.dtype),
        op_name=f"scatter-{mode}",
    )
    out = ops.reshape(out, x.shape)
    out.weak_type = x.weak_type
    return out


class _IndexRef:
    """x.at[index]: jax.numpy's functional updates (and get), each taking
    JAX's keywords: mode ("fill", "drop", "clip", "promise_in_bounds";
    out-of-range reads fill and writes drop by default),
    indices_are_sorted and unique_indices (hints; uir needs neither)."""

    def __init__(self, x, index):
        self.x, self.index = x, index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        if mode in ("fill", "drop") or fill_value is not None:
            x, entries = advanced_indexing.expand(self.x, self.index, "at.get")
            if any(advanced_indexing._is_index_array(e) for e in entries):
                return advanced_indexing.gather(x, entries, "at.get", getitem, "fill", fill_value)
        return getitem(self.x, self.index)

    def _update(self, values, kind, mode, apply=None):
        return scatter_update(self.x, self.index, values, kind, mode, apply)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "add", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "multiply", mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "divide", mode)

    div = divide

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "power", mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(values, "max", mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update(None, "apply", mode, apply=func)


class _At:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _IndexRef(self.x, index)


# --- Indexing helpers ----------------------------------------------------------


def _take(a, indices, axis=None):
    """x gathered at `indices` along `axis` (the flattened array when None);
    negative indices count from the end, others out of range are clamped:
    the form uir's own functions use, on indices they keep in range."""
    x = asarray(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "take")
    idx = asarray(indices)
    if not dtypes.is_int(idx.dtype):
        fail("take", f"indices must be integers, got {ops.describe(idx)}")
    idx = ops.convert(idx, dtypes.default_int())
    n = x.shape[ax]
    idx = where(less(idx, 0), add(idx, n), idx)
    return _take_along(x, idx, ax)


_TAKE_MODES = (None, "fill", "clip", "wrap")


@eager
def take(
    a,
    indices,
    axis=None,
    out=None,
    mode=None,
    unique_indices=False,
    indices_are_sorted=False,
    fill_value=None,
):
    """a at `indices` along `axis` (the flattened array when None), as
    jax.numpy.take: by default ("fill") negative indices count from the end
    and those out of range give `fill_value` (NaN, or the type's extreme);
    "clip" clamps them into range (negatives to 0), "wrap" takes them modulo
    the axis' length."""
    no_out("take", out)
    if mode not in _TAKE_MODES:
        fail("take", f"mode must be one of {_TAKE_MODES}, got {mode!r}")
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = ops.normalize_axis(axis, x.ndim, "take")
    idx = asarray(indices)
    if not dtypes.is_int(idx.dtype):
        fail("take", f"indices must be integers, got {ops.describe(idx)}")
    idx = ops.convert(idx, dtypes.default_int())
    n = x.shape[ax]
    if mode == "clip":
        return _take_along(x, ufuncs.clip(idx, 0, n - 1), ax)
    if mode == "wrap":
        return _take_along(x, ufuncs.remainder(idx, n), ax)
    entries = [slice(None)] * ax + [idx]
    return advanced_indexing.gather(x, entries, "take", getitem, "fill", fill_value)


@eager
def take_along_axis(
    arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=None
):
    """arr at `indices` along `axis`, every other axis matched (jax.numpy's):
    negative indices count from the end (unless wrap_negative_indices is
    False); out of range, by default ("fill"), gives `fill_value`, "clip"
    clamps."""
    if mode not in (None, "fill", "clip", "promise_in_bounds"):
        fail("take_along_axis", f'Unknown gather mode "{mode}" (fill, clip or promise_in_bounds)')
    x, idx = asarray(arr), asarray(indices)
    if axis is None:
        x, idx, axis = ravel(x), ravel(idx), 0
    ax = ops.normalize_axis(axis, x.ndim, "take_along_axis")
    found = _take_along_axis(x, idx, ax, wrap_negative_indices is not False)
    if mode in ("clip", "promise_in_bounds"):
        return found
    n = x.shape[ax]
    i = ops.convert(idx, dtypes.default_int())
    low = -n if wrap_negative_indices is not False else 0
    inside = ufuncs.logical_and(ufuncs.greater_equal(i, low), less(i, n))
    fill = advanced_indexing.fill_for(x.dtype, fill_value)
    return where(inside, found, ops.convert(ops.asarray(np.asarray(fill)), x.dtype))


def _take_along_axis_at(arr, indices, axis: int):
    """take_along_axis for uir's own functions: negatives from the end, out
    of range clamped (indices they keep in range)."""
    x, idx = asarray(arr), asarray(indices)
    return _take_along_axis(x, idx, ops.normalize_axis(axis, x.ndim, "take_along_axis"))


def _take_along_axis(x, idx, ax: int, wrap_negative: bool = True):
    """x at idx along ax (negatives from the end when wrap_negative; out of
    range clamped by the gather)."""
    if idx.ndim != x.ndim:
        fail(
            "take_along_axis",
            f"indices {ops.describe(idx)} must have the rank of {ops.describe(x)}",
        )
    idx = ops.convert(idx, dtypes.default_int())
    if wrap_negative:
        idx = where(less(idx, 0), add(idx, x.shape[ax]), idx)
    # Every other axis is a batching dim of the gather.
    batch = [i for i in range(x.ndim) if i != ax]
    shape = ops.broadcast_shapes(
        "take_along_axis",
        tuple(s for i, s in enumerate(x.shape) if i != ax),
        tuple(s for i, s in enumerate(idx.shape) if i != ax),
    )
    full = list(shape)
    full.insert(ax, idx.shape[ax])
    idx = ops.broadcast_to(idx, full)
    x_shape = list(shape)
    x_shape.insert(ax, x.shape[ax])
    x = ops.broadcast_to(x, x_shape)
    idx = ops.reshape(idx, (*idx.shape, 1))
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=[],
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
        index_vector_dim=x.ndim,
        slice_sizes=[1] * x.ndim,
        shape=(full, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


def ix_(*args):
    """Open-mesh index arrays from 1-D sequences (for indexing a cross product)."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = public_asarray(a)
        if a.ndim != 1:
            raise ValueError("ix_ takes one-dimensional sequences")
        out.append(manipulation.reshape(a, [a.shape[0] if j == i else 1 for j in range(n)]))
    return tuple(out)


@eager
def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """a with its main diagonal set to val (a new array: pass inplace=False, as JAX asks)."""
    if inplace:
        fail(
            "fill_diagonal", "uir arrays are immutable: pass inplace=False to get the filled array"
        )
    a = asarray(a)
    rows = ops.iota(np.dtype(np.int32), a.shape, 0)
    on = None
    for d in range(1, a.ndim):
        eq = ufuncs.equal(ops.iota(np.dtype(np.int32), a.shape, d), rows)
        on = eq if on is None else on & eq
    v = (
        manipulation.broadcast_to(asarray(val).astype(a.dtype), a.shape)
        if asarray(val).ndim == 0
        else None
    )
    if v is None:
        flat_index = (
            ufuncs.minimum(rows, asarray(val).shape[0] - 1) if asarray(val).ndim == 1 else rows
        )
        v = _take(manipulation.ravel(asarray(val)).astype(a.dtype), flat_index)
    return ufuncs.where(on, v, a)


@eager
def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C", *, dtype=None):
    """Flat indices of index tuples into an array of shape dims (row-major,
    or column-major with order 'F'; clipped, or wrapped with mode 'wrap'),
    in `dtype` (the default integer type by default)."""
    if order not in ("C", "F"):
        fail("ravel_multi_index", f"order must be 'C' or 'F', got {order!r}")
    dims = tuple(int(d) for d in dims)
    out = None
    stride = 1
    pairs = list(zip(multi_index, dims, strict=True))
    for idx, d in reversed(pairs) if order == "C" else pairs:
        i = asarray(idx)
        i = ufuncs.remainder(i, d) if mode == "wrap" else ufuncs.clip(i, 0, d - 1)
        term = i * stride
        out = term if out is None else out + term
        stride *= d
    return out if dtype is None else out.astype(dtypes.canonicalize(np.dtype(dtype)))


@eager
def unravel_index(indices, shape):
    """The index tuples of flat indices into an array of `shape` (clipped)."""
    shape = tuple(int(d) for d in shape)
    i = ufuncs.clip(asarray(indices), 0, math.prod(shape) - 1)
    out = []
    for d in reversed(shape):
        out.append(ufuncs.remainder(i, d))
        i = i // d
    return tuple(reversed(out))


# --- put -----------------------------------------------------------------------------


@eager
def put(a, ind, v, mode: str | None = None, *, inplace: bool = True):
    """a with a.flat[ind] = v (v repeated to ind's length). Indices wrap
    from the end and clip at both ends (mode None, as JAX), clip, or wrap
    around (mode 'wrap'). Needs inplace=False: arrays are immutable."""
    if inplace:
        fail("put", "cannot modify an array in place; pass inplace=False for an updated array")
    arr = asarray(a)
    flat = manipulation.ravel(arr)
    ind = manipulation.ravel(asarray(ind)).astype(dtypes.default_int())
    values = manipulation.ravel(asarray(v)).astype(arr.dtype)
    size = flat.shape[0]
    if size == 0 or ind.shape[0] == 0 or values.shape[0] == 0:
        return arr
    if values.shape[0] < ind.shape[0]:
        values = manipulation.tile(values, -(-ind.shape[0] // values.shape[0]))
    values = values[: ind.shape[0]]
    if mode is None:
        ind = ufuncs.clip(ufuncs.where(ind < 0, ind + size, ind), 0, size - 1)
    elif mode == "clip":
        ind = ufuncs.clip(ind, 0, size - 1)
    elif mode == "wrap":
        ind = ind % size
    elif mode == "raise":
        fail(
            "put", "mode 'raise' is not supported (as in JAX): it would need a data-dependent error"
        )
    else:
        fail("put", f"mode must be 'clip' or 'wrap', got {mode!r}")
    return manipulation.reshape(flat.at[ind].set(values), arr.shape)


@eager
def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True, *, mode=None):
    """arr with values written at `indices` along axis (the counterpart of
    take_along_axis; arr flattened when axis is None). Negative indices
    count from the end; indices out of bounds are dropped. Needs
    inplace=False: arrays are immutable."""
    del mode
    if inplace:
        fail(
            "put_along_axis",
            "cannot modify an array in place; pass inplace=False for an updated array",
        )
    a = asarray(arr)
    shape = a.shape
    if axis is None:
        a, axis = manipulation.ravel(a), 0
    indices = asarray(indices)
    if indices.ndim != a.ndim:
        fail(
            "put_along_axis",
            f"arr and indices need the same number of dimensions, got {ops.describe(a)} and "
            f"{ops.describe(indices)}",
        )
    axis = ops.normalize_axis(axis, a.ndim, "put_along_axis")
    out_shape = np.broadcast_shapes(
        tuple(1 if d == axis else s for d, s in enumerate(a.shape)),
        tuple(1 if d == axis else s for d, s in enumerate(indices.shape)),
    )
    if any(o != s for d, (o, s) in enumerate(zip(out_shape, a.shape, strict=True)) if d != axis):
        fail("put_along_axis", f"indices {ops.describe(indices)} do not fit arr {ops.describe(a)}")
    idx_shape = tuple(indices.shape[d] if d == axis else a.shape[d] for d in builtins.range(a.ndim))
    indices = manipulation.broadcast_to(indices, idx_shape).astype(dtypes.default_int())
    values = manipulation.broadcast_to(asarray(values).astype(a.dtype), idx_shape)
    n = a.shape[axis]
    along = ufuncs.where(indices < 0, indices + n, indices)
    inside = (along >= 0) & (along < n)
    # Flat positions; an index out of bounds points past the end, where the
    # scatter drops it.
    strides = np.cumprod((1, *a.shape[::-1]))[::-1][1:]
    flat = creation.zeros(idx_shape, dtypes.default_int())
    for d in builtins.range(a.ndim):
        coord = along if d == axis else ops.iota(np.dtype(dtypes.default_int()), idx_shape, d)
        flat = flat + coord * int(strides[d])
    flat = ufuncs.where(inside, flat, a.size)
    out = manipulation.ravel(a).at[manipulation.ravel(flat)].set(manipulation.ravel(values))
    return manipulation.reshape(out, shape)


__all__ = [
    "fill_diagonal",
    "ix_",
    "put",
    "put_along_axis",
    "ravel_multi_index",
    "take",
    "take_along_axis",
    "unravel_index",
]
