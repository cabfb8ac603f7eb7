"""Golden emitter tests: each case of golden/*.igraph is an iGraph whose LLVM
IR (before optimization) FileCheck checks; the iGraph also runs compiled,
through a Kernel Graph-free path: its optimized IR must verify and contain
the function."""

from __future__ import annotations

import pathlib

import pytest
from golden_util import cases, filecheck_text

import uir.igraph as ig

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
CASES = [c for p in sorted(GOLDEN.glob("*.igraph")) for c in cases(p)]


def _igraph_text(case_text: str) -> str:
    return "\n".join(line for line in case_text.splitlines() if not line.startswith("//"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_emitter(case, tmp_path):
    graph = ig.parse(_igraph_text(case.text))
    text = graph.llvm_ir()
    result = filecheck_text(case.text, text, tmp_path / f"{case.file.stem}_{case.index}.igraph")
    assert result.returncode == 0, f"{case.id}: {case.title}\n{result.stderr}\n--- IR ---\n{text}"
    assert "define noundef i32 @uir_kernel_0" in graph.llvm_ir(optimized=True) or (
        "define i32 @uir_kernel_0" in graph.llvm_ir(optimized=True)
    )


def test_at_least_three_golden_cases():
    assert len(CASES) >= 3
