"""What UIR_FLAGS says about compiling: the backend, the CPU backend's
compile flags (from uir._core.codegen.compile_flags(), the one table of
them) and what to do about nodes that run on the evaluator."""

from __future__ import annotations

import os

BACKENDS = ("cpu", "eval", "gpu")


def default_backend() -> str:
    """UIR_FLAGS=--backend=eval|cpu|gpu, else "cpu"."""
    from uir._src.core.passes import flags

    name = flags().get("backend", "cpu")
    if name not in BACKENDS:
        raise ValueError(f"UIR_FLAGS --backend must be one of {BACKENDS}, got {name!r}")
    return name


def bytes_flag(name: str, default: int) -> int:
    from uir._src.core.passes import flags

    value = flags().get(name, str(default))
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = -1
    if n < 0:
        raise ValueError(f"UIR_FLAGS --{name} must be a number of bytes, got {value!r}")
    return n


def compile_options() -> dict[str, int | bool]:
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


FALLBACK_POLICIES = ("auto", "warn", "error", "off")


def check_fallbacks(exe) -> None:
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
        limit = bytes_flag("fallback_warn_bytes", 1 << 20)
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
