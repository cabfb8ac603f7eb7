"""The on-disk executable cache (UIR_FLAGS=--cpu_cache_dir=DIR): where an
executable's serialized form is kept, read back and written."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading


def cache_dir() -> str:
    """UIR_FLAGS=--cpu_cache_dir=DIR, or "" for no on-disk cache."""
    from uir._src.core.passes import flags

    cache_dir = flags().get("cpu_cache_dir", "")
    if not isinstance(cache_dir, str):
        raise ValueError("UIR_FLAGS --cpu_cache_dir needs a directory: --cpu_cache_dir=DIR")
    return os.path.expanduser(cache_dir) if cache_dir else ""


def core_build() -> str:
    """Which build of uir's compiled core this process runs: the size and
    modification time of its library. The version alone does not say it (a
    source checkout rebuilt after a change to the code generator keeps its
    version), and code from another build must not be taken for this one's."""
    from uir import _core

    try:
        st = os.stat(_core.__file__)
    except OSError:
        return "unknown"
    return f"{st.st_size}:{st.st_mtime_ns}"


def path_for(cache_dir: str, module) -> str:
    """Where the on-disk cache keeps the executable of `module` compiled with
    this process's UIR_FLAGS on this host: a file named by the SHA-256 of
    everything that decides the executable (the module's text, the flags but
    the cache's own, uir's version and the build of its compiled core, the
    host CPU and its features, the worker count that plans native loops)."""
    from uir import _core
    from uir._src.core.passes import flags

    host = _core.codegen.host_info()
    options = sorted((k, v) for k, v in flags().items() if k != "cpu_cache_dir")
    h = hashlib.sha256()
    for part in (
        _core.__version__,
        core_build(),
        host["llvm_version"],
        host["triple"],
        host["cpu"],
        ",".join(host["features"]),
        str(_core.runtime.num_threads()),
        repr(options),
        module.to_text(print_metadata=False),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return os.path.join(cache_dir, h.hexdigest() + ".uirx")


def write_atomically(path: str, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file renamed into place
    (readers never see half of it); failing to write (a read-only
    directory, a full disk) leaves things as they were: it is only a cache."""
    tmp = f"{path}.tmp{os.getpid()}.{threading.get_ident()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def read(path: str) -> bytes | None:
    """The bytes kept at `path`, or None when there are none to read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
