"""NumPy's indexing in full on traced arrays: any mix of integers, slices,
None, Ellipsis, static boolean masks and integer index arrays (static or
traced, broadcasting together), read with one gather and updated with one
scatter.

Reading x[index]: None inserts a length-1 axis (a reshape), a static mask
stands for its nonzero positions on the axes it covers, slices apply first
(a static slice), and the integers and index arrays left (the advanced
indices) broadcast to one shape B and gather: B's dimensions take the place
of the advanced axes when those are adjacent, else they come first, as
NumPy puts them. Negative indices count from the end; others out of range
are clamped (XLA's gather, JAX's default), or give `fill_value` (mode
"fill").

Updating x.at[index].op(values): the flat position of every element x[index]
selects (a gather of an iota through the same index), and one scatter of
the values, broadcast to x[index]'s shape, to those positions; out-of-range
positions are dropped (JAX's default) or clamped (mode "clip")."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.slicing import fill_for

_MODES = (None, "fill", "drop", "clip", "promise_in_bounds")


def _is_mask(i) -> bool:
    return isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype == np.bool_


def _is_index_array(i) -> bool:
    if isinstance(i, Tracer):
        return i.ndim > 0
    return isinstance(i, (list, tuple, np.ndarray)) and np.asarray(i).ndim > 0


def expand(x, index, op: str):
    """x with a length-1 axis for each None of `index`, and the index with
    one entry per axis of that x: slices, Python ints, traced integer
    scalars, and integer arrays (static masks replaced by their nonzero
    positions)."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(
        int(i) if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu" else i
        for i in index
    )
    for i in index:
        if isinstance(i, (bool, np.bool_)):
            fail(op, "a boolean scalar index is not supported: use None for a new axis")
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            fail(
                op,
                "a traced boolean mask selects a data-dependent number of elements; use "
                "uir.numpy.where, or a static NumPy mask",
            )
        if isinstance(i, Tracer) and not dtypes.is_int(i.dtype):
            fail(op, f"indices must be integers, got {ops.describe(i)}")
    used = sum(
        np.asarray(i).ndim if _is_mask(i) else 1
        for i in index
        if i is not None and i is not Ellipsis
    )
    if sum(1 for i in index if i is Ellipsis) > 1:
        fail(op, "an index can only have a single ellipsis ('...')")
    if used > x.ndim:
        fail(op, f"too many indices ({used}) for an array of rank {x.ndim}")
    entries: list = []
    for i in index:
        if i is Ellipsis:
            entries += [slice(None)] * (x.ndim - used)
        else:
            entries.append(i)
    if not any(i is Ellipsis for i in index):
        entries += [slice(None)] * (x.ndim - used)
    # New axes, as length-1 axes of x indexed whole.
    if any(e is None for e in entries):
        shape, axis = [], 0
        for e in entries:
            if e is None:
                shape.append(1)
            else:
                k = np.asarray(e).ndim if _is_mask(e) else 1
                shape += list(x.shape[axis : axis + k])
                axis += k
        x = ops.reshape(x, tuple(shape))
        entries = [slice(None) if e is None else e for e in entries]
    # Static masks: their nonzero positions, one array per axis covered.
    out, axis = [], 0
    for e in entries:
        if _is_mask(e):
            mask = np.asarray(e)
            covered = x.shape[axis : axis + mask.ndim]
            if mask.shape != tuple(covered):
                fail(
                    op,
                    f"boolean index of shape {mask.shape} does not match the indexed axes "
                    f"{tuple(covered)} of {ops.describe(x)}",
                )
            out += list(np.nonzero(mask))
            axis += mask.ndim
        else:
            if isinstance(e, (list, tuple)):
                e = np.asarray(e)
                if e.dtype.kind not in "iu":
                    fail(op, f"index arrays must be integers, got {e.dtype}")
            out.append(e)
            axis += 1
    # NumPy puts the broadcast dimensions in place of the advanced indices
    # when those stand next to each other in the index as written; an
    # Ellipsis or None between them, even an Ellipsis of no axes, parts them.
    kinds = [
        "basic" if (i is None or i is Ellipsis or isinstance(i, slice)) else "advanced"
        for i in index
    ]
    first = kinds.index("advanced") if "advanced" in kinds else 0
    last = len(kinds) - 1 - kinds[::-1].index("advanced") if "advanced" in kinds else 0
    return x, Entries(out, all(k == "advanced" for k in kinds[first : last + 1]))


class Entries(list):
    """The index, one entry per axis, and whether its advanced indices were
    adjacent as written."""

    def __init__(self, entries, adjacent: bool):
        super().__init__(entries)
        self.adjacent = adjacent


def _valid_and_normalized(i, n: int):
    """The index with negatives counted from the end, and whether each was in
    [-n, n)."""
    i = ops.convert(asarray(i), dtypes.default_int())
    zero, size = ops.asarray(np.zeros((), i.dtype)), ops.asarray(np.array(n, i.dtype))
    negative = ops.compare(i, zero, "LT", "lt")
    normalized = ops.select(negative, ops.binary("add", i, size), i)
    valid = ops.binary(
        "and",
        ops.compare(normalized, zero, "GE", "ge"),
        ops.compare(normalized, size, "LT", "lt"),
    )
    return normalized, valid


def gather(x, entries, op: str, getitem, mode=None, fill_value=None):
    """x[entries] (entries as `expand` gives them, with at least one index
    array) as one gather, after the slices (applied by `getitem`, basic
    indexing's)."""
    if mode not in _MODES:
        fail(op, f"mode must be one of {_MODES}, got {mode!r}")
    if any(isinstance(e, slice) and e != slice(None) for e in entries):
        x = getitem(x, tuple(e if isinstance(e, slice) else slice(None) for e in entries))
    adv = [k for k, e in enumerate(entries) if not isinstance(e, slice)]
    for k in adv:
        e = entries[k]
        if isinstance(e, (int, np.integer)) and not -x.shape[k] <= int(e) < x.shape[k]:
            fail(op, f"index {int(e)} is out of bounds for axis {k} with size {x.shape[k]}")
    parts = [_valid_and_normalized(entries[k], x.shape[k]) for k in adv]
    batch = ops.broadcast_shapes(op, *[p.shape for p, _ in parts])
    nb = len(batch)
    columns = [ops.reshape(ops.broadcast_to(p, batch, op), (*batch, 1)) for p, _ in parts]
    indices = columns[0] if len(columns) == 1 else ops.concatenate(columns, nb, op)
    window = [d for d in range(x.ndim) if d not in adv]
    adjacent = getattr(entries, "adjacent", True) and adv == list(range(adv[0], adv[0] + len(adv)))
    before = sum(1 for d in window if d < adv[0]) if adjacent else 0
    offset_dims = list(range(before)) + list(range(before + nb, nb + len(window)))
    sizes = [x.shape[d] for d in window]
    out_shape = (*sizes[:before], *batch, *sizes[before:])
    out = ops._comp().emit(
        "gather",
        x,
        indices,
        offset_dims=offset_dims,
        collapsed_slice_dims=adv,
        start_index_map=adv,
        index_vector_dim=nb,
        slice_sizes=[1 if d in adv else x.shape[d] for d in range(x.ndim)],
        shape=(out_shape, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    if mode == "fill":
        valid = parts[0][1]
        for _, v in parts[1:]:
            valid = ops.binary(
                "and", ops.broadcast_to(valid, batch, op), ops.broadcast_to(v, batch, op)
            )
        valid = ops.reshape(
            ops.broadcast_to(valid, batch, op),
            (1,) * before + batch + (1,) * (len(window) - before),
        )
        fill = fill_for(x.dtype, fill_value)
        filler = ops.broadcast_to(
            ops.convert(ops.asarray(np.asarray(fill)), x.dtype), out_shape, op
        )
        out = ops.select(ops.broadcast_to(valid, out_shape, op), out, filler)
    return out


def positions(shape, index, op: str, getitem, mode=None):
    """The flat positions in an array of `shape` of the elements x[index]
    selects, in x[index]'s shape; positions out of range are `size` (a
    scatter drops them) unless mode is "clip" (then clamped)."""
    size = int(np.prod(shape, dtype=np.int64))
    flat = ops.iota(dtypes.default_int(), (size,), 0)
    grid = ops.reshape(flat, tuple(shape))
    expanded, entries = expand(grid, index, op)
    if not any(_is_index_array(e) for e in entries):
        return getitem(expanded, tuple(entries))
    if mode == "clip":
        return gather(expanded, entries, op, getitem)
    marker = np.iinfo(np.dtype(dtypes.default_int())).min
    found = gather(expanded, entries, op, getitem, mode="fill", fill_value=marker)
    outside = ops.compare(found, ops.asarray(np.array(marker, found.dtype)), "EQ", "eq")
    beyond = ops.broadcast_to(ops.asarray(np.array(size, found.dtype)), found.shape, op)
    return ops.select(outside, beyond, found)
