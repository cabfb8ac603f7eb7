"""uir.compile: an optimized module as an executable on a backend.

"cpu" (the default) lowers the optimized module to its Kernel Graph and
compiles every iGraph to machine code for this CPU (LLVM, one module per
executable); nodes without code run on the evaluator or the iGraph
interpreter and are listed in ``fallbacks``. "eval" runs the optimized module
on the reference evaluator.
"""

from __future__ import annotations

import time

import numpy as np

from uir._src.errors import ShapeError
from uir._src.evaluate import _check_argument, evaluate

BACKENDS = ("cpu", "eval")


def default_backend() -> str:
    """UIR_FLAGS=--backend=eval|cpu, else "cpu"."""
    from uir._src.passes import flags

    name = flags().get("backend", "cpu")
    if name not in BACKENDS:
        raise ValueError(f"UIR_FLAGS --backend must be one of {BACKENDS}, got {name!r}")
    return name


def _vector_bits() -> int:
    """UIR_FLAGS=--cpu_vector_bits=256|512: the vector width kernels may use
    (default: LLVM's choice for this CPU)."""
    from uir._src.passes import flags

    value = flags().get("cpu_vector_bits", "0")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"UIR_FLAGS --cpu_vector_bits must be a number, got {value!r}") from None


class Executable:
    """A module compiled for a backend. Call it with one array (or tuple of
    arrays) per entry parameter."""

    def __init__(self, module, backend: str | None = None, *, optimized: bool = False):
        from uir._src.igraph import lower
        from uir._src.passes import default_pipeline

        backend = default_backend() if backend is None else backend
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.backend = backend
        self.compile_seconds: dict[str, float] = {}
        start = time.perf_counter()
        self.module = module if optimized else default_pipeline().run(module)
        self.compile_seconds["hlo_passes"] = time.perf_counter() - start
        self._kernel_graph = None
        self._exe = None
        self._reasons: list[str] = []
        entry = self.module.entry
        if backend == "cpu" and any("<=" in str(i.shape) for i in [*entry.parameters, entry.root]):
            # Arrays of dynamic size run on the evaluator, which reads only
            # their valid entries.
            self._reasons.append(f"{self.module.name}: dynamic shapes run on the evaluator")
        elif backend == "cpu":
            start = time.perf_counter()
            self._kernel_graph = lower(self.module)
            self.compile_seconds["lowering"] = time.perf_counter() - start
            start = time.perf_counter()
            self._exe = self._kernel_graph.compile(keep_text=False, vector_bits=_vector_bits())
            self.compile_seconds["llvm"] = time.perf_counter() - start
            self.compile_seconds.update(
                {f"llvm_{k}": v for k, v in self._exe.compile_seconds.items()}
            )
            from uir._src.passes import flags, write_dump

            dump_to = flags().get("dump_to")
            if isinstance(dump_to, str):
                exe = self._text_exe()
                name = self.module.name
                write_dump(dump_to, name, "ir-no-opt.ll", exe.llvm_ir_unoptimized)
                write_dump(dump_to, name, "ir-with-opt.ll", exe.llvm_ir)
                write_dump(dump_to, name, "s", exe.assembly)

    @property
    def kernel_graph(self):
        if self._kernel_graph is None:
            from uir._src.igraph import lower

            self._kernel_graph = lower(self.module)
        return self._kernel_graph

    @property
    def fallbacks(self) -> list[str]:
        """What does not run as compiled code, one line each with its reason:
        Kernel Graph fallback nodes and iGraphs the emitter refused."""
        return self._reasons + (list(self._exe.fallbacks) if self._exe is not None else [])

    def _text_exe(self):
        """The executable compiled again, keeping its LLVM IR and assembly."""
        if self._exe is None:
            raise ValueError("only the cpu backend has LLVM IR and assembly")
        if not hasattr(self, "_with_text"):
            self._with_text = self.kernel_graph.compile(keep_text=True, vector_bits=_vector_bits())
        return self._with_text

    @property
    def llvm_ir(self) -> str:
        """The optimized LLVM IR of every kernel (one module)."""
        return self._text_exe().llvm_ir

    @property
    def llvm_ir_unoptimized(self) -> str:
        return self._text_exe().llvm_ir_unoptimized

    @property
    def assembly(self) -> str:
        """The machine code of every kernel, as assembly text."""
        return self._text_exe().assembly

    def __call__(self, *arrays):
        if self._exe is None:
            return evaluate(self.module, *arrays)
        if all(type(a) is np.ndarray for a in arrays):
            # The executable checks dtypes and dims itself; only a mismatch
            # takes the slower path below, for its precise error.
            try:
                return self._exe.run(list(arrays))
            except ShapeError:
                pass
        params = self.module.entry.parameters
        if len(arrays) != len(params):
            raise TypeError(f"{self.module.name} takes {len(params)} arguments, got {len(arrays)}")
        return self._exe.run([_check_argument(p, a) for p, a in zip(params, arrays, strict=True)])

    def __repr__(self) -> str:
        return f"Executable({self.module.name}, backend={self.backend!r})"


def compile(module, backend: str | None = None) -> Executable:
    """The executable of `module` (untouched: the default pipeline runs on a
    copy) for `backend`: "cpu" (the default; UIR_FLAGS=--backend= changes it)
    or "eval"."""
    return Executable(module, backend)
