"""jax.numpy's histograms (histogram, histogram_bin_edges, histogram2d,
histogramdd), partial sorts (partition, argpartition, by two top_k as JAX),
bit packing (packbits, unpackbits), put and put_along_axis (inplace=False,
as JAX's immutable arrays need), polyfit and mask_indices, each following
JAX's definition where it differs from NumPy's."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src import dtypes, lax_ops, numpy_impl, numpy_more, numpy_shapes, ops
from uir._src.eager import eager
from uir._src.numpy_more import _floats as _inexact
from uir._src.ops import asarray, fail

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
        lo, hi = numpy_impl.min(arr), numpy_impl.max(arr)
    else:
        if np.shape(range) != (2,):
            fail("histogram_bin_edges", f"range must be None or a pair of scalars, got {range!r}")
        lo, hi = asarray(range[0]).astype(arr.dtype), asarray(range[1]).astype(arr.dtype)
    flat = hi - lo == 0
    lo, hi = numpy_impl.where(flat, lo - 0.5, lo), numpy_impl.where(flat, hi + 0.5, hi)
    return numpy_impl.linspace(lo, hi, n + 1, dtype=arr.dtype)


@eager(static=("bins",))
def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, bin_edges): a's values (weights summed, when given) per bin;
    the last bin includes its right edge; values outside the edges are not
    counted. density=True divides by the total and the bin widths."""
    a = _inexact(a)
    if weights is None:
        weights = numpy_impl.ones_like(a)
    else:
        weights = asarray(weights)
        if weights.shape != a.shape:
            fail("histogram", f"weights {ops.describe(weights)} must be a's shape {a.shape}")
        a, weights = ops.promote("histogram", a, _inexact(weights))
    edges = histogram_bin_edges(a, bins, range)
    index = numpy_more.searchsorted(edges, a, side="right")
    index = numpy_impl.where(a == edges[-1], edges.shape[0] - 1, index)
    counts = (
        numpy_impl.zeros(edges.shape[0] + 1, weights.dtype)
        .at[numpy_impl.ravel(index)]
        .add(numpy_impl.ravel(weights))
    )
    counts = counts[1 : edges.shape[0]]
    if density:
        counts = counts / numpy_more.diff(edges) / numpy_impl.sum(counts)
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
        idx = numpy_more.searchsorted(e, column, side="right")
        indices.append(numpy_impl.where(column == e[-1], idx - 1, idx))
        edges.append(e)
    nbins = tuple(e.shape[0] + 1 for e in edges)
    flat = numpy_more.ravel_multi_index(tuple(indices), nbins, mode="clip")
    hist = numpy_more.bincount(flat, weights, length=math.prod(nbins))
    hist = numpy_shapes.reshape(hist, nbins)[(builtins.slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / numpy_impl.sum(hist)
        for axis, e in enumerate(edges):
            shape = [1] * d
            shape[axis] = e.shape[0] - 1
            hist = hist / numpy_shapes.reshape(numpy_more.diff(e), shape)
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
    sample = numpy_shapes.stack([asarray(x), asarray(y)], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


# --- partial sorts -------------------------------------------------------------------


def _partition_setup(a, kth, axis, name):

    arr = asarray(a)
    if dtypes.is_complex(arr.dtype):
        fail(name, "complex arrays are not supported (as in JAX)")
    axis = ops.normalize_axis(axis, arr.ndim, name)
    n = arr.shape[axis]
    kth = int(kth)
    if not -n <= kth < n:
        fail(name, f"kth {kth} is out of bounds for an axis of {n}")
    kth %= n
    arr = numpy_shapes.swapaxes(arr, axis, -1)
    if np.dtype(arr.dtype).kind == "u":
        # -(x + 1) keeps 0 ordered below the rest (JAX's trick for unsigned).
        low = lax_ops.top_k(-(arr + 1), kth + 1)
    else:
        low = lax_ops.top_k(-arr, kth + 1)
    return arr, axis, kth, low


@eager(static=("kth", "axis"))
def partition(a, kth: int, axis: int = -1):
    """a with its kth smallest element (along axis) in place, the smaller
    ones before it and the larger after, each group's order JAX's (two
    top_k)."""

    arr, axis, kth, (low_values, _) = _partition_setup(a, kth, axis, "partition")
    bottom = -low_values - 1 if np.dtype(arr.dtype).kind == "u" else -low_values
    top = lax_ops.top_k(arr, arr.shape[-1] - kth - 1)[0]
    return numpy_shapes.swapaxes(numpy_shapes.concatenate([bottom, top], axis=-1), -1, axis)


@eager(static=("kth", "axis"))
def argpartition(a, kth: int, axis: int = -1):
    """The indices that partition a (see partition): those of the kth + 1
    smallest first, the rest after in index order."""

    arr, axis, kth, (_, bottom) = _partition_setup(a, kth, axis, "argpartition")
    n = arr.shape[-1]
    # The rest: the positions bottom does not name, in index order (the
    # top_k of a 1/0 proxy keeps ties in index order).
    positions = numpy_impl.arange(n, dtype=bottom.dtype)
    taken = numpy_impl.any(numpy_shapes.expand_dims(bottom, -1) == positions, axis=-2)
    proxy = numpy_impl.where(taken, 0.0, 1.0).astype(np.float32)
    top = lax_ops.top_k(proxy, n - kth - 1)[1].astype(bottom.dtype)
    return numpy_shapes.swapaxes(numpy_shapes.concatenate([bottom, top], axis=-1), -1, axis)


# --- bits ------------------------------------------------------------------------


@eager(static=("axis",))
def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """Booleans (a != 0) packed eight to a uint8 along axis (a flattened by
    default), padded with zeros to a multiple of eight."""
    arr = asarray(a)
    if not (dtypes.is_int(arr.dtype) or np.dtype(arr.dtype) == np.bool_):
        fail("packbits", f"needs an integer or boolean array, got {ops.describe(arr)}")
    if bitorder not in ("big", "little"):
        fail("packbits", f"bitorder must be 'big' or 'little', got {bitorder!r}")
    bits = (arr != 0).astype(np.uint8)
    if axis is None:
        bits, axis = numpy_impl.ravel(bits), 0
    axis = ops.normalize_axis(axis, bits.ndim, "packbits")
    bits = numpy_shapes.swapaxes(bits, axis, -1)
    extra = -bits.shape[-1] % 8
    if extra:
        bits = numpy_shapes.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, extra)])
    bits = numpy_shapes.reshape(bits, (*bits.shape[:-1], bits.shape[-1] // 8, 8))
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1] if bitorder == "big" else shifts
    packed = numpy_impl.sum(
        numpy_impl.left_shift(bits, numpy_impl.public_asarray(shifts)), axis=-1
    ).astype(np.uint8)
    return numpy_shapes.swapaxes(packed, axis, -1)


@eager(static=("axis", "count"))
def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """Each uint8 of a unpacked into eight 0/1 uint8s along axis (a flattened
    by default); count keeps that many bits (padding with zeros past the
    end)."""
    arr = asarray(a)
    if np.dtype(arr.dtype) != np.uint8:
        fail("unpackbits", f"needs a uint8 array, got {ops.describe(arr)}")
    if bitorder not in ("big", "little"):
        fail("unpackbits", f"bitorder must be 'big' or 'little', got {bitorder!r}")
    masks = (1 << np.arange(8)).astype(np.uint8)
    masks = masks[::-1] if bitorder == "big" else masks
    if axis is None:
        arr, axis = numpy_impl.ravel(arr), 0
    axis = ops.normalize_axis(axis, arr.ndim, "unpackbits")
    arr = numpy_shapes.swapaxes(arr, axis, -1)
    bits = (
        numpy_impl.bitwise_and(numpy_shapes.expand_dims(arr, -1), numpy_impl.public_asarray(masks))
        > 0
    ).astype(np.uint8)
    bits = numpy_shapes.reshape(bits, (*bits.shape[:-2], -1))
    if count is not None:
        if count > bits.shape[-1]:
            bits = numpy_shapes.pad(
                bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - bits.shape[-1])]
            )
        else:
            bits = bits[..., :count]
    return numpy_shapes.swapaxes(bits, axis, -1)


# --- put -----------------------------------------------------------------------------


@eager
def put(a, ind, v, mode: str | None = None, *, inplace: bool = True):
    """a with a.flat[ind] = v (v repeated to ind's length). Indices wrap
    from the end and clip at both ends (mode None, as JAX), clip, or wrap
    around (mode 'wrap'). Needs inplace=False: arrays are immutable."""
    if inplace:
        fail("put", "cannot modify an array in place; pass inplace=False for an updated array")
    arr = asarray(a)
    flat = numpy_impl.ravel(arr)
    ind = numpy_impl.ravel(asarray(ind)).astype(dtypes.default_int())
    values = numpy_impl.ravel(asarray(v)).astype(arr.dtype)
    size = flat.shape[0]
    if size == 0 or ind.shape[0] == 0 or values.shape[0] == 0:
        return arr
    if values.shape[0] < ind.shape[0]:
        values = numpy_shapes.tile(values, -(-ind.shape[0] // values.shape[0]))
    values = values[: ind.shape[0]]
    if mode is None:
        ind = numpy_impl.clip(numpy_impl.where(ind < 0, ind + size, ind), 0, size - 1)
    elif mode == "clip":
        ind = numpy_impl.clip(ind, 0, size - 1)
    elif mode == "wrap":
        ind = ind % size
    elif mode == "raise":
        fail(
            "put", "mode 'raise' is not supported (as in JAX): it would need a data-dependent error"
        )
    else:
        fail("put", f"mode must be 'clip' or 'wrap', got {mode!r}")
    return numpy_shapes.reshape(flat.at[ind].set(values), arr.shape)


@eager
def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True, *, mode=None):
    """arr with values written at `indices` along axis (the counterpart of
    take_along_axis; arr flattened when axis is None). Negative indices
    count from the end; indices out of bounds are dropped. Needs
    inplace=False: arrays are immutable."""
    del mode
    if inplace:
        fail(
            "put_along_axis",
            "cannot modify an array in place; pass inplace=False for an updated array",
        )
    a = asarray(arr)
    shape = a.shape
    if axis is None:
        a, axis = numpy_impl.ravel(a), 0
    indices = asarray(indices)
    if indices.ndim != a.ndim:
        fail(
            "put_along_axis",
            f"arr and indices need the same number of dimensions, got {ops.describe(a)} and "
            f"{ops.describe(indices)}",
        )
    axis = ops.normalize_axis(axis, a.ndim, "put_along_axis")
    out_shape = np.broadcast_shapes(
        tuple(1 if d == axis else s for d, s in enumerate(a.shape)),
        tuple(1 if d == axis else s for d, s in enumerate(indices.shape)),
    )
    if any(o != s for d, (o, s) in enumerate(zip(out_shape, a.shape, strict=True)) if d != axis):
        fail("put_along_axis", f"indices {ops.describe(indices)} do not fit arr {ops.describe(a)}")
    idx_shape = tuple(indices.shape[d] if d == axis else a.shape[d] for d in builtins.range(a.ndim))
    indices = numpy_shapes.broadcast_to(indices, idx_shape).astype(dtypes.default_int())
    values = numpy_shapes.broadcast_to(asarray(values).astype(a.dtype), idx_shape)
    n = a.shape[axis]
    along = numpy_impl.where(indices < 0, indices + n, indices)
    inside = (along >= 0) & (along < n)
    # Flat positions; an index out of bounds points past the end, where the
    # scatter drops it.
    strides = np.cumprod((1, *a.shape[::-1]))[::-1][1:]
    flat = numpy_impl.zeros(idx_shape, dtypes.default_int())
    for d in builtins.range(a.ndim):
        coord = along if d == axis else ops.iota(np.dtype(dtypes.default_int()), idx_shape, d)
        flat = flat + coord * int(strides[d])
    flat = numpy_impl.where(inside, flat, a.size)
    out = numpy_impl.ravel(a).at[numpy_impl.ravel(flat)].set(numpy_impl.ravel(values))
    return numpy_shapes.reshape(out, shape)


# --- polyfit, mask_indices -----------------------------------------------------------


@eager(static=("deg",))
def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y),
    coefficients highest power first, as JAX: the Vandermonde matrix with
    its columns scaled to unit norm, solved through the SVD. full=True adds
    (residuals, rank, singular values, rcond); cov=True the covariance."""
    from uir._src import linalg_numpy

    deg = int(deg)
    if deg < 0:
        fail("polyfit", f"needs deg >= 0, got {deg}")
    x, y = ops.promote("polyfit", _inexact(x), _inexact(y))
    if x.ndim != 1 or x.shape[0] == 0:
        fail("polyfit", f"needs a non-empty vector x, got {ops.describe(x)}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        fail("polyfit", f"needs y of x's length (1-D or 2-D), got {ops.describe(y)}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.dtype(x.dtype)).eps)
    lhs = numpy_more.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w)
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            fail("polyfit", f"needs weights of y's length, got {ops.describe(w)}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = numpy_impl.sqrt(numpy_impl.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg_numpy.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, numpy_impl.public_asarray(rcond)
    if cov:
        vbase = linalg_numpy.inv(numpy_shapes.matmul(lhs.T, lhs)) / numpy_shapes.outer(scale, scale)
        if cov == "unscaled":
            fac = numpy_impl.public_asarray(1.0, x.dtype)
        else:
            if x.shape[0] <= order:
                fail(
                    "polyfit",
                    "the number of data points must exceed the order to scale the covariance",
                )
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, vbase * numpy_shapes.reshape(fac, (1,))[0]
        return c, vbase[:, :, None] * fac
    return c


def mask_indices(n: int, mask_func, k: int = 0, *, size: int | None = None):
    """(rows, cols) where mask_func(ones((n, n)), k) is nonzero (e.g.
    mask_indices(3, uir.numpy.triu)): the mask is computed when called, from
    n and k alone."""
    mask = np.asarray(mask_func(np.ones((n, n)), k))
    rows, cols = np.nonzero(mask)
    if size is not None:
        rows, cols = rows[:size], cols[:size]
        pad = size - rows.shape[0]
        if pad > 0:
            rows = np.concatenate([rows, np.zeros(pad, rows.dtype)])
            cols = np.concatenate([cols, np.zeros(pad, cols.dtype)])
    int_type = np.dtype(dtypes.default_int())
    return numpy_impl.public_asarray(rows.astype(int_type)), numpy_impl.public_asarray(
        cols.astype(int_type)
    )


__all__ = [
    "argpartition",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "mask_indices",
    "packbits",
    "partition",
    "polyfit",
    "put",
    "put_along_axis",
    "unpackbits",
]
