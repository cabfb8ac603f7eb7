"""jax.lax's ragged dots: ragged_dot and ragged_dot_general, a dot whose
lhs is split into groups along one dimension, each group with its own
slice of rhs."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.cumulative import _running
from uir._src.lax.lax import broadcast_in_dim, dot_general, reduce_sum


def _int32(x):
    return ops.convert(x, np.dtype(np.int32))


@eager
def ragged_dot(
    lhs,
    rhs,
    group_sizes,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """lhs[m, k] @ rhs[g, k, n] by groups: the first group_sizes[0] rows of
    lhs with rhs[0], the next group_sizes[1] with rhs[1], ...; rows past
    the groups are zero."""
    del out_sharding, precision
    if group_offset is not None:
        fail("ragged_dot", "group_offset (for sharded groups) is not supported")
    x, w = ops.promote("ragged_dot", asarray(lhs), asarray(rhs))
    sizes = asarray(group_sizes)
    if x.ndim != 2 or w.ndim != 3 or w.shape[1] != x.shape[1] or sizes.shape != (w.shape[0],):
        fail(
            "ragged_dot",
            f"needs lhs [m, k], rhs [g, k, n] and group_sizes [g], got {ops.describe(x)}, "
            f"{ops.describe(w)} and {ops.describe(sizes)}",
        )
    if not dtypes.is_int(sizes.dtype):
        fail("ragged_dot", f"group_sizes must be integers, got {ops.describe(sizes)}")
    m, g = x.shape[0], w.shape[0]
    ends = _running(_int32(sizes), 0, "add", "cumsum")  # [g]
    rows = ops.iota(np.dtype(np.int32), (m, 1), 0)
    group = reduce_sum(_int32(ops.compare(rows, ends, "GE", "ge")), (1,))  # [m]
    groups = ops.iota(np.dtype(np.int32), (m, g), 1)
    mask = ops.compare(ops.reshape(group, (m, 1)), groups, "EQ", "eq")  # [m, g]
    every = dot_general(
        x, w, (([1], [1]), ([], [])), preferred_element_type=preferred_element_type
    )  # [m, g, n]
    picked = ops.select(ops.reshape(mask, (m, g, 1)), every, asarray(np.zeros((), every.dtype)))
    return reduce_sum(picked, (1,))


def _remaining(rank: int, *taken) -> list[int]:
    used = {d for group in taken for d in group}
    return [d for d in range(rank) if d not in used]


def _expand_groups(x, dim: int, sizes, prefix: list[int]):
    """x[g, ...]: x with everything outside group g's stretch of `dim` set
    to zero, for each group g; sizes is [*x's prefix dims, g] (the groups
    may differ along x's `prefix` dimensions)."""
    if sizes.dtype.itemsize < 4:
        sizes = _int32(sizes)
    g = sizes.shape[-1]
    ends = _running(sizes, sizes.ndim - 1, "add", "cumsum")
    starts = ops.binary("subtract", ends, sizes)
    shape = (g, *x.shape)
    where_in = [0, *[1 + d for d in prefix]]

    def spread(v):  # [*prefix, g] -> [g, *x.shape]
        last_first = ops.transpose(v, [v.ndim - 1, *range(v.ndim - 1)])
        return broadcast_in_dim(last_first, shape, where_in)

    position = ops.iota(np.dtype(sizes.dtype), shape, 1 + dim)
    inside = ops.binary(
        "and",
        ops.compare(spread(starts), position, "LE", "le"),
        ops.compare(position, spread(ends), "LT", "lt"),
    )
    wide = ops.broadcast_to(x, shape, "ragged_dot") if x.ndim else x
    return ops.select(inside, wide, asarray(np.zeros((), x.dtype)))


@eager
def ragged_dot_general(
    lhs,
    rhs,
    group_sizes,
    ragged_dot_dimension_numbers,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """A dot whose lhs is ragged along one dimension, split into groups of
    group_sizes ([*prefix, g], or [g] for all): a non-contracting ragged
    dimension takes rhs's group dimension per group ([b,m,k] x [g,b,k,n] ->
    [b,m,n]); a contracting one gives a product per group ([b,m,k] x
    [b,k,n] -> [g,b,m,n]); a batch one is an ordinary dot (as JAX)."""
    del precision, out_sharding
    if group_offset is not None:
        fail("ragged_dot_general", "group_offset (for sharded groups) is not supported")
    dn = ragged_dot_dimension_numbers
    (l_contract, r_contract), (l_batch, r_batch) = dn.dot_dimension_numbers
    l_contract, r_contract = list(l_contract), list(r_contract)
    l_batch, r_batch = list(l_batch), list(r_batch)
    x, w = ops.promote("ragged_dot_general", asarray(lhs), asarray(rhs))
    sizes = asarray(group_sizes)
    if len(dn.lhs_ragged_dimensions) != 1:
        fail("ragged_dot_general", "needs exactly one lhs ragged dimension")
    ragged = dn.lhs_ragged_dimensions[0]
    noncontract = _remaining(x.ndim, l_contract, l_batch)

    def prefix_of(rank, dim, batch, contract, kind):
        free = _remaining(rank, contract, batch)
        if kind == "noncontracting":
            return batch + free[: free.index(dim)]
        if kind == "contracting":
            return batch + contract[: contract.index(dim)]
        return batch[: batch.index(dim)]

    if ragged in noncontract:
        kind = "noncontracting"
    elif ragged in l_contract:
        kind = "contracting"
    elif ragged in l_batch:
        kind = "batch"
    else:
        fail("ragged_dot_general", f"lhs ragged dimension {ragged} is not a dimension of lhs")
    l_prefix = prefix_of(x.ndim, ragged, l_batch, l_contract, kind)
    if sizes.ndim == 1:
        sizes = ops.broadcast_to(
            sizes, (*[x.shape[d] for d in l_prefix], sizes.shape[0]), "ragged_dot"
        )
    incr = lambda dims: [d + 1 for d in dims]  # noqa: E731
    if kind == "noncontracting":
        if len(dn.rhs_group_dimensions) != 1:
            fail(
                "ragged_dot_general",
                "a non-contracting ragged dimension needs one rhs group dimension",
            )
        return dot_general(
            _expand_groups(x, ragged, sizes, l_prefix),
            w,
            (
                ([*incr(l_contract), 0], [*r_contract, dn.rhs_group_dimensions[0]]),
                (incr(l_batch), r_batch),
            ),
            preferred_element_type,
        )
    if kind == "contracting":
        r_ragged = r_contract[l_contract.index(ragged)]
        r_prefix = prefix_of(w.ndim, r_ragged, r_batch, r_contract, kind)
        return dot_general(
            _expand_groups(x, ragged, sizes, l_prefix),
            _expand_groups(w, r_ragged, sizes, r_prefix),
            ((incr(l_contract), incr(r_contract)), ([0, *incr(l_batch)], [0, *incr(r_batch)])),
            preferred_element_type,
        )
    return dot_general(x, w, ((l_contract, r_contract), (l_batch, r_batch)), preferred_element_type)


__all__ = [
    "ragged_dot",
    "ragged_dot_general",
]
