"""Meshes of devices and how arrays split over them, as jax.sharding:
Mesh(devices, axis_names), PartitionSpec (also P), make_mesh(shapes, names).
uir's devices are the participants of a run: processes under
uir.distributed, or threads of one process."""

from __future__ import annotations

from uir._src.core.sharding import Mesh, P, PartitionSpec, make_mesh

__all__ = ["Mesh", "P", "PartitionSpec", "make_mesh"]
