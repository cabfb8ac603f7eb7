"""uir.schedule: instruction order (memory schedulers), latency hiding and
rematerialization."""

from uir._src.core.buffers import (
    AsyncPair,
    LatencyHidingReport,
    RematReport,
    ScheduleReport,
    latency_hiding,
    peak_bytes,
    rematerialize,
    run,
)

__all__ = [
    "AsyncPair",
    "LatencyHidingReport",
    "RematReport",
    "ScheduleReport",
    "latency_hiding",
    "peak_bytes",
    "rematerialize",
    "run",
]
