"""Runs across processes: ranks started by mpirun (uir.distributed.launch)
on this machine, each one participant, meeting through Open MPI. Each rank
checks its part against the evaluator's run of as many participants, or
NumPy (mpi_worker.py); these tests check that every rank got through."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
from corpus import PRESENT

import uir
from uir import _core
from uir._src.core import distributed

HERE = pathlib.Path(__file__).resolve().parent
WORKER = str(HERE / "mpi_worker.py")

pytestmark = pytest.mark.skipif(
    distributed.mpirun() is None or not _core.distributed.built(),
    reason="Open MPI is missing (mpirun, or uir built without MPI): make test installs "
    "Debian's openmpi-bin and libopenmpi-dev",
)


def _launch(np_: int, *scenarios: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return uir.distributed.launch([WORKER, *scenarios], np=np_, timeout=timeout)


def _assert_every_rank(p: subprocess.CompletedProcess, np_: int, scenarios) -> None:
    assert p.returncode == 0, p.stdout + p.stderr
    for rank in range(np_):
        for s in scenarios:
            assert re.search(rf"rank {rank}: {s} ok", p.stdout), (rank, s, p.stdout + p.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("np_", [2, 4])
def test_collectives_shard_map_and_training_across_processes(np_):
    """-np 2, and -np 4 oversubscribed on this machine's cores: every
    collective form (sync and async, each reduction kind and dtype family,
    replica groups, channel ids), the core corpus modules of as many
    participants, the shard_map programs and 50 data-parallel training
    steps, each equal on every rank to its reference; and a profile of a
    rank's participant, whose collectives are rows of their own."""
    scenarios = ["collectives", "corpus", "shard_map", "training", "profile"]
    p = _launch(np_, *scenarios)
    _assert_every_rank(p, np_, scenarios)
    if PRESENT:
        assert f"rank 0: corpus modules of {np_} participants: 1" in p.stdout


@pytest.mark.slow
@pytest.mark.skipif(not PRESENT, reason="XLA's corpus is not beside the checkout")
def test_core_corpus_modules_of_eight_participants_across_eight_processes():
    p = _launch(8, "corpus")
    _assert_every_rank(p, 8, ["corpus"])
    assert "rank 7: corpus modules of 8 participants: 3" in p.stdout


def test_a_process_that_raises_fails_every_process_with_its_error_within_10_s():
    """Rank 1 raises while the others wait at the start of their run: each
    raises DistributedError with rank 1's error rather than hang (a hang
    ends in the launch's timeout; the seconds are the benchmark note's)."""
    p = _launch(4, "raise", timeout=120)
    assert p.returncode != 0
    for rank in (0, 2, 3):
        assert re.search(rf"rank {rank}: waited \d+\.\d+ s", p.stdout), p.stdout + p.stderr
    assert p.stderr.count("process 1 failed: ValueError: rank one cannot go on") >= 3, p.stderr
    assert "uir._src.core.errors.DistributedError" in p.stderr


def test_a_run_that_fails_in_one_process_ends_every_process_within_10_s():
    """Rank 1's run fails inside (a custom call) while the others are in
    MPI's blocking all-reduce, which cannot return: each says which process
    failed and why, and exits (a hang ends in the launch's timeout)."""
    p = _launch(4, "fail_in_run", timeout=120)
    assert p.returncode != 0
    assert "rank one's custom call fails" in p.stderr
    for rank in (0, 2, 3):
        assert re.search(
            rf"(uir: process {rank}: process 1 failed|DistributedError: process 1 failed)"
            r".*rank one's custom call fails",
            p.stderr,
        ), p.stderr


def test_processes_running_different_programs_get_a_clear_error():
    p = _launch(2, "mismatch", timeout=120)
    assert p.returncode != 0
    assert re.search(r"process [01] runs another program than process [01]", p.stderr), p.stderr


def test_uir_run_np_runs_a_module_in_processes(tmp_path):
    hlo = tmp_path / "gather.hlo"
    hlo.write_text(
        """HloModule gather, replica_count=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4,3] parameter(0)
  r = u32[] replica-id()
  c = f32[] convert(r)
  b = f32[4,3] broadcast(c), dimensions={}
  y = f32[4,3] add(x, b)
  s = f32[4,3] all-reduce(y), replica_groups={}, to_apply=add
  g = f32[8,3] all-gather(y), dimensions={0}, replica_groups={}
  ROOT t = (f32[4,3], f32[8,3]) tuple(s, g)
}
"""
    )
    out = tmp_path / "out.npz"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "uir",
            "run",
            str(hlo),
            "--np",
            "2",
            "--compare",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=dict(os.environ),
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.index("process 0 of 2") < p.stdout.index("process 1 of 2")  # rank order
    assert p.stdout.count("max abs diff 0 ") == 4
    assert (tmp_path / "out.r0.npz").exists() and (tmp_path / "out.r1.npz").exists()


def test_initialize_outside_mpirun_says_how_to_start(monkeypatch):
    for var in ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_SIZE", "PMIX_RANK"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="mpirun -np N"):
        uir.distributed.initialize()
    assert uir.process_index() == 0 and uir.process_count() == 1
    assert not uir.distributed.is_initialized()
