"""This machine's measured ceilings (../shared/reference/machine-limits.md),
as functions benchmarks divide by. GB/s are STREAM-counted (1e9 B/s, no
write-allocate traffic), so a kernel's bytes are its reads plus its writes."""

from __future__ import annotations

MiB = 1 << 20

# STREAM "add" (2 reads + 1 write) per level, GB/s, for 1 and 2 threads.
_ADD_GBS = {
    "L2": {1: 115.0, 2: 231.0},
    "LLC": {1: 28.2, 2: 57.2},
    "DRAM": {1: 16.3, 2: 30.9},
}
L2_PER_CORE = 2 * MiB
# Working sets above this are DRAM-bound; 64 MiB per array sits at the knee.
LLC_KNEE = 96 * MiB

# FP32 FMA peak, GFLOP/s (AVX-512, 12-24 chains).
FP32_PEAK_GFLOPS = {1: 224.0, 2: 447.0}


def memory_level(working_set_bytes: int, threads: int) -> str:
    """The level a streaming kernel with this working set runs from."""
    if working_set_bytes <= L2_PER_CORE * threads:
        return "L2"
    if working_set_bytes <= LLC_KNEE:
        return "LLC"
    return "DRAM"


def streaming_roof_gbs(working_set_bytes: int, threads: int) -> tuple[str, float]:
    """(level, GB/s) ceiling for a streaming elementwise kernel."""
    level = memory_level(working_set_bytes, threads)
    return level, _ADD_GBS[level][min(max(threads, 1), 2)]
