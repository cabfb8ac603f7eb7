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
