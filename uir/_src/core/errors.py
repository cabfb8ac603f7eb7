"""uir's exception classes. The C++ core raises these (csrc/python/support.cc)."""

from __future__ import annotations


class Error(Exception):
    """Base of every error uir raises on purpose."""


class ParseError(Error, ValueError):
    """Malformed text (HLO, iGraph, flags). ``line`` and ``column`` are 1-based."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        file: str | None = None,
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.file = file


class VerifyError(Error, ValueError):
    """A program that breaks an IR invariant; ``instruction`` names where."""

    def __init__(self, message: str, *, instruction: str | None = None) -> None:
        super().__init__(message)
        self.instruction = instruction


class TraceError(Error, TypeError):
    """A Python function that cannot be traced; the message names the operation and shapes."""


class ShapeError(Error, ValueError):
    """Operands whose shapes or element types do not fit an operation."""


class CustomCallError(Error, RuntimeError):
    """A custom-call target that reported a failure; ``target`` names it."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        self.target = target


class InternalError(Error, RuntimeError):
    """A bug in uir itself."""


class UnimplementedError(Error, NotImplementedError):
    """A valid program that uses something uir does not support yet."""


class MemoryLimitError(Error, ValueError):
    """A memory limit that no schedule or rematerialization can meet; the message
    says what stays live at the peak."""


class ArgumentError(Error, TypeError, ValueError):
    """Arguments that do not fit what a program takes: their number, a
    dtype, a shape or a structure. Both a TypeError and a ValueError, as the
    built-in errors the same mistakes raise elsewhere (NumPy, JAX) are."""


class OutOfMemoryError(Error, MemoryError):
    """Memory a program needs that cannot be allocated; the message names the
    op, its shape and the bytes."""


class SerializationError(Error, ValueError):
    """A serialized executable that cannot be loaded here: damaged or cut
    short, written by another version of uir or LLVM, or compiled for CPU
    features this machine lacks."""


class FallbackError(Error, RuntimeError):
    """Raised by a compile under UIR_FLAGS=--fallback=error when some node
    would run on the reference evaluator instead of compiled code."""


class DeviceError(Error, RuntimeError):
    """A device a program needs that this process does not have: a GPU
    executable run where the CUDA driver finds no GPU."""


class DistributedError(Error, RuntimeError):
    """A run across several participants (threads of one process, or
    processes under MPI) that cannot go on: another participant failed
    (the message names it and carries its error), the participants run
    different programs, or the run lacks the participants its collectives
    need."""


class FallbackWarning(UserWarning):
    """Warned once per executable when nodes run on the reference evaluator
    (UIR_FLAGS=--fallback=warn, or by default when one of them is large)."""


__all__ = [
    "ArgumentError",
    "CustomCallError",
    "DeviceError",
    "DistributedError",
    "Error",
    "InternalError",
    "MemoryLimitError",
    "OutOfMemoryError",
    "ParseError",
    "SerializationError",
    "ShapeError",
    "TraceError",
    "UnimplementedError",
    "VerifyError",
]
