"""XLA's HLO: parse, print, verify and inspect modules (see uir._src.core.hlo)."""

from uir._src.core.hlo import (
    ComputationBuilder,
    HloComputation,
    HloInstruction,
    HloModule,
    ModuleBuilder,
    Shape,
    load,
    mutate_text,
    parse_module,
)

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
