"""Resident memory of this process, for tests that call something many
times and check memory does not grow."""

from __future__ import annotations

import os
import resource

import pytest


def rss_kib() -> int:
    """The process's resident set, KiB (its peak where /proc is missing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# Memory-growth tests mean nothing under AddressSanitizer.
skip_under_asan = pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="AddressSanitizer keeps freed memory in quarantine, so resident memory grows",
)

# AddressSanitizer reports an allocation no machine could satisfy as an
# error (and aborts) instead of failing it as the real allocator does.
skip_impossible_allocations_under_asan = pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="AddressSanitizer aborts on allocations beyond its maximum size instead of failing them",
)
