"""uir.hlo: XLA's HLO text, parsed into modules you can inspect, verify and print."""

from __future__ import annotations

import os

from uir import _core
from uir._src.core.errors import ParseError

HloModule = _core.hlo.HloModule
HloComputation = _core.hlo.HloComputation
HloInstruction = _core.hlo.HloInstruction
Shape = _core.hlo.Shape
ModuleBuilder = _core.hlo.ModuleBuilder
ComputationBuilder = _core.hlo.ComputationBuilder


def parse_module(text: str, *, file: str | None = None) -> HloModule:
    """Parses HLO text as XLA writes it. Raises uir.ParseError with .line and
    .column (and a message quoting the line with a caret) on bad text."""
    if not isinstance(text, str):
        raise TypeError(f"parse_module takes HLO text as str, got {type(text).__name__}")
    try:
        return _core.hlo.parse_module(text, file or "")
    except ParseError as e:
        if not _looks_like_path(text):
            raise
        raise ParseError(
            f"{e}\nparse_module takes HLO text, and {text.strip()!r} looks like a file name: "
            "uir.hlo.load(path) reads and parses a file",
            line=e.line,
            column=e.column,
            file=e.file,
        ) from None


def _looks_like_path(text: str) -> bool:
    """One line with no HLO in it that names a file, or is spelled like one."""
    t = text.strip()
    if not t or "\n" in t or any(c in t for c in "{}=()"):
        return False
    return os.path.exists(t) or "/" in t or os.sep in t or t.endswith((".hlo", ".txt", ".pbtxt"))


def load(path: str | os.PathLike[str]) -> HloModule:
    """Reads and parses an HLO text file; errors name the file."""
    path = os.fspath(path)
    # Bytes go to the parser as they are: one that is not UTF-8 is reported
    # with its line and column like any other unexpected character.
    with open(path, "rb") as f:
        text = f.read()
    return _core.hlo.parse_module(text, path)


def mutate_text(text: str, seed: int, rounds: int = 1) -> str:
    """`text` with `rounds` random changes of the kind the fuzzers make (a
    dimension, an element type, a layout, an attribute, an operand, the
    nesting of a shape), printed back; the same seed gives the same
    mutant. The result parses but need not verify. Raises uir.ParseError
    when `text` does not parse."""
    return _core.hlo.mutate_text(text, seed, rounds)


__all__ = [
    "ComputationBuilder",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "ModuleBuilder",
    "Shape",
    "load",
    "mutate_text",
    "parse_module",
]
