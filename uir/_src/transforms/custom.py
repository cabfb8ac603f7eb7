"""custom_jvp, custom_vjp and checkpoint, kept in the module as calls.

Each wrapped function traces into a `call` whose callee is the function
itself, tagged with frontend_attributes={uir_rule="<kind>:<id>"}: a dump,
a printed module and a serialized executable keep the call, and running
it runs the function. When a transformation replays the module in this
process, the tag finds the rule registered here:

- custom_jvp: forward mode calls the user's JVP rule; reverse mode
  transposes it (its tangent output is linear in the tangents).
- custom_vjp: reverse mode runs the user's fwd in the forward pass and bwd
  in the backward; forward mode raises, as JAX does.
- checkpoint: the forward pass keeps only what the policy saves; the
  backward pass recomputes the rest from the call's inputs, which pass
  through an opt-barrier together with the cotangent, so CSE cannot merge
  the recomputation with the forward pass and the scheduler cannot run it
  before the cotangent exists.

A module read from text has the tags but no rules: its calls are
differentiated as calls."""

from __future__ import annotations

import functools
import itertools

import numpy as np

from uir._src.core import calls, ops, tracing, tree_util
from uir._src.core.tracing import Tracer
from uir._src.transforms import lapack_rules

_RULES: dict[int, object] = {}
_ids = itertools.count(1)
TAG = calls.TAG


def _jit(fn):
    from uir._src.core.api import jit

    return jit(fn)


def rule_of(inst):
    """The registered rule of a tagged call, or None."""
    if inst.opcode != "call":
        return None
    fa = inst.attributes.get("frontend_attributes") or {}
    tag = fa.get(TAG)
    if tag and tag.startswith("linalg."):
        return lapack_rules.builtin_rule(tag)
    if not tag or ":" not in tag:
        return None
    try:
        return _RULES.get(int(tag.rsplit(":", 1)[1]))
    except ValueError:
        return None


def tagged_call(fn, args, kind: str, rule, name: str):
    """fn(*args) traced into a call tagged with `rule` (registered under a
    fresh id). Returns fn's output pytree of Tracers."""
    rid = next(_ids)
    out, in_tree, n_flat, out_tree = calls.traced_call(
        fn, args, kind=kind, name=name, tag=f"{kind}:{rid}"
    )
    outs = tree_util.tree_leaves(out)
    rule.setup(in_tree, n_flat, out_tree, [(o.shape, o.dtype, o.weak_type) for o in outs])
    _RULES[rid] = rule
    return out


class _Rule:
    def setup(self, in_tree, n_args, out_tree, out_avals):
        self.in_tree, self.n_args = in_tree, n_args
        self.out_tree, self.out_avals = out_tree, out_avals

    def args(self, vals):
        return tree_util.tree_unflatten(self.in_tree, list(vals[: self.n_args]))

    def flat_out(self, out, what: str):
        leaves, tree = tree_util.tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(
                f"{what} must return the structure of the function's output ({self.out_tree}), "
                f"got {tree}"
            )
        flat = []
        for x, (shape, dtype, _) in zip(leaves, self.out_avals, strict=True):
            x = ops.asarray(x)
            if tuple(x.shape) != tuple(shape):
                raise TypeError(
                    f"{what} returned shape {tuple(x.shape)} where the function returns {tuple(shape)}"
                )
            flat.append(ops.convert(x, dtype) if x.dtype != dtype else x)
        return flat


def _differentiable(x) -> bool:
    from uir._src.core import dtypes

    return isinstance(x, Tracer) and (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype))


def _zeros(x):
    return ops.broadcast_to(ops.asarray(np.zeros((), x.dtype)), x.shape)


# --- custom_jvp ---------------------------------------------------------------------


class _JvpRule(_Rule):
    kind = "custom_jvp"

    def __init__(self, jvp, nondiff):
        self.jvp, self.nondiff = jvp, nondiff

    def tangents_out(self, vals, tangents):
        primals = self.args(vals)
        flat_t = [
            (t if t is not None else _zeros(v)) if _differentiable(v) else _zeros(v)
            for v, t in zip(vals[: self.n_args], tangents[: self.n_args], strict=True)
        ]
        ts = tree_util.tree_unflatten(self.in_tree, flat_t)
        out = self.jvp(*self.nondiff, tuple(primals), tuple(ts))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("a custom_jvp rule must return a pair (primal_out, tangent_out)")
        return self.flat_out(out[0], "the custom_jvp rule's primal output"), self.flat_out(
            out[1], "the custom_jvp rule's tangent output"
        )


class custom_jvp:
    """A function with its own JVP rule (jax.custom_jvp): define it with
    `defjvp(jvp)` (jvp(primals, tangents) -> (primal_out, tangent_out)) or
    `defjvps(*per_argument)`. Reverse mode transposes the rule."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp.defjvp: symbolic_zeros=True is not supported")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        def jvp(primals, tangents):
            out = self(*primals)
            t_out = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                t_out = (
                    term if t_out is None else tree_util.tree_map(lambda a, b: a + b, t_out, term)
                )
            if t_out is None:
                t_out = tree_util.tree_map(lambda o: o * 0, out)
            return out, t_out

        self.defjvp(jvp)

    def __call__(self, *args):
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.__name__} using defjvp."
            )
        if tracing.current() is None:
            return _jit(self)(*args)
        nondiff, diff = _split(args, self.nondiff_argnums)
        rule = _JvpRule(self.jvp, nondiff)

        def fn(*a):
            return self.fun(*_merge(nondiff, a, self.nondiff_argnums))

        return tagged_call(fn, tuple(diff), "custom_jvp", rule, self.__name__)


def _split(args, nondiff_argnums):
    for i in nondiff_argnums:
        if isinstance(args[i], Tracer):
            raise TypeError(
                f"argument {i} is in nondiff_argnums but is a traced array; pass arrays as "
                "ordinary arguments (their cotangents may be zero)"
            )
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _merge(nondiff, diff, nondiff_argnums):
    out, it_n, it_d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff) + len(diff)):
        out.append(next(it_n) if i in nondiff_argnums else next(it_d))
    return out


# --- custom_vjp ---------------------------------------------------------------------


class _VjpRule(_Rule):
    kind = "custom_vjp"

    def __init__(self, fwd, bwd, nondiff):
        self.fwd, self.bwd, self.nondiff = fwd, bwd, nondiff

    def forward(self, vals):
        out = self.fwd(*self.nondiff, *self.args(vals))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("a custom_vjp fwd must return a pair (output, residuals)")
        return tuple(self.flat_out(out[0], "custom_vjp's fwd")), out[1]

    def backward(self, residual, vals, ct):
        cts = [c if c is not None else _zeros(v) for c, v in zip(ct, self._outs(vals), strict=True)]
        got = self.bwd(*self.nondiff, residual, tree_util.tree_unflatten(self.out_tree, cts))
        if not isinstance(got, (tuple, list)):
            raise TypeError(
                f"custom_vjp bwd must return a tuple with one cotangent per argument, got "
                f"{type(got).__name__}"
            )
        args = self.args(vals)
        if len(got) != len(args):
            raise TypeError(
                f"custom_vjp bwd returned {len(got)} cotangents for {len(args)} arguments"
            )
        flat = []
        for g, a in zip(got, args, strict=True):
            a_leaves, a_tree = tree_util.tree_flatten(a)
            if g is None:
                flat.extend([None] * len(a_leaves))
                continue
            g_leaves, g_tree = tree_util.tree_flatten(g, is_leaf=lambda v: v is None)
            if len(g_leaves) != len(a_leaves) or (
                tree_util.tree_structure(g) != a_tree and not any(v is None for v in g_leaves)
            ):
                raise TypeError(
                    f"custom_vjp bwd returned a cotangent of structure {g_tree} for an argument "
                    f"of structure {a_tree}"
                )
            for gl, al in zip(g_leaves, a_leaves, strict=True):
                if gl is None or not _differentiable(al):
                    flat.append(None)
                    continue
                gl = ops.asarray(gl)
                if tuple(gl.shape) != tuple(al.shape):
                    raise TypeError(
                        f"custom_vjp bwd returned a cotangent of shape {tuple(gl.shape)} for an "
                        f"argument of shape {tuple(al.shape)}"
                    )
                flat.append(ops.convert(gl, al.dtype) if gl.dtype != al.dtype else gl)
        return flat + [None] * (len(vals) - self.n_args)

    def _outs(self, vals):
        return [_Aval(s, d) for s, d, _ in self.out_avals]


class _Aval:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


class custom_vjp:
    """A function with its own VJP (jax.custom_vjp): `defvjp(fwd, bwd)`,
    fwd(*args) -> (out, residuals), bwd(residuals, ct) -> one cotangent
    per argument (None for zero)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp.defvjp: symbolic_zeros=True is not supported")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.__name__} using defvjp."
            )
        if tracing.current() is None:
            return _jit(self)(*args)
        nondiff, diff = _split(args, self.nondiff_argnums)
        rule = _VjpRule(self.fwd, self.bwd, nondiff)

        def fn(*a):
            return self.fun(*_merge(nondiff, a, self.nondiff_argnums))

        return tagged_call(fn, tuple(diff), "custom_vjp", rule, self.__name__)


# --- checkpoint ---------------------------------------------------------------------


class _CheckpointRule(_Rule):
    kind = "checkpoint"

    def __init__(self, policy, prevent_cse):
        self.policy, self.prevent_cse = policy, prevent_cse

    def saves(self, inst) -> bool:
        if self.policy is None or inst.opcode in ("parameter", "tuple", "get-tuple-element"):
            return False
        return bool(self.policy(inst))


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """fun whose intermediate values the backward pass recomputes instead
    of keeping (jax.checkpoint, also uir.remat): `policy` (from
    uir.checkpoint_policies, or any function of an HloInstruction) says
    which values to keep. Traced into a call tagged "checkpoint"."""
    if fun is None:
        return functools.partial(
            checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums
        )
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args):
        if tracing.current() is None:
            return _jit(wrapped)(*args)
        fixed, rest = (
            (tuple(args[i] for i in static), [a for i, a in enumerate(args) if i not in static])
            if static
            else ((), list(args))
        )

        def fn(*a):
            return fun(*_merge(fixed, a, static))

        rule = _CheckpointRule(policy, prevent_cse)
        return tagged_call(fn, tuple(rest), "checkpoint", rule, getattr(fun, "__name__", "fn"))

    return wrapped


remat = checkpoint


def checkpoint_name(x, name: str):
    """x, marked with `name` for checkpoint policies (save_only_these_names
    and the like): a copy the policies recognise."""
    comp = tracing.current()
    if comp is None:
        return x
    t = ops.asarray(x)
    inst = comp.builder.op(
        "copy",
        comp.resolve(t).inst,
        frontend_attributes={"uir_checkpoint_name": str(name)},
        metadata=comp.metadata(f"checkpoint_name[{name}]"),
    )
    return Tracer(comp, inst, t.shape, t.dtype, t.weak_type)


def name_of(inst) -> str | None:
    if inst.opcode != "copy":
        return None
    return (inst.attributes.get("frontend_attributes") or {}).get("uir_checkpoint_name")


__all__ = [
    "checkpoint",
    "checkpoint_name",
    "custom_jvp",
    "custom_vjp",
    "name_of",
    "remat",
    "rule_of",
]
