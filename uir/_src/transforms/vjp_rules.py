"""Reverse-mode rules per HLO opcode: given an instruction's operand values,
its result and the cotangent of its result, the cotangents of its operands
(None where zero or not differentiable). Written against the tracer, as
the forward rules are."""

from __future__ import annotations

import numpy as np

from uir._src.core import ops
from uir._src.transforms import rules, structured
from uir._src.transforms.replay import emit_like
from uir._src.transforms.rules import (
    add,
    broadcast_in_dim,
    compare,
    differentiable,
    div,
    instantiate,
    mul,
    neg,
    reduce_sum,
    scalar,
    select,
    unsupported,
)


def _only_differentiable(cts, primals):
    return [c if differentiable(p) else None for c, p in zip(cts, primals, strict=True)]


def vjp_rule(inst, primals, out, ct):
    """Cotangents of `inst`'s operands, one per operand."""
    op = inst.opcode
    n = len(primals)
    if op in rules.ZERO_DERIVATIVE or rules.stops_gradient(inst):
        return [None] * n
    if op == "abs" and np.dtype(primals[0].dtype).kind == "c":
        factor = rules.complex_abs_factor(primals[0], out)
        return [mul(rules.convert(ct, primals[0].dtype), factor)]
    if op in rules.UNARY_DERIVATIVES:
        return [mul(ct, rules.UNARY_DERIVATIVES[op](primals[0], out))]
    if op in ("negate", "copy", "real", "imag", "reduce-precision", "opt-barrier"):
        return [_linear_unary_transpose(inst, primals[0], ct)]
    if op == "convert":
        if not differentiable(primals[0]):
            return [None]
        return [rules.convert(_real_if_needed(ct, primals[0]), primals[0].dtype)]
    if op == "add":
        return _only_differentiable([ct, ct], primals)
    if op == "subtract":
        return _only_differentiable([ct, neg(ct)], primals)
    if op == "complex":
        # <ct, x + i y> = Re(ct) x - Im(ct) y
        return _only_differentiable(
            [rules.unary("real", ct), neg(rules.unary("imag", ct))], primals
        )
    if op in ("multiply", "divide", "maximum", "minimum", "power", "atan2", "remainder"):
        dx, dy = rules.binary_partials(inst, primals[0], primals[1], out)
        return _only_differentiable([mul(ct, dx), mul(ct, dy)], primals)
    if op == "select":
        z = scalar(ct, 0)
        return [None, select(primals[0], ct, z), select(primals[0], z, ct)]
    if op == "clamp":
        lo, x, hi = primals
        z = scalar(ct, 0)
        inside = ops.binary("and", compare(x, lo, "GE"), compare(x, hi, "LE"))
        return _only_differentiable(
            [
                select(compare(x, lo, "LT"), ct, z),
                select(inside, ct, z),
                select(compare(x, hi, "GT"), ct, z),
            ],
            primals,
        )
    if op == "broadcast":
        return [_unbroadcast(ct, primals[0], inst.attributes["dimensions"])]
    if op == "reshape":
        return [rules.reshape(ct, primals[0].shape)]
    if op == "bitcast":
        return [emit_like(inst, [ct], prefix="vjp/", shape=inst.operands[0].shape)]
    if op in ("copy-start", "copy-done"):
        return [ct]  # through the copy's handle, unchanged
    if op == "transpose":
        return [rules.transpose(ct, rules.inverse(inst.attributes["dimensions"]))]
    if op == "reverse":
        return [emit_like(inst, [ct], prefix="vjp/")]
    if op == "slice":
        return [_slice_transpose(ct, primals[0], inst.attributes["slice"])]
    if op == "pad":
        return _pad_transpose(ct, primals, inst.attributes["padding"])
    if op == "concatenate":
        return _concatenate_transpose(ct, primals, inst.attributes["dimensions"][0])
    if op == "dynamic-slice":
        update = ops._comp().emit(
            "dynamic-update-slice",
            rules.zeros_like(primals[0]),
            ct,
            *primals[1:],
            op_name="vjp/dynamic_slice",
        )
        return [update] + [None] * (n - 1)
    if op == "dynamic-update-slice":
        x, u, *idx = primals
        ct_x = ops._comp().emit(
            "dynamic-update-slice",
            ct,
            rules.zeros_like(u),
            *idx,
            op_name="vjp/dynamic_update_slice",
        )
        ct_u = ops._comp().emit(
            "dynamic-slice",
            ct,
            *idx,
            dynamic_slice_sizes=list(u.shape),
            shape=(u.shape, u.dtype),
            op_name="vjp/dynamic_update_slice",
        )
        return _only_differentiable([ct_x, ct_u], [x, u]) + [None] * len(idx)
    if op == "dot":
        return _only_differentiable(_dot_transpose(inst, primals, ct), primals)
    if op == "reduce":
        return _reduce_transpose(inst, primals, out, ct)
    if op in structured.VJP:
        return structured.VJP[op](inst, primals, out, ct)
    return unsupported(inst, "vjp")


def _real_if_needed(ct, x):
    if np.dtype(ct.dtype).kind == "c" and np.dtype(x.dtype).kind != "c":
        return rules.unary("real", ct)
    return ct


def _linear_unary_transpose(inst, x, ct):
    op = inst.opcode
    if op == "negate":
        return neg(ct)
    if op in ("copy", "opt-barrier", "reduce-precision"):
        return ct
    if op == "real":
        return rules.convert(ct, x.dtype)
    # imag: the transpose of Im is t -> -i t... as JAX: complex(0, -ct).
    zero = scalar(ct, 0)
    return ops._comp().emit("complex", zero, neg(ct), shape=(x.shape, x.dtype), op_name="vjp/imag")


def _unbroadcast(ct, x, dims):
    """The transpose of broadcast(x, dims): sum over the new axes."""
    dims = list(dims)
    summed = reduce_sum(ct, [d for d in range(ct.ndim) if d not in dims])
    # The kept axes come out in increasing order; x's order is dims'.
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):
        summed = rules.transpose(summed, rules.inverse(order))
    return rules.reshape(summed, x.shape)


def _slice_transpose(ct, x, config):
    padding = []
    for (start, _limit, stride), size, out in zip(config, x.shape, ct.shape, strict=True):
        last = start + (out - 1) * stride + 1 if out > 0 else start
        padding.append((start, size - last, stride - 1 if out > 0 else 0))
    if any(out == 0 for out in ct.shape):
        return rules.zeros_like(x)
    return ops._comp().emit(
        "pad",
        ct,
        ops.asarray(np.zeros((), ct.dtype)),
        padding=padding,
        shape=(x.shape, x.dtype),
        op_name="vjp/slice",
    )


def _pad_transpose(ct, primals, config):
    x, _value = primals
    # Negative padding removed elements: give them back as zeros first.
    grow = [(max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in config]
    if any(g != (0, 0, 0) for g in grow):
        shape = tuple(s + a + b for s, (a, b, _) in zip(ct.shape, grow, strict=True))
        ct = ops._comp().emit(
            "pad",
            ct,
            ops.asarray(np.zeros((), ct.dtype)),
            padding=grow,
            shape=(shape, ct.dtype),
            op_name="vjp/pad",
        )
    config = [(max(lo, 0), max(hi, 0), interior) for lo, hi, interior in config]
    starts = [lo for lo, _, _ in config]
    strides = [interior + 1 for _, _, interior in config]
    limits = [
        lo + (s - 1) * st + 1 if s > 0 else lo
        for lo, s, st in zip(starts, x.shape, strides, strict=True)
    ]
    ct_x = ops._comp().emit(
        "slice",
        ct,
        slice=list(zip(starts, limits, strides, strict=True)),
        shape=(x.shape, x.dtype),
        op_name="vjp/pad",
    )
    everything = reduce_sum(ct, list(range(ct.ndim)))
    ct_v = rules.sub(everything, reduce_sum(ct_x, list(range(ct_x.ndim))))
    return _only_differentiable([ct_x, ct_v], primals)


def _concatenate_transpose(ct, primals, axis):
    out, at = [], 0
    for x in primals:
        config = [(0, s, 1) for s in ct.shape]
        config[axis] = (at, at + x.shape[axis], 1)
        at += x.shape[axis]
        piece = ops._comp().emit(
            "slice", ct, slice=config, shape=(x.shape, ct.dtype), op_name="vjp/concatenate"
        )
        out.append(piece if differentiable(x) else None)
    return out


def _dot_dims(inst, lhs, rhs):
    a = inst.attributes
    lc, rc = list(a.get("lhs_contracting_dims", [])), list(a.get("rhs_contracting_dims", []))
    lb, rb = list(a.get("lhs_batch_dims", [])), list(a.get("rhs_batch_dims", []))
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    return lc, rc, lb, rb, lf, rf


def _dot_transpose(inst, primals, ct):
    """Cotangents of dot's operands: each the product of the cotangent with
    the other operand, contracted over the other's free dimensions."""
    lhs, rhs = primals
    lc, rc, lb, rb, lf, rf = _dot_dims(inst, lhs, rhs)
    nb = len(lb)
    ct_batch = list(range(nb))
    ct_lf = list(range(nb, nb + len(lf)))
    ct_rf = list(range(nb + len(lf), ct.ndim))
    ct_lhs = ct_rhs = None
    if differentiable(lhs):
        # dims: batch, ct's lhs-free, rhs's remaining (its contracting, in order)
        d = ops.dot(ct, _like_ct(rhs, ct), (ct_rf, rf), (ct_batch, rb), "vjp/dot")
        order = sorted(range(len(rc)), key=lambda k: rc[k])
        res = lb + lf + [lc[k] for k in order]
        ct_lhs = rules.convert(
            rules.transpose(d, [res.index(i) for i in range(lhs.ndim)]), lhs.dtype
        )
    if differentiable(rhs):
        d = ops.dot(_like_ct(lhs, ct), ct, (lf, ct_lf), (lb, ct_batch), "vjp/dot")
        order = sorted(range(len(lc)), key=lambda k: lc[k])
        res = rb + [rc[k] for k in order] + rf
        ct_rhs = rules.convert(
            rules.transpose(d, [res.index(i) for i in range(rhs.ndim)]), rhs.dtype
        )
    return [ct_lhs, ct_rhs]


def _like_ct(x, ct):
    return x if x.dtype == ct.dtype else rules.convert(x, ct.dtype)


def _reduce_transpose(inst, primals, out, ct):
    if len(primals) > 2:
        mask = rules.arg_reduce_mask(inst, primals, out)
        if mask is None:
            return unsupported(inst, "vjp")
        x = primals[0]
        kept = [d for d in range(x.ndim) if d not in inst.attributes["dimensions"]]
        return [mul(broadcast_in_dim(ct[0], x.shape, kept), mask), None, None, None]
    kind = rules.reducer_kind(inst)
    if len(primals) != 2 or kind is None:
        return unsupported(inst, "vjp")
    x, _init = primals
    axes = list(inst.attributes["dimensions"])
    kept = [d for d in range(x.ndim) if d not in axes]
    if kind == "add":
        ct_x = broadcast_in_dim(ct, x.shape, kept)
        ct_init = reduce_sum(ct, list(range(ct.ndim)))
        return _only_differentiable([ct_x, ct_init], primals)
    if kind in ("maximum", "minimum"):
        loc, counts = rules._chooser(x, out, axes)
        ct_x = mul(broadcast_in_dim(div(ct, counts), x.shape, kept), loc)
        return _only_differentiable([ct_x, None], primals)
    full = broadcast_in_dim(out, x.shape, kept)
    ct_x = mul(broadcast_in_dim(ct, x.shape, kept), div(full, x))
    return _only_differentiable([ct_x, None], primals)


__all__ = ["add", "instantiate", "vjp_rule"]
