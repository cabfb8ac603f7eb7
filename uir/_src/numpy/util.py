"""What every jax.numpy function builds on: jax.numpy.asarray (a traced
array inside uir.jit, a NumPy array of the canonical dtype outside) and
the dtype default of the creation functions."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.tracing import Tracer


def no_out(name: str, out) -> None:
    """jax.numpy's `out` parameter: None, or refused (arrays are immutable)."""
    if out is not None:
        ops.fail(name, "the 'out' argument is not supported (arrays are immutable): use the result")


def _dtype_or(dtype, default):
    return dtypes.canonicalize(dtype) if dtype is not None else default


def set_printoptions(*args, **kwargs):
    """NumPy's set_printoptions (uir's arrays print as NumPy's)."""
    return np.set_printoptions(*args, **kwargs)


def _order(name: str, order) -> None:
    if order not in (None, "K"):
        ops.fail(name, f"order={order!r} is not supported: only 'K' (as JAX)")


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """jax.numpy.asarray: a traced array inside uir.jit, a NumPy array of
    the canonical dtype outside (a new one unless copy=False allows
    otherwise; arrays are immutable either way)."""
    _order("asarray", order)
    return public_asarray(a, dtype)


def array(object, dtype=None, copy: bool = True, order="K", ndmin: int = 0, *, device=None):
    """jax.numpy.array: asarray, with at least ndmin dimensions (ones
    prepended)."""
    _order("array", order)
    out = public_asarray(object, dtype)
    if out.ndim < ndmin:
        shape = (1,) * (int(ndmin) - out.ndim) + tuple(out.shape)
        out = ops.reshape(out, shape) if isinstance(out, Tracer) else out.reshape(shape)
    return out


def public_asarray(a, dtype=None):
    """jax.numpy.asarray: a traced array inside uir.jit, a NumPy array of the
    canonical dtype outside."""
    if isinstance(a, Tracer):
        return a if dtype is None else ops.convert(a, dtypes.canonicalize(dtype))
    if ops.tracing.current() is None:
        arr = np.asarray(a)
        return arr.astype(_dtype_or(dtype, dtypes.canonicalize(arr.dtype)))
    if ops.holds_tracers(a):
        # As jax.numpy.asarray: nested lists of traced and constant values
        # become one array, their dtypes promoted.
        parts = [public_asarray(v) for v in a]
        out = ops.concatenate([ops.reshape(v, (1, *v.shape)) for v in parts], 0, op="asarray")
        return out if dtype is None else ops.convert(out, dtypes.canonicalize(dtype))
    return ops.asarray(a, dtype)
