"""XLA's HLO: parse, print, verify and inspect modules (see uir._src.hlo)."""

from uir._src.hlo import (
    HloComputation,
    HloInstruction,
    HloModule,
    Shape,
    load,
    parse_module,
)

__all__ = ["HloComputation", "HloInstruction", "HloModule", "Shape", "load", "parse_module"]
