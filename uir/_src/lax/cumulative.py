"""jax.lax's cumulative operations (cumsum, cumprod, cummax, cummin,
cumlogsumexp) and associative_scan."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray
from uir._src.lax.elementwise import _INEXACT, _check
from uir._src.lax.elementwise import _imag_part as imag
from uir._src.lax.elementwise import _real_part as real
from uir._src.lax.lax import reduce_max, rev
from uir._src.lax.slicing import slice_in_dim


def _running(x, ax: int, opcode: str, name: str):
    """The running `opcode` of x along axis ax: a reduce-window whose window
    covers the whole axis, padded in front (the result keeps x's dtype)."""
    n = x.shape[ax]
    reducer = ops.scalar_computation(
        f"{name}_reducer", x.dtype, lambda p, q: ops.binary(opcode, p, q)
    )
    init = ops.asarray(ops.reduction_identity(opcode, x.dtype))
    window = (
        "{"
        + " ".join(
            [
                "size=" + "x".join(str(n if i == ax else 1) for i in range(x.ndim)),
                "pad=" + "x".join(f"{n - 1 if i == ax else 0}_0" for i in range(x.ndim)),
            ]
        )
        + "}"
    )
    out = ops._comp().emit(
        "reduce-window",
        x,
        init,
        window=window,
        to_apply=reducer,
        shape=(x.shape, x.dtype),
        op_name=name,
    )
    out.weak_type = x.weak_type
    return out


def _cumulative(name: str, opcode: str):
    def f(operand, axis: int = 0, reverse: bool = False):
        x = asarray(operand)
        ax = ops.normalize_axis(axis, x.ndim, name)
        if reverse:
            x = rev(x, [ax])
        out = _running(x, ax, opcode, name)  # lax keeps the dtype
        return rev(out, [ax]) if reverse else out

    f.__name__ = name
    f.__doc__ = f"The running {opcode} along `axis` (from the end with reverse), as jax.lax.{name}."
    return eager(f)


cumsum = _cumulative("cumsum", "add")
cumprod = _cumulative("cumprod", "multiply")
cummax = _cumulative("cummax", "maximum")
cummin = _cumulative("cummin", "minimum")


@eager
def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """The running log(sum(exp)) along `axis`, stably."""
    x = _check("cumlogsumexp", asarray(operand), _INEXACT)
    ax = ops.normalize_axis(axis, x.ndim, "cumlogsumexp")
    m = reduce_max(x, (ax,))
    finite = ops.is_finite(real(m))
    if dtypes.is_complex(m.dtype):
        finite = ops.binary("and", finite, ops.is_finite(imag(m)))
    m = ops.select(finite, m, asarray(np.zeros((), m.dtype)))
    m = ops.reshape(m, tuple(1 if i == ax else s for i, s in enumerate(x.shape)))
    shifted = ops.unary("exponential", ops.binary("subtract", x, m))
    return ops.binary("add", ops.unary("log", cumsum(shifted, ax, reverse)), m)


@eager
def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The running combination of elems along `axis` by an associative fn,
    in log2(n) rounds of fn over whole arrays (Ladner-Fischer style)."""
    from uir._src.core import tree_util

    leaves, tree = tree_util.tree_flatten(elems)
    xs = [asarray(x) for x in leaves]
    if not xs:
        return elems
    ax = ops.normalize_axis(axis, xs[0].ndim, "associative_scan")
    if reverse:
        xs = [rev(x, [ax]) for x in xs]
    n = xs[0].shape[ax]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return [asarray(v) for v in tree_util.tree_leaves(out)]

    shift = 1
    while shift < n:
        head = [slice_in_dim(x, 0, shift, 1, ax) for x in xs]
        tail = combine(
            [slice_in_dim(x, 0, n - shift, 1, ax) for x in xs],
            [slice_in_dim(x, shift, n, 1, ax) for x in xs],
        )
        xs = [ops.concatenate([h, t], ax) for h, t in zip(head, tail, strict=True)]
        shift *= 2
    if reverse:
        xs = [rev(x, [ax]) for x in xs]
    return tree_util.tree_unflatten(tree, xs)


__all__ = [
    "associative_scan",
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
]
