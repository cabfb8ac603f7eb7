"""Compiled.cost_analysis() and Compiled.memory_analysis(): what the cost
model and the buffer assignment say about a compiled function, under
JAX's names."""

from __future__ import annotations

from dataclasses import dataclass


def cost_analysis(executable) -> dict[str, float]:
    """The cost model's totals over the thunk sequence (each loop body and
    branch counted once, as XLA's HloCostAnalysis counts them): 'flops'
    (multiply-adds count two), 'bytes accessed' (every thunk's reads and
    writes), and uir's 'thunks'."""
    exe = getattr(executable, "_exe", None)
    if exe is None:
        raise ValueError(
            f"cost_analysis needs compiled code (backend 'cpu'), not '{executable.backend}'"
        )
    cost = exe.cost()
    return {
        "flops": float(cost["flops"]),
        "bytes accessed": float(cost["bytes accessed"]),
        "thunks": float(cost["thunks"]),
    }


@dataclass(frozen=True)
class MemoryAnalysis:
    """A compiled function's memory, in bytes, under the field names of
    JAX's CompiledMemoryStats: arguments, outputs (less those that alias
    an argument: alias_size_in_bytes), temporaries (the arena the buffer
    assignment lays them in), the machine code's object files, and the
    peak of live temporaries under the schedule. uir runs on the host: the
    host_* fields, JAX's for host-offloaded memory beside a device, are 0."""

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    peak_memory_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


def memory_analysis(executable, assignment) -> MemoryAnalysis:
    arguments = outputs = aliased = 0
    for a in assignment.allocations:
        if a["kind"] == "parameter":
            arguments += a["size"]
            if a["live_out"]:
                aliased += a["size"]
        elif a["kind"] == "output":
            outputs += a["size"]
    exe = getattr(executable, "_exe", None)
    code = exe.generated_code_bytes if exe is not None else 0
    return MemoryAnalysis(
        generated_code_size_in_bytes=code,
        argument_size_in_bytes=arguments,
        output_size_in_bytes=outputs,
        alias_size_in_bytes=aliased,
        temp_size_in_bytes=assignment.arena_bytes,
        peak_memory_in_bytes=arguments + outputs + assignment.peak_bytes,
    )
