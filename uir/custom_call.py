"""Custom-call targets: the host functions `custom-call` instructions name.

    uir.custom_call.register("my_op", fn)                 # a Python callable
    uir.custom_call.register("my_op", cfunc, api="status")  # a C function (ctypes)
    uir.custom_call.load_library("libmine.so")  # what its registration macros declare

A Python target receives the operands as NumPy arrays and returns the result
(an array, or a tuple of arrays for a tuple-shaped call); an exception it
raises becomes uir.CustomCallError. A C target follows the calling
conventions in the header under uir.get_include() (uir/custom_call.h),
which also spells XLA's legacy CPU API (XlaCustomCallStatus,
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET, ...): a target written for XLA builds
against it with only its include lines changed, and is called in the
convention its instruction's api_version names, as in XLA.

Built-in targets cover what XLA's own pipelines emit for one host: sharding
annotations and host-offloading marks pass their operand through,
AllocateBuffer, SliceToDynamic, PadToStatic and TopK.
"""

from __future__ import annotations

import ctypes
import pathlib

from uir import _core

APIS = ("original", "status", "status_unified")

# uir/custom_call.h's UIR_API_* values.
_API_NAMES = {0: "instruction", 1: "original", 2: "status", 3: "status_unified"}

# C function objects stay referenced while registered: a ctypes callback
# that is garbage-collected would leave a dangling pointer behind.
_alive: dict[object, object] = {}


def register(name: str, target, api: str | None = "status", platform: str = "Host") -> None:
    """Registers `target` under `name`, replacing any target of that name.
    `target` is a Python callable, or a C function as a ctypes function
    object or an int address; `api` says how a C function is called (see
    get_include()), or None: as each instruction's api_version says (XLA's
    rule; API_VERSION_ORIGINAL when it says nothing). platform="CUDA"
    registers a C function in XLA's GPU convention for backend="gpu":
    void f(CUstream stream, void** buffers, const char* opaque, size_t
    opaque_len[, XlaCustomCallStatus* status]) with api "original" or
    "status", its buffers the device addresses of the operands' array
    leaves, then the result's (on the simulated GPU, host addresses and a
    null stream)."""
    if platform not in ("Host", "CUDA"):
        raise ValueError(f"platform must be 'Host' or 'CUDA', not {platform!r}")
    if platform == "CUDA":
        _register_gpu(name, target, api)
        return
    if not isinstance(name, str) or not name:
        raise TypeError("a custom-call target name is a non-empty str")
    if api is not None and api not in APIS:
        raise ValueError(f"api must be one of {APIS} or None, not {api!r}")
    if isinstance(target, ctypes._CFuncPtr) or (
        isinstance(target, int) and not isinstance(target, bool)
    ):
        address = target if isinstance(target, int) else ctypes.cast(target, ctypes.c_void_p).value
        if not address:
            raise ValueError(f"custom-call target {name!r} is a null function pointer")
        # A bare int must point into a loaded library (ctypes callbacks live
        # outside any, and are trusted as ctypes made them). Only a sanity
        # check: an address inside a library that is not a function of the
        # registered api still fails when called.
        _core.runtime.register_c_custom_call(
            name, address, api or "instruction", check_address=isinstance(target, int)
        )
    elif callable(target):
        _core.runtime.register_python_custom_call(name, target)
    else:
        raise TypeError(
            "a custom-call target is a Python callable, a ctypes function or an int address, "
            f"not {type(target).__name__}"
        )
    _alive[name] = target


def unregister(name: str) -> bool:
    """Removes the target called `name`; False if there was none."""
    _alive.pop(name, None)
    return _core.runtime.unregister_custom_call(name)


def _register_gpu(name: str, target, api) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError("a custom-call target name is a non-empty str")
    api = api or "instruction"
    if api not in ("original", "status", "status_unified", "instruction"):
        raise ValueError(f"a CUDA target's api is 'original' or 'status' (or None), not {api!r}")
    if isinstance(target, ctypes._CFuncPtr):
        address = ctypes.cast(target, ctypes.c_void_p).value
    elif isinstance(target, int) and not isinstance(target, bool):
        address = target
    else:
        raise TypeError(
            "a CUDA custom-call target is a C function (a ctypes function or an int address), "
            f"not {type(target).__name__}"
        )
    if not address:
        raise ValueError(f"custom-call target {name!r} is a null function pointer")
    _core.runtime.register_gpu_custom_call(name, address, api)
    _alive[("CUDA", name)] = target


def registered() -> list[str]:
    """Names of the registered targets, built-in ones included."""
    return list(_core.runtime.custom_call_targets())


def get_include() -> str:
    """The directory to add to a C compiler's include path for
    uir/custom_call.h (as numpy.get_include())."""
    return str(include_dir())


class _Registration(ctypes.Structure):
    pass


_Registration._fields_ = [
    ("name", ctypes.c_char_p),
    ("function", ctypes.c_void_p),
    ("api", ctypes.c_int),
    ("platform", ctypes.c_char_p),
    ("next", ctypes.POINTER(_Registration)),
]


def load_library(path) -> list[str]:
    """Loads the shared library at `path` and registers the targets its
    UIR_REGISTER_CUSTOM_CALL_TARGET and XLA_*REGISTER_CUSTOM_CALL_TARGET*
    macros declare (platform "Host"; "CUDA" or "gpu" ones for backend="gpu",
    in XLA's GPU convention); returns their names. The
    library stays loaded."""
    path = str(pathlib.Path(path))
    try:
        library = ctypes.CDLL(path)
    except OSError as e:
        raise ValueError(f"cannot load custom-call library {path}: {e}") from None
    try:
        registrations = library.uir_custom_call_registrations
    except AttributeError:
        raise ValueError(
            f"{path} declares no custom-call targets: it was not built with uir/custom_call.h's "
            "registration macros (see uir.get_include())"
        ) from None
    registrations.restype = ctypes.POINTER(_Registration)
    registrations.argtypes = []
    # Read and check the whole list before registering any of it.
    found = []
    node = registrations()
    while node:
        r = node.contents
        platform = (r.platform or b"").decode("utf-8", errors="replace")
        if platform in ("Host", "CUDA", "gpu"):
            if not r.name or not r.function:
                raise ValueError(f"{path}: a registration without a name or a function")
            name = r.name.decode("utf-8", errors="replace")
            if r.api not in _API_NAMES:
                raise ValueError(f"{path}: target {name!r} has an unknown api {r.api}")
            api = None if r.api == 0 else _API_NAMES[r.api]
            found.append((name, r.function, api, "Host" if platform == "Host" else "CUDA"))
        node = r.next
    found.reverse()  # the list is most recent first
    for name, function, api, on in found:
        register(name, function, api=api, platform=on)
        _alive[(on, name)] = library
    return [name for name, _, _, _ in found]


def include_dir() -> pathlib.Path:
    """The directory holding uir/custom_call.h, for compiling C targets."""
    return pathlib.Path(__file__).resolve().parent / "include"
