"""uir.lax's structured control flow: while_loop, fori_loop, cond, switch,
scan and map, each tracing its functions into sub-computations."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops, tracing, tree_util
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.slicing import dynamic_slice, dynamic_update_slice


def _flatten_avals(op: str, tree_value):
    leaves, tree = tree_util.tree_flatten(tree_value)
    ts = []
    for leaf in leaves:
        if not ops.is_array_like(leaf):
            fail(op, f"the carried value holds a {type(leaf).__name__}, which is not an array")
        ts.append(asarray(leaf))
    return ts, tree


def _tuple_param(sub, name, avals):
    tuple_shape = [(a.shape, a.dtype) for a in avals]
    param = sub.builder.parameter(0, tuple_shape, name=f"{name}_arg")
    return [
        Tracer(
            sub, sub.builder.op("get-tuple-element", param, index=i), a.shape, a.dtype, a.weak_type
        )
        for i, a in enumerate(avals)
    ]


def _captures_of(name: str, avals, tree, fn, op: str) -> list[Tracer]:
    """The enclosing values `fn` reads: found by tracing it once into a
    throwaway module."""
    comp = ops._comp()
    probe = tracing.Computation(tracing.Module("probe"), name, f"{comp.scope}/{op}", probing=True)
    with tracing.tracing(probe):
        leaves = _tuple_param(probe, name, avals)
        fn(tree_util.tree_unflatten(tree, leaves))
    return probe.captures


def _sub_computation(name: str, avals, tree, fn, op: str, captures=()):
    """Traces fn(pytree of params) into a computation taking one tuple
    parameter (XLA's convention for loop bodies and branches): the values,
    then `captures` (enclosing values it reads). Returns the computation,
    the output leaves and their tree."""
    comp = ops._comp()
    sub = tracing.Computation(comp.module, name, f"{comp.scope}/{op}")
    with tracing.tracing(sub):
        params = _tuple_param(sub, name, list(avals) + list(captures))
        for outer, inner in zip(captures, params[len(avals) :], strict=True):
            sub.capture_map[id(outer)] = inner
        out = fn(tree_util.tree_unflatten(tree, params[: len(avals)]))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        outs = [asarray(o) for o in out_leaves]
        root = sub.builder.op("tuple", *[o.inst for o in outs])
        return sub.build(root), outs, out_tree


def _union(*lists):
    seen, out = set(), []
    for lst in lists:
        for t in lst:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


def _tuple(op_name: str, leaves):
    comp = ops._comp()
    return comp.builder.op("tuple", *[x.inst for x in leaves], metadata=comp.metadata(op_name))


def _unpack(inst, like):
    comp = ops._comp()
    out = []
    for i, a in enumerate(like):
        gte = comp.builder.op("get-tuple-element", inst, index=i)
        out.append(Tracer(comp, gte, a.shape, a.dtype, a.weak_type))
    return out


def while_loop(cond_fun, body_fun, init_val):
    """Repeats body_fun while cond_fun is true; the carried value is a pytree
    whose shapes and dtypes the body must keep."""
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda v: while_loop(cond_fun, body_fun, v))(init_val)
    leaves, tree = _flatten_avals("while_loop", init_val)

    def check_body(v):
        out = body_fun(v)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            fail(
                "while_loop",
                f"body_fun must return the structure of init_val ({tree}), got {out_tree}",
            )
        fixed = []
        for a, o in zip(leaves, out_leaves, strict=True):
            o = asarray(o)
            if o.shape != a.shape or (o.dtype != a.dtype and not o.weak_type):
                fail(
                    "while_loop",
                    f"body_fun changes a carried value from {ops.describe(a)} to {ops.describe(o)}",
                )
            fixed.append(ops.convert(o, a.dtype, a.weak_type))
        return tree_util.tree_unflatten(tree, fixed)

    def check_cond(v):
        p = asarray(cond_fun(v))
        if p.shape != () or p.dtype != np.bool_:
            fail("while_loop", f"cond_fun must return a bool scalar, got {ops.describe(p)}")
        return p

    comp = ops._comp()
    # Enclosing values the body or the condition read ride along in the
    # loop state, unchanged.
    captures = _union(
        _captures_of("body", leaves, tree, check_body, "while/body"),
        _captures_of("cond", leaves, tree, check_cond, "while/cond"),
    )
    # The captured values as operands here (they may themselves be captures
    # of this computation); inside, they are found by the original objects.
    operands = [asarray(c) for c in captures]
    n = len(leaves)

    def body_with_captures(v):
        out = tree_util.tree_leaves(check_body(v))
        inner = tracing.current()
        return (*out, *[inner.capture_map[id(c)] for c in captures])

    body, _, _ = _sub_computation("body", leaves, tree, body_with_captures, "while/body", captures)
    sub = tracing.Computation(comp.module, "cond", f"{comp.scope}/while/cond")
    with tracing.tracing(sub):
        params = _tuple_param(sub, "cond", list(leaves) + operands)
        for outer, inner in zip(captures, params[n:], strict=True):
            sub.capture_map[id(outer)] = inner
        cond = sub.build(check_cond(tree_util.tree_unflatten(tree, params[:n])))
    init = _tuple("while", list(leaves) + operands)
    out = comp.builder.op("while", init, condition=cond, body=body, metadata=comp.metadata("while"))
    comp.order_effect(out)
    return tree_util.tree_unflatten(tree, _unpack(out, list(leaves) + operands)[:n])


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """body_fun(i, val) for i in [lower, upper). `unroll` (how many steps
    one loop iteration runs, in JAX) is a hint: uir's loop passes decide."""
    _check_unroll("fori_loop", unroll)
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda lo, hi, v: fori_loop(lo, hi, body_fun, v))(lower, upper, init_val)
    index_type = dtypes.promote(ops.weak_dtype_of(lower), ops.weak_dtype_of(upper))[0]
    lo = ops.convert(asarray(lower), index_type)
    hi = ops.convert(asarray(upper), index_type)

    def cond(state):
        i, h, _ = state
        return ops.compare(i, h, "LT", "lt")

    def body(state):
        i, h, v = state
        return (
            ops.binary("add", i, ops.asarray(np.ones((), index_type)), op_name="add"),
            h,
            body_fun(i, v),
        )

    return while_loop(cond, body, (lo, hi, init_val))[2]


_NO_OPERAND = object()


def _operand_keyword(name: str, operands: tuple, operand) -> tuple:
    """The operands with JAX's older keyword form (operand=) folded in."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        fail(name, "if 'operand' is passed as a keyword, no operands may be passed positionally")
    return (operand,)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """true_fun(*operands) if pred else false_fun(*operands); both branches
    are traced and must return the same structure, shapes and dtypes."""
    operands = _operand_keyword("cond", operands, operand)
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda p, *o: cond(p, true_fun, false_fun, *o))(pred, *operands)
    p = asarray(pred)
    if p.shape != ():
        fail("cond", f"pred must be a scalar, got {ops.describe(p)}")
    if p.dtype != np.bool_:
        p = ops.compare(p, ops.asarray(np.zeros((), p.dtype)), "NE", "ne")
    return _branches(p, [false_fun, true_fun], operands, "cond", pred_is_bool=True)


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """branches[index](*operands), with index clamped into range."""
    operands = _operand_keyword("switch", operands, operand)
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda i, *o: switch(i, branches, *o))(index, *operands)
    i = ops.convert(asarray(index), np.dtype(np.int32))
    if i.shape != ():
        fail("switch", f"index must be a scalar, got {ops.describe(i)}")
    n = len(branches)
    i = ops.binary("maximum", ops.binary("minimum", i, n - 1), 0)
    return _branches(i, list(branches), operands, "switch", pred_is_bool=False)


def _branches(selector, funs, operands, op, pred_is_bool):
    leaves, tree = _flatten_avals(op, tuple(operands))
    calls = [lambda args, f=f: f(*args) for f in funs]
    captures = _union(
        *[_captures_of(f"branch_{k}", leaves, tree, c, op) for k, c in enumerate(calls)]
    )
    operands = [asarray(c) for c in captures]
    comps, outs, out_tree = [], None, None
    for k, call in enumerate(calls):
        c, o, t = _sub_computation(f"branch_{k}", leaves, tree, call, op, captures)
        if outs is None:
            outs, out_tree = o, t
        elif t != out_tree or any(
            a.shape != b.shape or a.dtype != b.dtype for a, b in zip(o, outs, strict=True)
        ):
            fail(
                op,
                f"branches return different types: {[ops.describe(x) for x in outs]} vs {[ops.describe(x) for x in o]}",
            )
        comps.append(c)
    comp = ops._comp()
    arg = _tuple(op, list(leaves) + operands)
    if pred_is_bool:
        out = comp.builder.op(
            "conditional",
            selector.inst,
            arg,
            arg,
            true_computation=comps[1],
            false_computation=comps[0],
            metadata=comp.metadata(op),
        )
    else:
        out = comp.builder.op(
            "conditional",
            selector.inst,
            *([arg] * len(comps)),
            branch_computations=comps,
            metadata=comp.metadata(op),
        )
    comp.order_effect(out)
    return tree_util.tree_unflatten(out_tree, _unpack(out, outs))


def scan(
    f,
    init,
    xs=None,
    length: int | None = None,
    reverse: bool = False,
    unroll=1,
    _split_transpose: bool = False,
):
    """carry, ys = scan(f, init, xs): f(carry, x) -> (carry, y) over the
    leading axis of xs, stacking the ys. `unroll` is a hint, as in
    fori_loop."""
    _check_unroll("scan", unroll)
    if tracing.current() is None:
        from uir._src.core.api import jit

        return jit(lambda c, x: scan(f, c, x, length, reverse))(init, xs)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    x_leaves = [asarray(x) for x in x_leaves]
    n = length if length is not None else (x_leaves[0].shape[0] if x_leaves else None)
    if n is None:
        fail("scan", "give xs or length")
    for x in x_leaves:
        if x.shape[:1] != (n,):
            fail("scan", f"every xs leaf needs a leading axis of {n}, got {ops.describe(x)}")
    # Trace one step to learn the ys' shapes.
    carry_leaves, carry_tree = _flatten_avals("scan", init)

    def step_y_avals():
        comp = ops._comp()
        probe = tracing.Computation(tracing.Module("probe"), "scan_probe", comp.scope, probing=True)
        with tracing.tracing(probe):
            c = [probe.parameter(a.shape, a.dtype, a.weak_type) for a in carry_leaves]
            xl = [probe.parameter(x.shape[1:], x.dtype, x.weak_type) for x in x_leaves]
            _, y = f(
                tree_util.tree_unflatten(carry_tree, c),
                tree_util.tree_unflatten(x_tree, xl) if x_leaves else None,
            )
            y_leaves, y_tree = tree_util.tree_flatten(y)
            return [(asarray(v).shape, asarray(v).dtype) for v in y_leaves], y_tree

    y_avals, y_tree = step_y_avals()
    ys0 = [ops.broadcast_to(asarray(np.zeros((), d)), (n, *s)) for s, d in y_avals]
    if n == 0:
        # No step to run: the carry as given, and empty ys of the step's types.
        return tree_util.tree_unflatten(carry_tree, list(carry_leaves)), tree_util.tree_unflatten(
            y_tree, ys0
        )
    index_type = np.dtype(np.int32)

    def body(i, state):
        carry, ys = state
        k = ops.binary("subtract", n - 1, i) if reverse else i
        x_t = [_index_leading(x, k) for x in x_leaves]
        new_carry, y = f(carry, tree_util.tree_unflatten(x_tree, x_t) if x_leaves else None)
        y_leaves = [asarray(v) for v in tree_util.tree_leaves(y)]
        ys = [_update_leading(acc, v, k) for acc, v in zip(ys, y_leaves, strict=True)]
        return new_carry, ys

    carry, ys = fori_loop(ops.asarray(np.zeros((), index_type)), n, body, (init, ys0))
    return carry, tree_util.tree_unflatten(y_tree, ys)


# (The scan's step k is never negative: no wrapping select.)
def _index_leading(x, k):
    starts = [k] + [0] * (x.ndim - 1)
    window = dynamic_slice(x, starts, (1, *x.shape[1:]), allow_negative_indices=False)
    return ops.reshape(window, x.shape[1:])


def _update_leading(acc, v, k):
    v = ops.convert(asarray(v), acc.dtype)
    starts = [k] + [0] * (acc.ndim - 1)
    return dynamic_update_slice(
        acc, ops.reshape(v, (1, *v.shape)), starts, allow_negative_indices=False
    )


def map(f, xs, *, batch_size=None):
    """f applied to each slice of xs along its leading axis (a loop).
    `batch_size` (JAX maps that many slices at a time, vectorized) gives
    the same result here: a positive int or None."""
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        ops.fail("lax.map", f"batch_size must be a positive int or None, got {batch_size!r}")
    return scan(lambda c, x: (c, f(x)), (), xs)[1]


def _check_unroll(name: str, unroll) -> None:
    if unroll is None or isinstance(unroll, bool):
        return
    if not isinstance(unroll, int) or unroll < 1:
        ops.fail(f"lax.{name}", f"unroll must be a positive int or a bool, got {unroll!r}")


__all__ = [
    "cond",
    "fori_loop",
    "map",
    "scan",
    "switch",
    "while_loop",
]
