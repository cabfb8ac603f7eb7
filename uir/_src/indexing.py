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
    from uir._src import numpy_impl as jnp

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
    from uir._src import numpy_impl as jnp

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
        shape=dtypes.hlo_shape(sizes, x.dtype),
        op_name="dynamic_slice",
    )
    out.weak_type = x.weak_type
    return out


def _advanced(x: Tracer, index: tuple) -> Tracer:
    """Integer-array indexing on one axis (the common case: x[idx], x[:, idx])
    lowered to gather; other axes must be full slices."""
    from uir._src import numpy_impl as jnp

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
