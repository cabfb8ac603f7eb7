"""uir.numpy's shape manipulation, products (matmul, dot, tensordot, einsum),
indexing helpers (take, take_along_axis), cumulative ops and sorting."""

from __future__ import annotations

import builtins
import itertools

import numpy as np

from uir._src import dtypes, ops
from uir._src.eager import eager
from uir._src.numpy_impl import (
    add,
    imag,
    less,
    multiply,
    ravel,
    real,
    sum,
    where,
)
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer

# --- Shapes --------------------------------------------------------------------


@eager
def reshape(a, newshape=None, order: str = "C", shape=None):
    x = asarray(a)
    newshape = shape if shape is not None else newshape
    newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    if order != "C":
        fail("reshape", "only C order is supported")
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
    x = asarray(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [ops.normalize_axis(s, x.ndim, "moveaxis") for s in src]
    dst = [ops.normalize_axis(d, x.ndim, "moveaxis") for d in dst]
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return ops.transpose(x, order)


@eager
def expand_dims(a, axis):
    x = asarray(a)
    axes = [axis] if isinstance(axis, int) else list(axis)
    ndim = x.ndim + len(axes)
    axes = sorted(ops.normalize_axis(ax, ndim, "expand_dims") for ax in axes)
    shape = list(x.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return ops.reshape(x, shape)


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
def broadcast_to(a, shape):
    return ops.broadcast_to(a, (shape,) if isinstance(shape, int) else shape)


@eager
def concatenate(arrays, axis: int = 0):
    return ops.concatenate(arrays, axis)


@eager
def stack(arrays, axis: int = 0):
    xs = [asarray(a) for a in arrays]
    if not xs:
        fail("stack", "need at least one array")
    ax = ops.normalize_axis(axis, xs[0].ndim + 1, "stack")
    return concatenate([expand_dims(x, ax) for x in xs], axis=ax)


@eager
def split(a, indices_or_sections, axis: int = 0):
    x = asarray(a)
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


def _slice_axis(x, ax, lo, hi, step):
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[ax], limits[ax], strides[ax] = lo, hi, step
    return slice_static(x, starts, limits, strides)


def slice_static(x, starts, limits, strides):
    shape = [
        builtins.max(0, -(-(hi - lo) // st))
        for lo, hi, st in zip(starts, limits, strides, strict=True)
    ]
    out = ops._comp().emit(
        "slice",
        x,
        slice=[(lo, hi, st) for lo, hi, st in zip(starts, limits, strides, strict=True)],
        shape=(shape, x.dtype),
        op_name="slice",
    )
    out.weak_type = x.weak_type
    return out


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
def pad(array, pad_width, mode: str = "constant", constant_values=0):
    x = asarray(array)
    if mode != "constant":
        fail("pad", f"mode {mode!r} is not supported (only 'constant')")
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
    x = asarray(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = builtins.max(x.ndim, len(reps))
    x = ops.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    reps = (1,) * (ndim - len(reps)) + reps
    # Broadcast to [r0, s0, r1, s1, ...] and merge pairs.
    inter = []
    for r, s in zip(reps, x.shape, strict=True):
        inter += [r, s]
    b = ops._comp().builder.broadcast(x.inst, inter, list(range(1, 2 * ndim, 2)))
    bt = Tracer(x.comp, b, tuple(inter), x.dtype, x.weak_type)
    return ops.reshape(bt, [r * s for r, s in zip(reps, x.shape, strict=True)])


@eager
def repeat(a, repeats: int, axis=None):
    x = asarray(a)
    if not isinstance(repeats, int):
        fail("repeat", "repeats must be a static int")
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "repeat")
    shape = list(x.shape)
    inter = [*shape[: ax + 1], repeats, *shape[ax + 1 :]]
    dims = list(range(ax + 1)) + list(range(ax + 2, len(inter)))
    b = ops._comp().builder.broadcast(x.inst, inter, dims)
    bt = Tracer(x.comp, b, tuple(inter), x.dtype, x.weak_type)
    shape[ax] *= repeats
    return ops.reshape(bt, shape)


# --- Products ------------------------------------------------------------------


@eager
def matmul(a, b):
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        fail("matmul", f"operands must not be scalars ({ops.describe(x)}, {ops.describe(y)})")
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = ops.reshape(x, (1, x.shape[0]))
    if y1:
        y = ops.reshape(y, (y.shape[0], 1))
    if x.shape[-1] != y.shape[-2]:
        fail(
            "matmul",
            f"{ops.describe(a)} @ {ops.describe(b)}: inner dimensions {x.shape[-1]} and {y.shape[-2]} differ",
        )
    batch = ops.broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    x = ops.broadcast_to(x, batch + x.shape[-2:], "matmul")
    y = ops.broadcast_to(y, batch + y.shape[-2:], "matmul")
    nb = len(batch)
    out = ops.dot(x, y, ([nb + 1], [nb]), (list(range(nb)), list(range(nb))), "dot_general")
    if x1:
        out = squeeze(out, nb)
    if y1:
        out = squeeze(out, -1)
    return out


@eager
def dot(a, b):
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if y.ndim == 1 or x.ndim == 1 or (x.ndim <= 2 and y.ndim <= 2):
        return matmul(x, y)
    # N-d: contract x's last axis with y's second-to-last.
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 2]))


@eager
def tensordot(a, b, axes=2):
    x, y = asarray(a), asarray(b)
    if isinstance(axes, int):
        lc = list(range(x.ndim - axes, x.ndim))
        rc = list(range(axes))
    else:
        la, ra = axes
        lc = [la] if isinstance(la, int) else list(la)
        rc = [ra] if isinstance(ra, int) else list(ra)
    lc = [ops.normalize_axis(i, x.ndim, "tensordot") for i in lc]
    rc = [ops.normalize_axis(i, y.ndim, "tensordot") for i in rc]
    return ops.dot(x, y, (lc, rc), ([], []), "dot_general")


@eager
def outer(a, b):
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


@eager
def vdot(a, b):
    return sum(multiply(ravel(a), ravel(b)))


# --- Indexing helpers ----------------------------------------------------------


@eager
def take(a, indices, axis=None):
    """x gathered at `indices` along `axis` (the flattened array when None);
    negative indices count from the end, others out of range are clamped."""
    x = asarray(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "take")
    idx = asarray(indices)
    if not dtypes.is_int(idx.dtype):
        fail("take", f"indices must be integers, got {ops.describe(idx)}")
    idx = ops.convert(idx, dtypes.default_int())
    n = x.shape[ax]
    idx = where(less(idx, 0), add(idx, n), idx)
    out_shape = x.shape[:ax] + idx.shape + x.shape[ax + 1 :]
    offset_dims = list(range(ax)) + list(range(ax + idx.ndim, len(out_shape)))
    slice_sizes = [1 if i == ax else s for i, s in enumerate(x.shape)]
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=offset_dims,
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        index_vector_dim=idx.ndim,
        slice_sizes=slice_sizes,
        shape=(out_shape, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


@eager
def take_along_axis(arr, indices, axis: int):
    x, idx = asarray(arr), asarray(indices)
    ax = ops.normalize_axis(axis, x.ndim, "take_along_axis")
    if idx.ndim != x.ndim:
        fail(
            "take_along_axis",
            f"indices {ops.describe(idx)} must have the rank of {ops.describe(x)}",
        )
    idx = ops.convert(idx, dtypes.default_int())
    idx = where(less(idx, 0), add(idx, x.shape[ax]), idx)
    # Every other axis is a batching dim of the gather.
    batch = [i for i in range(x.ndim) if i != ax]
    shape = ops.broadcast_shapes(
        "take_along_axis",
        tuple(s for i, s in enumerate(x.shape) if i != ax),
        tuple(s for i, s in enumerate(idx.shape) if i != ax),
    )
    full = list(shape)
    full.insert(ax, idx.shape[ax])
    idx = ops.broadcast_to(idx, full)
    x_shape = list(shape)
    x_shape.insert(ax, x.shape[ax])
    x = ops.broadcast_to(x, x_shape)
    idx = ops.reshape(idx, (*idx.shape, 1))
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=[],
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
        index_vector_dim=x.ndim,
        slice_sizes=[1] * x.ndim,
        shape=(full, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


# --- einsum, cumulative ops, sorting -----------------------------------------------


def _einsum_pair(a, sa: str, b, sb: str, keep: str):
    """Contracts two operands with subscripts sa, sb, keeping the letters in
    `keep` (in any order); returns the result and its subscripts."""

    # Letters only in one operand and not kept are summed first.
    def pre_sum(x, s, other):
        drop = [i for i, c in enumerate(s) if c not in other and c not in keep]
        if drop:
            x = sum(x, axis=tuple(drop))
            s = "".join(c for i, c in enumerate(s) if i not in drop)
        return x, s

    a, sa = pre_sum(a, sa, sb)
    b, sb = pre_sum(b, sb, sa)
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    out = ops.dot(
        a,
        b,
        ([sa.index(c) for c in contract], [sb.index(c) for c in contract]),
        ([sa.index(c) for c in batch], [sb.index(c) for c in batch]),
        "einsum",
    )
    s = (
        "".join(batch)
        + "".join(c for c in sa if c not in sb)
        + "".join(c for c in sb if c not in sa)
    )
    return out, s


@eager
def einsum(subscripts: str, *operands):
    """Einstein summation, lowered to dot_general, reductions and transposes
    (two operands at a time, left to right). Explicit ('ij,jk->ik') and
    implicit ('ij,jk') forms; no repeated letters within one operand."""
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        fail("einsum", "ellipsis subscripts are not supported")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    subs = inputs.split(",")
    if len(subs) != len(operands):
        fail("einsum", f"{len(subs)} subscripts for {len(operands)} operands")
    xs = [asarray(o) for o in operands]
    for s, x in zip(subs, xs, strict=True):
        if len(s) != x.ndim:
            fail("einsum", f"subscripts {s!r} for {ops.describe(x)}")
        if len(set(s)) != len(s):
            fail("einsum", f"repeated subscripts within {s!r} (diagonals) are not supported")
    sizes = {}
    for s, x in zip(subs, xs, strict=True):
        for c, n in zip(s, x.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                fail("einsum", f"letter {c!r} has sizes {sizes[c]} and {n}")
    acc, s_acc = xs[0], subs[0]
    for k in range(1, len(xs)):
        later = "".join(subs[k + 1 :])
        keep = "".join(sorted(set(output + later)))
        acc, s_acc = _einsum_pair(acc, s_acc, xs[k], subs[k], keep)
    drop = [i for i, c in enumerate(s_acc) if c not in output]
    if drop:
        acc = sum(acc, axis=tuple(drop))
        s_acc = "".join(c for i, c in enumerate(s_acc) if i not in drop)
    return ops.transpose(acc, [s_acc.index(c) for c in output])


def _cumulative(opcode: str, name: str):
    def f(a, axis=None, dtype=None):
        x = asarray(a)
        if axis is None:
            x = ravel(x)
            axis = 0
        if dtype is not None:
            x = ops.convert(x, dtypes.canonicalize(dtype))
        elif opcode in ("add", "multiply") and (
            dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4)
        ):
            x = ops.convert(x, dtypes.default_int())
        ax = ops.normalize_axis(axis, x.ndim, name)
        n = x.shape[ax]
        reducer = ops.scalar_computation(
            f"{name}_reducer", x.dtype, lambda p, q: ops.binary(opcode, p, q)
        )
        init = ops.asarray(ops.reduction_identity(opcode, x.dtype))
        window = (
            "{"
            + " ".join(
                [
                    "size=" + "x".join(str(n if i == ax else 1) for i in range(x.ndim)),
                    "pad=" + "x".join(f"{n - 1 if i == ax else 0}_0" for i in range(x.ndim)),
                ]
            )
            + "}"
        )
        out = ops._comp().emit(
            "reduce-window",
            x,
            init,
            window=window,
            to_apply=reducer,
            shape=(x.shape, x.dtype),
            op_name=name,
        )
        out.weak_type = x.weak_type
        return out

    f.__name__ = name
    return eager(f)


cumsum = _cumulative("add", "cumsum")
cumprod = _cumulative("multiply", "cumprod")


def _sort_key(v):
    """JAX's sort key: -0.0 as 0.0 and every NaN as one positive NaN, so a
    total order puts NaNs last."""
    if not dtypes.is_float(v.dtype):
        return v
    zero = ops.asarray(np.zeros((), v.dtype))
    nan_ = ops.asarray(np.array(np.nan, v.dtype))
    v = ops.select(ops.compare(v, zero, "EQ", "eq"), zero, v)
    return ops.select(ops.compare(v, v, "NE", "ne"), nan_, v)


def _sort(operands, axis: int, num_keys: int = 1, name: str = "sort"):
    xs = [asarray(o) for o in operands]
    ax = ops.normalize_axis(axis, xs[0].ndim, name)

    def total(a, b, direction: str):
        return ops._comp().emit(
            "compare",
            a,
            b,
            direction=direction,
            type="TOTALORDER",
            shape=((), np.bool_),
            op_name=direction.lower(),
        )

    def key_compare(a, b, direction: str):
        if dtypes.is_complex(a.dtype):
            # JAX's order of complex numbers: by real part, then imaginary,
            # each in the total order of its floats.
            ar, ai, br, bi = (_sort_key(v) for v in (real(a), imag(a), real(b), imag(b)))
            if direction == "EQ":
                return ops.binary("and", total(ar, br, "EQ"), total(ai, bi, "EQ"))
            tie = ops.binary("and", total(ar, br, "EQ"), total(ai, bi, "LT"))
            return ops.binary("or", total(ar, br, "LT"), tie)
        a, b = _sort_key(a), _sort_key(b)
        if dtypes.is_float(a.dtype):
            return total(a, b, direction)
        return ops.compare(a, b, direction, direction.lower())

    def less(*params):
        # Lexicographic over the first num_keys operands.
        keys = max(1, min(num_keys, len(xs)))
        out = key_compare(params[2 * keys - 2], params[2 * keys - 1], "LT")
        for k in range(keys - 2, -1, -1):
            a, b = params[2 * k], params[2 * k + 1]
            tie = ops.binary("and", key_compare(a, b, "EQ"), out)
            out = ops.binary("or", key_compare(a, b, "LT"), tie)
        return out

    comparator = ops.scalar_computation(
        f"{name}_comparator", [d for x in xs for d in (x.dtype, x.dtype)], less, arity=2 * len(xs)
    )
    shape = [(x.shape, x.dtype) for x in xs] if len(xs) > 1 else (xs[0].shape, xs[0].dtype)
    out = ops._comp().emit(
        "sort", *xs, dimensions=[ax], is_stable=True, to_apply=comparator, shape=shape, op_name=name
    )
    return out if isinstance(out, tuple) else (out,)


@eager
def sort(a, axis: int = -1):
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    return _sort([x], axis)[0]


@eager
def argsort(a, axis: int = -1):
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = ops.normalize_axis(axis, x.ndim, "argsort")
    idx = ops.iota(dtypes.default_int(), x.shape, ax)
    return _sort([x, idx], ax, name="argsort")[1]
