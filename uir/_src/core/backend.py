"""uir.compile: an optimized module as an executable on a backend.

"cpu" (the default) lowers the optimized module to its Kernel Graph and
compiles every iGraph to machine code for this CPU (LLVM, one module per
executable); nodes without code run on the evaluator or the iGraph
interpreter and are listed in ``fallbacks``. "eval" runs the optimized module
on the reference evaluator.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections import OrderedDict

import numpy as np

from uir._src.core.errors import ArgumentError, ShapeError
from uir._src.core.evaluate import _check_argument, evaluate

BACKENDS = ("cpu", "eval")


def default_backend() -> str:
    """UIR_FLAGS=--backend=eval|cpu, else "cpu"."""
    from uir._src.core.passes import flags

    name = flags().get("backend", "cpu")
    if name not in BACKENDS:
        raise ValueError(f"UIR_FLAGS --backend must be one of {BACKENDS}, got {name!r}")
    return name


def _bytes_flag(name: str, default: int) -> int:
    from uir._src.core.passes import flags

    value = flags().get(name, str(default))
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = -1
    if n < 0:
        raise ValueError(f"UIR_FLAGS --{name} must be a number of bytes, got {value!r}")
    return n


def _compile_options() -> dict[str, int | bool]:
    """The CPU backend's compile flags that UIR_FLAGS sets, by name: each row
    of uir._core.codegen.compile_flags() (codegen/compile_flags.def, which
    names, checks and documents them; `uir info` lists them) is spelled
    --cpu_<name>=value; a switch also as a bare --cpu_<name> (on). Flags not
    given keep the table's defaults; values out of range are refused, naming
    the flag, when the executable is compiled."""
    from uir import _core
    from uir._src.core.passes import flags

    given = flags()
    out: dict[str, int | bool] = {}
    for row in _core.codegen.compile_flags():
        name = row["name"]
        value = given.get(f"cpu_{name}")
        if value is None:
            continue
        if row["kind"] == "switch":
            text = "1" if value is True else str(value)
            if text not in ("0", "1"):
                raise ValueError(f"UIR_FLAGS --cpu_{name} must be 0 or 1, got {value!r}")
            out[name] = text == "1"
            continue
        try:
            out[name] = int(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"UIR_FLAGS --cpu_{name} must be an integer ({row['kind']}), got {value!r}"
            ) from None
    return out


def _cache_dir() -> str:
    """UIR_FLAGS=--cpu_cache_dir=DIR, or "" for no on-disk cache."""
    from uir._src.core.passes import flags

    cache_dir = flags().get("cpu_cache_dir", "")
    if not isinstance(cache_dir, str):
        raise ValueError("UIR_FLAGS --cpu_cache_dir needs a directory: --cpu_cache_dir=DIR")
    return os.path.expanduser(cache_dir) if cache_dir else ""


def _disk_cache_path(cache_dir: str, module) -> str:
    """Where the on-disk cache keeps the executable of `module` compiled with
    this process's UIR_FLAGS on this host: a file named by the SHA-256 of
    everything that decides the executable (the module's text, the flags but
    the cache's own, uir's version, the host CPU and its features, the
    worker count that plans native loops)."""
    from uir import _core
    from uir._src.core.passes import flags

    host = _core.codegen.host_info()
    options = sorted((k, v) for k, v in flags().items() if k != "cpu_cache_dir")
    h = hashlib.sha256()
    for part in (
        _core.__version__,
        host["llvm_version"],
        host["triple"],
        host["cpu"],
        ",".join(host["features"]),
        str(_core.runtime.num_threads()),
        repr(options),
        module.to_text(print_metadata=False),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return os.path.join(cache_dir, h.hexdigest() + ".uirx")


def _write_atomically(path: str, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file renamed into place
    (readers never see half of it); failing to write (a read-only
    directory, a full disk) leaves things as they were: it is only a cache."""
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)


FALLBACK_POLICIES = ("auto", "warn", "error", "off")


def _check_fallbacks(exe) -> None:
    """UIR_FLAGS=--fallback=auto|warn|error|off: what a compile does about
    nodes that run on the reference evaluator (Executable.fallbacks).
    "warn" warns once per executable (uir.FallbackWarning) whenever there is
    one; "error" refuses to compile (uir.FallbackError); "off" says nothing;
    "auto", the default, warns when one of them reads and writes
    --fallback_warn_bytes or more (default 1 MiB), where the evaluator's
    time starts to show."""
    from uir._src.core.errors import FallbackError, FallbackWarning
    from uir._src.core.passes import flags

    policy = str(flags().get("fallback", "auto"))
    if policy not in FALLBACK_POLICIES:
        raise ValueError(f"UIR_FLAGS --fallback must be one of {FALLBACK_POLICIES}, got {policy!r}")
    lines = exe.fallbacks
    if policy == "off" or not lines:
        return
    name = exe.module.name
    listing = "; ".join(lines)
    if policy == "error":
        raise FallbackError(
            f"{name}: {len(lines)} node(s) would run on the evaluator (UIR_FLAGS=--fallback=error): "
            f"{listing}"
        )
    if policy == "auto":
        limit = _bytes_flag("fallback_warn_bytes", 1 << 20)
        sizes = list(exe._exe.fallback_bytes) if exe._exe is not None else []
        if not any(b >= limit for b in sizes):
            return
    import sys
    import warnings

    # Pointed at the first frame outside uir: the user's call.
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level, frame = 1, sys._getframe(0)
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"{name}: {len(lines)} node(s) run on the reference evaluator, not compiled code: "
        f"{listing}",
        FallbackWarning,
        stacklevel=level,
    )


class Executable:
    """A module compiled for a backend. Call it with one array (or tuple of
    arrays) per entry parameter."""

    def __init__(self, module, backend: str | None = None, *, optimized: bool = False):
        backend = default_backend() if backend is None else backend
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.backend = backend
        self.compile_seconds: dict[str, float] = {}
        self._cache_hit = False
        # Dumps are written by compiles: with --dump_to, no loading from disk.
        from uir._src.core.passes import flags

        cache_dir = _cache_dir() if backend == "cpu" and "dump_to" not in flags() else ""
        if cache_dir:
            path = _disk_cache_path(cache_dir, module)
            try:
                with open(path, "rb") as f:
                    blob = f.read()
            except OSError:
                blob = None
            if blob is not None:
                from uir._src.core.errors import SerializationError

                try:
                    self._load(blob)
                    self._cache_hit = True
                    return
                except SerializationError:
                    pass  # a damaged or stale entry: compiled again and replaced
        self._compile(module, optimized)
        if cache_dir and self._exe is not None and self._dynamic is None:
            _write_atomically(path, self.serialize())

    def _compile(self, module, optimized: bool) -> None:
        from uir._src.core.igraph import lower
        from uir._src.core.passes import default_pipeline

        backend = self.backend
        self._kernel_graph = None
        self._exe = None
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
        if backend == "cpu" and not self._reasons:
            start = time.perf_counter()
            self._kernel_graph = lower(self.module)
            self.compile_seconds["lowering"] = time.perf_counter() - start
            start = time.perf_counter()
            self._exe = self._kernel_graph.compile(keep_text=False, **_compile_options())
            self.compile_seconds["llvm"] = time.perf_counter() - start
            self.compile_seconds.update(
                {f"llvm_{k}": v for k, v in self._exe.compile_seconds.items()}
            )
            _check_fallbacks(self)
            from uir._src.core.passes import flags, write_dump

            dump_to = flags().get("dump_to")
            if isinstance(dump_to, str):
                exe = self._text_exe()
                name = self.module.name
                write_dump(dump_to, name, "ir-no-opt.ll", exe.llvm_ir_unoptimized)
                write_dump(dump_to, name, "ir-with-opt.ll", exe.llvm_ir)
                write_dump(dump_to, name, "s", exe.assembly)

    def _load(self, blob: bytes) -> None:
        """Becomes the executable serialized in `blob` (see deserialize)."""
        from uir import _core

        start = time.perf_counter()
        self.module, self._kernel_graph, self._exe = _core.igraph.deserialize(blob)
        self._reasons = []
        self._dynamic = None
        self._evaluated = self.module
        self.compile_seconds = {"load": time.perf_counter() - start}
        self.compile_seconds.update({f"llvm_{k}": v for k, v in self._exe.compile_seconds.items()})

    def serialize(self) -> bytes:
        """The executable as bytes: its machine code (object files), the
        optimized module, its buffer assignment, the thunk sequence, the
        signature and the CPU features the code needs. uir.deserialize(blob)
        loads it in another process (same uir version, a CPU with those
        features) without running the HLO passes or LLVM's optimizer and
        code generator. Compiled code only (backend="cpu")."""
        if self._dynamic is not None:
            raise ValueError(
                f"{self.module.name} takes arrays of dynamic size, which the serialized form "
                "does not record; serialize the module at its bounds"
            )
        if self._exe is None:
            why = self._reasons[0] if self._reasons else f"backend={self.backend!r}"
            raise ValueError(
                f"{self.module.name} does not run as compiled code ({why}); only compiled "
                "code (backend='cpu') serializes"
            )
        from uir._src.core.errors import SerializationError

        try:
            return self._exe.serialize()
        except SerializationError:
            # The module as passes built it places its buffers in an order
            # its text does not keep (module.to_text() parsed again numbers
            # values in text order): the executable of the parsed text is
            # the one a blob can hold. Same program, compiled once more.
            from uir._src.core.hlo import parse_module

            again = Executable.__new__(Executable)
            again.backend = self.backend
            again.compile_seconds = {}
            again._cache_hit = False
            again._compile(parse_module(self.module.to_text()), optimized=True)
            return again._exe.serialize()

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
        exe.backend = "cpu"
        exe._cache_hit = False
        exe._load(bytes(blob))
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
        return self._reasons + (list(self._exe.fallbacks) if self._exe is not None else [])

    def _text_exe(self):
        """The executable compiled again, keeping its LLVM IR and assembly."""
        if self._exe is None:
            raise ValueError("only the cpu backend has LLVM IR and assembly")
        if not hasattr(self, "_with_text"):
            self._with_text = self.kernel_graph.compile(keep_text=True, **_compile_options())
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
        return self._run(arrays, [])

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
        that ran it, and the bodies (parallel ids) run. Compiled code only."""
        from uir._src.core.profile import Profile, machine_roofline

        if self._exe is None:
            raise ValueError(
                f"{self.module.name} runs on the {self.backend!r} backend; profiles time "
                "compiled code (backend='cpu')"
            )
        dynamic = self._dynamic
        original = arrays
        if dynamic is not None:
            arrays = dynamic.pad(arrays)
        params = self.module.entry.parameters
        if len(arrays) != len(params):
            raise ArgumentError(
                f"{self.module.name} takes {len(params)} arguments, got {len(arrays)}"
            )
        checked = [_check_argument(p, a) for p, a in zip(params, arrays, strict=True)]
        exe = self._timed_exe() if loop_bodies else self._exe
        for _ in range(warmup):
            exe.run(checked, [])
        bodies = exe.loop_body_times(reset=True) if loop_bodies else None
        result, events, call_ns = exe.profile(checked)
        if loop_bodies:
            bodies = exe.loop_body_times(reset=True)
        if dynamic is not None:
            result = dynamic.crop(result, original)
        return Profile(
            self.module.name, result, events, call_ns, roofline or machine_roofline(), bodies
        )

    def _timed_exe(self):
        """The executable compiled again with loop-body timers (kept)."""
        if not hasattr(self, "_with_timers"):
            self._with_timers = self.kernel_graph.compile(
                time_loop_bodies=True, **_compile_options()
            )
        return self._with_timers

    def _run(self, arrays, donated):
        if self._exe is None:
            return evaluate(self._evaluated, *arrays)
        if self._dynamic is not None:
            # At the bounds: padded copies in (nothing to donate), results cut.
            result = self._run_compiled(self._dynamic.pad(arrays), [])
            return self._dynamic.crop(result, arrays)
        return self._run_compiled(arrays, donated)

    def _run_compiled(self, arrays, donated):
        if all(type(a) is np.ndarray for a in arrays):
            # The executable checks dtypes and dims itself; only a mismatch
            # takes the slower path below, for its precise error.
            try:
                return self._exe.run(list(arrays), donated)
            except ShapeError:
                pass
        params = self.module.entry.parameters
        if len(arrays) != len(params):
            raise ArgumentError(
                f"{self.module.name} takes {len(params)} arguments, got {len(arrays)}"
            )
        checked = [_check_argument(p, a) for p, a in zip(params, arrays, strict=True)]
        return self._exe.run(checked, donated)

    def __repr__(self) -> str:
        return f"Executable({self.module.name}, backend={self.backend!r})"


def deserialize(blob: bytes) -> Executable:
    """The executable a serialize() call wrote, loaded for this process: no
    HLO pass and no LLVM optimizer or code generator runs. Raises
    uir.SerializationError when `blob` is damaged or cut short, was written
    by another version of uir, or holds code for CPU features this machine
    lacks."""
    return Executable.deserialize(blob)


# Executables compiled in this process, by what they were compiled from: the
# module's text without metadata (text round-trips, so equal text is the
# same program, names, layouts and module options included; the executable
# keeps the metadata of its first compile), the backend, and UIR_FLAGS (which
# choose passes, vector widths and checks). An executable does not change
# once built and may be called from several threads, so one serves every
# compile of the same program: a function traced again, the same HLO file
# loaded twice. The least recently used goes first past _CACHE_SIZE (each
# keeps its compiled code and its pool of run memory). Not used when
# UIR_FLAGS has --dump_to (a compile must write its dumps) or
# --executable_cache=false.
_CACHE: OrderedDict[tuple, Executable] = OrderedDict()
_CACHE_SIZE = 32
_CACHE_LOCK = threading.Lock()
_CACHE_STATS = {"hits": 0, "misses": 0}


def cache_info() -> dict[str, int]:
    """Hits, misses and entries of the in-process executable cache."""
    with _CACHE_LOCK:
        return {**_CACHE_STATS, "entries": len(_CACHE)}


def clear_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()
        _CACHE_STATS.update(hits=0, misses=0)


def compile(module, backend: str | None = None) -> Executable:
    """The executable of `module` (untouched: the default pipeline runs on a
    copy) for `backend`: "cpu" (the default; UIR_FLAGS=--backend= changes it)
    or "eval". The same program compiled again in this process is the same
    executable (see _CACHE)."""
    from uir._src.core.passes import flags

    backend = default_backend() if backend is None else backend
    options = flags()
    if "dump_to" in options or options.get("executable_cache") in ("false", "0"):
        return Executable(module, backend)
    text = module.to_text(print_metadata=False)
    key = (hashlib.sha256(text.encode()).digest(), backend, tuple(sorted(options.items())))
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            _CACHE_STATS["hits"] += 1
            return found
        _CACHE_STATS["misses"] += 1
    exe = Executable(module, backend)
    with _CACHE_LOCK:
        exe = _CACHE.setdefault(key, exe)  # another thread may have won
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return exe
