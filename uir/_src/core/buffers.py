"""Scheduling and buffer assignment from Python (uir.schedule, uir.buffers).

Every function leaves the module it is given untouched and works on a copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uir import _core
from uir._src.core.errors import VerifyError

_ALGORITHMS = ("list", "dfs", "postorder", "auto")


@dataclass(frozen=True)
class ScheduleReport:
    """What scheduling chose: the algorithm kept and each one's simulated peak
    of live temporary bytes."""

    algorithm: str
    peaks: dict[str, int]
    seconds: float
    text: str

    def __str__(self) -> str:
        return self.text


def _clone_unscheduled_ready(module):
    out = module.clone()
    _core.passes.make_pipeline(["copy-insertion"]).run(out)
    return out


def run(module, algorithm: str = "auto", *, report: bool = False):
    """A scheduled copy of `module` (it prints ``is_scheduled=true`` and its
    order). `algorithm` is "list", "dfs", "postorder" or "auto" (all three,
    keeping the lowest simulated peak). With ``report=True`` returns
    ``(module, ScheduleReport)``."""
    if algorithm not in _ALGORITHMS:
        raise ValueError(
            f"unknown scheduling algorithm {algorithm!r}; use one of {', '.join(_ALGORITHMS)}"
        )
    out = module.clone()
    r = _core.schedule.schedule_module(out, algorithm)
    rep = ScheduleReport(r["algorithm"], dict(r["peaks"]), r["seconds"], r["text"])
    return (out, rep) if report else out


def peak_bytes(module) -> int:
    """The most temporary bytes live at once under the module's schedule."""
    return _core.schedule.peak_bytes(module)[0]


@dataclass(frozen=True)
class AsyncPair:
    start: str
    done: str
    latency_s: float
    overlap_before_s: float
    overlap_after_s: float
    between_before: int
    between_after: int


@dataclass(frozen=True)
class LatencyHidingReport:
    """Estimated overlap of async work with compute, before and after."""

    pairs: list[AsyncPair]
    peak_before: int
    peak_after: int
    memory_limit: int | None
    text: str

    @property
    def overlap_before_s(self) -> float:
        return sum(p.overlap_before_s for p in self.pairs)

    @property
    def overlap_after_s(self) -> float:
        return sum(p.overlap_after_s for p in self.pairs)

    def __str__(self) -> str:
        return self.text


def latency_hiding(module, memory_limit: int | None = None, *, machine: str = "host"):
    """Moves async starts early and dones late on a scheduled copy of `module`
    (scheduling it first if needed) so that independent compute overlaps the
    async work, keeping the peak of temporaries within `memory_limit` bytes
    (or the current peak, if higher). Returns ``(module, LatencyHidingReport)``."""
    out = module.clone() if module.is_scheduled else run(module)
    r = _core.schedule.latency_hiding(
        out, -1 if memory_limit is None else int(memory_limit), machine
    )
    pairs = [AsyncPair(**p) for p in r["pairs"]]
    rep = LatencyHidingReport(pairs, r["peak_before"], r["peak_after"], memory_limit, r["text"])
    return out, rep


@dataclass(frozen=True)
class RematReport:
    """What rematerialization recomputed and the peaks before and after."""

    memory_limit: int
    peak_before: int
    peak_after: int
    remats: list[dict] = field(default_factory=list)
    text: str = ""

    def __str__(self) -> str:
        return self.text


def rematerialize(module, memory_limit: int):
    """Recomputes values on a scheduled copy of `module` (scheduling it first if
    needed) until the peak of temporaries is at most `memory_limit` bytes.
    Returns ``(module, RematReport)``; raises uir.MemoryLimitError if the limit
    cannot be met."""
    if int(memory_limit) < 0:
        raise ValueError(f"memory_limit must be a byte count >= 0, got {memory_limit}")
    out = module.clone() if module.is_scheduled else run(module)
    r = _core.schedule.rematerialize(out, int(memory_limit))
    return out, RematReport(
        r["memory_limit"], r["peak_before"], r["peak_after"], r["remats"], r["text"]
    )


class BufferAssignment:
    """Where every value of a scheduled module lives.

    - ``allocations``: a list of dicts (index, kind: parameter / constant /
      output / temporary, size, live_out, parameter_number, parameter_index,
      slices); each slice is a dict (buffer, offset, size, start, end, values),
      start and end being times of the flattened schedule. Plain data, ready to
      plot.
    - ``peak_bytes``: the most temporary bytes live at once under the schedule;
      ``arena_bytes``: the size of the one temporary allocation.
    - ``to_text()``: the report XLA writes as ``*.buffer-assignment.txt``.
    - ``check()``: raises uir.VerifyError listing every value without a big
      enough aligned slice, and every two values live at once on shared bytes.
    """

    def __init__(self, core, module):
        self._ba = core
        self.module = module

    @property
    def peak_bytes(self) -> int:
        return self._ba.peak_bytes

    @property
    def aligned_peak_bytes(self) -> int:
        """The peak with each temporary rounded up to the 64-byte alignment."""
        return self._ba.aligned_peak_bytes

    @property
    def arena_bytes(self) -> int:
        return self._ba.arena_bytes

    @property
    def allocations(self) -> list[dict]:
        return self._ba.allocations()

    @property
    def end_time(self) -> int:
        return self._ba.end_time

    def to_text(self) -> str:
        return self._ba.to_text()

    def problems(self) -> list[str]:
        """What check() would raise about; empty when the assignment is safe."""
        return self._ba.problems()

    def check(self) -> None:
        problems = self.problems()
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise VerifyError(
                f"buffer assignment of {self.module.name} is unsafe:\n  {shown}{more}"
            )

    def _set_offset(self, buffer: int, offset: int) -> None:
        """Moves a buffer's slice (for tests that show check() catches it)."""
        self._ba.set_offset(buffer, offset)

    def __repr__(self) -> str:
        return (
            f"BufferAssignment({self.module.name}: {len(self.allocations)} allocations, "
            f"arena {self.arena_bytes} B, peak {self.peak_bytes} B)"
        )


def assign(module) -> BufferAssignment:
    """Buffer assignment of `module`. A module that is not scheduled is first
    copied, given copy-insertion and scheduled ("auto")."""
    m = module if module.is_scheduled else run(_clone_unscheduled_ready(module))
    return BufferAssignment(_core.buffers.assign(m), m)
