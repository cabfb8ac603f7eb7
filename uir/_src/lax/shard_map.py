"""uir.shard_map: a function written for one participant's block of each
array, run on every participant of a mesh, with explicit collectives
(uir.lax.psum, all_gather, ppermute, ...), as jax.shard_map.

It traces to one SPMD program of mesh.size partitions: each participant
takes its block of every global argument (a dynamic slice at its
partition-id's place along the mesh axes the in_specs name), runs the
function, and returns global results: a result split along mesh axes
(out_specs) is all-gathered along them, so every participant holds all of
it; a result its out_spec leaves unsplit is the participant's own, which
the function must make the same everywhere (a psum, say), as JAX's
check_rep asks. Called on arrays, the program runs as threads of this
process, or, under uir.distributed, one participant per process; inside
uir.jit it is part of the jitted program.
"""

from __future__ import annotations

import functools

import numpy as np

from uir._src.core import ops, tracing, tree_util
from uir._src.core.errors import TraceError
from uir._src.core.ops import asarray
from uir._src.core.sharding import Mesh, PartitionSpec, axis_env
from uir._src.lax import parallel

__all__ = ["shard_map"]


def shard_map(
    f=None,
    mesh: Mesh | None = None,
    in_specs=None,
    out_specs=None,
    check_rep: bool = True,
    auto=frozenset(),
    *,
    check_vma: bool | None = None,
    axis_names=None,
):
    """Maps `f` over the blocks of a mesh (see the module's docstring).
    `in_specs` is a PartitionSpec per positional argument (or one prefix
    tree of them), `out_specs` likewise for the results. Usable as
    @functools.partial(uir.shard_map, mesh=..., in_specs=..., out_specs=...)."""
    del check_rep, check_vma, axis_names
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map needs a uir.sharding.Mesh, got {type(mesh).__name__}")
    if in_specs is None or out_specs is None:
        raise TypeError("shard_map needs in_specs and out_specs")
    if auto:
        raise NotImplementedError("shard_map with auto axes")
    name = getattr(f, "__name__", "fn")
    jitted = {}

    @functools.wraps(f)
    def mapped(*args):
        if tracing.current() is not None:
            return _body(f, mesh, in_specs, out_specs, args, name)
        from uir._src.core.api import jit

        if "fn" not in jitted:
            jitted["fn"] = jit(lambda *a: _body(f, mesh, in_specs, out_specs, a, name))
            jitted["fn"]._name = f"shard_map_{name}"
        return jitted["fn"](*args)

    return mapped


def _broadcast_specs(specs, tree, what: str, name: str):
    """A spec per leaf of `tree`: `specs` is a prefix of it (a PartitionSpec
    covers everything below it)."""
    leaves = tree_util.tree_leaves(tree)
    is_spec = lambda s: isinstance(s, PartitionSpec) or s is None  # noqa: E731
    if is_spec(specs):
        return [specs] * len(leaves)
    out = []

    def walk(spec, sub):
        if is_spec(spec):
            out.extend([spec] * len(tree_util.tree_leaves(sub)))
            return
        if isinstance(spec, (tuple, list)) and isinstance(sub, (tuple, list)):
            if len(spec) != len(sub):
                raise ValueError(
                    f"shard_map({name}): {what} has {len(spec)} entries for {len(sub)} values"
                )
            for s, t in zip(spec, sub, strict=True):
                walk(s, t)
            return
        if isinstance(spec, dict) and isinstance(sub, dict):
            for k in sorted(sub):
                walk(spec[k], sub[k])
            return
        raise ValueError(f"shard_map({name}): {what} {spec!r} does not match the values' structure")

    walk(specs, tree)
    assert len(out) == len(leaves)
    return out


def _block_shape(shape, spec: PartitionSpec, mesh: Mesh, what: str, name: str):
    spec = spec or PartitionSpec()
    if len(spec) > len(shape):
        raise ValueError(
            f"shard_map({name}): {what} has spec {spec} of {len(spec)} dimensions for shape "
            f"{tuple(shape)}"
        )
    block = list(shape)
    for d in range(len(shape)):
        axes = spec.axes_of(d)
        for a in axes:
            if a not in mesh.axis_names:
                raise ValueError(f"shard_map({name}): {what} names axis {a!r}, not in {mesh}")
        n = mesh.axis_size(axes) if axes else 1
        if shape[d] % n:
            raise ValueError(
                f"shard_map({name}): {what} of shape {tuple(shape)} splits dimension {d} "
                f"({shape[d]}) over {axes} ({n} participants), which does not divide it"
            )
        block[d] = shape[d] // n
    return tuple(block)


def _take_block(x, spec: PartitionSpec, mesh: Mesh, what: str, name: str):
    """This participant's block of global `x`."""
    from uir._src.lax.slicing import dynamic_slice

    block = _block_shape(x.shape, spec, mesh, what, name)
    if block == tuple(x.shape):
        return x
    comp = ops._comp()
    starts = []
    for d in range(x.ndim):
        axes = (spec or PartitionSpec()).axes_of(d)
        if not axes:
            starts.append(np.int32(0))
            continue
        index = parallel.axis_index(axes)
        starts.append(ops.binary("multiply", index, comp.constant(np.int32(block[d]))))
    return dynamic_slice(x, starts, block)


def _gather_block(y, spec: PartitionSpec, mesh: Mesh, what: str, name: str):
    """Global `y` from every participant's block of it."""
    spec = spec or PartitionSpec()
    if len(spec) > y.ndim:
        raise ValueError(f"shard_map({name}): {what} has spec {spec} for a rank-{y.ndim} value")
    for d in range(y.ndim):
        axes = spec.axes_of(d)
        if axes:
            y = parallel.all_gather(y, axes, axis=d, tiled=True)
    return y


def _body(f, mesh: Mesh, in_specs, out_specs, args, name: str):
    comp = tracing.current()
    module = comp.module
    previous = getattr(module, "partitions", None)
    if previous not in (None, mesh.size):
        raise TraceError(
            f"shard_map({name}) over {mesh.size} participants in a program of {previous}"
        )
    module.partitions = mesh.size
    args = tuple(args)
    specs = _broadcast_specs(
        tuple(in_specs) if isinstance(in_specs, list) else in_specs, args, "in_specs", name
    )
    leaves, treedef = tree_util.tree_flatten(args)
    with axis_env(mesh):
        blocks = [
            _take_block(asarray(x), s, mesh, f"argument leaf {i}", name)
            for i, (x, s) in enumerate(zip(leaves, specs, strict=True))
        ]
        out = f(*tree_util.tree_unflatten(treedef, blocks))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_spec_leaves = _broadcast_specs(out_specs, out, "out_specs", name)
        gathered = [
            _gather_block(asarray(y), s, mesh, f"result leaf {i}", name)
            for i, (y, s) in enumerate(zip(out_leaves, out_spec_leaves, strict=True))
        ]
    return tree_util.tree_unflatten(out_tree, gathered)
