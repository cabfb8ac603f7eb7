"""An executable as bytes and back: its machine code (object files), the
optimized module, its buffer assignment, the thunk sequence, the signature
and the CPU features the code needs (codegen/aot.h), for another process
or the on-disk cache."""

from __future__ import annotations

import time


def serialize(exe) -> bytes:
    """The bytes of a compiled executable (see Executable.serialize)."""
    if exe._dynamic is not None:
        raise ValueError(
            f"{exe.module.name} takes arrays of dynamic size, which the serialized form "
            "does not record; serialize the module at its bounds"
        )
    if exe._exe is None:
        why = exe._reasons[0] if exe._reasons else f"backend={exe.backend!r}"
        raise ValueError(
            f"{exe.module.name} does not run as compiled code ({why}); only compiled "
            "code (backend='cpu') serializes"
        )
    from uir._src.core.errors import SerializationError

    try:
        return exe._exe.serialize()
    except SerializationError:
        # The module as passes built it places its buffers in an order its
        # text does not keep (module.to_text() parsed again numbers values
        # in text order): the executable of the parsed text is the one a
        # blob can hold. Same program, compiled once more.
        from uir._src.core.hlo import parse_module

        again = type(exe).__new__(type(exe))
        again.backend = exe.backend
        again.compile_seconds = {}
        again._cache_hit = False
        again._compile(parse_module(exe.module.to_text()), optimized=True)
        return again._exe.serialize()


def load(exe, blob: bytes) -> None:
    """Makes `exe` the executable serialized in `blob`."""
    from uir import _core

    start = time.perf_counter()
    exe.module, exe._kernel_graph, exe._exe = _core.igraph.deserialize(blob)
    exe._reasons = []
    exe._dynamic = None
    exe._evaluated = exe.module
    exe.compile_seconds = {"load": time.perf_counter() - start}
    exe.compile_seconds.update({f"llvm_{k}": v for k, v in exe._exe.compile_seconds.items()})
