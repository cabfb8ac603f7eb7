"""Forward and reverse mode over a traced computation: the primal program
replayed with each instruction's rule (rules.py, vjp_rules.py)."""

from __future__ import annotations

from uir._src.transforms import control, rules, vjp_rules
from uir._src.transforms.replay import Opaque, emit_like, replay


def jvp_computation(computation, primals, tangents, env=None):
    """(primal outputs, tangent outputs) of `computation` (whose root is a
    tuple) at `primals` along `tangents` (None: zero)."""
    env = dict(env or {})
    tan: dict = {}
    for p, x, t in zip(computation.parameters, primals, tangents, strict=True):
        env[p] = x
        tan[p] = t
    for inst in computation.instructions:
        if inst in env:
            continue
        vals = [env[o] for o in inst.operands]
        ts = [tan.get(o) for o in inst.operands]
        if inst.opcode == "get-tuple-element":
            i = inst.attributes["index"]
            env[inst] = vals[0][i]
            tan[inst] = ts[0][i] if ts[0] is not None else None
        elif inst.opcode == "tuple":
            env[inst] = tuple(vals)
            tan[inst] = tuple(ts) if any(t is not None for t in ts) else None
        elif inst.opcode in control.JVP and any(t is not None for t in ts):
            env[inst], tan[inst] = control.JVP[inst.opcode](inst, vals, ts)
        else:
            env[inst], tan[inst] = rules.jvp_rule(inst, vals, ts)
    root = computation.root
    return env[root], tan.get(root)


class Backward:
    """The reverse pass of one forward replay: call it with the outputs'
    cotangents (a tuple like the root's value) for the parameters'."""

    def __init__(self, computation, env, residuals):
        self.computation = computation
        self.env = env
        self.residuals = residuals

    def __call__(self, ct_out):
        comp, env = self.computation, self.env
        cts: dict = {comp.root: ct_out}
        for inst in reversed(comp.instructions):
            ct = cts.pop(inst, None)
            if ct is None or inst.opcode == "parameter":
                if inst.opcode == "parameter" and ct is not None:
                    cts[inst] = ct
                continue
            operands = inst.operands
            if inst.opcode == "get-tuple-element":
                src = env[operands[0]]
                parts = [None] * len(src)
                parts[inst.attributes["index"]] = ct
                _accumulate(cts, operands[0], tuple(parts))
                continue
            if inst.opcode == "tuple":
                for o, c in zip(operands, ct, strict=True):
                    _accumulate(cts, o, c)
                continue
            if _all_none(ct):
                continue
            vals = [env[o] for o in operands]
            ct = rules.instantiate(ct, env[inst])
            if inst.opcode in control.VJP:
                op_cts = control.VJP[inst.opcode](
                    inst, vals, env[inst], ct, self.residuals.get(inst)
                )
            else:
                op_cts = vjp_rules.vjp_rule(inst, vals, env[inst], ct)
            for o, c in zip(operands, op_cts, strict=True):
                if c is not None:
                    _accumulate(cts, o, c)
        return [cts.get(p) for p in comp.parameters]


def _all_none(ct) -> bool:
    if isinstance(ct, tuple):
        return all(_all_none(c) for c in ct)
    return ct is None or isinstance(ct, Opaque)


def _accumulate(cts, inst, c):
    if isinstance(c, tuple) and _all_none(c):
        return
    prev = cts.get(inst)
    if prev is None:
        cts[inst] = c
    elif isinstance(prev, tuple):
        cts[inst] = tuple(rules.add(a, b) for a, b in zip(prev, c, strict=True))
    else:
        cts[inst] = rules.add(prev, c)


def vjp_computation(computation, primals, env=None):
    """The value of `computation`'s root at `primals` and its Backward.
    Control flow keeps what its backward needs (stacked loop carries, a
    call's own Backward) as residuals."""
    env = dict(env or {})
    residuals: dict = {}

    def forward(inst, vals):
        rule = control.FORWARD.get(inst.opcode)
        if rule is None:
            return emit_like(inst, vals)
        return rule(inst, vals, residuals)

    (out,) = replay(computation, list(primals), rule=forward, env=env)
    return out, Backward(computation, env, residuals)
