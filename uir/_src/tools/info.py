"""`uir.info()`: what uir was built with and what it sees of the machine."""

from __future__ import annotations

from typing import Any

from uir import _core


def info() -> dict[str, Any]:
    """Returns the uir version, the LLVM version, the host triple, the host CPU
    name and its features as LLVM detects them, the number of worker threads
    and the BLAS library's kernel family."""
    host = _core.codegen.host_info()
    return {
        "version": _core.__version__,
        "llvm_version": host["llvm_version"],
        "host_triple": host["triple"],
        "cpu": host["cpu"],
        "cpu_features": list(host["features"]),
        "threads": _core.runtime.num_threads(),
        "blas_core": _core.runtime.blas_core(),
    }
