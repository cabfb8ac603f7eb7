"""Regenerates the CHECK lines of golden pass cases from what the passes print now.

    .venv/bin/python tools/update_golden_checks.py tests/passes/golden/cse.hlo [--case N ...]

For each chosen case (all when no --case is given) the old CHECK lines are
dropped and new ones written after the case's HLO: a CHECK per
computation header and CHECK-NEXT for each of its lines. Names the input
already has stay literal; names the passes made up (fusion.3, param_0.1, ...)
become FileCheck variables, so a renumbering elsewhere does not break the
case. Each regenerated case is run through FileCheck before the file is
written. Read the diff: generated checks pin everything, and a hand-written
case usually says more with fewer, chosen lines.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from golden_util import SEPARATOR, Case, cases, filecheck_text

import uir

NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
CHECK_LINE = re.compile(r"^\s*// CHECK(-[A-Z]+(-\d+)?)?:.*$\n?", re.MULTILINE)


def _escape(text: str) -> str:
    """Text FileCheck would read as a regex or a variable, made literal."""
    return text.replace("{{", "{{[{][{]}}").replace("[[", "{{[[][[]}}")


def _variable(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", name).upper().strip("_") or "V"
    if base[0].isdigit():
        base = "V" + base
    var, n = base, 1
    while var in taken:
        n += 1
        var = f"{base}_{n}"
    taken.add(var)
    return var


def generate_checks(input_text: str, output: str) -> list[str]:
    """CHECK lines pinning `output`, with names the input does not define as variables."""
    # Names the input defines: instructions (`x = ...`) and computations.
    known = set(re.findall(rf"^\s*(?:ROOT\s+)?%?({NAME})\s*=", input_text, re.MULTILINE))
    known |= set(re.findall(rf"^(?:ENTRY\s+)?%?({NAME})\s*[({{]", input_text, re.MULTILINE))
    variables: dict[str, str] = {}
    taken: set[str] = set()

    def generalize(line: str) -> str:
        pieces = []
        last = 0
        # References (%x) and parameter names in a computation header ("(x: f32[]").
        for m in re.finditer(rf"(?<=%){NAME}|(?<=\(){NAME}(?=: )|(?<=, ){NAME}(?=: )", line):
            name = m.group(0)
            if name in known:
                continue
            pieces.append(_escape(line[last : m.start()]))
            if name in variables:
                pieces.append(f"[[{variables[name]}]]")
            else:
                variables[name] = _variable(name, taken)
                pieces.append(f"[[{variables[name]}:{NAME}]]")
            last = m.end()
        pieces.append(_escape(line[last:]))
        return "".join(pieces)

    checks = []
    for line in output.splitlines():
        if not line.strip() or line.startswith("HloModule"):
            continue
        is_header = line.rstrip().endswith("{") and not line.startswith(" ")
        # (CHECK-LABEL may not bind variables, so headers take CHECK.)
        directive = "CHECK" if is_header else "CHECK-NEXT"
        checks.append(f"// {directive}: {generalize(line.strip())}")
    return checks


def regenerate(case: Case) -> str:
    """The case's text with freshly generated CHECK lines."""
    module = uir.hlo.parse_module(case.text, file=case.file.name)
    output = uir.passes.run(module, case.passes).to_text()
    body = CHECK_LINE.sub("", case.text).rstrip("\n")
    hlo_only = "\n".join(ln for ln in body.splitlines() if not ln.lstrip().startswith("//"))
    checks = generate_checks(hlo_only, output)
    new_text = body + "\n" + "\n".join(checks) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        result = filecheck_text(new_text, output, pathlib.Path(tmp) / "case.hlo")
    if result.returncode != 0:
        raise RuntimeError(f"{case.id}: the generated checks fail:\n{result.stderr}")
    return new_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=pathlib.Path)
    parser.add_argument("--case", type=int, action="append", help="case index (0-based)")
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    args = parser.parse_args(argv)

    chunks = SEPARATOR.split(args.file.read_text())
    by_index = {c.index: c for c in cases(args.file)}
    chosen = set(args.case) if args.case else set(by_index)
    unknown = chosen - set(by_index)
    if unknown:
        parser.error(f"{args.file.name} has no case {sorted(unknown)}; it has {sorted(by_index)}")
    for index in sorted(chosen):
        leading = re.match(r"\s*", chunks[index]).group(0)
        chunks[index] = leading + regenerate(by_index[index]).lstrip("\n")
        if index != len(chunks) - 1:
            chunks[index] += "\n"
    text = "// -----".join(chunks)
    if args.dry_run:
        sys.stdout.write(text)
    else:
        args.file.write_text(text)
        print(f"{args.file}: regenerated cases {sorted(chosen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
