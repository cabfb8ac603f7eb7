"""Collectives over named mesh axes, as jax.lax names them (psum, pmean,
pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute, axis_index,
axis_size), for functions traced by uir.shard_map. Each becomes XLA's
collective over the participants along those axes: all-reduce,
all-gather, reduce-scatter, all-to-all, collective-permute, partition-id,
with a channel id and global device ids, as JAX's shard_map lowers them.
Outside shard_map an axis name is unbound (NameError, as in JAX).
"""

from __future__ import annotations

import numpy as np

from uir._src.core import ops, tracing, tree_util
from uir._src.core.errors import TraceError
from uir._src.core.ops import asarray
from uir._src.core.sharding import Mesh, mesh_for

__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
]


def _channel() -> int:
    module = ops._comp().module
    module.channels = getattr(module, "channels", 0) + 1
    return module.channels


def _groups(mesh: Mesh, axis_name) -> list[list[int]]:
    return mesh.groups(axis_name)


def _collective(opcode: str, v, mesh: Mesh, axis_name, shape, op: str, **attrs):
    """XLA's `opcode` on `v` over the participants along `axis_name`, as
    JAX's shard_map lowers it: its groups, a channel id of its own and
    (where the op has them) global device ids."""
    if opcode in ("all-reduce", "all-gather", "reduce-scatter"):
        attrs["use_global_device_ids"] = True
    return ops._comp().emit(
        opcode,
        v,
        replica_groups=_groups(mesh, axis_name),
        channel_id=_channel(),
        shape=(tuple(shape), v.dtype),
        op_name=op,
        **attrs,
    )


def _whole_axes(axis_index_groups, op: str) -> None:
    """Groups within an axis are not supported (JAX's shard_map refuses
    them too)."""
    if axis_index_groups is not None:
        raise NotImplementedError(f"{op} with axis_index_groups")


def _all_reduce(x, axis_name, opcode: str, op: str):
    mesh = mesh_for(axis_name, op)

    def one(leaf):
        if not (tracing.is_tracer(leaf) or isinstance(leaf, np.ndarray)):
            if opcode == "add":  # psum(1, 'i') is the axis size, as in JAX
                return leaf * mesh.axis_size(axis_name)
            return leaf
        v = asarray(leaf)
        reducer = ops.scalar_computation(
            f"{op}_reducer", v.dtype, lambda a, b: ops.binary(opcode, a, b)
        )
        return _collective("all-reduce", v, mesh, axis_name, v.shape, op, to_apply=reducer)

    return tree_util.tree_map(one, x)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x (a pytree) over the participants along `axis_name` (a
    mesh axis or a tuple of them)."""
    _whole_axes(axis_index_groups, "psum")
    return _all_reduce(x, axis_name, "add", "psum")


def pmax(x, axis_name, *, axis_index_groups=None):
    _whole_axes(axis_index_groups, "pmax")
    return _all_reduce(x, axis_name, "maximum", "pmax")


def pmin(x, axis_name, *, axis_index_groups=None):
    _whole_axes(axis_index_groups, "pmin")
    return _all_reduce(x, axis_name, "minimum", "pmin")


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of x over the participants along `axis_name` (integers
    become floats, as in JAX)."""
    n = mesh_for(axis_name, "pmean").axis_size(axis_name)
    summed = psum(x, axis_name, axis_index_groups=axis_index_groups)

    def mean(v):
        v = asarray(v)
        if not np.issubdtype(v.dtype, np.inexact):
            v = ops.convert(v, np.dtype(np.float32))
        return ops.binary("divide", v, n)

    return tree_util.tree_map(mean, summed)


def axis_size(axis_name) -> int:
    """How many participants lie along `axis_name`."""
    return mesh_for(axis_name, "axis_size").axis_size(axis_name)


def axis_index(axis_name):
    """This participant's index along `axis_name` (s32; row-major over a
    tuple of axes)."""
    mesh = mesh_for(axis_name, "axis_index")
    comp = ops._comp()
    pid = comp.emit("partition-id", shape=((), np.dtype(np.uint32)), op_name="axis_index")
    pid = ops.convert(pid, np.dtype(np.int32))
    const = lambda v: comp.constant(np.int32(v))  # noqa: E731
    strides = mesh.axis_strides(axis_name)
    if strides is not None:
        # Devices in row-major order: the index is arithmetic on the id.
        index = const(0)
        for stride, size, weight in strides:
            coord = ops.binary("remainder", ops.binary("divide", pid, const(stride)), const(size))
            index = ops.binary("add", index, ops.binary("multiply", coord, const(weight)))
        return index
    # Any other order: the table's entry at the id, as a sum of one-hot
    # products (elementwise work, which fuses).
    table = comp.constant(mesh.index_table(axis_name))
    ids = ops.iota(np.dtype(np.int32), (mesh.size,), 0)
    hit = ops.compare(ids, ops.broadcast_to(pid, (mesh.size,)), "EQ", "axis_index")
    picked = ops.select(hit, table, ops.broadcast_to(const(0), (mesh.size,)))
    return ops.reduce(picked, "add", [0], "axis_index")


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False, axis_index_groups=None):
    """Every participant's x along `axis_name`, stacked on a new dimension
    `axis` (or, `tiled`, concatenated along `axis`)."""
    _whole_axes(axis_index_groups, "all_gather")
    mesh = mesh_for(axis_name, "all_gather")
    n = mesh.axis_size(axis_name)

    def one(leaf):
        v = asarray(leaf)
        rank = v.ndim if tiled else v.ndim + 1
        ax = ops.normalize_axis(axis, rank, "all_gather")
        if not tiled:
            v = ops.reshape(v, (*v.shape[:ax], 1, *v.shape[ax:]))
        shape = list(v.shape)
        shape[ax] *= n
        return _collective("all-gather", v, mesh, axis_name, shape, "all_gather", dimensions=[ax])

    return tree_util.tree_map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None, tiled=False):
    """psum of x, of which each participant keeps its block along
    `scatter_dimension` (its index along `axis_name`): a block of size
    dim / n when `tiled`, else the dimension (of size n) is removed."""
    _whole_axes(axis_index_groups, "psum_scatter")
    mesh = mesh_for(axis_name, "psum_scatter")
    n = mesh.axis_size(axis_name)

    def one(leaf):
        v = asarray(leaf)
        d = ops.normalize_axis(scatter_dimension, v.ndim, "psum_scatter")
        if v.shape[d] % n if tiled else v.shape[d] != n:
            raise TraceError(
                f"psum_scatter: dimension {d} of {ops.describe(v)} must be "
                + (f"a multiple of {n}" if tiled else f"{n}")
                + f", the size of axis {axis_name!r}"
            )
        shape = list(v.shape)
        shape[d] //= n
        reducer = ops.scalar_computation("psum_scatter_reducer", v.dtype, lambda a, b: a + b)
        out = _collective(
            "reduce-scatter",
            v,
            mesh,
            axis_name,
            shape,
            "psum_scatter",
            dimensions=[d],
            to_apply=reducer,
        )
        return out if tiled else ops.reshape(out, tuple(s for i, s in enumerate(shape) if i != d))

    return tree_util.tree_map(one, x)


def all_to_all(
    x, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None, tiled=False
):
    """Splits x along `split_axis` into one block per participant along
    `axis_name`, sends block j to participant j, and puts the blocks
    received along `concat_axis` in participant order (as jax.lax.all_to_all;
    not `tiled`, split_axis has the axis's size and is removed and a
    dimension of that size is inserted at concat_axis)."""
    _whole_axes(axis_index_groups, "all_to_all")
    mesh = mesh_for(axis_name, "all_to_all")
    n = mesh.axis_size(axis_name)
    v = asarray(x)
    split = ops.normalize_axis(split_axis, v.ndim, "all_to_all")
    concat = ops.normalize_axis(concat_axis, v.ndim, "all_to_all")
    size = v.shape[split]
    if size % n if tiled else size != n:
        raise TraceError(
            f"all_to_all: dimension {split} of {ops.describe(v)} must be "
            + (f"a multiple of {n}" if tiled else f"{n}")
            + f", the size of axis {axis_name!r}"
        )
    # The blocks along a leading dimension of n, then XLA's all-to-all
    # along it: block j goes to member j, block j received from member j.
    if tiled:
        blocks = ops.reshape(v, (*v.shape[:split], n, size // n, *v.shape[split + 1 :]))
        lead = split
    else:
        blocks = v
        lead = split
    perm = [lead] + [i for i in range(blocks.ndim) if i != lead]
    y = ops.transpose(blocks, perm)
    z = _collective("all-to-all", y, mesh, axis_name, y.shape, "all_to_all", dimensions=[0])
    rest = list(z.shape[1:])  # v's dimensions, split one shrunk (tiled) or gone
    if tiled:
        # Received blocks in member order, concatenated along concat_axis.
        order = list(range(1, z.ndim))
        order.insert(concat, 0)
        moved = ops.transpose(z, order)
        shape = [*rest[:concat], n * rest[concat], *rest[concat + 1 :]]
        return ops.reshape(moved, tuple(shape))
    order = list(range(1, z.ndim))
    order.insert(concat, 0)
    return ops.transpose(z, order)


def ppermute(x, axis_name, perm):
    """Sends x from each participant to another along `axis_name`: `perm`
    holds (source, destination) pairs of indices along the axis; a
    participant nobody sends to gets zeros."""
    mesh = mesh_for(axis_name, "ppermute")
    n = mesh.axis_size(axis_name)
    perm = [(int(s), int(d)) for s, d in perm]
    for s, d in perm:
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(f"ppermute: pair ({s}, {d}) outside axis {axis_name!r} of size {n}")
    if len({s for s, _ in perm}) != len(perm) or len({d for _, d in perm}) != len(perm):
        raise ValueError(f"ppermute: perm {perm} repeats a source or a destination")
    pairs = [[g[s], g[d]] for g in _groups(mesh, axis_name) for s, d in perm]

    def one(leaf):
        v = asarray(leaf)
        return ops._comp().emit(
            "collective-permute",
            v,
            source_target_pairs=pairs,
            channel_id=_channel(),
            shape=(v.shape, v.dtype),
            op_name="ppermute",
        )

    return tree_util.tree_map(one, x)
