"""Type stubs for uir's C++ extension (csrc/python/). Private API: use the
`uir` package."""

from collections.abc import Sequence
from typing import Any, TypeAlias, overload

import numpy as np
import numpy.typing as npt

__version__: str

# A NumPy dtype or scalar type, an HLO element type name ("f32") or a dtype
# name ("float32").
DTypeLike: TypeAlias = npt.DTypeLike | str
# An hlo.Shape, shape text, (dims, dtype), or a sequence of shapes (a tuple).
ShapeLike: TypeAlias = Any

class support:
    @staticmethod
    def throw_for_testing(kind: str, message: str) -> None: ...

class runtime:
    @staticmethod
    def blas_core() -> str: ...
    @staticmethod
    def cuda_driver() -> dict: ...
    @staticmethod
    def num_threads() -> int: ...
    @staticmethod
    def parallel_sum_for_testing(n: int, grain: int, throw_at: int = -1) -> int: ...
    @staticmethod
    def register_c_custom_call(
        name: str, address: int, api: str, check_address: bool = False
    ) -> None: ...
    @staticmethod
    def register_python_custom_call(name: str, fn: Any) -> None: ...
    @staticmethod
    def unregister_custom_call(name: str) -> bool: ...
    @staticmethod
    def custom_call_targets() -> list[str]: ...

class codegen:
    @staticmethod
    def host_info() -> dict[str, Any]: ...

    class SmokeAddKernel:
        def __init__(self, opt_level: int = 3) -> None: ...
        @property
        def optimized_ir(self) -> str: ...
        def __call__(
            self, a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]
        ) -> npt.NDArray[np.float32]: ...

class hlo:
    class Shape:
        @overload
        def __init__(self, text: str) -> None: ...
        @overload
        def __init__(self, dims: Sequence[int], dtype: DTypeLike) -> None: ...
        @staticmethod
        def tuple(elements: Sequence[ShapeLike]) -> hlo.Shape: ...
        dtype: np.dtype | str | None
        element_type: str | None
        dims: tuple[int, ...]
        rank: int
        dynamic_dims: tuple[bool, ...]
        layout: tuple[int, ...] | None
        layout_text: str | None
        is_tuple: bool
        tuple_shapes: list[hlo.Shape]
        def compatible(self, other: hlo.Shape) -> bool: ...

    class HloInstruction:
        name: str
        opcode: str
        shape: hlo.Shape
        operands: list[hlo.HloInstruction]
        users: list[hlo.HloInstruction]
        control_predecessors: list[hlo.HloInstruction]
        called_computations: list[hlo.HloComputation]
        attributes: dict[str, Any]
        computation: hlo.HloComputation
        def to_text(self) -> str: ...

    class HloComputation:
        name: str
        instructions: list[hlo.HloInstruction]
        root: hlo.HloInstruction
        parameters: list[hlo.HloInstruction]
        is_entry: bool
        def to_text(self) -> str: ...

    class HloModule:
        name: str
        entry: hlo.HloComputation
        computations: list[hlo.HloComputation]
        is_scheduled: bool
        replica_count: int
        num_partitions: int
        def to_text(
            self,
            print_layout: bool = True,
            print_operand_shapes: bool = False,
            print_metadata: bool = True,
            print_large_constants: bool = True,
            async_sugar: bool = True,
        ) -> str: ...
        def verify(self) -> None: ...
        def clone(self) -> hlo.HloModule: ...

    class ComputationBuilder:
        def parameter(
            self, number: int, shape: ShapeLike, name: str = ""
        ) -> hlo.HloInstruction: ...
        def constant(self, value: Any, name: str = "") -> hlo.HloInstruction: ...
        def op(
            self, opcode: str, *operands: hlo.HloInstruction, **attributes: Any
        ) -> hlo.HloInstruction: ...
        def broadcast(
            self, operand: hlo.HloInstruction, dims: list[int], broadcast_dimensions: list[int]
        ) -> hlo.HloInstruction: ...
        def reshape(self, operand: hlo.HloInstruction, dims: list[int]) -> hlo.HloInstruction: ...
        def convert(self, operand: hlo.HloInstruction, element_type: str) -> hlo.HloInstruction: ...
        def build(self, root: hlo.HloInstruction | None = None) -> hlo.HloComputation: ...

    class ModuleBuilder:
        def __init__(self, name: str) -> None: ...
        def computation(self, name: str) -> hlo.ComputationBuilder: ...
        def build(self, entry: hlo.HloComputation) -> hlo.HloModule: ...

    @staticmethod
    def parse_module(text: str, file: str = "") -> hlo.HloModule: ...
    @staticmethod
    def mutate_text(text: str, seed: int, rounds: int = 1) -> str: ...
    @staticmethod
    def reduction_kinds() -> list[tuple[str, str]]: ...
    @staticmethod
    def reduction_identity(kind: str, type: str) -> Any: ...

class eval:
    @staticmethod
    def evaluate(
        module: hlo.HloModule, arrays: list[Any], replicas: int = 1, seed: int = 0
    ) -> Any: ...
    @staticmethod
    def required_replicas(module: hlo.HloModule) -> int: ...

class igraph:
    class HardwareModel:
        target: str
        num_group: int
        num_unit: int
        reg_bytes: int
        sram_bytes: int
        vector_bytes: int

    class IGraph:
        name: str
        hardware: igraph.HardwareModel
        num_parallel: int
        num_loop: int
        index_vars: list[tuple[str, int, str]]
        pointers: list[dict]
        op_count: int
        def to_text(self) -> str: ...
        def verify(self) -> None: ...
        def reg_bytes(self) -> int: ...
        def sram_bytes(self) -> int: ...
        def dram_bytes_read(self) -> int: ...
        def dram_bytes_written(self) -> int: ...

    class KernelNode:
        kind: str
        name: str
        op: str
        reason: str
        inputs: list[dict]
        outputs: list[dict]
        igraphs: list[igraph.IGraph]
        igraph: igraph.IGraph | None
        scratch_bytes: list[int]
        subgraph_count: int

    class KernelGraph:
        name: str
        hardware: igraph.HardwareModel
        nodes: list[igraph.KernelNode]
        def count(self, kind: str) -> int: ...
        def to_text(self) -> str: ...
        def interpret(self, args: list) -> Any: ...
        def simulate_gpu(self, args: list) -> Any: ...
        def compile_gpu(self, sm: str = "sm_90", opt_level: int = 3) -> igraph.GpuProgram: ...

    class GpuProgram:
        sm: str
        ptx: str
        llvm_ir: str
        refused: list[str]
        kernels: list[dict]

    @staticmethod
    def hardware(name: str) -> igraph.HardwareModel: ...
    @staticmethod
    def simulate_gpu_igraph(igraph: igraph.IGraph, buffers: dict) -> None: ...
    @staticmethod
    def compile_gpu_igraph(
        igraph: igraph.IGraph, sm: str = "sm_90", opt_level: int = 3
    ) -> igraph.GpuProgram: ...
    @staticmethod
    def parse(text: str) -> igraph.IGraph: ...
    @staticmethod
    def interpret_igraph(igraph: igraph.IGraph, buffers: dict) -> None: ...
    @staticmethod
    def lower(
        module: hlo.HloModule, hardware: str | igraph.HardwareModel = "cpu"
    ) -> igraph.KernelGraph: ...

class distributed:
    @staticmethod
    def built() -> bool: ...
    @staticmethod
    def library_version() -> str: ...
    @staticmethod
    def initialize() -> tuple[int, int]: ...
    @staticmethod
    def initialized() -> bool: ...
    @staticmethod
    def finalize() -> None: ...
    @staticmethod
    def barrier() -> None: ...
    @staticmethod
    def report_failure(message: str) -> None: ...
    @staticmethod
    def allreduce_seconds(in_: Any, out: Any, iterations: int) -> float: ...
