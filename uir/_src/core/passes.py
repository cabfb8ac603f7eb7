"""uir.passes: the optimization pipeline, run pass by pass from Python.

Every pipeline run works on a copy of the module. Options (each also set by
UIR_FLAGS, as XLA_FLAGS sets XLA's):

- check=True (--check_passes): evaluate the module on seeded random inputs
  before the pipeline and after every pass that changed it; the first pass
  whose results differ raises PassCheckError naming the pass, the output and
  the first differing element.
- trace=True: also return one record per pass (name, changed, seconds,
  instruction count, text before and after).
- dump_to=DIR (--dump_to), dump_pass_re=REGEX (--dump_pass_re): write
  module_NNNN.<name>.before_optimizations.txt, one numbered file per pass
  matching the regex that changed the module, and
  module_NNNN.<name>.after_optimizations.txt, and for scheduled modules
  *.buffer-assignment.txt and *.kernel-graph.txt (the Unified IR); the cpu
  backend adds *.ir-no-opt.ll, *.ir-with-opt.ll and *.s (its LLVM IR before
  and after optimization, and the assembly).

Compiled functions also read --check_kernel_graph: every call runs the
function's Kernel Graph on the iGraph interpreter beside the evaluator and
raises InternalError if they differ (--kernel_graph_log=PATH lists every
node and the reason of each fallback).
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import os
import re
import shlex
from collections.abc import Callable, Sequence

import numpy as np

from uir import _core
from uir._src.core.dtypes import is_float
from uir._src.core.errors import InternalError
from uir._src.core.evaluate import evaluate, random_arguments, required_replicas

_PYTHON_PASSES: dict[str, Callable] = {}
_MODULE_IDS = itertools.count()


class PassCheckError(InternalError):
    """A pass changed what the module computes (found by check=True)."""

    def __init__(self, message: str, pass_name: str):
        super().__init__(message)
        self.pass_name = pass_name


@dataclasses.dataclass
class PassRecord:
    """What one pass did."""

    name: str
    pipeline: str
    iteration: int
    changed: bool
    seconds: float
    instruction_count: int
    text_before: str
    text_after: str


class PipelineTrace(list):
    """What Pipeline.run(trace=True) returns beside the module: a list of
    PassRecord, one per pass run, in order. str() is a table (pass,
    changed, milliseconds, instruction count); in Jupyter a table whose
    changing passes open to their diffs and decisions."""

    def __str__(self) -> str:
        return format_trace(self)


def format_trace(records: Sequence[PassRecord]) -> str:
    """A table: pass, changed, milliseconds, instruction count."""
    rows = [f"{'pass':<40} {'changed':>7} {'ms':>9} {'instructions':>12}"]
    for r in records:
        name = r.name if not r.iteration else f"{r.name} [{r.pipeline} {r.iteration}]"
        rows.append(
            f"{name:<40} {'yes' if r.changed else '-':>7} {r.seconds * 1e3:9.3f} "
            f"{r.instruction_count:12d}"
        )
    return "\n".join(rows)


_FLAGS_CACHE: tuple[object, dict[str, str | bool]] = (None, {})
# os.environ's own store, keyed and valued as the platform encodes them
# (bytes on POSIX): reading it skips os.environ.get's key encoding and value
# decoding, which cost more than the rest of a small jitted call. Setting
# os.environ[...] updates it.
_ENVIRON_DATA = getattr(os.environ, "_data", None)
_FLAGS_KEY = os.environ.encodekey("UIR_FLAGS") if _ENVIRON_DATA is not None else None


def flags() -> dict[str, str | bool]:
    """UIR_FLAGS parsed: --name=value and bare --name (True). Parsed again
    only when the variable changes (calls read it on every run), so the
    dict is shared: read it, do not change it."""
    global _FLAGS_CACHE
    if _ENVIRON_DATA is not None:
        raw = _ENVIRON_DATA.get(_FLAGS_KEY)
        if raw is _FLAGS_CACHE[0] or raw == _FLAGS_CACHE[0]:
            return _FLAGS_CACHE[1]
        text = "" if raw is None else os.environ.decodevalue(raw)
    else:
        raw = text = os.environ.get("UIR_FLAGS", "")
        if raw == _FLAGS_CACHE[0]:
            return _FLAGS_CACHE[1]
    _FLAGS_CACHE = (raw, _parse_flags(text))
    return _FLAGS_CACHE[1]


# The flags UIR_FLAGS may set besides the CPU backend's --cpu_<name> (each
# row of uir._core.codegen.compile_flags()), with where they are read.
KNOWN_FLAGS = {
    "backend": "the default backend (compile_options.default_backend)",
    "dump_to": "dump every stage of each compile there (dumps.py, passes.run)",
    "dump_pass_re": "which passes' before/after texts are dumped (passes.run)",
    "check_passes": "evaluate before and after every changing pass (passes.run)",
    "check_kernel_graph": "run each call's Kernel Graph on the evaluator too (api.Compiled)",
    "kernel_graph_log": "where check_kernel_graph writes its findings (api.Compiled)",
    "executable_cache": "0 or false: compile again instead of reusing (backend.compile)",
    "fallback": "warn, error, off or auto: what a fallback node does (compile_options)",
    "fallback_warn_bytes": "the estimated size from which auto warns (compile_options)",
    "cpu_cache_dir": "keep compiled executables on disk there (disk_cache)",
}


def known_flags() -> list[str]:
    """Every flag name UIR_FLAGS may set."""
    cpu = [f"cpu_{row['name']}" for row in _core.codegen.compile_flags()]
    return sorted([*KNOWN_FLAGS, *cpu])


def _parse_flags(text: str) -> dict[str, str | bool]:
    out: dict[str, str | bool] = {}
    known = None
    for word in shlex.split(text):
        if not word.startswith("--"):
            raise ValueError(f"UIR_FLAGS: expected --name or --name=value, got {word!r}")
        name, eq, value = word[2:].partition("=")
        known = known or known_flags()
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"; did you mean --{near[0]}?" if near else ""
            raise ValueError(
                f"UIR_FLAGS: unknown flag --{name}{hint} (known: "
                + ", ".join(f"--{k}" for k in known)
                + ")"
            )
        out[name] = value if eq else True
    return out


def register(name: str, fn: Callable) -> None:
    """Registers a Python pass: fn(module) rewrites the module in place (with
    the HloComputation editing methods) and returns True if it changed it."""
    if name in _core.passes.available():
        raise ValueError(f"pass '{name}' already exists")
    _PYTHON_PASSES[name] = fn


def unregister(name: str) -> None:
    _PYTHON_PASSES.pop(name, None)


def available() -> list[str]:
    """Every pass name: the built-in passes and those registered from Python."""
    return sorted([*_core.passes.available(), *_PYTHON_PASSES])


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elementwise agreement: exact for integers and booleans, NaN where NaN,
    within tolerance for floats."""
    if a.dtype.kind == "c" or is_float(a.dtype):
        a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        b64 = b.astype(a64.dtype)
        return np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True)
    return a == b


def _leaves(value, prefix: str = "") -> list[tuple[str, np.ndarray]]:
    if isinstance(value, (tuple, list)):
        out = []
        for k, v in enumerate(value):
            out.extend(_leaves(v, f"{prefix}{{{k}}}"))
        return out
    return [(prefix or "result", np.asarray(value))]


class _Checker:
    """Evaluates a module on fixed random inputs and compares with the first run."""

    def __init__(self, module, seed: int, rtol: float, atol: float):
        self.args = random_arguments(module, seed)
        self.replicas = required_replicas(module)
        self.seed = seed
        self.rtol, self.atol = rtol, atol
        self.expected = self._run(module)

    def _run(self, module):
        return _leaves(evaluate(module, *self.args, replicas=self.replicas, seed=self.seed))

    def check(self, module, pass_name: str) -> None:
        got = self._run(module)
        if len(got) != len(self.expected):
            raise PassCheckError(
                f"pass '{pass_name}' changed the number of outputs from "
                f"{len(self.expected)} to {len(got)}",
                pass_name,
            )
        for (where, want), (_, have) in zip(self.expected, got, strict=True):
            if want.shape != have.shape or want.dtype != have.dtype:
                raise PassCheckError(
                    f"pass '{pass_name}' changed output {where} from {want.dtype}{list(want.shape)}"
                    f" to {have.dtype}{list(have.shape)}",
                    pass_name,
                )
            ok = _close(want, have, self.rtol, self.atol)
            if not np.all(ok):
                index = tuple(int(i) for i in np.argwhere(~ok)[0])
                raise PassCheckError(
                    f"pass '{pass_name}' changed the results: output {where}, element "
                    f"{list(index)}: {want[index]!r} before, {have[index]!r} after",
                    pass_name,
                )


class Pipeline:
    """An ordered list of passes (fixed-point groups included)."""

    def __init__(self, core_pipeline, label: str):
        self._core = core_pipeline
        self.label = label

    @property
    def names(self) -> list[str]:
        """Every pass in running order (a fixed point's passes once)."""
        return list(self._core.names)

    def __repr__(self) -> str:
        return f"<Pipeline {self.label}: {', '.join(self.names)}>"

    def run(
        self,
        module,
        *,
        check: bool | None = None,
        trace: bool = False,
        verify: bool = True,
        dump_to: str | os.PathLike | None = None,
        dump_pass_re: str | None = None,
        seed: int = 0,
        rtol: float = 1e-5,
        atol: float = 1e-6,
    ):
        """Runs the passes on a copy of `module`; returns the copy, or
        (copy, records) with trace=True. See the module docstring for check,
        dump_to and dump_pass_re; rtol/atol are check's float tolerance
        (integers and booleans compare exactly)."""
        env = flags()
        if check is None:
            check = bool(env.get("check_passes", False))
        if dump_to is None and isinstance(env.get("dump_to"), str):
            dump_to = env["dump_to"]
        if dump_pass_re is None and isinstance(env.get("dump_pass_re"), str):
            dump_pass_re = env["dump_pass_re"]
        out = module.clone()
        checker = _Checker(out, seed, rtol, atol) if check else None
        dumper = _Dumper(dump_to, dump_pass_re, out.name) if dump_to else None
        records = PipelineTrace()
        state = {"text": out.to_text() if (trace or dumper) else ""}
        if dumper:
            dumper.write("before_optimizations", state["text"])

        def observer(record: dict, current) -> None:
            changed = record["changed"]
            text_before = state["text"]
            if changed and (trace or dumper):
                state["text"] = current.to_text()
            if changed and checker:
                checker.check(current, record["name"])
            if changed and dumper:
                dumper.write_pass(record["pipeline"], record["name"], state["text"])
            if trace:
                records.append(
                    PassRecord(
                        record["name"],
                        record["pipeline"],
                        record["iteration"],
                        changed,
                        record["seconds"],
                        record["instruction_count"],
                        text_before,
                        state["text"],
                    )
                )

        needs_observer = trace or checker is not None or dumper is not None
        self._core.run(
            out,
            verify=verify,
            check_unchanged=verify,
            observer=observer if needs_observer else None,
        )
        if dumper:
            dumper.write("after_optimizations", out.to_text())
            if out.is_scheduled:
                # As XLA does: the buffer assignment of the optimized module.
                dumper.write("buffer-assignment", _core.buffers.assign(out).to_text())
                # The Unified IR: every kernel's iGraphs, as the CPU model lowers them.
                dumper.write("kernel-graph", _core.igraph.lower(out, "cpu").to_text())
        return (out, records) if trace else out


# The dump prefix last used for each module name, so later stages (the
# backend's LLVM IR and assembly) write beside the pipeline's files.
DUMP_PREFIXES: dict[str, str] = {}


def write_dump(directory, name: str, suffix: str, text: str) -> None:
    """Writes DIR/<prefix>.<suffix> for module `name` (suffix with its extension)."""
    prefix = DUMP_PREFIXES.get(name) or f"module_{next(_MODULE_IDS):04d}.{_safe(name)}"
    os.makedirs(os.fspath(directory), exist_ok=True)
    with open(os.path.join(os.fspath(directory), f"{prefix}.{suffix}"), "w") as f:
        f.write(text)


class _Dumper:
    """Writes dump files named as XLA names them."""

    def __init__(self, directory, pass_re: str | None, name: str):
        self.dir = os.fspath(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.prefix = f"module_{next(_MODULE_IDS):04d}.{_safe(name)}"
        DUMP_PREFIXES[name] = self.prefix
        self.pass_re = re.compile(pass_re) if pass_re else None
        self.count = 0

    def write(self, suffix: str, text: str) -> None:
        with open(os.path.join(self.dir, f"{self.prefix}.{suffix}.txt"), "w") as f:
            f.write(text)

    def write_pass(self, pipeline: str, name: str, text: str) -> None:
        if self.pass_re is None or not self.pass_re.search(name):
            return
        self.count += 1
        self.write(f"{self.count:04d}.{_safe(pipeline)}.after_{_safe(name)}", text)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def make_pipeline(names: Sequence[str]) -> Pipeline:
    """A pipeline of the named passes in order; an unknown name raises
    ValueError listing the available ones."""
    items: list = []
    for n in names:
        if n in _PYTHON_PASSES:
            items.append((n, _PYTHON_PASSES[n]))
        elif n in _core.passes.available():
            items.append(n)
        else:
            raise ValueError(f"unknown pass '{n}'; available: {', '.join(available())}")
    return Pipeline(_core.passes.make_pipeline(items), ",".join(names))


def default_pipeline() -> Pipeline:
    """The default optimization pipeline."""
    return Pipeline(_core.passes.default_pipeline(), "default")


def run(module, names: Sequence[str], **options):
    """Runs the named passes in order on a copy of `module` (options as
    Pipeline.run); returns the copy."""
    return make_pipeline(names).run(module, **options)
