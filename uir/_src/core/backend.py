"""uir.compile and the in-process executable cache; uir.deserialize.

The executable itself is in uir._src.core.executable."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from uir._src.core.compile_options import default_backend
from uir._src.core.executable import Executable

__all__ = ["Executable", "cache_info", "clear_cache", "compile", "default_backend", "deserialize"]


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
