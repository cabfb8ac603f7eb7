"""uir.grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev and
hessian, with JAX's signatures. Each traces the function once into HLO of
its own and replays it into the computation being traced with the rules
of ad.py, so the result is traced HLO again; called outside a trace, the
transformed function runs as uir.jit would run it."""

from __future__ import annotations

import functools

import numpy as np

from uir._src.core import dtypes, ops, tracing, tree_util
from uir._src.core.tracing import Tracer
from uir._src.transforms import ad, replay


def _jit(fn):
    from uir._src.core.api import jit

    return jit(fn)


def _leaves_as_tracers(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    return [ops.asarray(x) for x in leaves], treedef


class _Split:
    """fun's output split into the differentiated part and `aux`."""

    def __init__(self, fun, has_aux: bool, name: str):
        self.fun, self.has_aux, self.name = fun, has_aux, name
        self.n_out = None
        self.out_tree = None
        self.aux_tree = None

    def __call__(self, *args):
        out = self.fun(*args)
        aux = None
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    f"{self.name} with has_aux=True needs a function returning a pair "
                    f"(output, auxiliary data), got {type(out).__name__}"
                )
            out, aux = out
        leaves, self.out_tree = tree_util.tree_flatten(out)
        aux_leaves, self.aux_tree = tree_util.tree_flatten(aux)
        self.n_out = len(leaves)
        return (*leaves, *aux_leaves)


def _check_tangent_dtype(name, x, allow_int=False, holomorphic=False):
    d = np.dtype(x.dtype)
    if holomorphic:
        if not dtypes.is_complex(d):
            raise TypeError(
                f"{name} with holomorphic=True requires inputs with complex dtype, but got {d.name}."
            )
        return
    if dtypes.is_float(d) or dtypes.is_complex(d):
        return
    if not allow_int:
        raise TypeError(
            f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
            f"of np.inexact), but got {d.name}. If you want to use Boolean- or integer-valued "
            "inputs, use vjp or set allow_int to True."
        )


def vjp(fun, *primals, has_aux: bool = False):
    """(fun(*primals), vjp_fun[, aux]): vjp_fun(cotangent) gives the
    cotangents of the primals, as jax.vjp."""
    if tracing.current() is None:
        return _vjp_eager(fun, primals, has_aux)
    xs, treedef = _leaves_as_tracers(primals)
    split = _Split(fun, has_aux, "vjp")
    flat_tree = tree_util.tree_flatten((tuple(xs), {}))[1]
    traced = replay.trace(
        lambda *a: split(*tree_util.tree_unflatten(treedef, a)), xs, flat_tree, "vjp"
    )
    outs, backward = ad.vjp_computation(traced.computation, xs, traced.env())
    n = split.n_out
    out = tree_util.tree_unflatten(split.out_tree, list(outs[:n]))
    aux = tree_util.tree_unflatten(split.aux_tree, list(outs[n:]))

    def vjp_fun(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != split.out_tree:
            raise ValueError(
                f"vjp: the cotangent's structure {ct_tree} differs from the output's "
                f"{split.out_tree}"
            )
        cts = []
        for c, o in zip(ct_leaves, outs[:n], strict=True):
            c = ops.asarray(c)
            if c.shape != o.shape:
                raise ValueError(
                    f"vjp: a cotangent of shape {c.shape} for an output of shape {o.shape}"
                )
            cts.append(ops.convert(c, o.dtype) if rules_differentiable(o) else None)
        ct_out = tuple(cts) + (None,) * (len(outs) - n)
        grads = backward(ct_out)
        full = [g if g is not None else _zero_cotangent(x) for g, x in zip(grads, xs, strict=True)]
        return tree_util.tree_unflatten(treedef, full)

    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def rules_differentiable(x) -> bool:
    return dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)


def _zero_cotangent(x):
    if rules_differentiable(x):
        return ops.broadcast_to(ops.asarray(np.zeros((), x.dtype)), x.shape)
    # JAX gives float0 zeros for integer inputs; uir gives zeros of the
    # input's own dtype (NumPy has no float0).
    return ops.broadcast_to(ops.asarray(np.zeros((), x.dtype)), x.shape)


def _vjp_eager(fun, primals, has_aux):
    results = _jit(lambda *p: vjp(fun, *p, has_aux=has_aux)[::2] if has_aux else vjp(fun, *p)[0])(
        *primals
    )
    backward = _jit(lambda p, c: vjp(fun, *p, has_aux=has_aux)[1](c))

    def vjp_fun(ct):
        return backward(primals, ct)

    if has_aux:
        return results[0], vjp_fun, results[1]
    return results, vjp_fun


def jvp(fun, primals, tangents, has_aux: bool = False):
    """(fun(*primals), the derivative along tangents[, aux]), as jax.jvp."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp: {len(primals)} primals and {len(tangents)} tangents; they must match"
        )
    if tracing.current() is None:
        return _jit(lambda p, t: jvp(fun, p, t, has_aux=has_aux))(tuple(primals), tuple(tangents))
    xs, treedef = _leaves_as_tracers(tuple(primals))
    ts, ttree = _leaves_as_tracers(tuple(tangents))
    if ttree != treedef:
        raise ValueError(f"jvp: tangents {ttree} do not match the primals' structure {treedef}")
    for x, t in zip(xs, ts, strict=True):
        if x.shape != t.shape:
            raise ValueError(f"jvp: primal and tangent shapes differ: {x.shape} and {t.shape}")
        if rules_differentiable(x) and t.dtype != x.dtype:
            raise TypeError(
                f"primal and tangent arguments to jvp do not match; dtypes must be equal, got "
                f"{x.dtype.name} and {t.dtype.name}"
            )
    split = _Split(fun, has_aux, "jvp")
    flat_tree = tree_util.tree_flatten((tuple(xs), {}))[1]
    traced = replay.trace(
        lambda *a: split(*tree_util.tree_unflatten(treedef, a)), xs, flat_tree, "jvp"
    )
    tangents_in = [t if rules_differentiable(x) else None for x, t in zip(xs, ts, strict=True)]
    outs, touts = ad.jvp_computation(traced.computation, xs, tangents_in, traced.env())
    n = split.n_out
    touts = touts if touts is not None else (None,) * len(outs)
    tan = [
        t if t is not None else _zero_cotangent(o) for t, o in zip(touts[:n], outs[:n], strict=True)
    ]
    out = tree_util.tree_unflatten(split.out_tree, list(outs[:n]))
    tout = tree_util.tree_unflatten(split.out_tree, tan)
    if has_aux:
        return out, tout, tree_util.tree_unflatten(split.aux_tree, list(outs[n:]))
    return out, tout


def linearize(fun, *primals, has_aux: bool = False):
    """(fun(*primals), f_jvp[, aux]) where f_jvp(*tangents) is the jvp at
    primals, as jax.linearize."""
    result = jvp(fun, primals, primals, has_aux=has_aux)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]

    if has_aux:
        return result[0], f_jvp, result[2]
    return result[0], f_jvp


def _argnums(argnums, nargs: int, name: str):
    many = isinstance(argnums, (tuple, list))
    nums = list(argnums) if many else [argnums]
    for a in nums:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{name}: argnums must be ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{name}: argnums {argnums!r} out of bounds for a function of {nargs} "
                "positional arguments"
            )
    return [a % nargs for a in nums], many


def _partial(fun, args, nums):
    def f(*diff):
        full = list(args)
        for i, v in zip(nums, diff, strict=True):
            full[i] = v
        return fun(*full)

    return f


def value_and_grad(
    fun,
    argnums=0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
):
    """A function giving (fun(*args), the gradient of fun with respect to
    the arguments `argnums`), as jax.value_and_grad."""
    if reduce_axes:
        raise NotImplementedError("value_and_grad: reduce_axes is not supported (JAX removed it)")

    eager = []

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        if tracing.current() is None:
            if not eager:
                eager.append(_jit(lambda *a, **k: value_and_grad_f(*a, **k)))
            return eager[0](*args, **kwargs)
        nums, many = _argnums(argnums, len(args), "grad")
        f = _partial(lambda *a: fun(*a, **kwargs), args, nums)
        diff = [args[i] for i in nums]
        for leaf in tree_util.tree_leaves(diff):
            _check_tangent_dtype("grad", ops.asarray(leaf), allow_int, holomorphic)
        if has_aux:
            out, vjp_fun, aux = vjp(f, *diff, has_aux=True)
        else:
            out, vjp_fun = vjp(f, *diff)
        out_leaves = tree_util.tree_leaves(out)
        if len(out_leaves) != 1 or out_leaves[0].shape != ():
            shape = out_leaves[0].shape if len(out_leaves) == 1 else None
            raise TypeError(
                "Gradient only defined for scalar-output functions. Output "
                + (f"had shape: {shape}." if shape is not None else f"was {out!r}.")
            )
        y = out_leaves[0]
        if holomorphic:
            if not dtypes.is_complex(y.dtype):
                raise TypeError(
                    "grad with holomorphic=True requires outputs with complex dtype, but got "
                    f"{y.dtype.name}."
                )
        elif not dtypes.is_float(y.dtype):
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {y.dtype.name}. For holomorphic differentiation, pass "
                "holomorphic=True. For differentiation of non-holomorphic functions involving "
                "complex outputs, use jax.vjp directly."
            )
        g = vjp_fun(
            tree_util.tree_unflatten(
                tree_util.tree_structure(out),
                [ops.broadcast_to(ops.asarray(np.ones((), y.dtype)), ())],
            )
        )
        g = tuple(g) if many else g[0]
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(
    fun,
    argnums=0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
):
    """The gradient of scalar-valued `fun` with respect to its arguments
    `argnums`, as jax.grad."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (out, g) = vg(*args, **kwargs)
        return (g, out[1]) if has_aux else g

    return grad_f


def is_tracer(x) -> bool:
    return isinstance(x, Tracer)
