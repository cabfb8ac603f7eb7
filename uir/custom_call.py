"""Custom-call targets: the host functions `custom-call` instructions name.

    uir.custom_call.register("my_op", fn)                 # a Python callable
    uir.custom_call.register("my_op", cfunc, api="status")  # a C function (ctypes)

A Python target receives the operands as NumPy arrays and returns the result
(an array, or a tuple of arrays for a tuple-shaped call); an exception it
raises becomes uir.CustomCallError. A C target follows the calling
conventions in the header under include_dir() (uir/custom_call.h).

Built-in targets cover what XLA's own pipelines emit for one host: sharding
annotations and host-offloading marks pass their operand through,
AllocateBuffer, SliceToDynamic, PadToStatic and TopK.
"""

from __future__ import annotations

import ctypes
import pathlib

from uir import _core

APIS = ("original", "status", "status_unified")

# C function objects stay referenced while registered: a ctypes callback
# that is garbage-collected would leave a dangling pointer behind.
_alive: dict[str, object] = {}


def register(name: str, target, api: str = "status") -> None:
    """Registers `target` under `name`, replacing any target of that name.
    `target` is a Python callable, or a C function as a ctypes function
    object; `api` says how a C function is called (see include_dir())."""
    if not isinstance(name, str) or not name:
        raise TypeError("a custom-call target name is a non-empty str")
    if api not in APIS:
        raise ValueError(f"api must be one of {APIS}, not {api!r}")
    if isinstance(target, ctypes._CFuncPtr):
        address = ctypes.cast(target, ctypes.c_void_p).value
        if not address:
            raise ValueError(f"custom-call target {name!r} is a null function pointer")
        _core.runtime.register_c_custom_call(name, address, api)
    elif callable(target):
        _core.runtime.register_python_custom_call(name, target)
    else:
        raise TypeError(
            f"a custom-call target is a Python callable or a ctypes function, not {type(target).__name__}"
        )
    _alive[name] = target


def unregister(name: str) -> bool:
    """Removes the target called `name`; False if there was none."""
    _alive.pop(name, None)
    return _core.runtime.unregister_custom_call(name)


def registered() -> list[str]:
    """Names of the registered targets, built-in ones included."""
    return list(_core.runtime.custom_call_targets())


def include_dir() -> pathlib.Path:
    """The directory holding uir/custom_call.h, for compiling C targets."""
    return pathlib.Path(__file__).resolve().parent / "include"
