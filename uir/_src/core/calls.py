"""A function traced into an HLO `call` of its own computation, with
frontend attributes that tag it: how custom derivative rules, checkpoints
and the linear-algebra functions whose derivatives need more than one
custom call (qr) keep their structure in a module, through printing,
dumps and serialization. Running the module runs the function."""

from __future__ import annotations

from uir._src.core import ops, tracing, tree_util

# The frontend attribute naming a call's rule: "<kind>:<id>" for a rule
# registered in this process (custom_vjp, custom_jvp, checkpoint), or a
# built-in rule's name and parameters ("linalg.qr(...)").
TAG = "uir_rule"


def _captures(fn, avals, in_tree, name):
    """The outer Tracers fn reads besides its arguments (found by tracing
    it once into a throwaway computation)."""
    comp = tracing.current()
    probe = tracing.Computation(tracing.Module("probe"), name, comp.scope, probing=True)
    with tracing.tracing(probe):
        params = [probe.parameter(a.shape, a.dtype, a.weak_type) for a in avals]
        fn(*tree_util.tree_unflatten(in_tree, params))
    return probe.captures


def traced_call(fn, args, *, kind: str, name: str, tag: str):
    """fn(*args) traced into a `call` whose frontend attribute TAG is `tag`.
    Returns (fn's output pytree of Tracers, args' tree, the number of flat
    arguments, fn's output tree). The callee takes the flat arguments, then
    any outer values fn reads."""
    leaves, in_tree = tree_util.tree_flatten(args)
    flat = [ops.asarray(x) for x in leaves]
    captures = _captures(fn, flat, in_tree, name)
    comp = tracing.current()
    sub = tracing.Computation(comp.module, name, f"{comp.scope}/{kind}[{name}]")
    with tracing.tracing(sub):
        params = [sub.parameter(a.shape, a.dtype, a.weak_type) for a in flat]
        for c in captures:
            sub.capture_map[id(c)] = sub.parameter(c.shape, c.dtype, c.weak_type)
        out = fn(*tree_util.tree_unflatten(in_tree, params))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        outs = [ops.asarray(o) for o in out_leaves]
        callee = sub.build(sub.builder.op("tuple", *[o.inst for o in outs]))
    operands = [comp.resolve(x).inst for x in flat] + [comp.resolve(c).inst for c in captures]
    inst = comp.builder.op(
        "call",
        *operands,
        to_apply=callee,
        frontend_attributes={TAG: tag},
        metadata=comp.metadata(f"{kind}[{name}]"),
    )
    comp.order_effect(inst)
    results = comp.wrap(inst)
    for r, o in zip(results, outs, strict=True):
        r.weak_type = o.weak_type
    return tree_util.tree_unflatten(out_tree, list(results)), in_tree, len(flat), out_tree


__all__ = ["TAG", "traced_call"]
