"""Batching rules per HLO opcode (vmap): a batched value carries the batch
as its leading dimension; an unbatched one is the same for every example.
Ops with a rule keep the batch as a dimension of the op (a dot's batch
dimension, a reduction's kept axis, a window of size 1); any other op runs
once per example in a loop over the batch (correct for every op, and
listed by `loop_ops` so a user can see where a rule would pay)."""

from __future__ import annotations

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


def batch_rule(inst, vals, batched, size: int):
    """(value, batched) of `inst` on operand values that carry the batch
    first where `batched` says so."""
    op = inst.opcode
    if not any(_any(b) for b in batched):
        return emit_like(inst, vals), False
    if inst.shape.is_tuple and op not in ("reduce", "sort"):
        return _loop(inst, vals, batched, size)
    if inst.is_elementwise or op in ("select", "clamp"):
        dims, dtype = _array_shape(inst)
        full = [_full(v, b, size, dims) for v, b in zip(vals, batched, strict=True)]
        return emit_like(inst, full, prefix="vmap/", shape=_shape((size, *dims), dtype)), True
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
    if op == "sort":
        return _sort(inst, vals, batched, size)
    if op == "iota" or op == "constant":
        return emit_like(inst, vals), False
    return _loop(inst, vals, batched, size)


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


def batch_computation(computation, vals, batched, size, env=None):
    """Replays `computation` with the batching rules: (root value, batched)."""
    env = dict(env or {})
    bat: dict = {}
    for p, v, b in zip(computation.parameters, vals, batched, strict=True):
        env[p], bat[p] = v, b
    for inst in computation.instructions:
        if inst in env:
            bat.setdefault(inst, False)
            continue
        vs = [env[o] for o in inst.operands]
        bs = [bat[o] for o in inst.operands]
        if inst.opcode == "get-tuple-element":
            i = inst.attributes["index"]
            env[inst], bat[inst] = vs[0][i], (bs[0][i] if isinstance(bs[0], tuple) else bs[0])
        elif inst.opcode == "tuple":
            env[inst], bat[inst] = tuple(vs), tuple(bs)
        else:
            env[inst], bat[inst] = batch_rule(inst, vs, bs, size)
    root = computation.root
    return env[root], bat[root]
