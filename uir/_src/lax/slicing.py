"""uir.lax's slicing and indexing: slice, dynamic_slice,
dynamic_update_slice, gather and the scatters."""

from __future__ import annotations

import builtins
import enum

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail


@eager
def slice(operand, start_indices, limit_indices, strides=None):

    x = asarray(operand)
    strides = strides or [1] * x.ndim
    return slice_static(x, list(start_indices), list(limit_indices), list(strides))


def _index_scalars(starts, op, shape=None, allow_negative=False):
    """The start indices as s32 scalars. With `allow_negative` (a bool, or
    one per dimension; JAX's allow_negative_indices, default True there),
    a negative start counts from the end of its dimension in `shape`;
    without, a static negative start is refused as JAX refuses it (a traced
    one is clamped to 0 by the op, as XLA does)."""
    if isinstance(allow_negative, (bool, np.bool_)):
        allow_negative = [bool(allow_negative)] * len(starts)
    elif len(allow_negative) != len(starts):
        fail(op, f"allow_negative_indices needs one bool per dimension ({len(starts)})")
    idx = []
    for d, s in enumerate(starts):
        static = isinstance(s, (int, np.integer)) or (
            isinstance(s, np.ndarray) and s.shape == () and s.dtype.kind in "iu"
        )
        if static and shape is not None and int(s) < 0:
            if not allow_negative[d]:
                fail(
                    op,
                    f"Index {int(s)} is out of bounds for dimension {shape[d]} if "
                    "allow_negative_indices=False",
                )
            s = int(s) + shape[d]
        t = ops.convert(asarray(s), np.dtype(np.int32))
        if t.shape != ():
            fail(op, f"start indices must be scalars, got {ops.describe(t)}")
        if not static and shape is not None and allow_negative[d]:
            zero = asarray(np.int32(0))
            t = ops.select(
                ops.compare(t, zero, "LT", "lt"),
                ops.binary("add", t, asarray(np.int32(shape[d]))),
                t,
            )
        idx.append(t)
    return idx


@eager
def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    x = asarray(operand)
    if len(start_indices) != x.ndim or len(slice_sizes) != x.ndim:
        fail("dynamic_slice", f"needs {x.ndim} start indices and sizes for {ops.describe(x)}")
    idx = _index_scalars(start_indices, "dynamic_slice", x.shape, allow_negative_indices)
    out = ops._comp().emit(
        "dynamic-slice",
        x,
        *idx,
        dynamic_slice_sizes=list(slice_sizes),
        shape=(slice_sizes, x.dtype),
        op_name="dynamic_slice",
    )
    out.weak_type = x.weak_type
    return out


@eager
def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    x = asarray(operand)
    u = ops.convert(asarray(update), x.dtype)
    if u.ndim != x.ndim:
        fail(
            "dynamic_update_slice",
            f"update {ops.describe(u)} must have the rank of {ops.describe(x)}",
        )
    idx = _index_scalars(start_indices, "dynamic_update_slice", x.shape, allow_negative_indices)
    out = ops._comp().emit("dynamic-update-slice", x, u, *idx, op_name="dynamic_update_slice")
    out.weak_type = x.weak_type
    return out


class GatherDimensionNumbers(tuple):
    """jax.lax.GatherDimensionNumbers."""

    def __new__(
        cls,
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        operand_batching_dims=(),
        start_indices_batching_dims=(),
    ):
        return super().__new__(
            cls,
            (
                tuple(offset_dims),
                tuple(collapsed_slice_dims),
                tuple(start_index_map),
                tuple(operand_batching_dims),
                tuple(start_indices_batching_dims),
            ),
        )


class ScatterDimensionNumbers(tuple):
    """jax.lax.ScatterDimensionNumbers."""

    def __new__(
        cls,
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
        operand_batching_dims=(),
        scatter_indices_batching_dims=(),
    ):
        return super().__new__(
            cls,
            (
                tuple(update_window_dims),
                tuple(inserted_window_dims),
                tuple(scatter_dims_to_operand_dims),
                tuple(operand_batching_dims),
                tuple(scatter_indices_batching_dims),
            ),
        )


class GatherScatterMode(enum.Enum):
    """How out-of-bounds gather and scatter indices are treated."""

    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f"unknown gather mode {s!r}")


def fill_for(dtype, fill_value):
    """What an out-of-range read gives (JAX's defaults): NaN for inexact
    types, the most negative value for signed integers, the largest for
    unsigned ones, True for bool; or `fill_value`."""
    if fill_value is not None:
        return fill_value
    dtype = np.dtype(dtype)
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.max if dtype.kind == "u" else info.min


def _mode(mode, name: str):
    """jax.lax.GatherScatterMode.from_any, with JAX's default (None: fill
    or drop) and ONE_HOT refused."""
    try:
        out = GatherScatterMode.from_any(mode)
    except ValueError:
        fail(
            name, f"mode must be 'clip', 'fill', 'drop', 'promise_in_bounds' or None, got {mode!r}"
        )
    if out == GatherScatterMode.ONE_HOT:
        fail(name, "mode ONE_HOT is not supported")
    return out


def _in_bounds(idx, operand_shape, dims, sizes):
    """Per index vector (idx's last dimension): whether the window starting
    there lies inside the operand along each of `dims`."""
    ok = None
    for k, (d, size) in enumerate(zip(dims, sizes, strict=True)):
        start = idx[..., k]
        limit = asarray(np.array(operand_shape[d] - size, dtype=np.dtype(idx.dtype)))
        zero = asarray(np.zeros((), np.dtype(idx.dtype)))
        inside = ops.binary(
            "and", ops.compare(start, zero, "GE", "ge"), ops.compare(start, limit, "LE", "le")
        )
        ok = inside if ok is None else ops.binary("and", ok, inside)
    return ok


@eager(static=("dimension_numbers", "slice_sizes", "mode"))
def gather(
    operand,
    start_indices,
    dimension_numbers,
    slice_sizes,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode=None,
    fill_value=None,
):
    """XLA's gather; start_indices' last dimension is the index vector. As
    jax.lax.gather: with mode 'fill' (or 'drop') a window reaching out of
    the operand gives fill_value everywhere (NaN for inexact types, the
    extreme for integers, True for bools); by default (None, JAX's
    'promise_in_bounds') and with 'clip' the starts are clamped, as XLA's
    gather clamps them. The result shape is the C++
    shape inference's (XLA's rule), not recomputed here."""
    mode = _mode("promise_in_bounds" if mode is None else mode, "gather")
    x, idx = asarray(operand), asarray(start_indices)
    offset, collapsed, start_map, op_batch, idx_batch = dimension_numbers
    attrs = {}
    if op_batch:
        attrs.update(
            operand_batching_dims=list(op_batch), start_indices_batching_dims=list(idx_batch)
        )
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=list(offset),
        collapsed_slice_dims=list(collapsed),
        start_index_map=list(start_map),
        index_vector_dim=idx.ndim - 1,
        slice_sizes=list(slice_sizes),
        op_name="gather",
        **attrs,
    )
    out.weak_type = x.weak_type
    if mode != GatherScatterMode.FILL_OR_DROP or not start_map:
        return out
    ok = _in_bounds(idx, x.shape, start_map, [slice_sizes[d] for d in start_map])
    # The batch dimensions of the result are those not in offset_dims, in order.
    shape = [1 if d in offset else 0 for d in range(out.ndim)]
    batch = iter(ok.shape)
    shape = [1 if v else next(batch) for v in shape]
    ok = ops.broadcast_to(ops.reshape(ok, tuple(shape)), out.shape, "gather")
    fill = ops.convert(asarray(fill_for(x.dtype, fill_value)), x.dtype)
    return ops.select(ok, out, ops.broadcast_to(fill, out.shape, "gather"))


def _window_sizes(operand_shape, updates_shape, dimension_numbers):
    """The scatter window's size along each operand dimension."""
    window, inserted, _, op_batch, _ = dimension_numbers
    spread = [d for d in range(len(operand_shape)) if d not in inserted and d not in op_batch]
    sizes = [1] * len(operand_shape)
    for d, w in zip(spread, window, strict=True):
        sizes[d] = updates_shape[w]
    return sizes


def _scatter(name: str, combine):
    @eager(static=("dimension_numbers", "mode"))
    def f(
        operand,
        scatter_indices,
        updates,
        dimension_numbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
    ):
        mode = _mode(mode, name)
        x, idx = asarray(operand), asarray(scatter_indices)
        u = ops.convert(asarray(updates), x.dtype)
        window, inserted, to_operand, op_batch, idx_batch = dimension_numbers
        if mode == GatherScatterMode.CLIP and to_operand:
            # Clamp each start so that its window lies inside the operand;
            # otherwise XLA's scatter drops out-of-bounds windows.
            sizes = _window_sizes(x.shape, u.shape, dimension_numbers)
            columns = []
            for k, d in enumerate(to_operand):
                top = max(x.shape[d] - sizes[d], 0)
                low = asarray(np.zeros((), np.dtype(idx.dtype)))
                high = asarray(np.array(top, dtype=np.dtype(idx.dtype)))
                column = ops.binary("maximum", ops.binary("minimum", idx[..., k], high), low)
                columns.append(ops.reshape(column, (*column.shape, 1)))
            idx = ops.concatenate(columns, idx.ndim - 1, name)
        reducer = ops.scalar_computation(name, x.dtype, combine)
        attrs = {}
        if op_batch:
            attrs.update(
                input_batching_dims=list(op_batch), scatter_indices_batching_dims=list(idx_batch)
            )
        out = ops._comp().emit(
            "scatter",
            x,
            idx,
            u,
            update_window_dims=list(window),
            inserted_window_dims=list(inserted),
            scatter_dims_to_operand_dims=list(to_operand),
            index_vector_dim=idx.ndim - 1,
            to_apply=reducer,
            shape=(x.shape, x.dtype),
            op_name=name,
            **attrs,
        )
        out.weak_type = x.weak_type
        return out

    f.__name__ = name
    f.__doc__ = (
        f"jax.lax.{name}: XLA's scatter; windows reaching out of the operand are "
        "dropped (mode None, 'fill' or 'drop'), or their starts clamped ('clip')."
    )
    return f


scatter = _scatter("scatter", lambda a, b: b)
scatter_add = _scatter("scatter_add", lambda a, b: ops.binary("add", a, b))
scatter_mul = _scatter("scatter_mul", lambda a, b: ops.binary("multiply", a, b))
scatter_min = _scatter("scatter_min", lambda a, b: ops.binary("minimum", a, b))
scatter_max = _scatter("scatter_max", lambda a, b: ops.binary("maximum", a, b))


# --- slicing ----------------------------------------------------------------------------


@eager
def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "slice_in_dim")
    n = x.shape[ax]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[ax], limits[ax], strides[ax] = start, limit, int(stride)
    return slice_static(x, starts, limits, strides)


@eager
def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The slice at `index` along `axis` (the axis kept with keepdims)."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "index_in_dim")
    i = int(index) + (x.shape[ax] if int(index) < 0 else 0)
    out = slice_in_dim(x, i, i + 1, 1, ax)
    return out if keepdims else ops.reshape(out, x.shape[:ax] + x.shape[ax + 1 :])


@eager
def dynamic_slice_in_dim(
    operand, start_index, slice_size: int, axis: int = 0, *, allow_negative_indices=True
):
    """A window of slice_size at a traced start along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_slice_in_dim")
    starts = [np.int32(0)] * x.ndim
    starts[ax] = start_index
    sizes = list(x.shape)
    sizes[ax] = int(slice_size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


@eager
def dynamic_index_in_dim(
    operand, index, axis: int = 0, keepdims: bool = True, *, allow_negative_indices=True
):
    """The slice at a traced index along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(x, index, 1, ax, allow_negative_indices=allow_negative_indices)
    return out if keepdims else ops.reshape(out, x.shape[:ax] + x.shape[ax + 1 :])


@eager
def dynamic_update_slice_in_dim(
    operand, update, start_index, axis: int, *, allow_negative_indices=True
):
    """operand with `update` written at a traced start along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_update_slice_in_dim")
    starts = [np.int32(0)] * x.ndim
    starts[ax] = start_index
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow_negative_indices)


@eager
def dynamic_update_index_in_dim(operand, update, index, axis: int, *, allow_negative_indices=True):
    """operand with one slice along `axis` replaced at a traced index."""
    x, u = asarray(operand), asarray(update)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_update_index_in_dim")
    if u.ndim == x.ndim - 1:
        u = ops.reshape(u, (*u.shape[:ax], 1, *u.shape[ax:]))
    return dynamic_update_slice_in_dim(
        x, u, index, ax, allow_negative_indices=allow_negative_indices
    )


def _take_along(x, idx, ax: int):
    """x gathered at the integer array idx (in range) along axis ax: the
    result has idx's dimensions in place of ax."""
    out_shape = x.shape[:ax] + idx.shape + x.shape[ax + 1 :]
    offset_dims = list(range(ax)) + list(range(ax + idx.ndim, len(out_shape)))
    slice_sizes = [1 if i == ax else s for i, s in enumerate(x.shape)]
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=offset_dims,
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        index_vector_dim=idx.ndim,
        slice_sizes=slice_sizes,
        shape=(out_shape, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


@eager
def index_take(src, idxs, axes):
    """src at the integer arrays idxs along `axes` (one index per axis)."""
    x = asarray(src)
    if len(idxs) != len(axes):
        fail("lax.index_take", "needs one index array per axis")
    flat = None
    strides = 1
    for idx, ax in reversed(list(zip(idxs, axes, strict=True))):
        term = ops.binary(
            "multiply", ops.convert(asarray(idx), np.dtype(np.int32)), asarray(np.int32(strides))
        )
        flat = term if flat is None else ops.binary("add", flat, term)
        strides *= x.shape[ax]
    moved = [ax for ax in axes]
    rest = [d for d in range(x.ndim) if d not in moved]
    y = ops.transpose(x, [*moved, *rest])
    y = ops.reshape(y, (strides, *[x.shape[d] for d in rest]))
    n = asarray(np.int32(strides))
    flat = ops.select(
        ops.compare(flat, asarray(np.int32(0)), "LT", "lt"), ops.binary("add", flat, n), flat
    )
    return _take_along(y, flat, 0)


@eager
def scatter_sub(
    operand,
    scatter_indices,
    updates,
    dimension_numbers,
    *,
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
):
    """operand with updates subtracted at the indices (scatter_add of -updates)."""
    return scatter_add(
        operand,
        scatter_indices,
        ops.unary("negate", asarray(updates)),
        dimension_numbers,
        mode=mode,
    )


@eager
def scatter_apply(
    operand,
    scatter_indices,
    func,
    dimension_numbers,
    *,
    update_shape=(),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode=None,
):
    """operand with func applied (elementwise, once per index) at the
    positions scatter_indices names, as a scatter whose combiner ignores
    its update."""
    del indices_are_sorted, unique_indices
    if mode not in (None, "drop", "fill", "promise_in_bounds") and str(mode) not in (
        "GatherScatterMode.FILL_OR_DROP",
        "GatherScatterMode.PROMISE_IN_BOUNDS",
    ):
        fail("scatter_apply", f"mode {mode!r} is not supported (out-of-bounds indices are dropped)")
    x = asarray(operand)
    unused = ops.broadcast_to(
        ops.convert(asarray(0), x.dtype), tuple(update_shape), "scatter_apply"
    )
    apply = _scatter("scatter_apply", lambda a, _: asarray(func(a)))
    return apply(x, scatter_indices, unused, dimension_numbers)


def slice_static(x, starts, limits, strides):
    shape = [
        builtins.max(0, -(-(hi - lo) // st))
        for lo, hi, st in zip(starts, limits, strides, strict=True)
    ]
    out = ops._comp().emit(
        "slice",
        x,
        slice=[(lo, hi, st) for lo, hi, st in zip(starts, limits, strides, strict=True)],
        shape=(shape, x.dtype),
        op_name="slice",
    )
    out.weak_type = x.weak_type
    return out


__all__ = [
    "GatherDimensionNumbers",
    "ScatterDimensionNumbers",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "gather",
    "index_in_dim",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
    "slice",
    "slice_in_dim",
]
