"""x[...] on traced arrays: integers, slices, None and Ellipsis; static
parts lower to slice/reshape/reverse, traced integer indices to
dynamic-slice (clamped, as in JAX), and integer arrays to gather."""

from __future__ import annotations

import numpy as np

from uir._src import dtypes, ops
from uir._src.tracing import Tracer


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
    from uir._src import numpy_shapes as jnp

    if not isinstance(index, tuple):
        index = (index,)
    for i in index:
        if isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype == np.bool_:
            ops.fail(
                "getitem", "boolean mask indexing has a data-dependent shape; use uir.numpy.where"
            )
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            ops.fail(
                "getitem", "boolean mask indexing has a data-dependent shape; use uir.numpy.where"
            )
    index = _expand_ellipsis(index, x.ndim)
    if any(_is_int_array(i) for i in index):
        return _advanced(x, index)
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
        out = jnp.flip(out, axis=tuple(a for a, f in enumerate(flips) if f))
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        out = jnp.slice_static(out, starts, limits, strides)
    if dynamic:
        out = _dynamic_slice(out, dynamic)
    shape = [s for a, s in enumerate(out.shape) if a not in squeeze_axes]
    for p in new_axes:
        shape.insert(p, 1)
    return ops.reshape(out, shape)


def _dynamic_slice(x: Tracer, dynamic) -> Tracer:
    """Size-1 dynamic slices on the given axes; negative indices count from
    the end, and out-of-range starts are clamped (XLA's rule)."""
    from uir._src import numpy_shapes as jnp

    index_type = dtypes.default_int()
    starts = []
    by_axis = dict(dynamic)
    for a in range(x.ndim):
        if a in by_axis:
            i = ops.convert(by_axis[a], index_type)
            i = jnp.where(jnp.less(i, 0), jnp.add(i, x.shape[a]), i)
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


def _advanced(x: Tracer, index: tuple) -> Tracer:
    """Integer-array indexing on one axis (the common case: x[idx], x[:, idx])
    lowered to gather; other axes must be full slices."""
    from uir._src import numpy_shapes as jnp

    arrays = [
        (a, i)
        for a, i in enumerate(index)
        if _is_int_array(i) or isinstance(i, (int, np.integer, Tracer))
    ]
    if (
        len(arrays) != 1
        or any(i is None for i in index)
        or any(isinstance(i, slice) and i != slice(None) for i in index)
    ):
        ops.fail(
            "getitem",
            "advanced indexing is supported on one axis with full slices elsewhere (use take/gather)",
        )
    axis, idx = arrays[0]
    return jnp.take(x, idx, axis=axis)


_SCATTER_OPS = {
    "set": None,
    "add": "add",
    "multiply": "multiply",
    "min": "minimum",
    "max": "maximum",
}


def scatter_update(x: Tracer, index, values, mode: str) -> Tracer:
    """x.at[index].<mode>(values), lowered to scatter. Static indices
    (ints, slices, None, Ellipsis, integer arrays) select their elements
    by position; a traced integer index or index array on one axis (other
    axes whole) updates along that axis. Repeated positions accumulate for
    add/multiply/min/max; for set, the last update wins."""
    from uir._src import numpy_shapes as jnp

    opcode = _SCATTER_OPS[mode]
    values = ops.convert(ops.asarray(values), x.dtype)

    def combiner(a, b):
        return b if opcode is None else ops.binary(opcode, a, b)

    reducer = ops.scalar_computation(f"scatter_{mode}", x.dtype, combiner)
    if not isinstance(index, tuple):
        index = (index,)
    traced = [i for i in index if isinstance(i, Tracer)]
    if not traced:
        positions = np.arange(x.size, dtype=np.int64).reshape(x.shape)[index]
        upd = ops.broadcast_to(values, positions.shape, "at")
        flat_x = ops.reshape(x, (x.size,))
        flat_pos = ops.asarray(positions.reshape(-1, 1).astype(dtypes.default_int()))
        flat_upd = ops.reshape(upd, (positions.size,))
        out = ops._comp().emit(
            "scatter",
            flat_x,
            flat_pos,
            flat_upd,
            update_window_dims=[],
            inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0],
            index_vector_dim=1,
            to_apply=reducer,
            shape=((x.size,), x.dtype),
            op_name=f"scatter-{mode}",
        )
        return ops.reshape(out, x.shape)
    full = _expand_ellipsis(index, x.ndim)
    axes = [a for a, i in enumerate(full) if isinstance(i, Tracer)]
    if len(traced) != 1 or any(
        not (isinstance(i, slice) and i == slice(None)) for a, i in enumerate(full) if a not in axes
    ):
        ops.fail("at", "a traced index is supported on one axis, with whole slices on the others")
    ax = axes[0]
    idx = ops.convert(traced[0], dtypes.default_int())
    idx = jnp.where(jnp.less(idx, 0), jnp.add(idx, x.shape[ax]), idx)
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


class _IndexRef:
    def __init__(self, x, index):
        self.x, self.index = x, index

    def get(self):
        return getitem(self.x, self.index)

    def set(self, values):
        return scatter_update(self.x, self.index, values, "set")

    def add(self, values):
        return scatter_update(self.x, self.index, values, "add")

    def multiply(self, values):
        return scatter_update(self.x, self.index, values, "multiply")

    mul = multiply

    def min(self, values):
        return scatter_update(self.x, self.index, values, "min")

    def max(self, values):
        return scatter_update(self.x, self.index, values, "max")


class _At:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _IndexRef(self.x, index)
