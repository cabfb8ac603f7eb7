"""jax.numpy's set functions: isin."""

from __future__ import annotations

from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import manipulation, reductions, ufuncs


@eager
def isin(
    element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"
):
    """Whether each element occurs in test_elements (every method compares
    each element with every test element)."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        fail(
            "isin",
            f"method must be 'auto', 'compare_all', 'binary_search' or 'sort', got {method!r}",
        )
    e, t = asarray(element), manipulation.ravel(asarray(test_elements))
    hit = reductions.any(ufuncs.equal(manipulation.expand_dims(e, -1), t), axis=-1)
    return ufuncs.logical_not(hit) if invert else hit


__all__ = [
    "isin",
]
