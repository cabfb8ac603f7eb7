"""uir.igraph: the Unified IR. Kernel Graphs of iGraphs lowered from optimized
HLO, the iGraph text format, its verifier and its interpreter."""

from __future__ import annotations

import numpy as np

from uir import _core
from uir._src.core.evaluate import _check_argument

IGraph = _core.igraph.IGraph
KernelGraph = _core.igraph.KernelGraph
KernelNode = _core.igraph.KernelNode
HardwareModel = _core.igraph.HardwareModel


def hardware(name: str = "cpu") -> HardwareModel:
    """A hardware model: "cpu" (this machine: cores, vector width, caches),
    "reference-cpu" (the fixed model tests use) or "gpu" (132 groups of 4
    warps)."""
    return _core.igraph.hardware(name)


def _ready(module):
    """A scheduled copy of `module`, optimized by the default pipeline unless
    it is scheduled already (the pipeline ends by scheduling)."""
    if module.is_scheduled:
        return module
    from uir._src.core.passes import default_pipeline

    return default_pipeline().run(module)


def lower(module, hardware: str | HardwareModel = "cpu") -> KernelGraph:
    """The Kernel Graph of `module`: on a copy, runs whatever is still missing
    (the default pipeline and scheduling, then buffer assignment) and lowers
    every fusion to iGraphs for `hardware`. Fusions that do not lower become
    evaluator-backed "fallback" nodes with their reason; ``kg.count("fallback")``
    counts them."""
    return _core.igraph.lower(_ready(module), hardware)


def parse(text: str) -> IGraph:
    """An iGraph from its text (as ``IGraph.to_text()`` prints it). Raises
    uir.ParseError with the line and column of the problem."""
    return _core.igraph.parse(text)


def plan(graph: IGraph, until: str | None = None) -> IGraph:
    """A planned, verified copy of an unplanned iGraph (``graph.unplanned()``
    gives one): the plan steps of ``plan_steps()`` run in order, through the
    step named `until` when given. Lowering plans every iGraph it makes; the
    plan is what the CPU backend carries out, shown in the text as the
    ``plan`` line and each iOp's ``{...}``."""
    return _core.igraph.plan(graph, until or "")


def lowering_steps(
    module, name: str, hardware: str | HardwareModel = "cpu"
) -> list[tuple[str, str]]:
    """How the fusion (or lone elementwise op) `name` of `module`'s entry
    computation is lowered, step by step, as (step, text) in order:
    "tile-programs", "collapse", "tile", then "plan.<step>" for each plan
    step. The module is optimized and scheduled first unless it is scheduled
    already (as ``lower`` does), so `name` is an instruction of the optimized
    module (``kg.nodes`` name them). A dot or convolution with an
    elementwise epilogue shows the epilogue's lowering (the library call
    writes the result it finishes); a dot chain's blocks, lowered from a
    module of their own, are not shown. A step that refuses ends the list
    with "refused: <reason>"."""
    return _core.igraph.lowering_stages(_ready(module), name, hardware)


def plan_steps() -> list[tuple[str, str]]:
    """The plan steps in the order they run, as (name, what it decides)."""
    return _core.igraph.plan_steps()


def verify(graph: IGraph) -> None:
    """Raises uir.VerifyError naming the iOp (and its line) that breaks a rule."""
    graph.verify()


def interpret(graph, *arrays):
    """Runs a KernelGraph on NumPy arrays (one per entry parameter) and returns
    the result as uir.evaluate does; or runs one IGraph in place on a dict
    {dram iPointer id: contiguous writable array}."""
    if isinstance(graph, IGraph):
        if len(arrays) != 1 or not isinstance(arrays[0], dict):
            raise TypeError("interpret(igraph, buffers) takes a dict {dram id: array}")
        _core.igraph.interpret_igraph(graph, arrays[0])
        return arrays[0]
    if not isinstance(graph, KernelGraph):
        raise TypeError(f"interpret takes a KernelGraph or an IGraph, got {type(graph).__name__}")
    return graph.interpret([a if isinstance(a, tuple) else np.asarray(a) for a in arrays])


def interpret_module(kg: KernelGraph, module, *arrays):
    """interpret() with each argument checked against `module`'s parameters."""
    params = module.entry.parameters
    if len(arrays) != len(params):
        raise TypeError(f"{module.name} takes {len(params)} arguments, got {len(arrays)}")
    return kg.interpret([_check_argument(p, a) for p, a in zip(params, arrays, strict=True)])


def compile_gpu(graph, sm: str = "sm_90", opt_level: int = 3):
    """PTX (LLVM's NVPTX back end) for a KernelGraph lowered for the GPU model
    (``lower(m, "gpu")``), or for one such IGraph: a GpuProgram with ``ptx``,
    ``llvm_ir``, ``kernels`` (each one's launch and where its iPointers live)
    and ``refused`` (iGraphs with no GPU form, with the reason; for one IGraph
    the reason is raised as uir.UnimplementedError instead). `sm` is the
    architecture the PTX targets (sm_70 .. sm_90a)."""
    if isinstance(graph, IGraph):
        return _core.igraph.compile_gpu_igraph(graph, sm, opt_level)
    if not isinstance(graph, KernelGraph):
        raise TypeError(f"compile_gpu takes a KernelGraph or an IGraph, got {type(graph).__name__}")
    return graph.compile_gpu(sm, opt_level)


def simulate_gpu(graph, *arrays):
    """interpret() with every GPU-model iGraph run as its GPU kernel would
    run: the kernel compiled for this CPU, one host thread per GPU thread,
    shuffles and barriers between them. The check of the GPU kernels'
    logic on a machine without a GPU (slow: small inputs). Takes a
    KernelGraph and one array per entry parameter, or an IGraph and a dict
    {dram iPointer id: contiguous writable array} (run in place)."""
    if isinstance(graph, IGraph):
        if len(arrays) != 1 or not isinstance(arrays[0], dict):
            raise TypeError("simulate_gpu(igraph, buffers) takes a dict {dram id: array}")
        _core.igraph.simulate_gpu_igraph(graph, arrays[0])
        return arrays[0]
    if not isinstance(graph, KernelGraph):
        raise TypeError(
            f"simulate_gpu takes a KernelGraph or an IGraph, got {type(graph).__name__}"
        )
    return graph.simulate_gpu([a if isinstance(a, tuple) else np.asarray(a) for a in arrays])
