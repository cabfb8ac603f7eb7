"""Batching rules per HLO opcode (vmap): a batched value carries the batch
as its leading dimension; an unbatched one is the same for every example.
Ops with a rule keep the batch as a dimension of the op (a dot's batch
dimension, a reduction's kept axis, a window of size 1); any other op runs
once per example in a loop over the batch (correct for every op, and
listed by `loop_ops` so a user can see where a rule would pay)."""

from __future__ import annotations

import re

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.tracing import Tracer
from uir._src.transforms.replay import Opaque, emit_like

# Opcodes that ran in a per-example loop in this process (for tests and
# for a user wondering why a vmap is slow).
loop_ops: list[str] = []


def _shape(dims, dtype):
    return (tuple(dims), dtype)


def bcast_to_batched(v: Tracer, size: int, example_dims) -> Tracer:
    """An unbatched value (of the example's shape, or a scalar where the op
    takes one) broadcast to the batch."""
    example_dims = tuple(example_dims)
    dims = list(range(1, len(example_dims) + 1)) if tuple(v.shape) == example_dims else []
    return ops._comp().emit(
        "broadcast",
        v,
        dimensions=dims,
        shape=((size, *example_dims), v.dtype),
        op_name="vmap/broadcast",
    )


def _full(v, batched, size, example_dims):
    """v as a batched value of the example shape `example_dims`."""
    if not batched:
        return bcast_to_batched(v, size, example_dims)
    if tuple(v.shape[1:]) == tuple(example_dims):
        return v
    # a batched scalar where the op takes the example's shape
    return ops._comp().emit(
        "broadcast",
        v,
        dimensions=[0],
        shape=((size, *example_dims), v.dtype),
        op_name="vmap/broadcast",
    )


def _array_shape(inst):
    s = inst.shape
    return tuple(s.dims), dtypes.numpy_dtype(s.element_type)


_LAPACK = re.compile(r"lapack_[sdcz]\w+_ffi")


def _is_lapack(inst) -> bool:
    fa = inst.attributes.get("frontend_attributes") or {}
    return (
        inst.opcode == "custom-call"
        and "num_batch_dims" in fa
        and _LAPACK.fullmatch(inst.attributes.get("custom_call_target", "")) is not None
    )


def _leading_batch(inst, vals, batched, size):
    """An op acting on its operands' trailing dimensions (fft, top_k, JAX's
    LAPACK calls): every operand and result takes the batch as one more
    leading dimension (a LAPACK call counting it in num_batch_dims)."""
    full = [
        _full(v, b, size, tuple(o.shape.dims))
        for v, b, o in zip(vals, batched, inst.operands, strict=True)
    ]
    shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else [inst.shape]
    new = [_shape((size, *s.dims), dtypes.numpy_dtype(s.element_type)) for s in shapes]
    extra = {}
    if inst.opcode == "custom-call":
        fa = inst.attributes["frontend_attributes"]
        extra["frontend_attributes"] = {**fa, "num_batch_dims": str(int(fa["num_batch_dims"]) + 1)}
    if not inst.shape.is_tuple:
        return emit_like(inst, full, prefix="vmap/", shape=new[0], **extra), True
    out = emit_like(inst, full, prefix="vmap/", shape=new, **extra)
    return out, tuple(True for _ in new)


def batch_rule(inst, vals, batched, size: int):
    """(value, batched) of `inst` on operand values that carry the batch
    first where `batched` says so."""
    op = inst.opcode
    if not any(_any(b) for b in batched):
        return emit_like(inst, vals), False
    if op in ("copy-start", "copy-done"):
        # an asynchronous copy of the batched value
        shape = inst.shape
        if op == "copy-start":
            arr = shape.tuple_shapes[0]
            t = ((size, *arr.dims), dtypes.numpy_dtype(arr.element_type))
            shape = [t, t, shape.tuple_shapes[2]]
        else:
            shape = _shape((size, *shape.dims), dtypes.numpy_dtype(shape.element_type))
        example = tuple(inst.operands[0].shape.dims) if op == "copy-start" else None
        full = [_full(vals[0], batched[0], size, example)] if op == "copy-start" else vals
        return emit_like(inst, full, prefix="vmap/", shape=shape), True
    if op in ("fft", "topk") or _is_lapack(inst):
        return _leading_batch(inst, vals, batched, size)
    if inst.shape.is_tuple and op not in ("reduce", "sort"):
        return _loop(inst, vals, batched, size)
    if inst.is_elementwise or op in ("select", "clamp"):
        dims, dtype = _array_shape(inst)
        full = [_full(v, b, size, dims) for v, b in zip(vals, batched, strict=True)]
        extra = {"dimensions": list(range(len(dims) + 1))} if op == "map" else {}
        out = emit_like(inst, full, prefix="vmap/", shape=_shape((size, *dims), dtype), **extra)
        return out, True
    dims, dtype = (None, None) if inst.shape.is_tuple else _array_shape(inst)
    out_shape = None if dims is None else _shape((size, *dims), dtype)
    a = inst.attributes
    if op == "broadcast":
        d = [0] + [x + 1 for x in a["dimensions"]]
        return emit_like(inst, vals, prefix="vmap/", dimensions=d, shape=out_shape), True
    if op == "reshape":
        return emit_like(inst, vals, prefix="vmap/", shape=out_shape), True
    if op == "transpose":
        d = [0] + [x + 1 for x in a["dimensions"]]
        return emit_like(inst, vals, prefix="vmap/", dimensions=d, shape=out_shape), True
    if op == "reverse":
        d = [x + 1 for x in a["dimensions"]]
        return emit_like(inst, vals, prefix="vmap/", dimensions=d, shape=out_shape), True
    if op == "slice":
        config = [(0, size, 1), *list(a["slice"])]
        return emit_like(inst, vals, prefix="vmap/", slice=config, shape=out_shape), True
    if op == "pad" and not batched[1]:
        config = [(0, 0, 0), *list(a["padding"])]
        return emit_like(inst, vals, prefix="vmap/", padding=config, shape=out_shape), True
    if op == "concatenate":
        full = [
            _full(v, b, size, v.shape[1:] if b else v.shape)
            for v, b in zip(vals, batched, strict=False)
        ]
        d = [a["dimensions"][0] + 1]
        return emit_like(inst, full, prefix="vmap/", dimensions=d, shape=out_shape), True
    if op == "dot":
        return _dot(inst, vals, batched, size), True
    if op == "reduce":
        return _reduce(inst, vals, batched, size)
    if op == "reduce-window" and len(vals) == 2 and not batched[1]:
        window = [
            {
                "size": 1,
                "stride": 1,
                "padding": (0, 0),
                "lhs_dilate": 1,
                "rhs_dilate": 1,
                "rhs_reversal": False,
            },
            *list(a["window"]),
        ]
        return emit_like(inst, vals, prefix="vmap/", window=window, shape=out_shape), True
    if op == "dynamic-slice" and not any(batched[1:]):
        zero = ops.asarray(np.zeros((), vals[1].dtype))
        sizes = [size, *list(a["dynamic_slice_sizes"])]
        return (
            emit_like(
                inst,
                [vals[0], zero, *vals[1:]],
                prefix="vmap/",
                dynamic_slice_sizes=sizes,
                shape=out_shape,
            ),
            True,
        )
    if op == "dynamic-update-slice" and not any(batched[2:]):
        x = _full(vals[0], batched[0], size, vals[0].shape[1:] if batched[0] else vals[0].shape)
        u = _full(vals[1], batched[1], size, vals[1].shape[1:] if batched[1] else vals[1].shape)
        zero = ops.asarray(np.zeros((), vals[2].dtype))
        return emit_like(inst, [x, u, zero, *vals[2:]], prefix="vmap/", shape=out_shape), True
    if op == "dynamic-slice":
        return _dynamic_slice(inst, vals, batched, size), True
    if op == "dynamic-update-slice":
        return _dynamic_update_slice(inst, vals, batched, size), True
    if op == "sort":
        return _sort(inst, vals, batched, size)
    if op == "gather":
        return _gather(inst, vals, batched, size), True
    if op == "scatter" and len(vals) == 3:
        return _scatter(inst, vals, batched, size), True
    if op == "convolution" and len(vals) == 2:
        out = _convolution(inst, vals, batched, size)
        if out is not None:
            return out, True
    if op == "iota" or op == "constant":
        return emit_like(inst, vals), False
    return _loop(inst, vals, batched, size)


def _batched_starts(starts, batched, size, limits):
    """Per-example start indices [size, k] (s32), clamped to [0, limit] as
    a dynamic slice clamps them."""
    cols = []
    for v, b, hi in zip(starts, batched, limits, strict=True):
        v = ops.convert(v, np.dtype(np.int32))
        v = ops.binary("maximum", v, ops.asarray(np.int32(0)))
        v = ops.binary("minimum", v, ops.asarray(np.int32(hi)))
        cols.append(ops.reshape(_full(v, b, size, ()), (size, 1)))
    return ops.concatenate(cols, axis=1)


def _dynamic_slice(inst, vals, batched, size):
    """A dynamic slice whose starts differ per example: a gather with the
    batch as a batching dimension (as JAX batches it)."""
    example = tuple(inst.operands[0].shape.dims)
    x = _full(vals[0], batched[0], size, example)
    sizes = list(inst.attributes["dynamic_slice_sizes"])
    k = len(example)
    limits = [d - w for d, w in zip(example, sizes, strict=True)]
    idx = _batched_starts(vals[1:], batched[1:], size, limits)
    dims = list(range(1, k + 1))
    return ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=dims,
        collapsed_slice_dims=[],
        start_index_map=dims,
        operand_batching_dims=[0],
        start_indices_batching_dims=[0],
        index_vector_dim=1,
        slice_sizes=[1, *sizes],
        shape=((size, *sizes), x.dtype),
        op_name="vmap/dynamic_slice",
    )


def _dynamic_update_slice(inst, vals, batched, size):
    """A dynamic update slice whose starts differ per example: a scatter
    that sets, with the batch as a batching dimension."""
    example = tuple(inst.operands[0].shape.dims)
    u_example = tuple(inst.operands[1].shape.dims)
    x = _full(vals[0], batched[0], size, example)
    u = _full(vals[1], batched[1], size, u_example)
    k = len(example)
    limits = [d - w for d, w in zip(example, u_example, strict=True)]
    idx = _batched_starts(vals[2:], batched[2:], size, limits)
    dims = list(range(1, k + 1))
    setter = ops.scalar_computation("vmap_set", x.dtype, lambda a, b: b)
    return ops._comp().emit(
        "scatter",
        x,
        idx,
        u,
        update_window_dims=dims,
        inserted_window_dims=[],
        scatter_dims_to_operand_dims=dims,
        input_batching_dims=[0],
        scatter_indices_batching_dims=[0],
        index_vector_dim=1,
        to_apply=setter,
        shape=(x.shape, x.dtype),
        op_name="vmap/dynamic_update_slice",
    )


def _any(b) -> bool:
    if isinstance(b, tuple):
        return any(_any(x) for x in b)
    return bool(b)


def _dot(inst, vals, batched, size):
    a = inst.attributes
    lc, rc = list(a.get("lhs_contracting_dims", [])), list(a.get("rhs_contracting_dims", []))
    lb, rb = list(a.get("lhs_batch_dims", [])), list(a.get("rhs_batch_dims", []))
    lhs, _rhs = vals
    dims, dtype = _array_shape(inst)
    if batched[0] and batched[1]:
        new = dict(
            lhs_contracting_dims=[d + 1 for d in lc],
            rhs_contracting_dims=[d + 1 for d in rc],
            lhs_batch_dims=[0] + [d + 1 for d in lb],
            rhs_batch_dims=[0] + [d + 1 for d in rb],
        )
        return emit_like(inst, vals, prefix="vmap/", shape=_shape((size, *dims), dtype), **new)
    if batched[0]:
        new = dict(
            lhs_contracting_dims=[d + 1 for d in lc],
            rhs_contracting_dims=rc,
            lhs_batch_dims=[d + 1 for d in lb],
            rhs_batch_dims=rb,
        )
        # The batch is lhs's first free dimension: after the dot's batch dims.
        at = len(lb)
    else:
        new = dict(
            lhs_contracting_dims=lc,
            rhs_contracting_dims=[d + 1 for d in rc],
            lhs_batch_dims=lb,
            rhs_batch_dims=[d + 1 for d in rb],
        )
        lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
        at = len(lb) + len(lf)
    if not lb:
        new.pop("lhs_batch_dims")
        new.pop("rhs_batch_dims")
    out_dims = list(dims)
    out_dims.insert(at, size)
    out = emit_like(inst, vals, prefix="vmap/", shape=_shape(out_dims, dtype), **new)
    return ops.moveaxis(out, at, 0, "vmap")


def _reduce(inst, vals, batched, size):
    n = len(vals) // 2
    if any(_any(b) for b in batched[n:]):
        return _loop(inst, vals, batched, size)
    xs = [
        _full(v, b, size, v.shape[1:] if b else v.shape)
        for v, b in zip(vals[:n], batched[:n], strict=True)
    ]
    d = [x + 1 for x in inst.attributes["dimensions"]]
    s = inst.shape
    if s.is_tuple:
        shape = [((size, *t.dims), dtypes.numpy_dtype(t.element_type)) for t in s.tuple_shapes]
        out = emit_like(inst, [*xs, *vals[n:]], prefix="vmap/", dimensions=d, shape=shape)
        return out, tuple(True for _ in out)
    dims, dtype = _array_shape(inst)
    out = emit_like(
        inst, [*xs, *vals[n:]], prefix="vmap/", dimensions=d, shape=_shape((size, *dims), dtype)
    )
    return out, True


def _sort(inst, vals, batched, size):
    xs = [
        _full(v, b, size, v.shape[1:] if b else v.shape)
        for v, b in zip(vals, batched, strict=False)
    ]
    d = [inst.attributes["dimensions"][0] + 1]
    s = inst.shape
    if s.is_tuple:
        shape = [((size, *t.dims), dtypes.numpy_dtype(t.element_type)) for t in s.tuple_shapes]
        out = emit_like(inst, xs, prefix="vmap/", dimensions=d, shape=shape)
        return out, tuple(True for _ in out)
    dims, dtype = _array_shape(inst)
    return emit_like(
        inst, xs, prefix="vmap/", dimensions=d, shape=_shape((size, *dims), dtype)
    ), True


def _shift(dims, by=1):
    return [d + by for d in dims]


def _gather(inst, vals, batched, size):
    """The batch as a batch dimension of the indices (and, when the operand
    is batched too, as a batching dimension pairing the two)."""
    a = inst.attributes
    x, idx = vals
    ivd = a["index_vector_dim"]
    op_batch = list(a.get("operand_batching_dims") or [])
    idx_batch = list(a.get("start_indices_batching_dims") or [])
    idx = _full(idx, batched[1], size, idx.shape[1:] if batched[1] else idx.shape)
    attrs = dict(
        offset_dims=_shift(a["offset_dims"]),
        index_vector_dim=ivd + 1,
    )
    if batched[0]:
        attrs.update(
            collapsed_slice_dims=_shift(a["collapsed_slice_dims"]),
            start_index_map=_shift(a["start_index_map"]),
            slice_sizes=[1, *a["slice_sizes"]],
            operand_batching_dims=[0, *_shift(op_batch)],
            start_indices_batching_dims=[0, *_shift(idx_batch)],
        )
    elif idx_batch:
        attrs["start_indices_batching_dims"] = _shift(idx_batch)
    dims, dtype = _array_shape(inst)
    return emit_like(inst, [x, idx], prefix="vmap/", shape=_shape((size, *dims), dtype), **attrs)


def _scatter(inst, vals, batched, size):
    """Every operand batched; the batch pairs the operand's new first
    dimension with the indices' (a batching dimension)."""
    a = inst.attributes
    x, idx, upd = (
        _full(v, b, size, v.shape[1:] if b else v.shape) for v, b in zip(vals, batched, strict=True)
    )
    attrs = dict(
        update_window_dims=_shift(a["update_window_dims"]),
        inserted_window_dims=_shift(a["inserted_window_dims"]),
        scatter_dims_to_operand_dims=_shift(a["scatter_dims_to_operand_dims"]),
        index_vector_dim=a["index_vector_dim"] + 1,
        input_batching_dims=[0, *_shift(a.get("input_batching_dims") or [])],
        scatter_indices_batching_dims=[0, *_shift(a.get("scatter_indices_batching_dims") or [])],
    )
    return emit_like(inst, [x, idx, upd], prefix="vmap/", shape=(x.shape, x.dtype), **attrs)


def _convolution(inst, vals, batched, size):
    """The batch folded into the convolution's own dimensions: the input's
    batch (input batched), the kernel's output features (kernel batched),
    or feature groups (both); None where group counts make that fold
    wrong (those run per example)."""
    from uir._src.lax.convolution import convolution_with_labels
    from uir._src.transforms.structured import _merge_axis, _split_axis

    a = inst.attributes
    labels = inst.attribute_text("dim_labels")
    lhs_l, rest = labels.split("_")
    rhs_l, out_l = rest.split("->")
    fgc = int(a.get("feature_group_count", 1) or 1)
    bgc = int(a.get("batch_group_count", 1) or 1)
    w = a["window"]
    strides = [d["stride"] for d in w]
    pads = [tuple(d["padding"]) for d in w]
    lhs_dil = [d["lhs_dilate"] for d in w]
    rhs_dil = [d["rhs_dilate"] for d in w]
    x, k = vals
    if batched[0] and batched[1]:
        if fgc != 1 or bgc != 1:
            return None
        x = _merge_axis(x, 0, lhs_l.index("f"))
        k = _merge_axis(k, 0, rhs_l.index("o"))
        groups, split_at = size, out_l.index("f")
    elif batched[0]:
        if bgc != 1:
            return None
        x = _merge_axis(x, 0, lhs_l.index("b"))
        groups, split_at = fgc, out_l.index("b")
    else:
        if fgc != 1 or bgc != 1:
            return None
        k = _merge_axis(k, 0, rhs_l.index("o"))
        groups, split_at = 1, out_l.index("f")
    out = convolution_with_labels(x, k, labels, strides, pads, lhs_dil, rhs_dil, groups, bgc)
    out = _split_axis(out, split_at, size)
    return ops.moveaxis(out, split_at, 0, "vmap")


# --- The per-example loop --------------------------------------------------------


class _Aval:
    __slots__ = ("dims", "dtype")

    def __init__(self, dims, dtype):
        self.dims, self.dtype = tuple(dims), dtype


def _index(v, b, i):
    """Example i of a batched value (tuples elementwise), or v itself."""
    if isinstance(v, tuple):
        bs = b if isinstance(b, tuple) else (b,) * len(v)
        return tuple(_index(x, y, i) for x, y in zip(v, bs, strict=True))
    if not b or isinstance(v, Opaque):
        return v
    from uir._src.lax.slicing import dynamic_index_in_dim

    return dynamic_index_in_dim(v, i, 0, keepdims=False)


def _example_avals(shape):
    if shape.is_tuple:
        return tuple(_example_avals(s) for s in shape.tuple_shapes)
    return _Aval(shape.dims, dtypes.numpy_dtype(shape.element_type))


def _zeros(avals, size):
    if isinstance(avals, tuple):
        return tuple(_zeros(a, size) for a in avals)
    return ops.broadcast_to(ops.asarray(np.zeros((), avals.dtype)), (size, *avals.dims))


def _store(acc, r, i):
    if isinstance(acc, tuple):
        return tuple(_store(a, x, i) for a, x in zip(acc, r, strict=True))
    from uir._src.lax.slicing import dynamic_update_index_in_dim

    return dynamic_update_index_in_dim(acc, r, i, 0)


def _loop(inst, vals, batched, size):
    """inst run once per example, in a loop over the batch."""
    from uir._src.lax.control_flow import fori_loop

    if _has_token(inst.shape):
        raise NotImplementedError(f"vmap of '{inst.opcode}' with a token result")
    loop_ops.append(inst.opcode)
    init = _zeros(_example_avals(inst.shape), size)

    def body(i, acc):
        example = [_index(v, b, i) for v, b in zip(vals, batched, strict=True)]
        return _store(acc, emit_like(inst, example, prefix="vmap/"), i)

    out = fori_loop(0, size, body, init)
    return out, _all_true(out)


def _all_true(v):
    if isinstance(v, tuple):
        return tuple(_all_true(x) for x in v)
    return True


def _has_token(shape) -> bool:
    if shape.is_tuple:
        return any(_has_token(s) for s in shape.tuple_shapes)
    return shape.element_type == "token"
