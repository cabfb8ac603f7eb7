"""Calling uir.numpy / uir.lax functions outside uir.jit: the call is traced
as a one-function program and run, as JAX runs its ops eagerly."""

from __future__ import annotations

import functools
import inspect

import numpy as np

from uir._src.core import tracing


def eager(fn=None, *, static: tuple[str, ...] = ()):
    """Makes `fn` (written for Tracers) callable on NumPy arrays too: NumPy
    arrays become traced arguments, everything else is static. Parameters
    named in `static` (sizes, counts, positions) stay static even as NumPy
    scalars (np.int64(3) bins) or arrays (repeat's counts), as JAX requires
    them concrete."""
    if fn is None:
        return functools.partial(eager, static=static)
    names = list(inspect.signature(fn).parameters)
    static_positions = {names.index(n) for n in static if n in names}

    def traced(i, name, a) -> bool:
        return isinstance(a, (np.ndarray, np.generic)) and not (
            i in static_positions or name in static
        )

    cache: dict = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if tracing.current() is not None:
            return fn(*args, **kwargs)
        from uir._src.core.api import jit

        args = tuple(
            a.item() if isinstance(a, np.generic) and i in static_positions else a
            for i, a in enumerate(args)
        )
        kwargs = {
            k: v.item() if isinstance(v, np.generic) and k in static else v
            for k, v in kwargs.items()
        }
        dynamic = [i for i, a in enumerate(args) if traced(i, None, a)]
        dyn_kw = sorted(k for k, v in kwargs.items() if traced(-1, k, v))
        static_args = tuple((i, _key(a)) for i, a in enumerate(args) if i not in dynamic)
        static_kw = tuple((k, _key(v)) for k, v in sorted(kwargs.items()) if k not in dyn_kw)
        key = (tuple(dynamic), tuple(dyn_kw), static_args, static_kw)
        jitted = cache.get(key)
        if jitted is None:

            def run(*dyn):
                full = list(args)
                for i, v in zip(dynamic, dyn[: len(dynamic)], strict=True):
                    full[i] = v
                kw = dict(kwargs)
                kw.update(zip(dyn_kw, dyn[len(dynamic) :], strict=True))
                return fn(*full, **kw)

            run.__name__ = fn.__name__
            jitted = jit(run)
            if len(cache) < 256:
                cache[key] = jitted
        return jitted(*[args[i] for i in dynamic], *[kwargs[k] for k in dyn_kw])

    return wrapper


def _key(value):
    if isinstance(value, np.ndarray):  # (a static array: by its contents)
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)
