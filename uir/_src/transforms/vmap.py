"""uir.vmap, and the Jacobians built from it (jacfwd, jacrev, hessian),
with JAX's signatures."""

from __future__ import annotations

import functools

import numpy as np

from uir._src.core import ops, tracing, tree_util
from uir._src.transforms import api, batching, batching_control, custom, replay


class _Aval:
    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type


def _axes_per_leaf(axes, tree, what: str):
    """One axis (or None) per leaf of `tree`, from a prefix `axes` of it."""
    leaves, treedef = tree_util.tree_flatten(tree)
    if axes is None or isinstance(axes, (int, np.integer)):
        return [axes] * len(leaves)
    axis_leaves, axis_tree = tree_util.tree_flatten(axes, is_leaf=lambda x: x is None)
    if axis_tree == treedef:
        return axis_leaves
    # A prefix: each child of axes covers a subtree.
    if (
        isinstance(axes, (tuple, list))
        and isinstance(tree, (tuple, list))
        and len(axes) == len(tree)
    ):
        out = []
        for a, t in zip(axes, tree, strict=True):
            out += _axes_per_leaf(a, t, what)
        return out
    if isinstance(axes, dict) and isinstance(tree, dict) and set(axes) == set(tree):
        out = []
        for k in sorted(tree):
            out += _axes_per_leaf(axes[k], tree[k], what)
        return out
    raise ValueError(
        f"vmap {what} specification must be a tree prefix of the corresponding value, got "
        f"specification {axes!r} for value tree {treedef}."
    )


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """fun mapped over axes of its arguments (`in_axes`), the results
    stacked along `out_axes`, as jax.vmap."""
    if not callable(fun):
        raise TypeError(f"vmap requires a callable, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    eager = []

    @functools.wraps(fun)
    def vmapped(*args, **kwargs):
        if tracing.current() is None:
            if not eager:
                eager.append(api._jit(lambda *a, **k: vmapped(*a, **k)))
            return eager[0](*args, **kwargs)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)="
                f"{len(in_axes)}, len(args)={len(args)}"
            )
        axes = _axes_per_leaf(in_axes, args, "in_axes") + _axes_per_leaf(0, kwargs, "in_axes")
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        xs = [ops.asarray(x) for x in leaves]
        sizes = {}
        for x, ax in zip(xs, axes, strict=True):
            if ax is None:
                continue
            if not -x.ndim <= ax < x.ndim or x.ndim == 0:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies that "
                    f"its rank should be at least {max(ax, -ax - 1) + 1}, but is only {x.ndim} "
                    f"(its shape is {x.shape})"
                )
            sizes.setdefault(x.shape[ax % x.ndim], []).append(x.shape)
        if len(sizes) > 1:
            raise ValueError(
                "vmap got inconsistent sizes for array axes to be mapped: "
                + "; ".join(f"{len(v)} arguments have size {k}" for k, v in sizes.items())
            )
        if not sizes and axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        size = next(iter(sizes)) if sizes else int(axis_size)
        if axis_size is not None and int(axis_size) != size:
            raise ValueError(f"vmap got axis_size={axis_size} but mapped axes of size {size}")
        vals, flags, avals = [], [], []
        for x, ax in zip(xs, axes, strict=True):
            if ax is None:
                vals.append(x)
                flags.append(False)
                avals.append(_Aval(x.shape, x.dtype, x.weak_type))
            else:
                v = ops.moveaxis(x, ax % x.ndim, 0, "vmap")
                vals.append(v)
                flags.append(True)
                avals.append(_Aval(v.shape[1:], v.dtype, v.weak_type))
        traced = replay.trace(fun, avals, treedef, "vmap")
        outs, bflags = batching_control.batch_computation(
            traced.computation, vals, flags, size, traced.env()
        )
        out_axes_leaves = _axes_per_leaf(
            out_axes, tree_util.tree_unflatten(traced.out_tree, list(outs)), "out_axes"
        )
        results = []
        for o, b, ax in zip(outs, bflags, out_axes_leaves, strict=True):
            if ax is None:
                if b:
                    raise ValueError(
                        "vmap has mapped output but out_axes is None (an output depends on a "
                        "mapped input)"
                    )
                results.append(o)
                continue
            if not b:
                o = batching.bcast_to_batched(o, size, o.shape)
            results.append(ops.moveaxis(o, 0, ax % o.ndim, "vmap"))
        return tree_util.tree_unflatten(traced.out_tree, results)

    return vmapped


def _basis(x):
    """The standard basis of x's space: eye(size) shaped (size, *x.shape)."""
    n = int(np.prod(x.shape, dtype=np.int64))
    return np.eye(n, dtype=x.dtype).reshape((n, *x.shape))


def _jac_argnums(fun, argnums, args, name):
    nums, many = api._argnums(argnums, len(args), name)
    return nums, many, api._partial(fun, args, nums)


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int=False):
    """The Jacobian of fun by reverse mode (one vjp per output element,
    batched by vmap), as jax.jacrev: out_tree of in_tree of arrays shaped
    output.shape + input.shape."""

    @functools.wraps(fun)
    def jac(*args):
        if tracing.current() is None:
            return api._jit(jac)(*args)
        nums, many, f = _jac_argnums(fun, argnums, args, "jacrev")
        diff = tuple(args[i] for i in nums)
        for leaf in tree_util.tree_leaves(diff):
            api._check_tangent_dtype("jacrev", ops.asarray(leaf), allow_int, holomorphic)
        if has_aux:
            y, vjp_fun, aux = api.vjp(f, *diff, has_aux=True)
        else:
            y, vjp_fun = api.vjp(f, *diff)
        y_leaves, y_tree = tree_util.tree_flatten(y)
        rows = []
        for k, yk in enumerate(y_leaves):
            yk = ops.asarray(yk)

            def pull(ct, k=k):
                cts = [
                    ct if j == k else ops.broadcast_to(ops.asarray(np.zeros((), v.dtype)), v.shape)
                    for j, v in enumerate(y_leaves)
                ]
                return vjp_fun(tree_util.tree_unflatten(y_tree, cts))

            stacked = vmap(pull)(_basis(yk))
            rows.append(
                tree_util.tree_map(
                    lambda g, yk=yk: ops.reshape(g, (*yk.shape, *g.shape[1:])), stacked
                )
            )
        per_out = [r if many else r[0] for r in rows]
        out = tree_util.tree_unflatten(y_tree, per_out)
        return (out, aux) if has_aux else out

    return jac


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of fun by forward mode (one jvp per input element,
    batched by vmap), as jax.jacfwd."""

    @functools.wraps(fun)
    def jac(*args):
        if tracing.current() is None:
            return api._jit(jac)(*args)
        nums, many, f = _jac_argnums(fun, argnums, args, "jacfwd")
        diff = tuple(args[i] for i in nums)
        x_leaves, x_tree = tree_util.tree_flatten(diff)
        xs = [ops.asarray(x) for x in x_leaves]
        for x in xs:
            api._check_tangent_dtype("jacfwd", x, holomorphic=holomorphic)
        columns = []  # per input leaf: the output tree of (size, *y.shape)
        aux = None
        for j, xj in enumerate(xs):

            def push(t, j=j):
                ts = [
                    t if i == j else ops.broadcast_to(ops.asarray(np.zeros((), x.dtype)), x.shape)
                    for i, x in enumerate(xs)
                ]
                res = api.jvp(
                    lambda *d: f(*tree_util.tree_unflatten(x_tree, list(d))),
                    tuple(xs),
                    tuple(ts),
                    has_aux=has_aux,
                )
                return (res[1], res[2]) if has_aux else res[1]

            if has_aux:
                col = vmap(lambda t: push(t)[0], out_axes=-1)(_basis(xj))
                aux = api.jvp(
                    lambda *d: f(*tree_util.tree_unflatten(x_tree, list(d))),
                    tuple(xs),
                    tuple(xs),
                    has_aux=True,
                )[2]
            else:
                col = vmap(push, out_axes=-1)(_basis(xj))
            columns.append(
                tree_util.tree_map(lambda c, xj=xj: ops.reshape(c, (*c.shape[:-1], *xj.shape)), col)
            )
        y_tree = tree_util.tree_structure(columns[0])
        per_leaf = [tree_util.tree_leaves(c) for c in columns]
        outs = []
        for k in range(y_tree.num_leaves):
            per_in = tree_util.tree_unflatten(x_tree, [per_leaf[j][k] for j in range(len(xs))])
            outs.append(per_in if many else per_in[0])
        out = tree_util.tree_unflatten(y_tree, outs)
        return (out, aux) if has_aux else out

    return jac


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """jacfwd(jacrev(fun)), as jax.hessian."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# --- custom_vjp under vmap ------------------------------------------------------------


class _BatchedVjpRule(custom._Rule):
    """A custom_vjp rule mapped over a batch: its fwd and bwd run under
    vmap (as JAX batches them), the residuals carrying the batch first."""

    kind = "custom_vjp"

    def __init__(self, rule, n_args):
        self.rule, self.flat_args = rule, n_args

    def forward(self, vals):
        def fwd(*example):
            out, res = self.rule.forward(list(example))
            return tuple(out), res

        return vmap(fwd)(*vals[: self.flat_args])

    def backward(self, residual, vals, ct):
        n = self.flat_args

        def bwd(res, cts, *example):
            got = self.rule.backward(res, list(example), list(cts))
            return tuple(
                custom._zeros(x) if g is None else g for g, x in zip(got, example, strict=True)
            )

        got = vmap(bwd)(residual, tuple(ct), *vals[:n])
        return [
            g if custom._differentiable(v) else None for g, v in zip(got, vals[:n], strict=True)
        ]


class _BatchedJvpRule(custom._Rule):
    """A custom_jvp rule mapped over a batch: the rule runs under vmap."""

    kind = "custom_jvp"

    def __init__(self, rule, n_args):
        self.rule, self.flat_args = rule, n_args

    def tangents_out(self, vals, tangents):
        n = self.flat_args
        ts = [
            custom._zeros(v) if t is None else t
            for t, v in zip(tangents[:n], vals[:n], strict=True)
        ]

        def rule(primals, tangents):
            out, t_out = self.rule.tangents_out(list(primals), list(tangents))
            return tuple(out), tuple(t_out)

        out, t_out = vmap(rule)(tuple(vals[:n]), tuple(ts))
        return list(out), list(t_out)


def _batch_custom_call(inst, rule, vals, size):
    """A custom rule's call on batched operands: a call of the batched
    function, tagged with the rule under vmap (custom_vjp: fwd and bwd
    mapped; custom_jvp: the rule mapped; checkpoint: the same policy)."""
    if len(vals) != rule.n_args:
        return None  # the function reads outer values: a loop over the examples
    callee = inst.attributes["to_apply"]

    def fn(*args):
        (root,) = replay.replay(callee, list(args))
        return tuple(root)

    def batched(*args):
        return vmap(fn)(*args)

    if rule.kind == "custom_vjp":
        new_rule = _BatchedVjpRule(rule, len(vals))
    elif rule.kind == "custom_jvp":
        new_rule = _BatchedJvpRule(rule, len(vals))
    else:
        new_rule = type(rule)(rule.policy, rule.prevent_cse)
    return tuple(custom.tagged_call(batched, tuple(vals), rule.kind, new_rule, callee.name))


for _kind in ("custom_vjp", "custom_jvp", "checkpoint"):
    batching_control.CUSTOM_BATCHERS[_kind] = _batch_custom_call
