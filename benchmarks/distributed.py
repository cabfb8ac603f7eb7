"""Across processes: all-reduce bandwidth and a data-parallel training step.

- all-reduce: an executable of one all-reduce (sum of f32, 4 KiB to 64 MiB)
  run by 2 ranks under mpirun, beside MPI_Allreduce called directly on the
  same bytes (from the same input into a result buffer of its own,
  MPI_COMM_WORLD) in the same processes; the two take
  turns, round after round: the times are each one's fastest round, the
  overhead the median over the rounds of uir's time over MPI's in the
  same round, less one (the machine's speed drifts). uir's time is
  a whole call from Python: argument checks, the per-run check that every
  rank runs the same program, the collective on its own communicator, a
  result array (from the result pool from 1 MiB up; below, fresh memory
  whose first touch is part of the time). Bandwidth is the algorithm's
  (bytes / time).
- training: the data-parallel MLP step (tests/distributed/dp_training.py's
  model, made larger: 4096 examples, 256 -> 1024 -> 10) on 1, 2 and 4
  ranks (shard_map over a "batch" axis, gradients averaged with pmean),
  ms per step, each rank working on its block of the batch with the
  machine's cores divided among the ranks (UIR_NUM_THREADS); ranks beyond
  the cores share them (oversubscribed). On a 2-core machine two ranks
  have no more cores than one: the figure is the cost of splitting.

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
ROUNDS = 9


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
        direct = uir.device_put(np.zeros(count, np.float32))  # MPI's result, out of place
        iters = int(max(4, min(400, (64 << 20) // size)))
        for _ in range(3):
            exe(x)
        mine, theirs = [], []
        for _ in range(ROUNDS):
            uir.distributed.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                exe(x)  # dropped at once: the next call reuses its buffer, as MPI's does
            mine.append((time.perf_counter() - start) / iters)
            theirs.append(_core.distributed.allreduce_seconds(x, direct, iters))
        assert float(exe(x)[0]) == n
        ratios = sorted(m / t for m, t in zip(mine, theirs, strict=True))
        out[size] = (min(mine), min(theirs), ratios[len(ratios) // 2])
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

    # The cores shared among the ranks: each rank's worker threads.
    threads = str(max(1, (os.cpu_count() or 1) // np_))
    env = dict(
        os.environ, UIR_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads
    )
    p = uir.distributed.launch([__file__, *args], np=np_, timeout=1800, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"mpirun -np {np_} failed:\n{p.stdout}\n{p.stderr}")
    line = [s for s in p.stdout.splitlines() if s.startswith("{")][-1]
    return json.loads(line)


def run() -> list[dict]:
    import uir

    if uir.distributed.mpirun_command(1, []) is None:  # raises without mpirun
        return []
    rows = []
    for size, (mine, theirs, ratio) in sorted(
        ((int(k), v) for k, v in _launch(2, ["--all-reduce"]).items())
    ):
        rows.append(
            {
                "case": f"all-reduce 2 ranks {size >> 10} KiB",
                "uir_us": mine * 1e6,
                "mpi_us": theirs * 1e6,
                "uir_GB/s": size / mine / 1e9,
                "mpi_GB/s": size / theirs / 1e9,
                "overhead_%": (ratio - 1) * 100,
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
