"""Across processes: all-reduce bandwidth and a data-parallel training step.

- all-reduce: an executable of one all-reduce (sum of f32, 4 KiB to 64 MiB)
  run by 2 ranks under mpirun, beside MPI_Allreduce called directly on the
  same bytes (in place, MPI_COMM_WORLD) in the same processes; the two take
  turns, round after round, and each keeps its fastest mean. uir's time is
  a whole call from Python: argument checks, the per-run check that every
  rank runs the same program, the collective on its own communicator, a
  fresh result array. Bandwidth is the algorithm's (bytes / time);
  overhead is uir's time over MPI's, less one.
- training: the data-parallel MLP step (tests/distributed/dp_training.py's
  model, made larger: 4096 examples, 256 -> 1024 -> 10) on 1, 2 and 4
  ranks (shard_map over a "batch" axis, gradients averaged with pmean),
  ms per step, each rank working on its block of the batch. Ranks beyond
  the cores share them (oversubscribed).

    python benchmarks/run.py distributed
"""

from __future__ import annotations

import itertools
import json
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
ROUNDS = 5


def _all_reduce_rank() -> dict:
    import uir
    from uir import _core

    uir.distributed.initialize()
    n = uir.process_count()
    out = {}
    for size in SIZES:
        count = size // 4
        text = f"""HloModule all_reduce_{count}, replica_count={n}
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ENTRY e {{
  x = f32[{count}] parameter(0)
  ROOT s = f32[{count}] all-reduce(x), replica_groups={{}}, to_apply=add
}}
"""
        exe = uir.compile(uir.hlo.parse_module(text))
        x = uir.device_put(np.full(count, 1.0, np.float32))
        direct = uir.device_put(np.zeros(count, np.float32))
        iters = int(max(5, min(400, (128 << 20) // size)))
        for _ in range(3):
            exe(x)
        best_uir = best_mpi = float("inf")
        for _ in range(ROUNDS):
            uir.distributed.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                result = exe(x)
            best_uir = min(best_uir, (time.perf_counter() - start) / iters)
            best_mpi = min(best_mpi, _core.distributed.allreduce_seconds(direct, iters))
        assert float(result[0]) == n
        out[size] = (best_uir, best_mpi)
    return out


def _training_rank(batch: int, sizes: list[int], steps: int) -> float:
    import uir
    from uir.sharding import P

    uir.distributed.initialize()
    n = uir.process_count()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    params = [
        ((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
        for a, b in itertools.pairwise(sizes)
    ]

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = uir.nn.gelu(h @ w + b)
        w, b = params[-1]
        return -uir.numpy.mean(uir.numpy.sum(uir.nn.log_softmax(h @ w + b) * y, axis=-1))

    def step(params, x, y):
        value, grads = uir.value_and_grad(loss)(params, x, y)
        grads = uir.lax.pmean(grads, "batch")
        new = [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads, strict=True)]
        return new, uir.lax.pmean(value, "batch")

    mesh = uir.sharding.make_mesh((n,), ("batch",))
    fn = uir.jit(
        uir.shard_map(step, mesh=mesh, in_specs=(P(), P("batch"), P("batch")), out_specs=(P(), P()))
    )
    for _ in range(2):
        params, _ = fn(params, x, y)
    best = float("inf")
    for _ in range(ROUNDS):
        uir.distributed.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            params, _ = fn(params, x, y)
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def _launch(np_: int, args: list[str]) -> dict:
    import uir

    p = uir.distributed.launch([__file__, *args], np=np_, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"mpirun -np {np_} failed:\n{p.stdout}\n{p.stderr}")
    line = [s for s in p.stdout.splitlines() if s.startswith("{")][-1]
    return json.loads(line)


def run() -> list[dict]:
    import uir

    if uir.distributed.mpirun_command(1, []) is None:  # raises without mpirun
        return []
    rows = []
    for size, (mine, theirs) in sorted(
        ((int(k), v) for k, v in _launch(2, ["--all-reduce"]).items())
    ):
        rows.append(
            {
                "case": f"all-reduce 2 ranks {size >> 10} KiB",
                "uir_us": mine * 1e6,
                "mpi_us": theirs * 1e6,
                "uir_GB/s": size / mine / 1e9,
                "mpi_GB/s": size / theirs / 1e9,
                "overhead_%": (mine / theirs - 1) * 100,
            }
        )
    one = None
    for np_ in (1, 2, 4):
        ms = _launch(np_, ["--training"])["seconds"] * 1e3
        one = one or ms
        rows.append(
            {
                "case": f"data-parallel MLP step, {np_} rank{'s' if np_ > 1 else ''}",
                "ms_per_step": ms,
                "speedup": one / ms,
            }
        )
    return rows


if __name__ == "__main__":
    os.environ.setdefault("UIR_NUM_THREADS", "1")
    if "--all-reduce" in sys.argv:
        result = {str(k): v for k, v in _all_reduce_rank().items()}
    elif "--training" in sys.argv:
        result = {"seconds": _training_rank(4096, [256, 1024, 10], steps=10)}
    else:
        sys.path.insert(0, str(HERE))
        from run import print_table

        print_table(run())
        sys.exit(0)
    import uir

    if uir.process_index() == 0:
        print(json.dumps(result), flush=True)
