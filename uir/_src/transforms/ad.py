"""Forward and reverse mode over a traced computation: the primal program
replayed with each instruction's rule (rules.py, vjp_rules.py).

Derivatives of control flow: while, conditional and call.

Forward mode runs the tangents beside the primals: a while loop whose
state also carries the tangents that can become nonzero, a conditional
whose branches are the branches' JVPs, a call replayed inline.

Reverse mode reverses a while loop whose trip count the module states
(scan, fori_loop with static bounds: an induction variable stepped by a
constant towards a constant bound): the forward loop stacks the carry at
the start of each step, and the backward loop walks the steps from the
last, recomputing each step's body from its stacked carry and pulling the
cotangent back through it. A loop whose trip count depends on the data
raises JAX's error. A conditional's backward is a conditional on the same
selector whose branches recompute the taken branch and pull back through
it; a call's backward is its body's.
"""

from __future__ import annotations

import numpy as np

from uir._src.core import errors, ops, tracing, tree_util
from uir._src.core.tracing import Tracer
from uir._src.transforms import custom, lapack_rules, rules, structured, vjp_rules
from uir._src.transforms import replay as replay_module
from uir._src.transforms.replay import (
    Opaque,
    current,
    emit_like,
    from_inst,
    leaves,
    metadata_like,
    replay,
    shape_of,
    sub_computation,
    to_inst,
    unflatten,
)
from uir._src.transforms.rules import differentiable, instantiate, zeros_like


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
        elif inst.opcode in JVP and any(t is not None for t in ts):
            env[inst], tan[inst] = JVP[inst.opcode](inst, vals, ts)
        else:
            env[inst], tan[inst] = _jvp_one(inst, vals, ts)
    root = computation.root
    return env[root], tan.get(root)


def _jvp_one(inst, vals, ts):
    op = inst.opcode
    if op in structured.JVP and any(t is not None for t in ts) and not rules.stops_gradient(inst):
        out = emit_like(inst, vals)
        return out, structured.JVP[op](inst, vals, ts, out)
    return rules.jvp_rule(inst, vals, ts)


class Backward:
    """The reverse pass of one forward replay: call it with the outputs'
    cotangents (a tuple like the root's value) for the parameters'."""

    def __init__(self, computation, env, residuals, given=()):
        self.computation = computation
        self.env = env
        self.residuals = residuals
        # Only what depends on the parameters takes a cotangent: values
        # given from outside (captures) and what is computed from them
        # alone are constants here.
        given = set(given)
        self.active: set = set()
        for inst in computation.instructions:
            if inst.opcode == "parameter":
                if inst not in given:
                    self.active.add(inst)
            elif any(o in self.active for o in inst.operands):
                self.active.add(inst)

    def __call__(self, ct_out):
        """The parameters' cotangents; the ops it emits are named under
        `transpose` (as JAX names a backward pass)."""
        trace = current()
        scope = trace.scope
        if not scope.endswith("/transpose"):
            trace.scope = f"{scope}/transpose"
        try:
            return self._pull(ct_out)
        finally:
            trace.scope = scope

    def _pull(self, ct_out):
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
            if _all_none(ct) or inst not in self.active:
                continue
            vals = [env[o] for o in operands]
            ct = rules.instantiate(ct, env[inst])
            if inst.opcode in VJP:
                op_cts = VJP[inst.opcode](inst, vals, env[inst], ct, self.residuals.get(inst))
            else:
                op_cts = vjp_rules.vjp_rule(inst, vals, env[inst], ct)
            for o, c in zip(operands, op_cts, strict=True):
                if c is not None and o in self.active:
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
    given = set(env)
    residuals: dict = {}

    def forward(inst, vals):
        rule = FORWARD.get(inst.opcode)
        if rule is None:
            return emit_like(inst, vals)
        return rule(inst, vals, residuals)

    (out,) = replay(computation, list(primals), rule=forward, env=env)
    return out, Backward(computation, env, residuals, given)


# --- Values as trees --------------------------------------------------------------


def n_diff(v) -> int:
    return sum(1 for x in leaves(v) if differentiable(x))


def _diff_tangents(primal, tangent) -> list:
    """The tangents of `primal`'s differentiable leaves, zeros instantiated."""
    ps = leaves(primal)
    ts = leaves(instantiate(tangent, primal))
    return [t for p, t in zip(ps, ts, strict=True) if differentiable(p)]


def _with_tangents(primal, diff_tangents):
    """A tangent tree for `primal`: `diff_tangents` at its differentiable
    leaves, None elsewhere."""
    it = iter(diff_tangents)
    return unflatten(
        primal, iter([next(it) if differentiable(p) else None for p in leaves(primal)])
    )


def _emit(inst, opcode, operands, prefix, **attrs):
    comp = current()
    out = comp.builder.op(
        opcode, *[to_inst(o) for o in operands], metadata=metadata_like(inst, prefix), **attrs
    )
    comp.order_effect(out)
    return from_inst(out)


# --- Trip counts ------------------------------------------------------------------


def _fold(inst):
    """The integer value of a scalar instruction built from constants, or
    None."""
    op = inst.opcode
    if op == "constant":
        lit = np.asarray(inst.attributes.get("literal"))
        if lit.size == 1 and lit.dtype.kind in "iub":
            return int(lit.reshape(()))
        return None
    if op in ("convert", "copy", "broadcast", "reshape", "bitcast"):
        return _fold(inst.operands[0])
    if op in ("add", "subtract", "multiply"):
        a, b = (_fold(o) for o in inst.operands)
        if a is None or b is None:
            return None
        return a + b if op == "add" else a - b if op == "subtract" else a * b
    if op == "negate":
        a = _fold(inst.operands[0])
        return None if a is None else -a
    return None


def _tuple_index(inst, param) -> int | None:
    """i where `inst` is get-tuple-element(param), index=i."""
    if inst.opcode == "get-tuple-element" and inst.operands[0].name == param.name:
        return inst.attributes["index"]
    return None


def invariant_indices(body) -> set:
    """The state positions the body passes through unchanged."""
    root, (param,) = body.root, body.parameters
    if root.opcode != "tuple":
        return set()
    return {j for j, o in enumerate(root.operands) if _tuple_index(o, param) == j}


def _step(inst, param, k) -> int | None:
    """c where `inst` is state[k] + c or state[k] - c, c a constant."""
    if inst.opcode not in ("add", "subtract"):
        return None
    a, b = inst.operands
    if _tuple_index(a, param) == k:
        c = _fold(b)
        return None if c is None else c if inst.opcode == "add" else -c
    if inst.opcode == "add" and _tuple_index(b, param) == k:
        return _fold(a)
    return None


def induction(inst):
    """(k, lo, step, trip count) of the while loop `inst` when the module
    states its trip count: state[k] starts at the constant lo, the body adds
    the constant step to it, and the condition compares it with a constant
    (or a state value the body keeps) by LT, LE, GT, GE or NE. None
    otherwise."""
    body, cond = inst.attributes["body"], inst.attributes["condition"]
    init = inst.operands[0]
    if init.opcode != "tuple" or body.root.opcode != "tuple":
        return None
    (cparam,), (bparam,) = cond.parameters, body.parameters
    root = cond.root
    if root.opcode != "compare":
        return None
    direction = root.attributes.get("direction")
    lhs, rhs = root.operands
    k = _tuple_index(lhs, cparam)
    bound = rhs
    if k is None:
        k, bound = _tuple_index(rhs, cparam), lhs
        direction = {"GT": "LT", "GE": "LE", "LT": "GT", "LE": "GE"}.get(direction, direction)
    if k is None:
        return None
    hi = _fold(bound)
    if hi is None:
        j = _tuple_index(bound, cparam)
        if j is None or j not in invariant_indices(body):
            return None
        hi = _fold(init.operands[j])
    lo = _fold(init.operands[k])
    step = _step(body.root.operands[k], bparam, k)
    if lo is None or hi is None or not step:
        return None
    n = None
    if direction == "LT" and step > 0:
        n = max(0, -(-(hi - lo) // step))
    elif direction == "LE" and step > 0:
        n = max(0, (hi - lo) // step + 1)
    elif direction == "GT" and step < 0:
        n = max(0, -(-(lo - hi) // -step))
    elif direction == "GE" and step < 0:
        n = max(0, (lo - hi) // -step + 1)
    elif direction == "NE" and (hi - lo) % step == 0 and (hi - lo) // step >= 0:
        n = (hi - lo) // step
    return None if n is None else (k, lo, step, n)


def trip_count(inst) -> int | None:
    """How many steps the while loop `inst` runs, when the module states it
    (see induction)."""
    found = induction(inst)
    return None if found is None else found[3]


# --- Forward mode -------------------------------------------------------------------


def _jvp_body_nonzero(body, state, nonzero, enter, leave):
    """Which state positions have a nonzero tangent after one step of
    `body` when those in `nonzero` have one (traced into a throwaway
    module)."""
    probe = tracing.Computation(tracing.Module("probe"), "jvp_probe", current().scope)
    with tracing.tracing(probe):
        param = probe.builder.parameter(0, shape_of(enter(state)), name="probe_arg")
        s = leave(from_inst(param, probe))
        ts = tuple(
            zeros_like(x) if nz and differentiable(x) else None
            for x, nz in zip(s, nonzero, strict=True)
        )
        _, t_out = jvp_computation(body, [enter(s)], [enter(ts)])
    t_out = leave(t_out) if t_out is not None else (None,) * len(state)
    return [
        nz or (t is not None and not all(v is None for v in leaves(t)))
        for nz, t in zip(nonzero, t_out, strict=True)
    ]


def jvp_while(inst, primals, tangents):
    (state,), (tstate,) = primals, tangents
    boxed = not isinstance(state, tuple)  # a loop whose state is one array
    if boxed:
        state, tstate = (state,), (tstate,)

    def enter(s):
        return s[0] if boxed else s

    def leave(v):
        return (v,) if boxed else v

    tstate = tstate if tstate is not None else (None,) * len(state)
    body, cond = inst.attributes["body"], inst.attributes["condition"]
    nonzero = [
        t is not None and any(differentiable(p) for p in leaves(x))
        for x, t in zip(state, tstate, strict=True)
    ]
    while True:
        after = _jvp_body_nonzero(body, state, nonzero, enter, leave)
        if after == nonzero:
            break
        nonzero = [a or b for a, b in zip(after, nonzero, strict=True)]
    positions = [j for j, nz in enumerate(nonzero) if nz]
    t_init = [_diff_tangents(state[j], tstate[j]) for j in positions]
    n = len(state)

    def split(v):
        s = v[:n]
        flat = iter(v[n:])
        ts = [None] * n
        for j, tj in zip(positions, t_init, strict=True):
            ts[j] = _with_tangents(s[j], [next(flat) for _ in tj])
        return s, tuple(ts)

    def new_body(v):
        s, ts = split(v)
        out, t_out = jvp_computation(body, [enter(s)], [enter(ts)])
        out = leave(out)
        t_out = leave(t_out) if t_out is not None else (None,) * n
        extra = [t for j in positions for t in _diff_tangents(out[j], t_out[j])]
        return (*out, *extra)

    init = (*state, *[t for tj in t_init for t in tj])
    body_c = sub_computation("jvp_body", init, new_body)
    cond_c = sub_computation("jvp_cond", init, lambda v: replay(cond, [enter(split(v)[0])])[0])
    out = _emit(inst, "while", [init], "jvp/", condition=cond_c, body=body_c)
    s, ts = split(out)
    return enter(s), enter(ts)


def jvp_conditional(inst, primals, tangents):
    selector, operands = primals[0], primals[1:]
    branches = _branch_computations(inst)
    t_ops = [_diff_tangents(o, t) for o, t in zip(operands, tangents[1:], strict=True)]
    out_like = None

    def make(k, comp):
        nonlocal out_like

        def fn(v):
            nonlocal out_like
            p, flat = v
            ts = _with_tangents(p, list(flat))
            (out,), t_out = _jvp_any(comp, p, ts)
            out_like = out
            return (out, tuple(_diff_tangents(out, t_out)))

        return sub_computation(f"jvp_branch_{k}", (operands[k], tuple(t_ops[k])), fn)

    comps = [make(k, c) for k, c in enumerate(branches)]
    args = [(o, tuple(t)) for o, t in zip(operands, t_ops, strict=True)]
    out, flat = _emit(inst, "conditional", [selector, *args], "jvp/", **_branch_attrs(inst, comps))
    return out, _with_tangents(out, list(flat))


def _jvp_any(comp, arg, tangent):
    """jvp_computation for a computation of any root: (1-tuple of the
    output, its tangent)."""
    out, t = jvp_computation(comp, [arg], [tangent])
    return (out,), t


def _branch_computations(inst):
    attrs = inst.attributes
    if "branch_computations" in attrs:
        return list(attrs["branch_computations"])
    return [attrs["true_computation"], attrs["false_computation"]]


def _branch_attrs(inst, comps) -> dict:
    if "branch_computations" in inst.attributes:
        return {"branch_computations": comps}
    return {"true_computation": comps[0], "false_computation": comps[1]}


def jvp_call(inst, primals, tangents):
    rule = custom.rule_of(inst)
    if rule is not None and rule.kind == "custom_jvp":
        out, t_out = rule.tangents_out(list(primals), list(tangents))
        return tuple(out), tuple(t_out)
    if rule is not None and rule.kind == "custom_vjp":
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
    return jvp_computation(_callee(inst), list(primals), list(tangents))


def _callee(inst):
    """The computation a call (to_apply) or a fusion (calls) runs."""
    a = inst.attributes
    return a["to_apply"] if "to_apply" in a else a["calls"]


def _map(inst, operands, computation, prefix):
    return _emit(
        inst,
        "map",
        operands,
        prefix,
        dimensions=list(inst.attributes["dimensions"]),
        to_apply=computation,
    )


def jvp_map(inst, primals, tangents):
    """A map's tangent is a map too, of its scalar computation's JVP over
    the operands and their tangents."""
    f = inst.attributes["to_apply"]
    n = len(primals)
    diff = [i for i, t in enumerate(tangents) if t is not None]
    out = emit_like(inst, primals)

    def tangent(*args):
        ts = [None] * n
        for k, i in enumerate(diff):
            ts[i] = args[n + k]
        y, t = jvp_computation(f, list(args[:n]), ts)
        return instantiate(t, y)

    dts = [p.dtype for p in primals] + [primals[i].dtype for i in diff]
    g = ops.scalar_computation("map_jvp", dts, tangent, arity=len(dts))
    return out, _map(inst, [*primals, *[tangents[i] for i in diff]], g, "jvp/")


def vjp_map(inst, primals, out, ct, residual):
    """Each operand's cotangent is a map of the scalar computation's VJP
    over the operands and the output's cotangent."""
    f = inst.attributes["to_apply"]
    n = len(primals)
    cts = [None] * n
    for i in range(n):
        if not differentiable(primals[i]):
            continue

        def pull(*args, i=i):
            xs = list(args[:n])
            _, backward = vjp_computation(f, xs)
            got = backward(args[n])[i]
            return instantiate(got, xs[i])

        dts = [p.dtype for p in primals] + [ct.dtype]
        h = ops.scalar_computation(f"map_vjp_{i}", dts, pull, arity=len(dts))
        cts[i] = _map(inst, [*primals, ct], h, "vjp/")
    return cts


# --- reduce with a reducer of its own --------------------------------------------------
# A reduce whose computation is not one add, max, min or multiply (nor an
# argmax's pair) differentiates as a tree of maps of that computation over
# halves of the reduced axis: log2(n) maps, each with the map's rules. XLA
# leaves the order of a reduction unspecified; the tree is one such order.


def _general_reduce(inst, primals) -> bool:
    if len(primals) == 2:
        return rules.reducer_kind(inst) is None
    return not rules.is_arg_reduce(inst, primals)


def _reduce_by_maps(inst, *vals):
    comp = inst.attributes["to_apply"]
    k = len(vals) // 2
    xs, inits = list(vals[:k]), list(vals[k:])
    axes = sorted(inst.attributes["dimensions"])
    kept = [d for d in range(xs[0].ndim) if d not in axes]
    kept_shape = tuple(xs[0].shape[d] for d in kept)
    n = int(np.prod([xs[0].shape[d] for d in axes], dtype=np.int64))
    dts = [x.dtype for x in xs]

    def part(i):
        def fn(*scalars):
            (root,) = replay(comp, list(scalars))
            return root[i] if isinstance(root, tuple) else root

        return ops.scalar_computation(f"reduce_part_{i}", dts * 2, fn, arity=2 * k)

    parts = [part(i) for i in range(k)]

    def combine(a, b):
        dims = list(range(a[0].ndim))
        return [
            _emit(inst, "map", [*a, *b], "reduce_tree/", dimensions=dims, to_apply=part)
            for part in parts
        ]

    flat = [ops.reshape(ops.transpose(x, kept + axes), (*kept_shape, n)) for x in xs]
    # padded with the inits to a power of two (at least 1: an empty axis
    # leaves the inits alone)
    size = 1 << max(n - 1, 0).bit_length()
    if size != n:
        flat = [
            ops.concatenate([x, ops.broadcast_to(v, (*kept_shape, size - n))], axis=len(kept_shape))
            for x, v in zip(flat, inits, strict=True)
        ]
    last = len(kept_shape)
    while size > 1:
        size //= 2
        lo = [x[(slice(None),) * last + (slice(0, size),)] for x in flat]
        hi = [x[(slice(None),) * last + (slice(size, 2 * size),)] for x in flat]
        flat = combine(lo, hi)
    tree = [ops.reshape(x, kept_shape) for x in flat]
    # the inits once, as the sequential reduce takes them
    out = combine([ops.broadcast_to(v, kept_shape) for v in inits], tree)
    return tuple(out)


def _traced_reduce(inst, primals):
    args = list(primals)
    in_tree = tree_util.tree_flatten((tuple(args), {}))[1]
    return replay_module.trace(lambda *v: _reduce_by_maps(inst, *v), args, in_tree, "reduce_tree")


def jvp_reduce(inst, primals, tangents):
    if not _general_reduce(inst, primals):
        return _jvp_one(inst, primals, tangents)
    traced = _traced_reduce(inst, primals)
    out, t = jvp_computation(traced.computation, list(primals), list(tangents), traced.env())
    if len(primals) == 2:
        return out[0], None if t is None else t[0]
    return tuple(out), t


def vjp_reduce(inst, primals, out, ct, residual):
    if not _general_reduce(inst, primals):
        return vjp_rules.vjp_rule(inst, primals, out, ct)
    traced = _traced_reduce(inst, primals)
    _, backward = vjp_computation(traced.computation, list(primals), traced.env())
    return backward(tuple(ct) if isinstance(ct, tuple) else (ct,))


JVP = {
    "while": jvp_while,
    "conditional": jvp_conditional,
    "call": jvp_call,
    "fusion": jvp_call,
    "map": jvp_map,
    "reduce": jvp_reduce,
}


# --- Reverse mode -------------------------------------------------------------------


def _dynamic_loop_error(inst):
    md = inst.attributes.get("metadata") or {}
    where = ""
    if md.get("source_file"):
        where = f" (the loop traced at {md['source_file']}:{md.get('source_line', '?')})"
    raise errors.TraceError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        f"dynamic start/stop values: while %{inst.name}{where} has a trip count that depends on "
        "the data. Try using lax.scan, or using fori_loop with static start/stop."
    )


def _index(stack, k):
    starts = [k] + [ops.asarray(np.zeros((), np.int32))] * (stack.ndim - 1)
    window = ops._comp().emit(
        "dynamic-slice",
        stack,
        *starts,
        dynamic_slice_sizes=[1, *stack.shape[1:]],
        shape=((1, *stack.shape[1:]), stack.dtype),
        op_name="stacked_carry",
    )
    return ops.reshape(window, stack.shape[1:])


def _store(stack, v, k):
    zero = ops.asarray(np.zeros((), np.int32))
    return ops._comp().emit(
        "dynamic-update-slice",
        stack,
        ops.reshape(v, (1, *v.shape)),
        k,
        *[zero] * (stack.ndim - 1),
        op_name="stack_carry",
    )


def _int(v):
    return ops.asarray(np.array(v, np.int32))


class WhileResidual:
    """What the forward loop kept for the backward: the stacked carries of
    the positions the body changes, the values of those it keeps, and the
    trip count."""

    def __init__(self, n, varying, stacks, kept, induction):
        self.n, self.varying, self.stacks, self.kept = n, varying, stacks, kept
        self.induction = induction


def forward_while(inst, vals, residuals):
    (state,) = vals
    if not isinstance(state, tuple) or not any(differentiable(x) for x in leaves(state)):
        return emit_like(inst, vals)
    found = induction(inst)
    if found is None:
        # The primal runs as written; asking for its cotangent raises.
        residuals[inst] = None
        return emit_like(inst, vals)
    body, cond = inst.attributes["body"], inst.attributes["condition"]
    if any(isinstance(x, Opaque) for x in leaves(state)):
        residuals[inst] = "its state carries a token (an ordered side effect)"
        return emit_like(inst, vals)
    k_ind, lo, step, n = found
    kept = invariant_indices(body)
    # The induction variable is not stacked: step k's value is lo + k*step.
    varying = [j for j in range(len(state)) if j not in kept and j != k_ind]
    var_leaves = [x for j in varying for x in leaves(state[j])]
    stacks0 = [
        ops.broadcast_to(ops.asarray(np.zeros((), x.dtype)), (n, *x.shape)) for x in var_leaves
    ]
    m = len(state)

    def new_body(v):
        s, k, stacks = v[:m], v[m], v[m + 1 :]
        cur = [x for j in varying for x in leaves(s[j])]
        stacks = [_store(st, x, k) for st, x in zip(stacks, cur, strict=True)]
        (out,) = replay(body, [s])
        one = ops.asarray(np.ones((), np.int32))
        return (*out, ops.binary("add", k, one, op_name="add"), *stacks)

    init = (*state, _int(0), *stacks0)
    body_c = sub_computation("stacking_body", init, new_body)
    cond_c = sub_computation("stacking_cond", init, lambda v: replay(cond, [v[:m]])[0])
    out = _emit(inst, "while", [init], "vjp/", condition=cond_c, body=body_c)
    residuals[inst] = WhileResidual(
        n, varying, list(out[m + 1 :]), {j: state[j] for j in kept}, (k_ind, lo, step)
    )
    return out[:m]


def vjp_while(inst, primals, out, ct, residual):
    if residual is None:
        _dynamic_loop_error(inst)
    if isinstance(residual, str):
        md = inst.attributes.get("metadata") or {}
        where = (
            f" (traced at {md['source_file']}:{md.get('source_line', '?')})"
            if md.get("source_file")
            else ""
        )
        raise errors.TraceError(
            f"vjp: reverse mode through while %{inst.name}{where} is not supported: {residual}"
        )
    (state,) = primals
    body = inst.attributes["body"]
    m = len(state)
    diff = [j for j in range(m) if any(differentiable(x) for x in leaves(state[j]))]
    ct_init = [c for j in diff for c in _diff_tangents(state[j], ct[j])]
    kept_vals = [residual.kept[j] for j in sorted(residual.kept)]
    n_ct, n_st = len(ct_init), len(residual.stacks)

    def state_at(k, stacks, kept):
        flat = iter([_index(st, k) for st in stacks])
        kept_it = iter(kept)
        k_ind, lo, step = residual.induction
        s = []
        for j in range(m):
            if j in residual.kept:
                s.append(next(kept_it))
            elif j == k_ind:
                i = ops.binary("multiply", k, _int(step), op_name="mul")
                i = ops.binary("add", i, _int(lo), op_name="add")
                s.append(ops.convert(i, state[j].dtype))
            else:
                s.append(unflatten(state[j], flat))
        return tuple(s)

    def cts_of(like_state, flat):
        it = iter(flat)
        out_ct = [None] * m
        for j in diff:
            n_j = n_diff(like_state[j])
            out_ct[j] = _with_tangents(like_state[j], [next(it) for _ in range(n_j)])
        return tuple(out_ct)

    def back_body(v):
        k, cts = v[0], v[1 : 1 + n_ct]
        stacks, kept = v[1 + n_ct : 1 + n_ct + n_st], v[1 + n_ct + n_st :]
        s = state_at(k, stacks, kept)
        _, backward = vjp_computation(body, [s])
        (ct_in,) = backward(cts_of(s, cts))
        ct_in = ct_in if ct_in is not None else (None,) * m
        new = [c for j in diff for c in _diff_tangents(s[j], ct_in[j])]
        minus = ops.binary("add", k, ops.asarray(np.array(-1, np.int32)), op_name="add")
        return (minus, *new, *stacks, *kept)

    def back_cond(v):
        return ops.compare(v[0], ops.asarray(np.zeros((), np.int32)), "GE", "ge")

    init = (_int(residual.n - 1), *ct_init, *residual.stacks, *kept_vals)
    body_c = sub_computation("reverse_body", init, back_body)
    cond_c = sub_computation("reverse_cond", init, back_cond)
    res = _emit(inst, "while", [init], "vjp/", condition=cond_c, body=body_c)
    return [cts_of(state, res[1 : 1 + n_ct])]


def vjp_conditional(inst, primals, out, ct, residual):
    selector, operands = primals[0], primals[1:]
    branches = _branch_computations(inst)
    ct_flat = tuple(_diff_tangents(out, ct))
    diff_sizes = [n_diff(o) for o in operands]

    def make(k, comp):
        def fn(v):
            p, c = v
            _, backward = vjp_computation(comp, [p])
            (ct_p,) = backward(_with_tangents(out, list(c)))
            parts = []
            for i, o in enumerate(operands):
                if i == k:
                    parts.extend(_diff_tangents(p, ct_p))
                else:
                    parts.extend(_diff_tangents(o, None))
            return tuple(parts)

        return sub_computation(f"vjp_branch_{k}", (operands[k], ct_flat), fn)

    comps = [make(k, c) for k, c in enumerate(branches)]
    args = [(o, ct_flat) for o in operands]
    flat = _emit(inst, "conditional", [selector, *args], "vjp/", **_branch_attrs(inst, comps))
    flat = flat if isinstance(flat, tuple) else (flat,)
    it = iter(flat)
    cts = [None]
    for o, size in zip(operands, diff_sizes, strict=True):
        cts.append(_with_tangents(o, [next(it) for _ in range(size)]))
    return cts


def forward_call(inst, vals, residuals):
    rule = custom.rule_of(inst)
    comp = _callee(inst)
    if rule is None:
        out, backward = vjp_computation(comp, list(vals))
        residuals[inst] = backward
        return out
    if rule.kind == "custom_vjp":
        out, residuals[inst] = rule.forward(list(vals))
        return out
    if rule.kind == "custom_jvp":
        return emit_like(inst, vals)
    # checkpoint: the body runs as written; only what the policy saves is kept.
    env: dict = {}
    (out,) = replay(comp, list(vals), env=env)
    residuals[inst] = {
        i: env[i] for i in comp.instructions if rule.saves(i) and isinstance(env.get(i), Tracer)
    }
    return out


def vjp_call(inst, primals, out, ct, residual):
    rule = custom.rule_of(inst)
    if rule is None:
        return residual(ct)
    if rule.kind == "custom_vjp":
        return rule.backward(residual, list(primals), list(ct))
    if rule.kind == "custom_jvp":
        return _transpose_custom_jvp(rule, list(primals), ct, out)
    return _recompute(inst, rule, list(primals), residual, ct)


def _transpose_custom_jvp(rule, vals, ct, out):
    """The cotangents of a custom_jvp call: its rule's tangent output is
    linear in the tangents, so reverse mode is that map's transpose. A
    built-in rule reads the forward pass's outputs `out` instead of
    computing them again."""

    def tangents(full):
        if getattr(rule, "builtin", False):
            return rule.tangents(vals, out, full)
        return rule.tangents_out(vals, full)[1]

    return transpose_jvp(tangents, vals, rule.n_args, ct)


def transpose_jvp(tangents, vals, n_args, ct):
    """The cotangents of the first `n_args` of `vals` under the linear map
    tangents(full tangent list) -> the outputs' tangents (None where an
    output has none), given the outputs' cotangents `ct`."""
    diff = [i for i in range(n_args) if differentiable(vals[i])]
    if not diff:
        return [None] * len(vals)
    kept: list[int] = []

    def linear(*ts):
        full = [None] * len(vals)
        for i, t in zip(diff, ts, strict=True):
            full[i] = t
        outs = list(tangents(full))
        kept[:] = [k for k, o in enumerate(outs) if o is not None]
        return tuple(outs[k] for k in kept)

    zeros = [zeros_like(vals[i]) for i in diff]
    in_tree = tree_util.tree_flatten((tuple(zeros), {}))[1]
    traced = replay_module.trace(linear, zeros, in_tree, "jvp_transpose")
    _, backward = vjp_computation(traced.computation, zeros, traced.env())
    flat_ct = ct if isinstance(ct, tuple) else (ct,)
    got = backward(tuple(flat_ct[k] for k in kept))
    cts = [None] * len(vals)
    for i, g in zip(diff, got, strict=True):
        cts[i] = g
    return cts


def _transposed(forward):
    """The reverse rule of an op whose forward rule (inst, primals,
    tangents, out) is linear in the tangents: that map's transpose."""

    def vjp(inst, primals, out, ct, residual):
        return transpose_jvp(
            lambda ts: forward(inst, primals, ts, out), list(primals), len(primals), ct
        )

    return vjp


def vjp_custom_call(inst, primals, out, ct, residual):
    """A LAPACK routine whose rule is written in forward mode alone
    (lapack_rules.JVP without a VJP) reverses by transposing it."""
    name = lapack_rules.routine(inst)
    if name in lapack_rules.JVP and not structured.registered(inst):
        direct = lapack_rules.VJP.get(name)
        got = direct(inst, primals, out, ct) if direct is not None else None
        if got is not None:
            return got
        return _transposed(lapack_rules.JVP[name])(inst, primals, out, ct, residual)
    return structured.VJP["custom-call"](inst, primals, out, ct)


def _recompute(inst, rule, vals, saved, ct):
    """A checkpoint's backward: its body again from its inputs (and the
    values the policy saved), behind an opt-barrier with the cotangent."""
    keys = list(saved)
    group = (tuple(vals), tuple(saved[k] for k in keys), tuple(ct))
    if rule.prevent_cse:
        group = _emit(inst, "opt-barrier", [group], "remat/")
    vals_b, saved_b, ct_b = group
    env = dict(zip(keys, saved_b, strict=True))
    _, backward = vjp_computation(inst.attributes["to_apply"], list(vals_b), env=env)
    return backward(tuple(ct_b))


# A fusion (in a module XLA or uir already optimized) differentiates as a
# call of its fused computation.
FORWARD = {"while": forward_while, "call": forward_call, "fusion": forward_call}
VJP = {
    "while": vjp_while,
    "conditional": vjp_conditional,
    "call": vjp_call,
    "fusion": vjp_call,
    "custom-call": vjp_custom_call,
    "map": vjp_map,
    "reduce": vjp_reduce,
    "topk": _transposed(structured.JVP["topk"]),
}


__all__ = ["FORWARD", "JVP", "VJP", "Backward", "jvp_computation", "trip_count", "vjp_computation"]
