"""uir_runtime: run GPU executables that uir serialized, on a machine with a
GPU and without uir's compiler (no LLVM, no HLO). Needs NumPy and
libuir_runtime.so (built from this folder with CMake: see README.md).

    import uir_runtime
    exe = uir_runtime.load("softmax.uirgpu")   # or the bytes
    out = exe(x)                               # NumPy in, NumPy out
"""

from __future__ import annotations

import ctypes
import os
import pathlib

import numpy as np

_ERROR_BYTES = 4096

_DTYPES = {
    "pred": np.bool_,
    "s8": np.int8,
    "s16": np.int16,
    "s32": np.int32,
    "s64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
}


class Error(RuntimeError):
    """A failure the runtime reported: damaged bytes, no GPU, a driver error."""


def _library() -> ctypes.CDLL:
    here = pathlib.Path(__file__).resolve().parent
    candidates = [os.environ.get("UIR_RUNTIME_LIB", "")]
    candidates += [str(here / "libuir_runtime.so"), str(here / "build" / "libuir_runtime.so")]
    for path in candidates:
        if path and pathlib.Path(path).exists():
            lib = ctypes.CDLL(path)
            break
    else:
        raise Error(
            f"libuir_runtime.so not found (looked at {candidates[1:]}; or set UIR_RUNTIME_LIB)"
        )
    p, i64, c = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
    lib.uir_rt_load.restype = p
    lib.uir_rt_load.argtypes = [c, ctypes.c_size_t, c, ctypes.c_size_t]
    lib.uir_rt_free.argtypes = [p]
    lib.uir_rt_count.restype = i64
    lib.uir_rt_count.argtypes = [p, ctypes.c_int]
    lib.uir_rt_leaf_type.restype = c
    lib.uir_rt_leaf_type.argtypes = [p, ctypes.c_int, i64]
    lib.uir_rt_leaf_rank.restype = i64
    lib.uir_rt_leaf_rank.argtypes = [p, ctypes.c_int, i64]
    lib.uir_rt_leaf_dim.restype = i64
    lib.uir_rt_leaf_dim.argtypes = [p, ctypes.c_int, i64, i64]
    lib.uir_rt_tuple_result.argtypes = [p]
    lib.uir_rt_sm.restype = c
    lib.uir_rt_sm.argtypes = [p]
    lib.uir_rt_run.argtypes = [
        p,
        ctypes.c_int,
        ctypes.POINTER(p),
        ctypes.POINTER(p),
        c,
        ctypes.c_size_t,
    ]
    lib.uir_rt_devices.argtypes = [c, ctypes.c_size_t]
    lib.uir_rt_register_custom_call.argtypes = [c, p, ctypes.c_int]
    lib.uir_rt_profile.argtypes = [
        p,
        ctypes.c_int,
        ctypes.POINTER(p),
        ctypes.POINTER(p),
        c,
        ctypes.c_size_t,
        c,
        ctypes.c_size_t,
    ]
    lib.uir_rt_time.restype = ctypes.c_double
    lib.uir_rt_time.argtypes = [
        p,
        ctypes.c_int,
        ctypes.POINTER(p),
        ctypes.c_int,
        ctypes.c_int,
        c,
        ctypes.c_size_t,
    ]
    return lib


_LIB: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _LIB
    if _LIB is None:
        _LIB = _library()
    return _LIB


def _dtype(name: str):
    if name == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name not in _DTYPES:
        raise Error(f"element type {name} has no NumPy dtype here")
    return np.dtype(_DTYPES[name])


def devices() -> list[str]:
    """The GPUs the CUDA driver reports, one line each; raises Error with
    the reason when there are none."""
    out = ctypes.create_string_buffer(_ERROR_BYTES)
    n = _lib().uir_rt_devices(out, _ERROR_BYTES)
    text = out.value.decode()
    if n == 0:
        raise Error(text or "no GPU")
    return text.splitlines()


class Executable:
    """A loaded GPU executable: call it with one array per parameter leaf."""

    def __init__(self, blob: bytes, device: int = 0):
        error = ctypes.create_string_buffer(_ERROR_BYTES)
        self._handle = _lib().uir_rt_load(blob, len(blob), error, _ERROR_BYTES)
        if not self._handle:
            raise Error(error.value.decode())
        self.device = device
        self.parameters = [self._leaf(0, k) for k in range(_lib().uir_rt_count(self._handle, 0))]
        self.results = [self._leaf(1, k) for k in range(_lib().uir_rt_count(self._handle, 1))]
        self.tuple_result = bool(_lib().uir_rt_tuple_result(self._handle))
        self.sm = _lib().uir_rt_sm(self._handle).decode()

    def _leaf(self, results: int, k: int):
        lib = _lib()
        dims = tuple(
            lib.uir_rt_leaf_dim(self._handle, results, k, d)
            for d in range(lib.uir_rt_leaf_rank(self._handle, results, k))
        )
        return _dtype(lib.uir_rt_leaf_type(self._handle, results, k).decode()), dims

    def __call__(self, *arrays):
        if len(arrays) != len(self.parameters):
            raise Error(f"the executable takes {len(self.parameters)} arrays, got {len(arrays)}")
        ins = []
        for k, (a, (dtype, dims)) in enumerate(zip(arrays, self.parameters, strict=True)):
            a = np.ascontiguousarray(a)
            if a.dtype != dtype or a.shape != dims:
                raise Error(
                    f"argument {k} is {a.dtype}{list(a.shape)}; it takes {dtype}{list(dims)}"
                )
            ins.append(a)
        outs = [np.empty(dims, dtype) for dtype, dims in self.results]
        p = ctypes.c_void_p
        in_ptrs = (p * max(len(ins), 1))(*[a.ctypes.data for a in ins])
        out_ptrs = (p * max(len(outs), 1))(*[o.ctypes.data for o in outs])
        error = ctypes.create_string_buffer(_ERROR_BYTES)
        if _lib().uir_rt_run(self._handle, self.device, in_ptrs, out_ptrs, error, _ERROR_BYTES):
            raise Error(error.value.decode())
        return tuple(outs) if self.tuple_result or len(outs) != 1 else outs[0]

    def time(self, *arrays, warmup: int = 3, iterations: int = 20) -> float:
        """Seconds per run of the executable's steps on the GPU, its memory
        and arguments set up once (no host copies timed)."""
        ins = [np.ascontiguousarray(a) for a in arrays]
        if len(ins) != len(self.parameters):
            raise Error(f"the executable takes {len(self.parameters)} arrays, got {len(ins)}")
        p = ctypes.c_void_p
        in_ptrs = (p * max(len(ins), 1))(*[a.ctypes.data for a in ins])
        error = ctypes.create_string_buffer(_ERROR_BYTES)
        seconds = _lib().uir_rt_time(
            self._handle, self.device, in_ptrs, warmup, iterations, error, _ERROR_BYTES
        )
        if seconds < 0:
            raise Error(error.value.decode())
        return seconds

    def profile(self, *arrays) -> dict:
        """One run with every step timed by CUDA events around it: a Chrome
        trace (its "traceEvents", microseconds; tid is the nesting depth)."""
        import json

        ins = [np.ascontiguousarray(a) for a in arrays]
        if len(ins) != len(self.parameters):
            raise Error(f"the executable takes {len(self.parameters)} arrays, got {len(ins)}")
        outs = [np.empty(dims, dtype) for dtype, dims in self.results]
        p = ctypes.c_void_p
        in_ptrs = (p * max(len(ins), 1))(*[a.ctypes.data for a in ins])
        out_ptrs = (p * max(len(outs), 1))(*[o.ctypes.data for o in outs])
        size = 1 << 24
        trace = ctypes.create_string_buffer(size)
        error = ctypes.create_string_buffer(_ERROR_BYTES)
        if _lib().uir_rt_profile(
            self._handle, self.device, in_ptrs, out_ptrs, trace, size, error, _ERROR_BYTES
        ):
            raise Error(error.value.decode())
        return json.loads(trace.value.decode())

    def __del__(self):
        if getattr(self, "_handle", None) and _LIB is not None:
            _LIB.uir_rt_free(self._handle)


_ALIVE: list = []  # C functions and libraries registered stay referenced


class _Registration(ctypes.Structure):
    pass


_Registration._fields_ = [
    ("name", ctypes.c_char_p),
    ("function", ctypes.c_void_p),
    ("api", ctypes.c_int),
    ("platform", ctypes.c_char_p),
    ("next", ctypes.POINTER(_Registration)),
]


def register(name: str, function, api: str | None = None) -> None:
    """Registers a C function (ctypes function or address) as the CUDA
    custom-call target `name`, in XLA's GPU convention: api "original"
    (stream, buffers, opaque, opaque_len), "status" (and an
    XlaCustomCallStatus*), or None (as each instruction's api_version says)."""
    codes = {None: 0, "original": 1, "status": 2, "status_unified": 2}
    if api not in codes:
        raise Error(f"api must be original, status or None, not {api!r}")
    address = (
        function if isinstance(function, int) else ctypes.cast(function, ctypes.c_void_p).value
    )
    if not address:
        raise Error(f"custom-call target {name!r} is a null function pointer")
    _lib().uir_rt_register_custom_call(name.encode(), address, codes[api])
    _ALIVE.append(function)


def load_library(path) -> list[str]:
    """Loads a shared library built with uir/custom_call.h's registration
    macros and registers its targets for platform "CUDA" (or "gpu")."""
    library = ctypes.CDLL(str(path))
    read = library.uir_custom_call_registrations
    read.restype = ctypes.POINTER(_Registration)
    read.argtypes = []
    names = []
    node = read()
    while node:
        r = node.contents
        if (r.platform or b"") in (b"CUDA", b"gpu"):
            _lib().uir_rt_register_custom_call(r.name, r.function, r.api if r.api in (0, 1) else 2)
            names.append(r.name.decode())
        node = r.next
    _ALIVE.append(library)
    return names


def load(source, device: int = 0) -> Executable:
    """The executable in `source`: bytes, or the path of a file holding them."""
    if not isinstance(source, bytes | bytearray):
        source = pathlib.Path(source).read_bytes()
    return Executable(bytes(source), device)
