"""Every golden case: the pass output matches its CHECK lines (FileCheck),
the result verifies and evaluates to the input's values (check=True)."""

from __future__ import annotations

import pytest
from golden_util import all_cases, run_filecheck

import uir

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_case(case, tmp_path):
    module = uir.hlo.parse_module(case.text, file=case.file.name)
    out = uir.passes.run(module, case.passes, check=True)
    text = out.to_text()
    result = run_filecheck(case, text, tmp_path)
    assert result.returncode == 0, (
        f"{case.id}: {case.title}\n{result.stderr}\n--- output ---\n{text}"
    )


def test_every_pass_has_six_golden_cases():
    counts: dict[str, int] = {}
    for c in CASES:
        counts[c.file.stem] = counts.get(c.file.stem, 0) + 1
    for name in uir.passes.available():
        assert counts.get(name, 0) >= 6, f"pass {name} has {counts.get(name, 0)} golden cases"
