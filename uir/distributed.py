"""Runs across processes, one participant per process, through Open MPI.

    # started as: mpirun -np 4 python train.py   (or: uir run --np 4 FILE.hlo)
    uir.distributed.initialize()         # reads Open MPI's environment
    uir.process_index(), uir.process_count()
    exe = uir.compile(module)            # replica_count=4: four participants
    out = exe(*args)                     # this process's participant
    uir.shard_map(f, mesh=uir.sharding.make_mesh((4,), ("batch",)), ...)

launch(argv, np) starts `python argv...` in np processes on this machine
(tests and scripts); a process that raises makes every other process raise
uir.DistributedError with its message, rather than wait for it.
"""

from __future__ import annotations

from uir._src.core.distributed import (
    barrier,
    initialize,
    is_initialized,
    launch,
    mpirun_command,
    mpirun_environment,
    process_count,
    process_index,
    shutdown,
)

__all__ = [
    "barrier",
    "initialize",
    "is_initialized",
    "launch",
    "mpirun_command",
    "mpirun_environment",
    "process_count",
    "process_index",
    "shutdown",
]
