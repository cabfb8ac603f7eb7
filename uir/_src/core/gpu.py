"""The GPU target from Python: the devices this process can run on, and a
module's PTX (backend="gpu").

PTX comes from LLVM's NVPTX back end, so it is made on any machine; the CUDA
driver (libcuda.so.1) is loaded at run time only, so uir imports where there
is no GPU. Every kernel of the Kernel Graph lowered for the GPU model becomes
one PTX kernel (a thread block per group of the model, a warp per unit); the
library nodes (dot, convolution, sort, ...) have no GPU code yet: they
run as host steps and are listed in ``fallbacks``. Without a GPU the same
executable runs simulated (``Executable.simulate``), which is how its
kernels and plan are tested."""

from __future__ import annotations

import dataclasses
import os

from uir import _core

# The PTX target: UIR_GPU_ARCH, else the H100/H200's.
DEFAULT_SM = "sm_90"


@dataclasses.dataclass(frozen=True)
class Device:
    """One device: platform "cpu" or "gpu", its index, its kind (the CPU's
    model and vector ISA, or the GPU's name) and, for a GPU, its compute
    capability and memory."""

    platform: str
    id: int
    kind: str
    compute_capability: tuple[int, int] | None = None
    memory_bytes: int | None = None
    process_index: int = 0  # the process it belongs to (uir.distributed)

    def __repr__(self) -> str:
        cc = self.compute_capability
        extra = f", sm_{cc[0]}{cc[1]}" if cc else ""
        return f"Device({self.platform}:{self.id}, {self.kind!r}{extra})"


def cuda_driver() -> dict:
    """What the CUDA driver says, probed once: available, why (when not),
    driver_version and devices."""
    return _core.runtime.cuda_driver()


def devices(platform: str | None = None) -> list[Device]:
    """The devices a run can use: the CPU of every process of the run
    (one, outside uir.distributed; device i is process i's), then every GPU
    the CUDA driver reports to this process (none where libcuda.so.1 is
    missing). `platform` ("cpu" or "gpu") keeps only those."""
    from uir._src.core.distributed import process_count, process_index

    if platform not in (None, "cpu", "gpu"):
        raise ValueError(f"platform must be 'cpu' or 'gpu', got {platform!r}")
    cpu = _core.codegen.host_info()["cpu"]
    out = [Device("cpu", i, cpu, process_index=i) for i in range(process_count())]
    for d in cuda_driver()["devices"]:
        out.append(
            Device(
                "gpu",
                d["index"],
                d["name"],
                tuple(d["compute_capability"]),
                d["memory_bytes"],
                process_index=process_index(),
            )
        )
    return [d for d in out if platform is None or d.platform == platform]


def gpu_arch() -> str:
    return os.environ.get("UIR_GPU_ARCH", DEFAULT_SM)


class GpuCode:
    """A Kernel Graph's GPU executable: ``ptx``, ``llvm_ir``, ``kernels``
    (each one's launch: grid, block, shared memory, where its iPointers
    live), ``fallbacks`` (iGraphs with no GPU form and nodes run as host
    steps, with the reason), and runs: on GPU 0 through the CUDA driver, or
    simulated on this CPU (the same plan and kernels, one host thread of
    control per GPU thread)."""

    def __init__(self, kernel_graph, sm: str | None = None, *, executable=None):
        self.kernel_graph = kernel_graph
        self.executable = executable or kernel_graph.gpu_executable(sm or gpu_arch())
        self.program = self.executable.program
        self.fallbacks = list(self.executable.fallbacks)

    @classmethod
    def load(cls, blob: bytes) -> GpuCode:
        """The GPU executable serialize() wrote (no HLO, no LLVM needed)."""
        return cls(None, executable=_core.igraph.load_gpu_executable(blob))

    def serialize(self) -> bytes:
        return self.executable.serialize()

    @property
    def ptx(self) -> str:
        return self.program.ptx

    @property
    def llvm_ir(self) -> str:
        return self.program.llvm_ir

    @property
    def kernels(self) -> list[dict]:
        return self.program.kernels

    def run(self, arrays, simulate: bool = False):
        return self.executable.run(list(arrays), simulate)


GPU_MAGIC = b"UIRGPU01"
