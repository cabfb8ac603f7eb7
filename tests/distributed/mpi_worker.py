"""One rank of the tests across processes (started by mpirun through
uir.distributed.launch): runs the scenarios named on the command line and
prints "rank R: SCENARIO ok" after each; an assertion that fails ends the
rank with its traceback (and so, through uir.distributed, every rank).

    collectives  every case of collective_cases against the evaluator's
                 run of as many participants (this rank's part)
    corpus       the core corpus modules with collectives of this many participants
    shard_map    shard_programs against NumPy
    training     50 data-parallel steps against the whole-batch step
    profile      a profile of this process's participant
    raise        rank 1 raises before the run; the others wait at its start
    fail_in_run  rank 1's run fails in a custom call; the others wait in the all-reduce
    mismatch     rank 1 compiles another program than the others
"""

from __future__ import annotations

import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import numpy as np  # noqa: E402

import uir  # noqa: E402
from uir._src.core.evaluate import random_arguments, required_replicas  # noqa: E402


def _close(got, want, where: str) -> None:
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            _close(g, w, f"{where}[{k}]")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (where, got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    # MPI may fold in another order than the evaluator (pairs first).
    narrow = want.dtype.itemsize <= 2 or want.dtype.name == "bfloat16"
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(
        got.astype(wide),
        want.astype(wide),
        rtol=2e-2 if narrow else 1e-5,
        atol=2e-2 if narrow else 1e-5,
        err_msg=where,
    )


def collectives(rank: int, n: int) -> None:
    from collective_cases import cases

    for name, text in cases(n):
        exe = uir.compile(uir.hlo.parse_module(text))
        assert exe.fallbacks == [], (name, exe.fallbacks)
        args = random_arguments(exe.module, 0)
        _close(exe(*args), uir.evaluate(exe.module, *args, replicas=n)[rank], name)


def profile(rank: int, n: int) -> None:
    """This process's participant profiled: its collectives are rows."""
    from collective_cases import cases

    text = dict(cases(n))["async_starts"]
    exe = uir.compile(uir.hlo.parse_module(text))
    args = random_arguments(exe.module, 0)
    p = exe.profile(*args)
    kinds = {e["kind"] for e in p.events}
    assert {"async-start", "collective", "async-done"} <= kinds, kinds
    _close(p.result, exe(*args), "profile")


def corpus(rank: int, n: int) -> None:
    from corpus import CORPUS, PRESENT, manifest_rows

    if not PRESENT:
        print(f"rank {rank}: corpus missing", flush=True)
        return
    ran = 0
    for row in manifest_rows():
        if row["cpu_class"] != "core":
            continue
        text = (CORPUS / row["file"]).read_text()
        module = uir.hlo.parse_module(text, file=row["file"])
        if required_replicas(module) != n:
            continue
        exe = uir.compile(module)
        assert exe.fallbacks == [], (row["file"], exe.fallbacks)
        args = random_arguments(exe.module, 0)
        _close(exe(*args), uir.evaluate(exe.module, *args, replicas=n)[rank], row["file"])
        ran += 1
    print(f"rank {rank}: corpus modules of {n} participants: {ran}", flush=True)


def shard_map(rank: int, n: int) -> None:
    from shard_programs import programs

    ns = types.SimpleNamespace(P=uir.sharding.P, lax=uir.lax, np=uir.numpy)
    mesh = uir.sharding.make_mesh((n,), ("x",))
    for name, f, ins, outs, args, want in programs(ns, n):
        got = uir.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs)(*args)
        _close(got, want, name)


def training(rank: int, n: int) -> None:
    import dp_training as dp

    whole_params, whole_losses = dp.train(dp.whole_step)
    mesh = uir.sharding.make_mesh((n,), ("batch",))
    params, losses = dp.train(dp.sharded_step(mesh))
    _close(losses, whole_losses, "losses")
    _close(params, whole_params, "params")


def raise_(rank: int, n: int) -> None:
    text = f"""HloModule sum, replica_count={n}
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ENTRY e {{
  x = f32[16] parameter(0)
  ROOT s = f32[16] all-reduce(x), replica_groups={{}}, to_apply=add
}}
"""
    exe = uir.compile(uir.hlo.parse_module(text))
    if rank == 1:
        time.sleep(0.5)  # the others are waiting by now
        raise ValueError("rank one cannot go on")
    start = time.perf_counter()
    try:
        exe(np.ones(16, np.float32))
    finally:
        print(f"rank {rank}: waited {time.perf_counter() - start:.2f} s", flush=True)


def fail_in_run(rank: int, n: int) -> None:
    """Rank 1's run fails in a custom call before the all-reduce the
    others are already blocked in."""

    def picky(v):
        if int(v) == 1:
            time.sleep(0.5)
            raise ValueError("rank one's custom call fails")
        return v

    uir.custom_call.register("mpi_worker_picky", picky)
    text = f"""HloModule sum, replica_count={n}
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ENTRY e {{
  x = f32[16] parameter(0)
  r = u32[] replica-id()
  c = u32[] custom-call(r), custom_call_target="mpi_worker_picky"
  f = f32[] convert(c)
  b = f32[16] broadcast(f), dimensions={{}}
  y = f32[16] add(x, b)
  ROOT total = f32[16] all-reduce(y), replica_groups={{}}, to_apply=add
}}
"""
    uir.compile(uir.hlo.parse_module(text))(np.ones(16, np.float32))


def mismatch(rank: int, n: int) -> None:
    size = 17 if rank == 1 else 16
    text = f"""HloModule sum, replica_count={n}
add {{ a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }}
ENTRY e {{
  x = f32[{size}] parameter(0)
  ROOT s = f32[{size}] all-reduce(x), replica_groups={{}}, to_apply=add
}}
"""
    uir.compile(uir.hlo.parse_module(text))(np.ones(size, np.float32))


SCENARIOS = {
    "collectives": collectives,
    "corpus": corpus,
    "shard_map": shard_map,
    "training": training,
    "profile": profile,
    "raise": raise_,
    "fail_in_run": fail_in_run,
    "mismatch": mismatch,
}


def main(names: list[str]) -> None:
    uir.distributed.initialize()
    rank, n = uir.process_index(), uir.process_count()
    # A CPU device per process, each knowing its process.
    assert [d.process_index for d in uir.devices("cpu")] == list(range(n))
    for name in names:
        start = time.perf_counter()
        SCENARIOS[name](rank, n)
        print(f"rank {rank}: {name} ok in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
