"""Meshes and partition specs, as jax.sharding names them: the devices of a
run laid out along named axes, and how an array's dimensions split over
them. uir's devices are the participants of a run: the processes under
uir.distributed, or threads of one process (make_mesh), each one
participant (partition) of the SPMD program shard_map traces.

While shard_map traces its function, the mesh is the axis environment the
collectives of uir.lax (psum, all_gather, ...) resolve axis names in.
"""

from __future__ import annotations

import contextlib
import math
import threading

import numpy as np


class PartitionSpec(tuple):
    """How each dimension of an array splits over mesh axes: None (not
    split), an axis name, or a tuple of names (split over their product,
    the first the major one). Dimensions past the spec are not split."""

    def __new__(cls, *parts):
        for p in parts:
            names = p if isinstance(p, tuple) else (p,)
            if not all(n is None or isinstance(n, str) for n in names):
                raise TypeError(f"PartitionSpec entries are None, axis names or tuples: {p!r}")
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        return "PartitionSpec(" + ", ".join(repr(p) for p in self) + ")"

    def axes_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes dimension `dim` splits over (none past the spec)."""
        if dim >= len(self) or self[dim] is None:
            return ()
        p = self[dim]
        return tuple(n for n in (p if isinstance(p, tuple) else (p,)) if n is not None)


P = PartitionSpec


class Mesh:
    """Devices laid out along named axes: `devices` is an array (any
    nesting of lists) of uir.Device objects or participant ids, one axis
    per name in `axis_names`. Every participant of the run appears once."""

    def __init__(self, devices, axis_names):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        ids = np.vectorize(_participant_of, otypes=[np.int64])(np.asarray(devices, dtype=object))
        if ids.ndim != len(axis_names):
            raise ValueError(
                f"Mesh: devices of shape {ids.shape} need {ids.ndim} axis names, got {axis_names!r}"
            )
        if len(set(axis_names)) != len(axis_names) or not all(
            isinstance(a, str) for a in axis_names
        ):
            raise ValueError(f"Mesh: axis names must be distinct strings, got {axis_names!r}")
        if sorted(ids.reshape(-1).tolist()) != list(range(ids.size)):
            raise ValueError(
                f"Mesh: the devices must be the participants 0..{ids.size - 1} once each, "
                f"got ids {ids.reshape(-1).tolist()}"
            )
        self.devices = np.asarray(devices, dtype=object)
        self.device_ids = ids
        self.axis_names = axis_names

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.device_ids.shape, strict=True))

    @property
    def size(self) -> int:
        return int(self.device_ids.size)

    def axis_size(self, names) -> int:
        return math.prod(self.shape[n] for n in _names(names, self))

    def groups(self, names) -> list[list[int]]:
        """The participants that meet at a collective over axes `names`: one
        group per position along the other axes, members in row-major order
        of `names` (in the order given)."""
        names = _names(names, self)
        order = [self.axis_names.index(n) for n in names]
        rest = [i for i in range(len(self.axis_names)) if i not in order]
        moved = np.transpose(self.device_ids, rest + order)
        return moved.reshape(-1, math.prod(self.device_ids.shape[i] for i in order)).tolist()

    def axis_strides(self, names) -> list[tuple[int, int, int]] | None:
        """When the devices are the participants in row-major order (as
        make_mesh lays them out): per axis of `names`, (the id's stride
        along it, its size, its weight in the combined index), so that
        the index along `names` is sum((id // stride % size) * weight);
        None for another order."""
        if not np.array_equal(self.device_ids.reshape(-1), np.arange(self.size)):
            return None
        names = _names(names, self)
        dims = self.device_ids.shape
        id_strides = [int(np.prod(dims[i + 1 :])) for i in range(len(dims))]
        out, weight = [], 1
        for n in reversed(names):
            i = self.axis_names.index(n)
            out.append((id_strides[i], dims[i], weight))
            weight *= dims[i]
        return out[::-1]

    def index_table(self, names) -> np.ndarray:
        """Per participant id, its index along axes `names` (row-major over
        them): what axis_index reads."""
        table = np.zeros(self.size, np.int32)
        for group in self.groups(names):
            for k, pid in enumerate(group):
                table[pid] = k
        return table

    def __repr__(self) -> str:
        shape = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({shape})"


def make_mesh(axis_shapes, axis_names, devices=None) -> Mesh:
    """A mesh of prod(axis_shapes) participants (jax.make_mesh): the
    processes under uir.distributed (their count must match), else
    participants 0..n-1 run as threads of this process."""
    from uir._src.core.distributed import is_initialized, process_count

    axis_shapes = tuple(int(s) for s in axis_shapes)
    n = math.prod(axis_shapes)
    if devices is None:
        if is_initialized() and process_count() != n:
            raise ValueError(
                f"make_mesh: a mesh of {n} devices, and this run has {process_count()} processes"
            )
        devices = list(range(n))
    return Mesh(np.asarray(devices, dtype=object).reshape(axis_shapes), axis_names)


def _participant_of(d) -> int:
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return int(d)
    if getattr(d, "platform", None) == "cpu":
        return int(d.id)
    raise TypeError(f"Mesh devices are uir CPU devices or participant ids, got {d!r}")


def _names(names, mesh: Mesh) -> tuple[str, ...]:
    names = names if isinstance(names, (tuple, list)) else (names,)
    for n in names:
        if n not in mesh.axis_names:
            raise NameError(f"unbound axis name: {n} (the mesh has axes {mesh.axis_names})")
    if len(set(names)) != len(names):
        raise ValueError(f"axis names repeat: {names!r}")
    return tuple(names)


_env = threading.local()


def current_mesh() -> Mesh | None:
    """The mesh of the shard_map being traced, or None."""
    stack = getattr(_env, "stack", None)
    return stack[-1] if stack else None


def mesh_for(axis_name, op: str) -> Mesh:
    """The mesh `axis_name` is bound in, for collective `op`; NameError
    (as JAX raises) outside shard_map."""
    mesh = current_mesh()
    if mesh is None:
        shown = axis_name if isinstance(axis_name, str) else tuple(axis_name)
        raise NameError(
            f"unbound axis name: {shown} ({op} names mesh axes, which exist only inside "
            "uir.shard_map)"
        )
    _names(axis_name, mesh)
    return mesh


@contextlib.contextmanager
def axis_env(mesh: Mesh):
    stack = getattr(_env, "stack", None)
    if stack is None:
        stack = _env.stack = []
    if stack:
        raise NotImplementedError("shard_map inside shard_map")
    stack.append(mesh)
    try:
        yield
    finally:
        stack.pop()
