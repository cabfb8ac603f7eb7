"""Runs across processes: uir.distributed.

One participant per process, the processes started by Open MPI's mpirun
(or ``uir run --np N``, or launch() below). initialize() reads Open MPI's
environment and starts MPI; an executable whose collectives meet
process_count() participants then runs this process's participant when
called, meeting the others through the runtime's MPI communicator
(runtime/mpi_communicator.h).

A process that fails does not leave the others waiting: an exception that
reaches the top of a process (sys.excepthook) is sent to the others first,
whose waits then raise uir.DistributedError naming the process and carrying
its message; every process then exits with status 1.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import threading
import traceback

from uir import _core
from uir._src.core.errors import DistributedError

# Open MPI's environment for each process it starts.
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK")

_state = {"initialized": False, "rank": 0, "size": 1}
_lock = threading.Lock()


def _env_int(names) -> int | None:
    for n in names:
        if n in os.environ:
            try:
                return int(os.environ[n])
            except ValueError:
                return None
    return None


def mpi_environment() -> tuple[int, int] | None:
    """(rank, size) from Open MPI's environment when this process was
    started by mpirun; None otherwise."""
    size, rank = _env_int(_SIZE_VARS), _env_int(_RANK_VARS)
    if size is None or rank is None:
        return None
    return rank, size


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids=None,
) -> None:
    """Starts this process's part of a run across processes, as
    jax.distributed.initialize does: the number of processes and this
    process's index come from Open MPI's environment (mpirun sets them),
    or are checked against `num_processes` and `process_id` when given.
    MPI itself coordinates the processes, so `coordinator_address` is
    not needed (and `local_device_ids` has no meaning: each process is one
    CPU participant). Raises ValueError outside mpirun, RuntimeError on a
    second call, uir.DistributedError when this uir has no MPI."""
    del coordinator_address, local_device_ids
    with _lock:
        if _state["initialized"]:
            raise RuntimeError("uir.distributed.initialize should only be called once")
        env = mpi_environment()
        if env is None:
            raise ValueError(
                "uir.distributed.initialize found no Open MPI environment "
                "(OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK): start the processes with "
                "mpirun -np N, `uir run --np N`, or uir.distributed.launch"
            )
        if not _core.distributed.built():
            raise DistributedError(
                "this uir was built without MPI: install Open MPI (Debian: libopenmpi-dev "
                "openmpi-bin) and rebuild"
            )
        rank, size = _core.distributed.initialize()
        if (rank, size) != env:
            raise DistributedError(f"MPI says process {rank} of {size}, mpirun's environment {env}")
        if num_processes is not None and num_processes != size:
            raise DistributedError(f"num_processes={num_processes}, but mpirun started {size}")
        if process_id is not None and process_id != rank:
            raise DistributedError(f"process_id={process_id}, but MPI's rank is {rank}")
        _state.update(initialized=True, rank=rank, size=size)
        _install_failure_hooks()
        atexit.register(_finalize_at_exit)


def shutdown() -> None:
    """Waits for every process, then finalizes MPI (also done at exit)."""
    with _lock:
        if not _state["initialized"]:
            return
        _state["initialized"] = False
    _core.distributed.finalize()


def is_initialized() -> bool:
    return _state["initialized"]


def process_index() -> int:
    """This process's index among the processes of the run (0 outside one)."""
    return _state["rank"]


def process_count() -> int:
    """How many processes run together (1 outside a run across processes)."""
    return _state["size"]


def barrier() -> None:
    """Waits for every process; raises uir.DistributedError when another
    failed meanwhile."""
    if _state["initialized"]:
        _core.distributed.barrier()


def _finalize_at_exit() -> None:
    try:
        shutdown()
    except DistributedError as e:
        # Another process failed while this one finished: say so and fail.
        print(f"uir: process {_state['rank']}: {e}", file=sys.stderr, flush=True)
        os._exit(1)


def _install_failure_hooks() -> None:
    previous = sys.excepthook

    def hook(kind, value, tb):
        _fail(kind, value, tb, previous)

    def thread_hook(args):
        if args.exc_type is SystemExit:
            return
        _fail(args.exc_type, args.exc_value, args.exc_traceback, previous)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def _fail(kind, value, tb, previous) -> None:
    """An exception reached the top of this process: tell the others (they
    raise it), print it, and exit with status 1 without finalizing MPI."""
    text = "".join(traceback.format_exception_only(kind, value)).strip()
    with contextlib.suppress(Exception):  # the failure is printed below either way
        _core.distributed.report_failure(text)
    previous(kind, value, tb)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


def mpirun() -> str | None:
    """The mpirun this machine has (Open MPI's), or None."""
    return shutil.which("mpirun")


def mpirun_command(np: int, argv: list[str], *, oversubscribe: bool | None = None) -> list[str]:
    """The command that starts `argv` in `np` processes on this machine:
    Open MPI's mpirun, oversubscribed when `np` exceeds the cores (or when
    asked), allowed to run as root (containers), and with shared-memory
    transfers that need no ptrace permission."""
    path = mpirun()
    if path is None:
        raise DistributedError(
            "mpirun was not found: install Open MPI (Debian: openmpi-bin libopenmpi-dev)"
        )
    if not isinstance(np, int) or isinstance(np, bool) or np < 1:
        raise ValueError(f"np must be a positive int, got {np!r}")
    if oversubscribe is None:
        oversubscribe = np > (os.cpu_count() or 1)
    cmd = [path, "-np", str(np)]
    if oversubscribe:
        cmd.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + list(argv)


def mpirun_environment(env: dict | None = None) -> dict:
    """The environment for the processes: `env` (or this one) with Open MPI
    told to use shared memory without cross-memory attach (which containers
    forbid) and not to bind processes to cores (the run shares them)."""
    out = dict(os.environ if env is None else env)
    out.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    out.setdefault("OMPI_MCA_hwloc_base_binding_policy", "none")
    out.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return out


def launch(
    argv: list[str],
    np: int = 2,
    *,
    timeout: float | None = None,
    env: dict | None = None,
    oversubscribe: bool | None = None,
    python: str | None = None,
) -> subprocess.CompletedProcess:
    """Runs `python argv...` in `np` processes under mpirun on this machine
    and returns the finished run (returncode, stdout and stderr as text,
    each process's lines interleaved). Raises subprocess.TimeoutExpired
    after `timeout` seconds, uir.DistributedError without mpirun."""
    cmd = mpirun_command(np, [python or sys.executable, *argv], oversubscribe=oversubscribe)
    return subprocess.run(
        cmd,
        env=mpirun_environment(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
