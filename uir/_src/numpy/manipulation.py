"""jax.numpy's shape and layout manipulation: reshape, transpose, concatenate,
stack, split, constant padding, tile, repeat, flips and rolls, insert and delete, bits."""

from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.lax import _tile, reduce_sum
from uir._src.lax.lax import expand_dims as lax_expand_dims
from uir._src.lax.slicing import _take_along, index_in_dim, slice_static
from uir._src.numpy import ufuncs
from uir._src.numpy.ufuncs import (
    _alias,
)
from uir._src.numpy.util import no_out, public_asarray


@eager
def ravel(a, order: str = "C"):
    """The elements in one dimension, in row-major order ("C"), or
    column-major ("F"; "A" and "K" as "C", the only layout a traced array
    has)."""
    x = asarray(a)
    if order not in ("C", "F", "A", "K"):
        fail("ravel", f"order must be 'C', 'F', 'A' or 'K', got {order!r}")
    if order == "F" and x.ndim > 1:
        x = ops.transpose(x, list(range(x.ndim - 1, -1, -1)))
    return ops.reshape(x, (x.size,))


# --- Shapes --------------------------------------------------------------------


@eager
def reshape(a, shape=None, order: str = "C", *, copy=None, out_sharding=None):
    """a in `shape` (one -1 inferred), its elements read and written in
    row-major order ("C") or column-major ("F"). `copy` changes nothing:
    arrays are immutable."""
    x = asarray(a)
    if shape is None:
        fail("reshape", "needs a shape")
    newshape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if order not in ("C", "F", "A"):
        fail("reshape", f"order must be 'C', 'F' or 'A', got {order!r}")
    if order == "F":
        # Column-major: reverse the axes, reshape to the reversed shape,
        # reverse back.
        flipped = ops.transpose(x, list(range(x.ndim - 1, -1, -1))) if x.ndim > 1 else x
        out = reshape(flipped, tuple(reversed(newshape)))
        return ops.transpose(out, list(range(out.ndim - 1, -1, -1))) if out.ndim > 1 else out
    if newshape.count(-1) > 1:
        fail("reshape", f"can only specify one unknown dimension in {newshape}")
    if -1 in newshape:
        known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            fail("reshape", f"cannot reshape {ops.describe(x)} into {newshape}")
        newshape = tuple(x.size // known if s == -1 else s for s in newshape)
    return ops.reshape(x, newshape)


@eager
def transpose(a, axes=None):
    x = asarray(a)
    perm = (
        list(range(x.ndim))[::-1]
        if axes is None
        else [ops.normalize_axis(p, x.ndim, "transpose") for p in axes]
    )
    return ops.transpose(x, perm)


@eager
def swapaxes(a, axis1: int, axis2: int):
    x = asarray(a)
    perm = list(range(x.ndim))
    i, j = (
        ops.normalize_axis(axis1, x.ndim, "swapaxes"),
        ops.normalize_axis(axis2, x.ndim, "swapaxes"),
    )
    perm[i], perm[j] = perm[j], perm[i]
    return ops.transpose(x, perm)


@eager
def moveaxis(a, source, destination):
    return ops.moveaxis(a, source, destination)


@eager
def expand_dims(a, axis):
    return lax_expand_dims(asarray(a), axis)


@eager
def squeeze(a, axis=None):
    x = asarray(a)
    if axis is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = ops.normalize_axes(axis, x.ndim, "squeeze")
        for ax in axes:
            if x.shape[ax] != 1:
                fail(
                    "squeeze",
                    f"cannot select an axis to squeeze out which has size not equal to one ({ops.describe(x)}, axis {ax})",
                )
    return ops.reshape(x, [s for i, s in enumerate(x.shape) if i not in axes])


@eager
def broadcast_to(array, shape):
    return ops.broadcast_to(array, (shape,) if isinstance(shape, int) else shape)


@eager
def concatenate(arrays, axis: int | None = 0, dtype=None):
    """The arrays joined along `axis` (flattened first when None), in
    `dtype` when given."""
    xs = [asarray(a) for a in arrays]
    if dtype is not None:
        xs = [ops.convert(x, dtypes.canonicalize(dtype)) for x in xs]
    if axis is None:
        xs, axis = [ops.reshape(x, (x.size,)) for x in xs], 0
    return ops.concatenate(xs, axis)


@eager
def stack(arrays, axis: int = 0, out=None, dtype=None):
    no_out("stack", out)
    xs = [asarray(a) for a in arrays]
    if not xs:
        fail("stack", "need at least one array")
    ax = ops.normalize_axis(axis, xs[0].ndim + 1, "stack")
    return concatenate([expand_dims(x, ax) for x in xs], axis=ax, dtype=dtype)


@eager
def split(ary, indices_or_sections, axis: int = 0):
    x = asarray(ary)
    ax = ops.normalize_axis(axis, x.ndim, "split")
    n = x.shape[ax]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            fail(
                "split",
                f"array split does not result in an equal division ({n} by {indices_or_sections})",
            )
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step)) if step else [0] * (indices_or_sections + 1)
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        lo, hi = builtins.min(builtins.max(lo, 0), n), builtins.min(builtins.max(hi, 0), n)
        out.append(_slice_axis(x, ax, lo, builtins.max(hi, lo), 1))
    return out


def _axis_range(a, ax: int, lo: int, hi: int):
    """a[..., lo:hi, ...] along axis ax, traced or (outside uir.jit) NumPy."""
    if not isinstance(a, Tracer):
        return np.take(a, np.arange(lo, hi), axis=ax)
    return _slice_axis(a, ax, lo, hi, 1)


def _slice_axis(x, ax, lo, hi, step):
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[ax], limits[ax], strides[ax] = lo, hi, step
    return slice_static(x, starts, limits, strides)


@eager
def flip(m, axis=None):
    x = asarray(m)
    axes = ops.normalize_axes(axis, x.ndim, "flip")
    if not axes:
        return x
    out = ops._comp().emit(
        "reverse",
        x,
        dimensions=sorted(axes),
        shape=(x.shape, x.dtype),
        op_name="rev",
    )
    out.weak_type = x.weak_type
    return out


@eager
def pad_constant(array, pad_width, constant_values=0):
    """array padded with one value (lax.pad without interior padding);
    jax.numpy.pad, with every mode, is uir._src.numpy.padding's."""
    x = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2)).tolist()
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        fail("pad", "pad widths must be non-negative")
    value = ops.convert(asarray(constant_values), x.dtype)
    shape = [s + lo + hi for s, (lo, hi) in zip(x.shape, widths, strict=True)]
    out = ops._comp().emit(
        "pad",
        x,
        value,
        padding="x".join(f"{lo}_{hi}" for lo, hi in widths) if widths else "",
        shape=(shape, x.dtype),
        op_name="pad",
    )
    out.weak_type = x.weak_type
    return out


@eager
def tile(A, reps):
    return _tile(asarray(A), reps)


@eager(static=("repeats", "total_repeat_length"))
def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element repeated `repeats` times along `axis` (the flattened
    array when None): one count, or one per element (static). With
    total_repeat_length, the result is cut to that length or its last
    element repeated to it, as in JAX."""
    x = asarray(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "repeat")
    if isinstance(repeats, Tracer):
        fail("repeat", "repeats must be static (a traced count would give a traced shape)")
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iu" or (counts < 0).any():
        fail("repeat", f"repeats must be non-negative integers, got {repeats!r}")
    if counts.ndim == 0:
        out = _repeat_each(x, int(counts), ax)
        positions = None
    else:
        if counts.shape != (x.shape[ax],):
            fail("repeat", f"{counts.shape[0]} counts for an axis of {x.shape[ax]}")
        positions = np.repeat(np.arange(x.shape[ax]), counts)
        out = None
    if total_repeat_length is not None:
        total = int(total_repeat_length)
        if positions is None:
            positions = np.repeat(np.arange(x.shape[ax]), int(counts))
        if positions.size < total:
            last = positions[-1] if positions.size else 0
            positions = np.concatenate([positions, np.full(total - positions.size, last)])
        positions = positions[:total]
    if positions is not None:
        return _take_along(x, ops.asarray(positions.astype(dtypes.default_int())), ax)
    return out


def _repeat_each(x, repeats: int, ax: int):
    """Each element of x repeated `repeats` times along ax (a broadcast)."""
    shape = list(x.shape)
    inter = [*shape[: ax + 1], repeats, *shape[ax + 1 :]]
    dims = list(range(ax + 1)) + list(range(ax + 2, len(inter)))
    b = ops._comp().builder.broadcast(x.inst, inter, dims)
    bt = Tracer(x.comp, b, tuple(inter), x.dtype, x.weak_type)
    shape[ax] *= repeats
    return ops.reshape(bt, shape)


concat = _alias("concat", concatenate)
permute_dims = _alias("permute_dims", transpose)


@eager
def astype(x, dtype, copy: bool = False):
    """x converted to dtype."""
    return ops.convert(asarray(x), dtypes.canonicalize(dtype))


@eager
def copy(a, order=None):
    """a (arrays are values: a copy is the array itself)."""
    return asarray(a)


# --- manipulation ----------------------------------------------------------------------


@eager
def atleast_1d(*arys):
    """Each array with at least one dimension."""
    out = [reshape(a, (1,)) if asarray(a).ndim == 0 else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


@eager
def atleast_2d(*arys):
    """Each array with at least two dimensions (new ones in front)."""
    out = []
    for a in arys:
        a = asarray(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


@eager
def atleast_3d(*arys):
    """Each array with at least three dimensions, as NumPy adds them."""
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, (*a.shape, 1))
        out.append(a)
    return out[0] if len(out) == 1 else out


@eager
def hstack(tup, dtype=None):
    """Arrays joined along their second axis (the first for 1-D ones)."""
    xs = [atleast_1d(a) for a in tup]
    out = concatenate(xs, axis=0 if xs[0].ndim == 1 else 1)
    return out if dtype is None else out.astype(dtype)


@eager
def vstack(tup, dtype=None):
    """Arrays joined along a first axis (1-D ones as rows)."""
    out = concatenate([atleast_2d(a) for a in tup], axis=0)
    return out if dtype is None else out.astype(dtype)


row_stack = vstack


@eager
def dstack(tup, dtype=None):
    """Arrays joined along a third axis."""
    out = concatenate([atleast_3d(a) for a in tup], axis=2)
    return out if dtype is None else out.astype(dtype)


@eager
def column_stack(tup):
    """1-D arrays as columns, 2-D ones as they are, side by side."""
    xs = [asarray(a) for a in tup]
    return concatenate([reshape(a, (a.shape[0], 1)) if a.ndim < 2 else a for a in xs], axis=1)


@eager
def array_split(ary, indices_or_sections, axis: int = 0):
    """Pieces along `axis`; with a count, the first ones one element larger
    when it does not divide."""
    a = asarray(ary)
    ax = ops.normalize_axis(axis, a.ndim, "array_split")
    n = a.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            fail("array_split", "the number of sections must be positive")
        size, extra = builtins.divmod(n, sections)
        bounds = np.cumsum([0] + [size + 1] * extra + [size] * (sections - extra))
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        lo, hi = builtins.min(int(lo), n), builtins.min(builtins.max(int(hi), int(lo)), n)
        starts, limits = [0] * a.ndim, list(a.shape)
        starts[ax], limits[ax] = lo, builtins.max(hi, lo)
        out.append(slice_static(a, starts, limits, [1] * a.ndim))
    return out


def hsplit(ary, indices_or_sections):
    """split along the second axis (the first for 1-D arrays)."""
    a = public_asarray(ary)
    return split(a, indices_or_sections, axis=1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along the first axis."""
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """split along the third axis."""
    return split(ary, indices_or_sections, axis=2)


@eager
def fliplr(m):
    """m reversed along its second axis."""
    return flip(m, axis=1)


@eager
def flipud(m):
    """m reversed along its first axis."""
    return flip(m, axis=0)


@eager
def rot90(m, k: int = 1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane `axes`."""
    m = asarray(m)
    a0, a1 = (ops.normalize_axis(a, m.ndim, "rot90") for a in axes)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


@eager
def roll(a, shift, axis=None):
    """Elements shifted by `shift` along `axis`, wrapping around."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, (int, np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes, strict=True):
        ax = ops.normalize_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = concatenate(
                [
                    _slice_axis(a, ax, n - s, n, 1),
                    _slice_axis(a, ax, 0, n - s, 1),
                ],
                axis=ax,
            )
    return a


@eager
def rollaxis(a, axis: int, start: int = 0):
    """`axis` moved to before `start` (NumPy's older moveaxis)."""
    a = asarray(a)
    axis = ops.normalize_axis(axis, a.ndim, "rollaxis")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


@eager
def matrix_transpose(x):
    """x with its last two axes swapped."""
    x = asarray(x)
    if x.ndim < 2:
        fail("matrix_transpose", f"needs at least two dimensions, got {ops.describe(x)}")
    return swapaxes(x, -1, -2)


@eager
def append(arr, values, axis=None):
    """values after arr (both flattened without an axis)."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_arrays(*args):
    """The arrays broadcast to one shape."""
    xs = [public_asarray(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


@eager
def unstack(x, /, *, axis: int = 0):
    """The slices of x along `axis`."""
    x = asarray(x)
    ax = ops.normalize_axis(axis, x.ndim, "unstack")
    return tuple(index_in_dim(x, i, ax, keepdims=False) for i in range(x.shape[ax]))


def ndim(a) -> int:
    """The number of dimensions."""
    return len(np.shape(a)) if not hasattr(a, "ndim") else a.ndim


def shape(a) -> tuple[int, ...]:
    """The shape."""
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def size(a, axis: int | None = None) -> int:
    """The number of elements (along `axis`)."""
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


@eager
def resize(a, new_shape):
    """a repeated or cut to `new_shape`."""
    a = ravel(asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = math.prod(new_shape)
    reps = -(-total // builtins.max(1, a.shape[0]))
    return reshape(tile(a, reps)[:total], new_shape)


def delete(arr, obj, axis=None, *, assume_unique_indices: bool = False):
    """arr without the entries at the static indices obj along `axis`."""
    a = public_asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "delete")
    n = a.shape[ax]
    if isinstance(obj, slice):
        drop = set(range(n)[obj])
    else:
        drop = {int(i) % n for i in np.atleast_1d(np.asarray(obj))}
    keep = [i for i in range(n) if i not in drop]
    if not isinstance(a, Tracer):  # outside uir.jit: a NumPy array already
        return np.take(a, keep, axis=ax)
    return _take_along(a, asarray(np.array(keep, np.int32)), ax)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the static index obj along `axis`."""
    a = public_asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "insert")
    if not isinstance(obj, (int, np.integer)):
        raise TypeError("insert takes one static int index")
    n = a.shape[ax]
    at = int(obj) % (n + 1) if obj < 0 else int(obj)
    v = public_asarray(values).astype(a.dtype)
    piece_shape = list(a.shape)
    piece_shape[ax] = 1 if v.ndim < a.ndim else v.shape[ax]
    v = broadcast_to(
        v
        if v.ndim == a.ndim
        else reshape(
            v,
            [
                s if i != ax else 1
                for i, s in enumerate(
                    broadcast_to(v, [d for i, d in enumerate(a.shape) if i != ax]).shape[:ax]
                )
            ]
            + [1]
            + list(broadcast_to(v, [d for i, d in enumerate(a.shape) if i != ax]).shape[ax:]),
        )
        if v.ndim
        else v,
        piece_shape,
    )
    before = _axis_range(a, ax, 0, at)
    after = _axis_range(a, ax, at, n)
    return concatenate([before, v, after], axis=ax)


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists
    joined along the last axis, the outer ones along earlier axes)."""

    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    d = depth(arrays)

    def assemble(x, level):
        if not isinstance(x, list):
            a = public_asarray(x)
            return reshape(a, (1,) * builtins.max(0, d - a.ndim) + a.shape)
        parts = [assemble(item, level + 1) for item in x]
        ndim = builtins.max(p.ndim for p in parts)
        parts = [reshape(p, (1,) * (ndim - p.ndim) + p.shape) for p in parts]
        return concatenate(parts, axis=ndim - (d - level))

    return assemble(arrays, 0)


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
        bits, axis = ravel(bits), 0
    axis = ops.normalize_axis(axis, bits.ndim, "packbits")
    bits = swapaxes(bits, axis, -1)
    extra = -bits.shape[-1] % 8
    if extra:
        bits = pad_constant(bits, [(0, 0)] * (bits.ndim - 1) + [(0, extra)])
    bits = reshape(bits, (*bits.shape[:-1], bits.shape[-1] // 8, 8))
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1] if bitorder == "big" else shifts
    shifted = ufuncs.left_shift(bits, public_asarray(shifts))
    packed = ops.convert(reduce_sum(shifted, (shifted.ndim - 1,)), np.dtype(np.uint8))
    return swapaxes(packed, axis, -1)


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
        arr, axis = ravel(arr), 0
    axis = ops.normalize_axis(axis, arr.ndim, "unpackbits")
    arr = swapaxes(arr, axis, -1)
    bits = (ufuncs.bitwise_and(expand_dims(arr, -1), public_asarray(masks)) > 0).astype(np.uint8)
    bits = reshape(bits, (*bits.shape[:-2], -1))
    if count is not None:
        if count > bits.shape[-1]:
            bits = pad_constant(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - bits.shape[-1])])
        else:
            bits = bits[..., :count]
    return swapaxes(bits, axis, -1)


__all__ = [
    "append",
    "array_split",
    "astype",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "column_stack",
    "concat",
    "concatenate",
    "copy",
    "delete",
    "dsplit",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "insert",
    "matrix_transpose",
    "moveaxis",
    "ndim",
    "packbits",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "row_stack",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "unpackbits",
    "unstack",
    "vsplit",
    "vstack",
]
