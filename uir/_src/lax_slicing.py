"""uir.lax's slicing and indexing: slice, dynamic_slice,
dynamic_update_slice, gather and the scatters."""

from __future__ import annotations

import numpy as np

from uir._src import ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail


@eager
def slice(operand, start_indices, limit_indices, strides=None):
    from uir._src import numpy_shapes as jnp

    x = asarray(operand)
    strides = strides or [1] * x.ndim
    return jnp.slice_static(x, list(start_indices), list(limit_indices), list(strides))


def _index_scalars(starts, op):
    idx = []
    for s in starts:
        t = ops.convert(asarray(s), np.dtype(np.int32))
        if t.shape != ():
            fail(op, f"start indices must be scalars, got {ops.describe(t)}")
        idx.append(t)
    return idx


@eager
def dynamic_slice(operand, start_indices, slice_sizes):
    x = asarray(operand)
    if len(start_indices) != x.ndim or len(slice_sizes) != x.ndim:
        fail("dynamic_slice", f"needs {x.ndim} start indices and sizes for {ops.describe(x)}")
    idx = _index_scalars(start_indices, "dynamic_slice")
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
def dynamic_update_slice(operand, update, start_indices):
    x = asarray(operand)
    u = ops.convert(asarray(update), x.dtype)
    if u.ndim != x.ndim:
        fail(
            "dynamic_update_slice",
            f"update {ops.describe(u)} must have the rank of {ops.describe(x)}",
        )
    idx = _index_scalars(start_indices, "dynamic_update_slice")
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


@eager
def gather(operand, start_indices, dimension_numbers, slice_sizes):
    """XLA's gather; start_indices' last dimension is the index vector, and
    out-of-range starts are clamped. The result shape is the C++ shape
    inference's (XLA's rule), not recomputed here."""
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
    return out


def _scatter(name: str, combine):
    @eager
    def f(operand, scatter_indices, updates, dimension_numbers):
        x, idx = asarray(operand), asarray(scatter_indices)
        u = ops.convert(asarray(updates), x.dtype)
        window, inserted, to_operand, op_batch, idx_batch = dimension_numbers
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
    return f


scatter = _scatter("scatter", lambda a, b: b)
scatter_add = _scatter("scatter_add", lambda a, b: ops.binary("add", a, b))
scatter_mul = _scatter("scatter_mul", lambda a, b: ops.binary("multiply", a, b))
scatter_min = _scatter("scatter_min", lambda a, b: ops.binary("minimum", a, b))
scatter_max = _scatter("scatter_max", lambda a, b: ops.binary("maximum", a, b))
