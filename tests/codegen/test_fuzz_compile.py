"""A short run of the differential compile fuzzer (tools/fuzz_compile.py):
mutated corpus modules the evaluator runs compile, pass the checked
pipeline and agree with the evaluator; no worker process dies. A fixed
seed and case count, so the suite sees the same cases on any machine
(`make fuzz-compile` explores by time, with fresh seeds)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
from corpus import CORPUS, needs_corpus

pytestmark = needs_corpus

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_compile_fuzzer_smoke(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz_compile.py"),
            "--seconds=240",
            "--max-cases=150",
            "--seed=20261126",
            f"--corpus={CORPUS}",
            f"--out={tmp_path}",
        ],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    summary = run.stdout.splitlines()[-2]
    assert "fuzz-compile:" in summary and " agree " in summary, run.stdout[-3000:]
    assert not (tmp_path / "death").exists() and not (tmp_path / "mismatch").exists()


def test_the_mutator_changes_a_module_and_keeps_it_parseable():
    import uir

    text = (CORPUS / sorted(p.name for p in CORPUS.glob("*.hlo"))[0]).read_text()
    mutants = {uir.hlo.mutate_text(text, seed, 2) for seed in range(20)}
    assert len(mutants) > 10
    for m in mutants:
        uir.hlo.parse_module(m)  # printed modules parse back, verified or not
    with pytest.raises(uir.ParseError):
        uir.hlo.mutate_text("HloModule broken\nENTRY {", 0, 1)
