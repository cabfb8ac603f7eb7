"""jax.numpy's sorting: sort, argsort, lexsort, sort_complex, partition and
argpartition."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax import lax as lax_core
from uir._src.lax.lax import _sort
from uir._src.numpy import creation, manipulation, reductions, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.manipulation import ravel


def _sort_options(name: str, kind, order) -> None:
    # As jax.numpy: stability is asked with `stable` (uir's sorts are all
    # stable), not `kind`; `order` names fields of structured arrays.
    if kind is not None:
        fail(
            name,
            f"'kind' argument to {name} is not supported. Use stable=True or stable=False "
            "to specify sort stability.",
        )
    if order is not None:
        fail(name, "'order' (fields of a structured array) is not supported")


@eager
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable=True, descending=False):
    """a sorted along `axis` (flattened when None); NaNs last, or first when
    descending (jax.numpy.sort; every sort is stable here)."""
    _sort_options("sort", kind, order)
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = ops.normalize_axis(axis, x.ndim, "sort")
    out = _sort([x], ax)[0]
    return manipulation.flip(out, axis=ax) if descending else out


@eager
def argsort(
    a, axis: int | None = -1, *, kind=None, order=None, stable=True, descending=False, dtype=None
):
    """The indices that sort a along `axis` (jax.numpy.argsort): equal
    elements keep their order, descending too."""
    _sort_options("argsort", kind, order)
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = ops.normalize_axis(axis, x.ndim, "argsort")
    index_type = dtypes.default_int() if dtype is None else dtypes.canonicalize(dtype)
    if descending:
        # Sorted from the end, then read backwards: the largest first, and
        # equal elements still in their order.
        reversed_x = manipulation.flip(x, axis=ax)
        idx = ops.iota(index_type, x.shape, ax)
        order_back = manipulation.flip(_sort([reversed_x, idx], ax, name="argsort")[1], axis=ax)
        last = ops.convert(ops.asarray(x.shape[ax] - 1), index_type)
        return ops.binary("subtract", ops.broadcast_to(last, x.shape), order_back)
    idx = ops.iota(index_type, x.shape, ax)
    return _sort([x, idx], ax, name="argsort")[1]


@eager
def sort_complex(a):
    """a sorted by real part, then imaginary part, as complex numbers."""
    a = asarray(a)
    if not dtypes.is_complex(a.dtype):
        a = a.astype(np.complex64 if a.dtype.itemsize <= 4 else dtypes.canonicalize(np.complex128))
    return sort(a)


@eager
def lexsort(keys, axis: int = -1):
    """The indices that sort by the last key, then the one before, ..."""
    ks = [asarray(k) for k in keys]
    if not ks:
        fail("lexsort", "needs at least one key")
    ax = ops.normalize_axis(axis, ks[0].ndim, "lexsort")
    # Stable sorts from the least significant key (the first) to the most
    # (the last), each carrying the order so far.
    order = ops.iota(dtypes.default_int(), ks[0].shape, ax)
    for k in ks:
        _, order = _sort(
            [np_indexing._take_along_axis_at(k, order, axis=ax), order], ax, name="lexsort"
        )
    return order


# --- partial sorts -------------------------------------------------------------------


def _partition_setup(a, kth, axis, name):

    arr = asarray(a)
    if dtypes.is_complex(arr.dtype):
        fail(name, "complex arrays are not supported (as in JAX)")
    axis = ops.normalize_axis(axis, arr.ndim, name)
    n = arr.shape[axis]
    kth = int(kth)
    if not -n <= kth < n:
        fail(name, f"kth {kth} is out of bounds for an axis of {n}")
    kth %= n
    arr = manipulation.swapaxes(arr, axis, -1)
    if np.dtype(arr.dtype).kind == "u":
        # -(x + 1) keeps 0 ordered below the rest (JAX's trick for unsigned).
        low = lax_core.top_k(-(arr + 1), kth + 1)
    else:
        low = lax_core.top_k(-arr, kth + 1)
    return arr, axis, kth, low


@eager(static=("kth", "axis"))
def partition(a, kth: int, axis: int = -1):
    """a with its kth smallest element (along axis) in place, the smaller
    ones before it and the larger after, each group's order JAX's (two
    top_k)."""

    arr, axis, kth, (low_values, _) = _partition_setup(a, kth, axis, "partition")
    bottom = -low_values - 1 if np.dtype(arr.dtype).kind == "u" else -low_values
    top = lax_core.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return manipulation.swapaxes(manipulation.concatenate([bottom, top], axis=-1), -1, axis)


@eager(static=("kth", "axis"))
def argpartition(a, kth: int, axis: int = -1):
    """The indices that partition a (see partition): those of the kth + 1
    smallest first, the rest after in index order."""

    arr, axis, kth, (_, bottom) = _partition_setup(a, kth, axis, "argpartition")
    n = arr.shape[-1]
    # The rest: the positions bottom does not name, in index order (the
    # top_k of a 1/0 proxy keeps ties in index order).
    positions = creation.arange(n, dtype=bottom.dtype)
    taken = reductions.any(manipulation.expand_dims(bottom, -1) == positions, axis=-2)
    proxy = ufuncs.where(taken, 0.0, 1.0).astype(np.float32)
    top = lax_core.top_k(proxy, n - kth - 1)[1].astype(bottom.dtype)
    return manipulation.swapaxes(manipulation.concatenate([bottom, top], axis=-1), -1, axis)


__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "partition",
    "sort",
    "sort_complex",
]
