"""A short run of the HLO parser fuzzer (libFuzzer + ASan + UBSan), seeded
with XLA's corpus: no crash, hang, sanitizer report or broken round trip.
`make fuzz` runs the same target for longer."""

from __future__ import annotations

import os
import pathlib
import subprocess

from corpus import CORPUS

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUZZER = ROOT / "build" / "fuzz" / "hlo_parser_fuzzer"


def _clean_env() -> dict[str, str]:
    # The fuzzer carries clang's sanitizer runtime; one preloaded for the
    # interpreter (make asan) must not leak into it.
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")
    }


def test_parser_fuzzer_smoke(tmp_path):
    # `make fuzz-build` is a no-op when the fuzzer is up to date.
    build = subprocess.run(
        ["make", "-s", "fuzz-build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=_clean_env(),
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(
        [
            str(FUZZER),
            # A fixed seed and a fixed number of runs (about 25 s here) keep
            # the suite deterministic: the same inputs however fast the
            # machine is. `make fuzz` explores by time, with fresh seeds.
            "-runs=12000",
            "-max_total_time=90",
            "-seed=20261122",
            "-timeout=10",
            "-rss_limit_mb=4096",
            f"-artifact_prefix={tmp_path}/",
            str(tmp_path),
            str(CORPUS),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_clean_env(),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Done " in run.stderr
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))


EVAL_FUZZER = ROOT / "build" / "fuzz" / "hlo_eval_fuzzer"


def test_eval_fuzzer_smoke(tmp_path):
    """The structure-aware fuzzer (mutated corpus modules through parse,
    verify, print, clone and evaluate) on a fixed seed and input count."""
    build = subprocess.run(
        ["make", "-s", "fuzz-build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=_clean_env(),
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(
        [
            str(EVAL_FUZZER),
            "-runs=3000",
            "-max_total_time=90",
            "-seed=20261123",
            "-timeout=10",
            "-rss_limit_mb=4096",
            f"-artifact_prefix={tmp_path}/",
            str(tmp_path),
            str(CORPUS),
        ],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
        env=_clean_env(),
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Done 3000 runs" in run.stderr
