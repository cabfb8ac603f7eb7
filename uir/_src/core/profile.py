"""Per-op profiles of compiled runs: Executable.profile(*args).

Every thunk of a run is timed (thunks inside while loops, conditionals and
calls as often as they run; each worker's share of a kernel as well), and
the times become one row per op with the bytes it moved, its flops, and how
close it came to this machine's roofline: a STREAM triad and an FMA loop
measured once per process on the worker threads (the same measurements the
benchmarks divide by), or the ceilings passed in.
"""

from __future__ import annotations

import dataclasses
import json
import threading

from uir import _core

_ROOFLINE: tuple[float, float] | None = None
# Event threads with names of their own: the caller of the run, and work an
# async-start launched on a thread of its own (runtime/profiler.h).
_THREAD_NAMES = {0: "caller", -1: "async work"}
_ROOFLINE_LOCK = threading.Lock()


def machine_roofline() -> tuple[float, float]:
    """(GB/s, GFLOP/s): a STREAM triad over 2^25-float arrays and the peak of
    vector FMAs, on the worker threads; measured at the first call."""
    global _ROOFLINE
    with _ROOFLINE_LOCK:
        if _ROOFLINE is None:
            _ROOFLINE = (
                float(_core.codegen.stream_triad_gbs(1 << 25)),
                float(_core.codegen.fma_peak_gflops()),
            )
        return _ROOFLINE


@dataclasses.dataclass
class ProfileRow:
    """One op (thunk) of the run: its times summed over every execution."""

    op: str  # the HLO instruction it runs
    # kernel, gemm, conv, copy, while, conditional, call, custom-call, host;
    # "loop body": an iGraph's loop bodies inside the kernel above it
    # (Executable.profile(loop_bodies=True)), time summed over its threads
    kind: str
    depth: int  # 0: the entry's sequence; +1 inside each while, conditional or call
    calls: int  # executions in the run
    time_ms: float
    bytes: int  # read and written, over all executions
    flops: int  # over all executions (0 where not counted)
    gbs: float
    gflops: float
    roofline: (
        float | None
    )  # achieved / attainable (min of peak and bytes' worth); None for control flow


class Profile:
    """A profiled run: `.rows` (one per op, in the order they first ran),
    `.events` (every timed execution: name, kind, start_ns, end_ns, thread
    (0 the caller, -1 async work), depth, chunk), `.call_ms` (the whole call in the runtime: arguments in,
    thunks, results out), `.thunks_ms` (the entry sequence's thunks, summed),
    `.result`. str() is a table; chrome_trace() the trace-event JSON that
    Perfetto and chrome://tracing open, one track per worker thread."""

    def __init__(self, name: str, result, events: list[dict], call_ns: int, roofline, bodies=None):
        self.name = name
        self.result = result
        self.events = events
        self.call_ms = call_ns / 1e6
        self.dram_gbs, self.peak_gflops = roofline
        rows: dict[int, ProfileRow] = {}
        for e in events:
            if e["chunk"]:
                continue
            row = rows.get(e["id"])
            if row is None:
                row = rows[e["id"]] = ProfileRow(
                    e["name"], e["kind"], e["depth"], 0, 0.0, 0, 0, 0.0, 0.0, None
                )
                row._first = e["start_ns"]
            row.calls += 1
            row.time_ms += (e["end_ns"] - e["start_ns"]) / 1e6
            row.bytes += e["bytes"]
            row.flops += e["flops"]
            row._first = min(row._first, e["start_ns"])
        control = {"while", "conditional", "call"}
        for row in rows.values():
            seconds = row.time_ms / 1e3
            row.gbs = row.bytes / seconds / 1e9 if seconds > 0 else 0.0
            row.gflops = row.flops / seconds / 1e9 if seconds > 0 else 0.0
            if row.kind in control or seconds <= 0:
                row.roofline = None
            else:
                # Attainable: the FMA peak, or what the bytes allow at the
                # triad's bandwidth, whichever is lower.
                bound = row.bytes / (self.dram_gbs * 1e9)
                if row.flops:
                    bound = max(bound, row.flops / (self.peak_gflops * 1e9))
                row.roofline = bound / seconds
        self.rows = sorted(rows.values(), key=lambda r: r._first)
        for row in self.rows:
            del row._first
        self.thunks_ms = sum(r.time_ms for r in self.rows if r.depth == 0)
        # Thunks that ran on the reference evaluator (Executable.fallbacks):
        # their time, and its share of the thunks' time.
        self.fallback_ms = sum(r.time_ms for r in self.rows if r.kind == "fallback")
        self.fallback_share = self.fallback_ms / self.thunks_ms if self.thunks_ms > 0 else 0.0
        if bodies:
            self._add_loop_bodies(bodies)

    def _add_loop_bodies(self, bodies: list[dict]) -> None:
        """A "loop body" row per timed iGraph that ran, after its node's row
        (one level deeper); those of nodes without a row of their own (run
        inside a compiled while loop) go after the last row."""
        after: dict[str, list[ProfileRow]] = {}
        for b in bodies:
            if b["bodies"] == 0:
                continue
            row = ProfileRow(
                b["graph"], "loop body", 0, b["bodies"], b["ns"] / 1e6, 0, 0, 0.0, 0.0, None
            )
            after.setdefault(b["node"], []).append(row)
        # The row of the thunk that ran a node's iGraphs: its kernel (a
        # library node's epilogue kernel is "<node>.epilogue"), else the
        # row of its name (a host thunk running its parts).
        kernels = {r.op.removesuffix(".epilogue") for r in self.rows if r.kind == "kernel"}
        out: list[ProfileRow] = []
        for r in self.rows:
            out.append(r)
            if r.kind == "kernel":
                node = r.op.removesuffix(".epilogue")
            elif r.op not in kernels:
                node = r.op
            else:
                continue
            for body in after.pop(node, []):
                body.depth = r.depth + 1
                out.append(body)
        for rest in after.values():
            for body in rest:
                body.depth = 1
                out.append(body)
        self.rows = out

    def table(self) -> str:
        head = f"{'op':<34}{'kind':<12}{'calls':>6}{'ms':>10}{'MB':>10}{'GB/s':>8}{'GFLOP/s':>9}{'roof':>7}"
        lines = [
            f"{self.name}: {self.call_ms:.3f} ms in the runtime, {self.thunks_ms:.3f} ms in its "
            f"thunks; roofline {self.dram_gbs:.1f} GB/s, {self.peak_gflops:.0f} GFLOP/s",
            head,
        ]
        for r in self.rows:
            op = ("  " * r.depth + r.op)[:33]
            roof = "" if r.roofline is None else f"{100 * r.roofline:.0f}%"
            lines.append(
                f"{op:<34}{r.kind:<12}{r.calls:>6}{r.time_ms:>10.3f}{r.bytes / 1e6:>10.2f}"
                f"{r.gbs:>8.1f}{r.gflops:>9.1f}{roof:>7}"
            )
        fallbacks = [r for r in self.rows if r.kind == "fallback"]
        if fallbacks:
            names = ", ".join(dict.fromkeys(r.op for r in fallbacks))
            lines.append(
                f"on the evaluator (fallbacks): {self.fallback_ms:.3f} ms, "
                f"{100 * self.fallback_share:.1f}% of the thunks' time: {names}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<Profile {self.name}: {len(self.rows)} ops, {self.call_ms:.3f} ms>"

    def chrome_trace(self) -> dict:
        """The run in Chrome's trace-event format (a JSON object with
        "traceEvents"): a complete event ("ph": "X") per execution, in
        microseconds, on the track of the worker thread that ran it; a
        kernel's chunks on their workers' tracks under category "chunk"."""
        events = []
        threads = sorted({e["thread"] for e in self.events} | {0})
        for t in threads:
            events.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": 0,
                    "tid": t,
                    "args": {"name": _THREAD_NAMES.get(t, f"worker {t}")},
                }
            )
        events.append(
            {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": self.name}}
        )
        for e in sorted(self.events, key=lambda e: (e["start_ns"], -e["end_ns"])):
            events.append(
                {
                    "name": e["name"],
                    "cat": "chunk" if e["chunk"] else e["kind"],
                    "ph": "X",
                    "ts": e["start_ns"] / 1e3,
                    "dur": max(e["end_ns"] - e["start_ns"], 0) / 1e3,
                    "pid": 0,
                    "tid": e["thread"],
                    "args": {
                        "kind": e["kind"],
                        "depth": e["depth"],
                        "bytes": e["bytes"],
                        "flops": e["flops"],
                    },
                }
            )
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def save_chrome_trace(self, path) -> None:
        """Writes chrome_trace() as JSON to `path`."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)


def profile_executable(
    exe, arrays, roofline=None, warmup: int = 1, loop_bodies: bool = False, simulate: bool = False
):
    """Executable.profile: `warmup` untimed runs, then one with every thunk
    timed (or, with `loop_bodies`, the executable compiled again with
    loop-body timers). A GPU executable's steps are timed by marks around
    each (CUDA events on the GPU; the host's clock when `simulate`)."""
    from uir._src.core.errors import ArgumentError
    from uir._src.core.evaluate import _check_argument

    if exe._gpu is not None:
        from uir._src.core.evaluate import checked_arguments

        checked = checked_arguments(exe.module, arrays)
        for _ in range(warmup):
            exe._gpu.run(checked, simulate=simulate)
        result, events, call_ns = exe._gpu.executable.profile(checked, simulate)
        name = exe.module.name if exe.module is not None else "gpu executable"
        return Profile(name, result, events, call_ns, roofline or machine_roofline())

    if exe._exe is None:
        raise ValueError(
            f"{exe.module.name} runs on the {exe.backend!r} backend; profiles time "
            "compiled code (backend='cpu')"
        )
    dynamic = exe._dynamic
    original = arrays
    if dynamic is not None:
        arrays = dynamic.pad(arrays)
    params = exe.module.entry.parameters
    if len(arrays) != len(params):
        raise ArgumentError(f"{exe.module.name} takes {len(params)} arguments, got {len(arrays)}")
    checked = [_check_argument(p, a) for p, a in zip(params, arrays, strict=True)]
    code = exe._timed_exe() if loop_bodies else exe._exe
    from uir._src.core.distributed import is_initialized

    across = code.participants > 1 and is_initialized()  # this process's participant
    for _ in range(warmup):
        code.run_distributed(checked) if across else code.run(checked, [])
    bodies = code.loop_body_times(reset=True) if loop_bodies else None
    result, events, call_ns = code.profile(checked)
    if loop_bodies:
        bodies = code.loop_body_times(reset=True)
    if dynamic is not None:
        result = dynamic.crop(result, original)
    return Profile(exe.module.name, result, events, call_ns, roofline or machine_roofline(), bodies)
