"""The BLAS kernels for this CPU, chosen before the BLAS library loads.

OpenBLAS built for many CPUs (Debian's libopenblas0-pthread, 0.3.21)
picks its kernels from the CPU it recognises; on CPUs newer than the
library (Sapphire Rapids, and virtual machines that report a CPU model it
does not know) it falls back to its SSE3 kernels ("Prescott"), three times
slower than its AVX-512 ones on a 32x128x128 product. Unless the user set
OPENBLAS_CORETYPE, this names the kernels the CPU's own feature flags
allow, before uir's extension (which links OpenBLAS) is loaded. It only
reads /proc/cpuinfo; elsewhere it does nothing.
"""

from __future__ import annotations

import os


def _flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def core_for(flags: set[str]) -> str | None:
    """The OpenBLAS kernel family for CPUs with these feature flags."""
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    if "avx" in flags:
        return "Sandybridge"
    return None


def choose() -> None:
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    core = core_for(_flags())
    if core is not None:
        os.environ["OPENBLAS_CORETYPE"] = core
