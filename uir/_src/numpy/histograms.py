"""jax.numpy's histograms: histogram, histogram2d, histogramdd and the bin
edges."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src.core import ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, reductions, searching, statistics, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.ufuncs import _floats as _inexact

# --- histograms ------------------------------------------------------------------


@eager(static=("bins",))
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges: `bins` itself when it is an array, else bins + 1
    evenly spaced edges over `range` (a's minimum and maximum by default;
    a range of width zero is widened by 0.5 each way)."""
    del weights  # string bins, which would use them, are not supported (as JAX)
    if isinstance(bins, str):
        fail("histogram_bin_edges", f"string bins ({bins!r}) are not supported (as in JAX)")
    arr = _inexact(a)
    if np.ndim(bins) == 1 or (hasattr(bins, "ndim") and bins.ndim == 1):
        return asarray(bins).astype(arr.dtype)
    n = int(bins)
    if range is None:
        lo, hi = reductions.min(arr), reductions.max(arr)
    else:
        if np.shape(range) != (2,):
            fail("histogram_bin_edges", f"range must be None or a pair of scalars, got {range!r}")
        lo, hi = asarray(range[0]).astype(arr.dtype), asarray(range[1]).astype(arr.dtype)
    flat = hi - lo == 0
    lo, hi = ufuncs.where(flat, lo - 0.5, lo), ufuncs.where(flat, hi + 0.5, hi)
    return creation.linspace(lo, hi, n + 1, dtype=arr.dtype)


@eager(static=("bins",))
def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, bin_edges): a's values (weights summed, when given) per bin;
    the last bin includes its right edge; values outside the edges are not
    counted. density=True divides by the total and the bin widths."""
    a = _inexact(a)
    if weights is None:
        weights = creation.ones_like(a)
    else:
        weights = asarray(weights)
        if weights.shape != a.shape:
            fail("histogram", f"weights {ops.describe(weights)} must be a's shape {a.shape}")
        a, weights = ops.promote("histogram", a, _inexact(weights))
    edges = histogram_bin_edges(a, bins, range)
    index = searching.searchsorted(edges, a, side="right")
    index = ufuncs.where(a == edges[-1], edges.shape[0] - 1, index)
    counts = (
        creation.zeros(edges.shape[0] + 1, weights.dtype)
        .at[manipulation.ravel(index)]
        .add(manipulation.ravel(weights))
    )
    counts = counts[1 : edges.shape[0]]
    if density:
        counts = counts / statistics.diff(edges) / reductions.sum(counts)
    return counts, edges


@eager(static=("bins",))
def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(hist, [edges per dimension]) of N points of D coordinates
    (sample[N, D]); bins per dimension or for all."""
    sample = _inexact(sample)
    if sample.ndim != 2:
        fail("histogramdd", f"needs samples of shape (N, D), got {ops.describe(sample)}")
    n, d = sample.shape
    if weights is not None:
        weights = asarray(weights)
        if weights.shape != (n,):
            fail("histogramdd", f"needs one weight per sample ({n}), got {ops.describe(weights)}")
        sample, weights = ops.promote("histogramdd", sample, _inexact(weights))
    if range is not None and (
        len(range) != d or any(r is not None and np.shape(r)[0] != 2 for r in range)
    ):
        fail("histogramdd", f"range must be {d} pairs or Nones for samples (N, {d}), got {range!r}")
    if isinstance(bins, (list, tuple)) or np.ndim(bins) == 1:
        per_dim = list(bins)
        if len(per_dim) != d:
            fail("histogramdd", f"needs bins for each of the {d} dimensions, got {len(per_dim)}")
    else:
        per_dim = [bins] * d
    indices, edges = [], []
    for i in builtins.range(d):
        column = sample[:, i]
        e = histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        idx = searching.searchsorted(e, column, side="right")
        indices.append(ufuncs.where(column == e[-1], idx - 1, idx))
        edges.append(e)
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = np_indexing.ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = searching.bincount(flat, weights, length=math.prod(nbins))
    hist = manipulation.reshape(hist, nbins)[(builtins.slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / reductions.sum(hist)
        for axis, e in enumerate(edges):
            shape = [1] * d
            shape[axis] = e.shape[0] - 1
            hist = hist / manipulation.reshape(statistics.diff(e), shape)
    return hist, edges


@eager(static=("bins",))
def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(hist, x_edges, y_edges) of the points (x[i], y[i])."""
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        edges = asarray(bins)
        bins = [edges, edges]
    sample = manipulation.stack([asarray(x), asarray(y)], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


__all__ = [
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
]
