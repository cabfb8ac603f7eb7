"""jax.numpy's set functions: isin."""

from __future__ import annotations

from uir._src.core.eager import eager
from uir._src.core.ops import asarray
from uir._src.numpy import manipulation, reductions, ufuncs


@eager
def isin(element, test_elements, assume_unique: bool = False, invert: bool = False):
    """Whether each element occurs in test_elements."""
    e, t = asarray(element), manipulation.ravel(asarray(test_elements))
    hit = reductions.any(ufuncs.equal(manipulation.expand_dims(e, -1), t), axis=-1)
    return ufuncs.logical_not(hit) if invert else hit


__all__ = [
    "isin",
]
