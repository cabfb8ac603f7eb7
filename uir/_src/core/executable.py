"""uir.compile's executable: an optimized module compiled for a backend.

"cpu" (the default) lowers the optimized module to its Kernel Graph and
compiles every iGraph to machine code for this CPU (LLVM, one module per
executable); nodes without code run on the evaluator or the iGraph
interpreter and are listed in ``fallbacks``. "eval" runs the optimized module
on the reference evaluator. "gpu" lowers it for the GPU model and writes
PTX (uir._src.core.gpu), on any machine; running it needs a GPU. The
executable compiles and runs; the other jobs
live apart: what UIR_FLAGS asks (compile_options), the on-disk cache
(disk_cache), the serialized form (serialization), the code dumps (dumps),
profiles (profile) and the in-process cache (backend).
"""

from __future__ import annotations

import time

import numpy as np

from uir._src.core import disk_cache, dumps, serialization
from uir._src.core.compile_options import (
    BACKENDS,
    check_fallbacks,
    compile_options,
    default_backend,
)
from uir._src.core.errors import (
    ArgumentError,
    DistributedError,
    ShapeError,
    UnimplementedError,
)
from uir._src.core.evaluate import (
    _check_argument,
    _participant_slice,
    checked_arguments,
    evaluate,
    required_replicas,
)


class Executable:
    """A module compiled for a backend. Call it with one array (or tuple of
    arrays) per entry parameter."""

    def __init__(self, module, backend: str | None = None, *, optimized: bool = False):
        backend = default_backend() if backend is None else backend
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.backend = backend
        self._gpu = None
        self.compile_seconds: dict[str, float] = {}
        self._cache_hit = False
        # Dumps are written by compiles: with --dump_to, no loading from disk.
        from uir._src.core.passes import flags

        cache_dir = disk_cache.cache_dir() if backend == "cpu" and "dump_to" not in flags() else ""
        if cache_dir:
            path = disk_cache.path_for(cache_dir, module)
            blob = disk_cache.read(path)
            if blob is not None:
                from uir._src.core.errors import SerializationError

                try:
                    serialization.load(self, blob)
                    self._cache_hit = True
                    return
                except SerializationError:
                    pass  # a damaged or stale entry: compiled again and replaced
        self._compile(module, optimized)
        if cache_dir and self._exe is not None and self._dynamic is None:
            disk_cache.write_atomically(path, self.serialize())

    def _compile(self, module, optimized: bool) -> None:
        from uir._src.core.igraph import lower
        from uir._src.core.passes import default_pipeline

        backend = self.backend
        self._kernel_graph = None
        self._exe = None
        self._gpu = None
        self._reasons: list[str] = []
        self._dynamic = None
        # What runs where there is no compiled code.
        evaluated = None
        entry = module.entry
        if backend == "cpu" and any("<=" in str(i.shape) for i in [*entry.parameters, entry.root]):
            # Arrays of dynamic size run at their bounds where no op mixes
            # padding in (uir._src.core.dynamic); else on the evaluator, which
            # reads only their valid entries, through the module as written
            # (it carries dynamic sizes through no bitcast the passes make).
            from uir._src.core.dynamic import DynamicPlan, Unsupported
            from uir._src.core.hlo import parse_module

            try:
                self._dynamic = DynamicPlan.of(module)
            except Unsupported as e:
                self._reasons.append(f"{module.name}: dynamic shapes run on the evaluator ({e})")
                evaluated = module
            else:
                module = parse_module(self._dynamic.static_text)
        start = time.perf_counter()
        self.module = module if optimized else default_pipeline().run(module)
        self.compile_seconds["hlo_passes"] = time.perf_counter() - start
        self._evaluated = evaluated or self.module
        if backend == "gpu":
            from uir._src.core.gpu import GpuCode

            start = time.perf_counter()
            self._kernel_graph = lower(self.module, "gpu")
            self.compile_seconds["lowering"] = time.perf_counter() - start
            start = time.perf_counter()
            self._gpu = GpuCode(self._kernel_graph)
            self.compile_seconds["ptx"] = time.perf_counter() - start
        if backend == "cpu" and not self._reasons:
            start = time.perf_counter()
            self._kernel_graph = lower(self.module)
            self.compile_seconds["lowering"] = time.perf_counter() - start
            start = time.perf_counter()
            self._exe = self._kernel_graph.compile(keep_text=False, **compile_options())
            self.compile_seconds["llvm"] = time.perf_counter() - start
            self.compile_seconds.update(
                {f"llvm_{k}": v for k, v in self._exe.compile_seconds.items()}
            )
            check_fallbacks(self)
            dumps.write_code_dumps(self)

    def serialize(self) -> bytes:
        """The executable as bytes. backend="cpu": its machine code (object
        files), the optimized module, its buffer assignment, the thunk
        sequence, the signature and the CPU features the code needs;
        uir.deserialize(blob) loads it in another process (same uir
        version, a CPU with those features) without running the HLO passes
        or LLVM's optimizer and code generator. backend="gpu": the PTX, the
        plan of launches, copies, GEMMs and control flow, the device
        allocations and constants, and the row-major signature, which the
        runtime-only module (runtime_only/) loads and runs on a machine
        with a GPU and no compiler; every node must run on the GPU."""
        if self._gpu is not None:
            return self._gpu.serialize()
        return serialization.serialize(self)

    @classmethod
    def deserialize(cls, blob: bytes) -> Executable:
        """The executable `blob` (from serialize) holds; raises
        uir.SerializationError when it is damaged, cut short, written by
        another uir version, or compiled for CPU features this host lacks."""
        if not isinstance(blob, bytes | bytearray | memoryview):
            raise TypeError(
                f"deserialize takes the bytes serialize gave, got {type(blob).__name__}"
            )
        exe = cls.__new__(cls)
        exe._cache_hit = False
        from uir._src.core.gpu import GPU_MAGIC, GpuCode

        if bytes(blob[: len(GPU_MAGIC)]) == GPU_MAGIC:
            exe.backend = "gpu"
            exe._gpu = GpuCode.load(bytes(blob))
            exe.module = None
            exe._kernel_graph = None
            exe._exe = None
            exe._reasons = []
            exe._dynamic = None
            exe.compile_seconds = {}
            return exe
        exe.backend = "cpu"
        exe._gpu = None
        exe._cache_hit = False
        serialization.load(exe, bytes(blob))
        return exe

    @property
    def kernel_graph(self):
        if self._kernel_graph is None:
            from uir._src.core.igraph import lower

            self._kernel_graph = lower(self.module)
        return self._kernel_graph

    @property
    def native_loops(self) -> int:
        """While loops that run as one compiled function calling their
        kernels (condition, test, body, again) instead of node by node."""
        return self._exe.native_loops if self._exe is not None else 0

    @property
    def cache_hit(self) -> bool:
        """Whether the executable came from the on-disk cache
        (UIR_FLAGS=--cpu_cache_dir=DIR) instead of the HLO passes and LLVM."""
        return self._cache_hit

    @property
    def thunk_text(self) -> str:
        """The thunk sequence a call runs: a line per thunk (kernel, gemm,
        copy, while, conditional, call, custom-call, host) with the slices
        it reads and writes and the thunks it waits for."""
        if self._exe is None:
            raise ValueError("only the cpu backend has thunks")
        return self._exe.thunk_text

    @property
    def thunk_kinds(self) -> dict[str, int]:
        """Thunks by kind, nested sequences included."""
        return dict(self._exe.thunk_kinds) if self._exe is not None else {}

    @property
    def concurrent(self) -> bool:
        """Whether independent thunks run at the same time on the worker
        threads (a dependency DAG); else they run in order on the calling
        thread, which is cheaper when there is little to overlap."""
        return bool(self._exe.concurrent) if self._exe is not None else False

    @property
    def fallbacks(self) -> list[str]:
        """What does not run as compiled code, one line each with its reason:
        every node a thunk runs on the reference evaluator (kind "fallback"
        in thunk_text and the profile) and the iGraphs the emitter refused."""
        if self._gpu is not None:
            return self._reasons + self._gpu.fallbacks
        return self._reasons + (list(self._exe.fallbacks) if self._exe is not None else [])

    def as_text(self, dialect: str = "hlo") -> str:
        """The optimized module ("hlo"), its Kernel Graph ("igraph"), the
        optimized LLVM IR of every kernel ("llvm") or, compiled with
        backend="gpu", their PTX ("ptx")."""
        if dialect == "hlo":
            return self.module.to_text()
        if dialect == "igraph":
            return self.kernel_graph.to_text()
        if dialect == "llvm":
            return self._gpu.llvm_ir if self._gpu is not None else self.llvm_ir
        if dialect == "ptx":
            if self._gpu is None:
                raise ValueError(
                    f"PTX is written by uir.compile(m, backend='gpu'); this executable's "
                    f"backend is {self.backend!r}"
                )
            return self._gpu.ptx
        raise ValueError(f"as_text: dialect must be hlo, igraph, llvm or ptx, got {dialect!r}")

    def simulate(self, *arrays):
        """backend="gpu": runs the executable as a GPU would, on this CPU:
        the same plan of launches, copies, loops and host steps, each kernel
        compiled for the CPU and run with one thread of control per GPU
        thread (shuffles and barriers between them). Slow; for checking
        the GPU code on a machine without a GPU."""
        if self._gpu is None:
            raise ValueError("only the gpu backend simulates a GPU")
        return self._gpu.run(checked_arguments(self.module, arrays), simulate=True)

    @property
    def gpu_kernels(self) -> list[dict]:
        """backend="gpu": each kernel's launch (name, igraph, grid, block,
        shared_bytes, lane_bytes, params, placement of its iPointers)."""
        if self._gpu is None:
            raise ValueError("only the gpu backend has GPU kernels")
        return self._gpu.kernels

    def _text_exe(self):
        """The executable compiled again, keeping its LLVM IR and assembly."""
        if self._exe is None:
            raise ValueError("only the cpu backend has LLVM IR and assembly")
        if not hasattr(self, "_with_text"):
            self._with_text = self.kernel_graph.compile(keep_text=True, **compile_options())
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

    def __call__(self, *arrays, replicas: int | None = None, per_replica: bool = False):
        """Runs on `arrays`. An executable whose collectives meet several
        participants (`participants`: replica_count x num_partitions) runs
        them all in this process with `replicas` = that count, one thread
        each, on the same arrays or, with `per_replica=True`, participant i
        on index i of every array's leading axis (as uir.evaluate does); the
        result is then a list, one per participant. Under uir.distributed,
        with one process per participant, a plain call runs this process's
        participant (uir.process_index()) and returns its result."""
        if replicas is None and not per_replica:
            return self._run(arrays, [])
        return self._run_replicated(arrays, replicas, per_replica)

    @property
    def participants(self) -> int:
        """How many participants its collectives meet: replica_count x
        num_partitions, or more when a collective names more."""
        if self._exe is not None:
            return self._exe.participants
        return required_replicas(self._evaluated if self._gpu is None else self.module)

    def _run_distributed(self, arrays):
        """This process's participant of a run across processes."""
        from uir._src.core.distributed import process_count

        n = self.participants
        if process_count() != n:
            raise DistributedError(
                f"{self.module.name} runs as {n} participants, one per process, and this run "
                f"has {process_count()} processes"
            )
        if self._dynamic is not None:
            raise UnimplementedError("arrays of dynamic size across processes")
        return self._run_checked(arrays, self._exe.run_distributed)

    def _run_replicated(self, arrays, replicas, per_replica):
        n = self.participants if replicas is None else replicas
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"replicas must be a positive int, got {n!r}")
        if self._gpu is not None:
            raise UnimplementedError("backend='gpu' runs one participant; replicas= is for 'cpu'")
        if self._exe is None or self._dynamic is not None:
            out = evaluate(self._evaluated, *arrays, replicas=n, per_replica=per_replica)
            return out if isinstance(out, list) else [out]
        if n != self.participants:
            raise DistributedError(
                f"{self.module.name} runs as {self.participants} participants, not replicas={n}"
            )
        params = self.module.entry.parameters
        if len(arrays) != len(params):
            raise ArgumentError(
                f"{self.module.name} takes {len(params)} arguments, got {len(arrays)}"
            )
        per = [
            [
                _check_argument(p, _participant_slice(a, i, n, p) if per_replica else a)
                for p, a in zip(params, arrays, strict=True)
            ]
            for i in range(n)
        ]
        return self._exe.run_participants(per)

    def call_donating(self, arrays, donated):
        """Runs on `arrays`, letting results that input_output_alias places
        in a parameter be computed in the arrays at the positions in
        `donated` (which are then written over). Without a position there,
        an argument is only read."""
        return self._run(arrays, list(donated))

    def profile(
        self,
        *arrays,
        roofline: tuple[float, float] | None = None,
        warmup: int = 1,
        loop_bodies: bool = False,
        simulate: bool = False,
    ):
        """Runs on `arrays` `warmup` times untimed (first runs set up the
        executable's memory), then once with every op timed, and returns a
        Profile (uir._src.core.profile): per-op rows of time, bytes, GB/s, flops
        and the fraction of this machine's roofline (measured once per
        process, or `roofline` = (GB/s, GFLOP/s)); str() is a table,
        chrome_trace() the trace-event JSON. The result is .result.
        With `loop_bodies`, the run is of the executable compiled again with
        timers around each iGraph's loop body (two cycle-counter reads and
        two atomic adds per parallel id), and each kernel's row is followed
        by a "loop body" row per iGraph: its time summed over the threads
        that ran it, and the bodies (parallel ids) run. Compiled code only.
        backend="gpu": each step of the plan (launch, copy, GEMM, custom
        call, loop, host step) timed by CUDA events around it, on GPU 0,
        or by the host's clock with `simulate` (on the simulated GPU)."""
        from uir._src.core.profile import profile_executable

        return profile_executable(self, arrays, roofline, warmup, loop_bodies, simulate)

    def _timed_exe(self):
        """The executable compiled again with loop-body timers (kept)."""
        if not hasattr(self, "_with_timers"):
            self._with_timers = self.kernel_graph.compile(
                time_loop_bodies=True, **compile_options()
            )
        return self._with_timers

    def _run(self, arrays, donated):
        if self._exe is not None and self._exe.participants > 1:
            from uir._src.core import distributed

            if distributed.is_initialized():
                return self._run_distributed(arrays)
        if self._gpu is not None:
            return self._gpu.run(checked_arguments(self.module, arrays))
        if self._exe is None:
            return evaluate(self._evaluated, *arrays)
        if self._dynamic is not None:
            # At the bounds: padded copies in (nothing to donate), results cut.
            result = self._run_compiled(self._dynamic.pad(arrays), [])
            return self._dynamic.crop(result, arrays)
        return self._run_compiled(arrays, donated)

    def _run_compiled(self, arrays, donated):
        return self._run_checked(arrays, lambda args: self._exe.run(args, donated))

    def _run_checked(self, arrays, run):
        """run(arrays) on the compiled executable: NumPy arrays go straight
        in (the executable checks dtypes and dims itself); a mismatch, or
        anything else, takes the slower path, for its precise error."""
        if all(type(a) is np.ndarray for a in arrays):
            try:
                return run(list(arrays))
            except ShapeError:
                pass
        params = self.module.entry.parameters
        if len(arrays) != len(params):
            raise ArgumentError(
                f"{self.module.name} takes {len(params)} arguments, got {len(arrays)}"
            )
        return run([_check_argument(p, a) for p, a in zip(params, arrays, strict=True)])

    def __repr__(self) -> str:
        return f"Executable({self.module.name}, backend={self.backend!r})"
