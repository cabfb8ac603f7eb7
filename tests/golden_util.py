"""Golden pass tests: files of labelled cases separated by `// -----`.

Each case is HLO text with a `///` line saying what it checks and FileCheck
directives (`// CHECK: ...`). The passes run are the file's stem, or those
a `// PASSES: a,b` line in the case names. The pass output (the optimized
module, printed) is checked by LLVM's FileCheck against the case's lines.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil
import subprocess

GOLDEN = pathlib.Path(__file__).resolve().parent / "passes" / "golden"
SEPARATOR = re.compile(r"^// -----\s*$", re.MULTILINE)


@dataclasses.dataclass
class Case:
    file: pathlib.Path
    index: int
    title: str
    passes: list[str]
    text: str

    @property
    def id(self) -> str:
        return f"{self.file.stem}:{self.index}"


def cases(path: pathlib.Path) -> list[Case]:
    out = []
    for index, text in enumerate(SEPARATOR.split(path.read_text())):
        if not text.strip():
            continue
        title = re.search(r"^///\s*(.*)$", text, re.MULTILINE)
        if title is None:
            raise ValueError(f"{path.name} case {index}: no /// line saying what it checks")
        named = re.search(r"^// PASSES:\s*(.*)$", text, re.MULTILINE)
        passes = [p.strip() for p in named.group(1).split(",")] if named else [path.stem]
        out.append(Case(path, index, title.group(1), passes, text))
    return out


def all_cases() -> list[Case]:
    return [c for p in sorted(GOLDEN.glob("*.hlo")) for c in cases(p)]


def filecheck() -> str:
    for name in ("FileCheck-19", "FileCheck"):
        found = shutil.which(name) or shutil.which(name, path="/usr/lib/llvm-19/bin")
        if found:
            return found
    raise FileNotFoundError("FileCheck (llvm-19-tools) is not installed")


def run_filecheck(case: Case, output: str, tmp: pathlib.Path) -> subprocess.CompletedProcess:
    return filecheck_text(case.text, output, tmp / f"{case.file.stem}_{case.index}.hlo")


def filecheck_text(
    check_text: str, output: str, check_file: pathlib.Path
) -> subprocess.CompletedProcess:
    """FileCheck of `output` against the directives in `check_text`
    (written to `check_file` first)."""
    check_file.write_text(check_text)
    return subprocess.run(
        [filecheck(), str(check_file), "--dump-input=never"],
        input=output,
        capture_output=True,
        text=True,
        check=False,
    )
