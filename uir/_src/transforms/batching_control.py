"""Batching control flow (vmap), and the driver that replays a computation
with the batching rules.

- A conditional whose selector is the same for every example batches its
  branches. One whose selector is batched runs every branch on the batch
  and picks each example's result with a select (a branch with a side
  effect runs per example instead).
- A while loop whose condition is the same for every example batches its
  body, the state positions the batch reaches found by a fixpoint. One
  whose condition is batched runs until no example's condition holds;
  each step keeps the new state only for the examples whose condition
  held (as JAX batches it).
- Every other op goes to batching.batch_rule."""

from __future__ import annotations

import numpy as np

from uir._src.core import ops, tracing
from uir._src.transforms import batching, custom
from uir._src.transforms.batching import _all_true, _full, _loop
from uir._src.transforms.replay import (
    Opaque,
    current,
    from_inst,
    leaves,
    metadata_like,
    shape_of,
    sub_computation,
    to_inst,
    unflatten,
)


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
        elif inst.opcode in CONTROL and any(batching._any(b) for b in bs):
            env[inst], bat[inst] = CONTROL[inst.opcode](inst, vs, bs, size)
        else:
            env[inst], bat[inst] = batching.batch_rule(inst, vs, bs, size)
    root = computation.root
    return env[root], bat[root]


# --- Flags as trees -----------------------------------------------------------------


def flag_leaves(value, flags) -> list[bool]:
    """One batched flag per leaf of `value` (a flag for a tuple is its
    elements')."""
    if isinstance(value, tuple):
        fs = flags if isinstance(flags, tuple) else (flags,) * len(value)
        return [f for v, g in zip(value, fs, strict=True) for f in flag_leaves(v, g)]
    return [bool(flags)]


def _as_batched(value, flags, want, size):
    """`value` with the leaves `want` says batched made batched."""
    out = []
    for leaf, b, w in zip(leaves(value), flag_leaves(value, flags), want, strict=True):
        if w and not b:
            leaf = _full(leaf, False, size, leaf.shape)
        out.append(leaf)
    return unflatten(value, iter(out))


def _tree(value, flat_flags):
    return unflatten(value, iter(flat_flags))


def _emit(inst, opcode, operands, **attrs):
    comp = current()
    out = comp.builder.op(
        opcode, *[to_inst(o) for o in operands], metadata=metadata_like(inst, "vmap/"), **attrs
    )
    comp.order_effect(out)
    return from_inst(out)


def _has_opaque(value) -> bool:
    return any(isinstance(x, Opaque) for x in leaves(value))


def _probe(name, arg_like, fn):
    """fn(a parameter like arg_like) traced into a throwaway module."""
    probe = tracing.Computation(tracing.Module("probe"), name, current().scope)
    with tracing.tracing(probe):
        param = probe.builder.parameter(0, shape_of(arg_like), name="probe_arg")
        return fn(from_inst(param, probe))


# --- conditional ----------------------------------------------------------------------


def _branches(inst):
    a = inst.attributes
    if "branch_computations" in a:
        return list(a["branch_computations"]), False
    return [a["true_computation"], a["false_computation"]], True


def _select_leaf(pred, a, b):
    if tuple(pred.shape) != tuple(a.shape):
        pred = ops._comp().emit(
            "broadcast",
            pred,
            dimensions=[0],
            shape=(a.shape, np.dtype(bool)),
            op_name="vmap/select",
        )
    return ops.select(pred, a, b, op_name="vmap/select")


def _conditional(inst, vals, batched, size):
    selector, operands = vals[0], vals[1:]
    comps, is_pred = _branches(inst)
    flags = batched[1:]
    if _has_opaque(tuple(operands)):
        return _loop(inst, vals, batched, size)
    if batched[0]:
        if inst.has_side_effect:
            return _loop(inst, vals, batched, size)
        outs = []
        for comp, o, f in zip(comps, operands, flags, strict=True):
            out, ob = batch_computation(comp, [o], [f], size)
            full = [
                _full(x, b, size, x.shape[1:] if b else x.shape)
                for x, b in zip(leaves(out), flag_leaves(out, ob), strict=True)
            ]
            outs.append(full)
        like = out
        if is_pred:
            picked = [_select_leaf(selector, t, e) for t, e in zip(outs[0], outs[1], strict=True)]
        else:
            picked = outs[-1]
            for k in range(len(outs) - 2, -1, -1):
                here = ops.compare(selector, ops.asarray(np.array(k, selector.dtype)), "EQ", "eq")
                picked = [_select_leaf(here, a, b) for a, b in zip(outs[k], picked, strict=True)]
        result = unflatten(like, iter(picked))
        return result, _tree(result, [True] * len(picked))
    # The same branch for every example: each branch batched, every output
    # leaf made batched so that the branches agree.
    new = []
    for k, (comp, o, f) in enumerate(zip(comps, operands, flags, strict=True)):

        def fn(v, comp=comp, f=f):
            out, ob = batch_computation(comp, [v], [f], size)
            full = [
                _full(x, b, size, x.shape[1:] if b else x.shape)
                for x, b in zip(leaves(out), flag_leaves(out, ob), strict=True)
            ]
            return unflatten(out, iter(full)) if isinstance(out, tuple) else full[0]

        new.append(sub_computation(f"vmap_branch_{k}", o, fn))
    attrs = (
        {"true_computation": new[0], "false_computation": new[1]}
        if is_pred
        else {"branch_computations": new}
    )
    result = _emit(inst, "conditional", [selector, *operands], **attrs)
    return result, _tree(result, [True] * len(leaves(result)))


# --- while ----------------------------------------------------------------------------


def _while(inst, vals, batched, size):
    (state,), (flags,) = vals, batched
    body, cond = inst.attributes["body"], inst.attributes["condition"]
    if _has_opaque(state):
        return _loop(inst, vals, batched, size)
    want = flag_leaves(state, flags)
    # The positions the batch reaches, and whether the condition is batched.
    while True:
        tree = _tree(state, want)

        def step(v, tree=tree):
            out, ob = batch_computation(body, [v], [tree], size)
            return flag_leaves(out, ob)

        def test(v, tree=tree):
            _, pb = batch_computation(cond, [v], [tree], size)
            return bool(pb)

        like = _as_batched(state, flags, want, size)
        after = _probe("vmap_probe", like, step)
        reached = [a or b for a, b in zip(want, after, strict=True)]
        if reached == want:
            break
        want = reached
    pred_batched = _probe("vmap_probe", _as_batched(state, flags, want, size), test)
    if pred_batched:
        if inst.has_side_effect:
            return _loop(inst, vals, batched, size)
        want = [True] * len(want)
    init = _as_batched(state, flags, want, size)
    tree = _tree(state, want)

    def full_body(v):
        out, ob = batch_computation(body, [v], [tree], size)
        return _as_batched(out, ob, want, size)

    if not pred_batched:
        body_c = sub_computation("vmap_body", init, full_body)
        cond_c = sub_computation(
            "vmap_cond", init, lambda v: batch_computation(cond, [v], [tree], size)[0]
        )
    else:

        def masked_body(v):
            p, _ = batch_computation(cond, [v], [tree], size)
            new = full_body(v)
            picked = [_select_leaf(p, a, b) for a, b in zip(leaves(new), leaves(v), strict=True)]
            return unflatten(v, iter(picked))

        def any_cond(v):
            p, _ = batch_computation(cond, [v], [tree], size)
            return ops.reduce(p, "or", [0], "any")

        body_c = sub_computation("vmap_body", init, masked_body)
        cond_c = sub_computation("vmap_cond", init, any_cond)
    out = _emit(inst, "while", [init], condition=cond_c, body=body_c)
    return out, tree


def _inline(inst, vals, batched, size):
    """A call or a fusion: its computation batched in place."""
    a = inst.attributes
    rule = custom.rule_of(inst) if inst.opcode == "call" else None
    if rule is not None and not inst.has_side_effect:
        # uir's own tagged call (qr) takes batch dimensions: it is made again
        # on the batched operands; a custom rule's call is batched with its
        # rule under vmap, where vmap provides it (CUSTOM_BATCHERS)
        full = [
            _full(v, b, size, tuple(o.shape.dims))
            for v, b, o in zip(vals, batched, inst.operands, strict=True)
        ]
        if getattr(rule, "builtin", False):
            out = tuple(rule.call(full))
        else:
            batcher = CUSTOM_BATCHERS.get(rule.kind)
            out = None if batcher is None else batcher(inst, rule, full, size)
        if out is not None:
            return out, _all_true(out)
    if inst.opcode == "call" and (inst.has_side_effect or rule is not None):
        # (a custom rule's call keeps its rule: once per example)
        return _loop(inst, vals, batched, size)
    return batch_computation(a["to_apply"] if "to_apply" in a else a["calls"], vals, batched, size)


# Batchers of custom rules' calls by kind, set where vmap itself is
# defined (uir._src.transforms.vmap): (inst, rule, batched operands, size)
# -> the batched call's value, or None for a loop over the examples.
CUSTOM_BATCHERS: dict = {}

CONTROL = {"conditional": _conditional, "while": _while, "call": _inline, "fusion": _inline}

__all__ = ["CONTROL", "batch_computation", "flag_leaves"]
