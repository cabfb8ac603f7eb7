"""jax.debug.print and jax.debug.callback: a host call inside a traced
program. Each call becomes a side-effecting custom-call whose target is a
Python function registered for it; it receives the traced values as NumPy
arrays when the program runs (in loops, every iteration; in branches, when
the branch runs), and the calls of one program run in program order: the
tracer chains them with control dependencies, and the runtime keeps every
thunk that holds one in sequence. Outside uir.jit the callback runs at
once."""

from __future__ import annotations

import itertools
import string
import threading

import numpy as np

from uir import _core
from uir._src.core import ops, tracing, tree_util
from uir._src.core.tracing import Tracer

_counter = itertools.count()
_lock = threading.Lock()
# Registered targets stay referenced here (the runtime holds them by name).
_targets: dict[str, object] = {}


def _target_name() -> str:
    with _lock:
        return f"uir.debug.callback.{next(_counter)}"


def callback(callback=None, *args, ordered: bool = False, partitioned: bool = False, **kwargs):
    """Calls callback(*args, **kwargs) with the traced values as NumPy
    arrays when the program runs; None. All host calls of a program run in
    program order (ordered=True changes nothing); partitioned concerns
    sharded programs, which uir has not."""
    if callback is None:
        # As a decorator: @uir.debug.callback.
        return lambda fn: fn
    if not callable(callback):
        raise TypeError(f"debug.callback needs a callable, got {type(callback).__name__}")
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    comp = tracing.current()
    if comp is None or not any(isinstance(x, Tracer) for x in leaves):
        values = [np.asarray(x) if isinstance(x, np.ndarray) else x for x in leaves]
        a, kw = tree_util.tree_unflatten(tree, values)
        callback(*a, **kw)
        return None
    traced = [i for i, x in enumerate(leaves) if isinstance(x, Tracer)]
    fixed = list(leaves)

    def run(*arrays):
        values = list(fixed)
        for i, array in zip(traced, arrays, strict=True):
            values[i] = array
        a, kw = tree_util.tree_unflatten(tree, values)
        callback(*a, **kw)
        return ()

    name = _target_name()
    _core.runtime.register_python_custom_call(name, run)
    _targets[name] = run
    operands = [leaves[i] for i in traced]
    ops._comp().emit(
        "custom-call",
        *operands,
        shape=[],
        custom_call_target=name,
        custom_call_has_side_effect=True,
        op_name="debug_callback",
    )
    return None


def _check_format(fmt: str, args, kwargs) -> None:
    """The format's fields must name the arguments given (as JAX checks)."""
    positional, named = 0, set()
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is None:
            continue
        head = field.split(".")[0].split("[")[0]
        if head == "" or head.isdigit():
            positional = max(positional, int(head) + 1 if head.isdigit() else positional + 1)
        else:
            named.add(head)
    if positional > len(args) or not named <= set(kwargs):
        raise ValueError(
            f"debug.print: the format {fmt!r} names arguments that were not given "
            f"({len(args)} positional, keywords {sorted(kwargs)})"
        )


def print(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    **kwargs,
):
    """Prints fmt.format(*args, **kwargs) when the program runs, with the
    traced values as NumPy arrays (every iteration of a loop, in program
    order with the other host calls)."""
    if fmt is None:
        raise TypeError("debug.print needs a format string")
    if not skip_format_check:
        _check_format(fmt, args, kwargs)

    def show(*a, **kw):
        import builtins

        builtins.print(fmt.format(*a, **kw), flush=True)

    return callback(show, *args, ordered=ordered, partitioned=partitioned, **kwargs)


__all__ = ["callback", "print"]
