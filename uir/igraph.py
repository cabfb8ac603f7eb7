"""uir.igraph: the Unified IR (Kernel Graph, iGraph), its text, verifier and interpreter."""

from uir._src.core.igraph import (
    HardwareModel,
    IGraph,
    KernelGraph,
    KernelNode,
    compile_gpu,
    hardware,
    interpret,
    lower,
    lowering_steps,
    parse,
    plan,
    plan_steps,
    simulate_gpu,
    verify,
)

__all__ = [
    "HardwareModel",
    "IGraph",
    "KernelGraph",
    "KernelNode",
    "compile_gpu",
    "hardware",
    "interpret",
    "lower",
    "lowering_steps",
    "parse",
    "plan",
    "plan_steps",
    "simulate_gpu",
    "verify",
]
