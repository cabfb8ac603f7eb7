"""tools/update_golden_checks.py: the CHECK lines it writes pass FileCheck on
the output they came from, and fail on a module the pass did not produce."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest
from golden_util import GOLDEN, cases, filecheck_text

import uir

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "update_golden_checks.py"
spec = importlib.util.spec_from_file_location("update_golden_checks", TOOL)
update = importlib.util.module_from_spec(spec)
spec.loader.exec_module(update)


def _filecheck(check_text: str, output: str, tmp: pathlib.Path) -> int:
    return filecheck_text(check_text, output, tmp / "case.hlo").returncode


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.hlo")), ids=lambda p: p.stem)
def test_regenerated_checks_hold_and_discriminate(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_text(path.read_text())
    assert update.main([str(copy)]) == 0  # raises if a generated case fails FileCheck
    regenerated = cases(copy)
    assert [c.title for c in regenerated] == [c.title for c in cases(path)]
    for case in regenerated:
        assert "// CHECK-NEXT:" in case.text
        module = uir.hlo.parse_module(case.text)
        after = uir.passes.run(module, case.passes).to_text()
        before = module.to_text()
        if before != after:
            assert _filecheck(case.text, before, tmp_path) != 0, case.id


def test_unknown_case_is_an_error(tmp_path, capsys):
    copy = tmp_path / "cse.hlo"
    copy.write_text((GOLDEN / "cse.hlo").read_text())
    with pytest.raises(SystemExit):
        update.main([str(copy), "--case", "999"])
    assert "has no case [999]" in capsys.readouterr().err
