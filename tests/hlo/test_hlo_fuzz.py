"""A short run of the HLO parser fuzzer (libFuzzer + ASan + UBSan), seeded
with XLA's corpus: no crash, hang, sanitizer report or broken round trip.
`make fuzz` runs the same target for longer."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest
from corpus import CORPUS, needs_corpus

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZER = ROOT / "build" / "fuzz" / "hlo_parser_fuzzer"


def _clean_env() -> dict[str, str]:
    # The fuzzer carries clang's sanitizer runtime; one preloaded for the
    # interpreter (make asan) must not leak into it.
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")
    }


EVAL_FUZZER = ROOT / "build" / "fuzz" / "hlo_eval_fuzzer"

pytestmark = needs_corpus  # (the fuzzers start from the corpus)


def _run_fuzzer(fuzzer: pathlib.Path, runs: int, seed: int, tmp_path, timeout: int):
    """Runs `fuzzer` over the corpus for a fixed seed and number of inputs:
    the suite sees the same inputs however fast the machine is (`make fuzz`
    and `make fuzz-eval` explore by time, with fresh seeds). The fuzzers
    are built by make (`make test` builds them first), never here: a build
    under clang takes minutes."""
    if not fuzzer.exists():
        pytest.skip(
            f"{fuzzer.relative_to(ROOT)} is not built: `make test` (or `make fuzz-build`) "
            "builds the fuzzers before the tests"
        )
    return subprocess.run(
        [
            str(fuzzer),
            f"-runs={runs}",
            "-max_total_time=90",
            f"-seed={seed}",
            "-timeout=10",
            "-rss_limit_mb=4096",
            f"-artifact_prefix={tmp_path}/",
            str(tmp_path),
            str(CORPUS),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=_clean_env(),
    )


@pytest.mark.slow
def test_parser_fuzzer_smoke(tmp_path):
    run = _run_fuzzer(FUZZER, 12000, 20261122, tmp_path, timeout=120)  # about 25 s here
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Done " in run.stderr
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))


@pytest.mark.slow
def test_eval_fuzzer_smoke(tmp_path):
    """The structure-aware fuzzer (mutated corpus modules through parse,
    verify, print, clone and evaluate) on a fixed seed and input count."""
    run = _run_fuzzer(EVAL_FUZZER, 3000, 20261123, tmp_path, timeout=150)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Done 3000 runs" in run.stderr
