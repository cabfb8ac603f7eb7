"""jax.lax's random-bit ops (rng_uniform, rng_bit_generator), broadcast_like,
scatter_apply, the patch and locally connected convolutions
(conv_general_dilated_patches, conv_general_dilated_local, built on
conv_general_dilated as JAX builds them) and ragged_dot."""

from __future__ import annotations

import math

import numpy as np

from uir._src import dtypes, numpy_impl, numpy_shapes, ops
from uir._src.eager import eager
from uir._src.lax_ops import RandomAlgorithm
from uir._src.lax_slicing import _scatter
from uir._src.lax_window import _conv_labels, conv_general_dilated
from uir._src.ops import asarray, fail


@eager
def rng_uniform(a, b, shape):
    """Uniform values in [a, b) of a's dtype, from XLA's stateful rng op
    (seeded per run: uir.evaluate(..., seed=))."""
    lo, hi = ops.promote("rng_uniform", asarray(a), asarray(b))
    if lo.ndim or hi.ndim:
        fail(
            "rng_uniform", f"a and b must be scalars, got {ops.describe(lo)} and {ops.describe(hi)}"
        )
    out = ops._comp().emit(
        "rng",
        lo,
        hi,
        distribution="rng_uniform",
        shape=(tuple(shape), lo.dtype),
        op_name="rng_uniform",
    )
    return out


_ALGORITHMS = {
    RandomAlgorithm.RNG_DEFAULT: "rng_default",
    RandomAlgorithm.RNG_THREE_FRY: "rng_three_fry",
    RandomAlgorithm.RNG_PHILOX: "rng_philox",
}


@eager
def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT):
    """(new_key, bits): `shape` random unsigned integers of dtype from the
    counter-based generator `algorithm` (XLA's rng-bit-generator; 8- and
    16-bit results are 32-bit draws narrowed, as in JAX)."""
    key = asarray(key)
    dtype = np.dtype(dtypes.canonicalize(dtype))
    if dtype.kind != "u":
        fail("rng_bit_generator", f"dtype must be an unsigned integer type, got {dtype}")
    if key.ndim != 1 or np.dtype(key.dtype) not in (np.uint32, np.uint64):
        fail("rng_bit_generator", f"key must be a uint32 or uint64 vector, got {ops.describe(key)}")
    from uir._src.lax_impl import bitcast_convert_type

    draw = dtype if dtype.itemsize >= 4 else np.dtype(np.uint32)
    # XLA's state is 64-bit: a uint32 key is read as pairs (as JAX does).
    state = key
    if np.dtype(key.dtype) == np.uint32:
        if key.shape[0] % 2:
            fail("rng_bit_generator", f"a uint32 key needs an even length, got {ops.describe(key)}")
        state = bitcast_convert_type(ops.reshape(key, (key.shape[0] // 2, 2)), np.uint64)
    new_state, bits = ops._comp().emit(
        "rng-bit-generator",
        state,
        algorithm=_ALGORITHMS[RandomAlgorithm(algorithm)],
        shape=[(state.shape, state.dtype), (tuple(shape), draw)],
        op_name="rng_bit_generator",
    )
    if draw != dtype:
        bits = ops.convert(bits, dtype)
    new_key = new_state
    if np.dtype(key.dtype) == np.uint32:
        new_key = ops.reshape(bitcast_convert_type(new_state, np.uint32), key.shape)
    return new_key, bits


@eager
def broadcast_like(arr, like_arr):
    """arr broadcast to like_arr's shape."""
    return ops.broadcast_to(asarray(arr), tuple(asarray(like_arr).shape), "broadcast_like")


@eager
def scatter_apply(
    operand,
    scatter_indices,
    func,
    dimension_numbers,
    *,
    update_shape=(),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode=None,
):
    """operand with func applied (elementwise, once per index) at the
    positions scatter_indices names, as a scatter whose combiner ignores
    its update."""
    del indices_are_sorted, unique_indices
    if mode not in (None, "drop", "fill", "promise_in_bounds") and str(mode) not in (
        "GatherScatterMode.FILL_OR_DROP",
        "GatherScatterMode.PROMISE_IN_BOUNDS",
    ):
        fail("scatter_apply", f"mode {mode!r} is not supported (out-of-bounds indices are dropped)")
    x = asarray(operand)
    unused = ops.broadcast_to(
        ops.convert(asarray(0), x.dtype), tuple(update_shape), "scatter_apply"
    )
    apply = _scatter("scatter_apply", lambda a, _: asarray(func(a)))
    return apply(x, scatter_indices, unused, dimension_numbers)


def _specs(dimension_numbers, ndim: int):
    """(lhs, rhs, out) specs as JAX's ConvDimensionNumbers: for each, the
    positions of batch (O for rhs), feature (I) and the spatial dimensions."""
    labels = _conv_labels(dimension_numbers, ndim)
    lhs, rest = labels.split("_")
    rhs, out = rest.split("->")
    spatial = [str(i) for i in range(ndim - 2)]

    def spec(s: str, a: str, b: str):
        return (s.index(a), s.index(b), *[s.index(c) for c in spatial])

    return spec(lhs, "b", "f"), spec(rhs, "o", "i"), spec(out, "b", "f")


@eager
def conv_general_dilated_patches(
    lhs,
    filter_shape,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """The patches a convolution with `filter_shape` would see, each
    flattened into the feature dimension (channel-major: C * prod(filter)
    features), by a grouped convolution with a one-hot kernel (as JAX)."""
    del precision
    x = asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    if len(filter_shape) != x.ndim - 2:
        fail(
            "conv_general_dilated_patches",
            f"filter_shape {filter_shape} needs {x.ndim - 2} spatial sizes for {ops.describe(x)}",
        )
    lhs_spec, rhs_spec, _ = _specs(dimension_numbers, x.ndim)
    spatial = math.prod(filter_shape)
    channels = x.shape[lhs_spec[1]]
    kernel = np.broadcast_to(np.eye(spatial), (channels, spatial, spatial))
    kernel = kernel.reshape(channels * spatial, 1, *filter_shape)
    # From (O, I, spatial...) to the layout rhs_spec names.
    order = [rhs_spec.index(d) for d in range(x.ndim)]
    kernel = np.transpose(kernel, order).astype(np.dtype(x.dtype))
    return conv_general_dilated(
        x,
        asarray(kernel),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count=channels,
        preferred_element_type=preferred_element_type,
    )


@eager
def conv_general_dilated_local(
    lhs,
    rhs,
    window_strides,
    padding,
    filter_shape,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
):
    """A locally connected (unshared) convolution: each output position has
    a kernel of its own, rhs's spatial dimensions being the output's; the
    patches contracted with rhs (as JAX)."""
    from uir._src.lax_impl import dot_general
    from uir._src.numpy_shapes import moveaxis

    x = asarray(lhs)
    patches = conv_general_dilated_patches(
        x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers
    )
    _, rhs_spec, out_spec = _specs(dimension_numbers, x.ndim)
    lhs_c, rhs_c = [out_spec[1]], [rhs_spec[1]]
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    w = asarray(rhs)
    patches, w = ops.promote("conv_general_dilated_local", patches, w)
    del precision
    out = dot_general(patches, w, ((lhs_c, rhs_c), (lhs_b, rhs_b)))
    return moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


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
    from uir._src.lax_impl import dot_general

    del out_sharding
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
    ends = numpy_shapes.cumsum(sizes.astype(np.int32))
    rows = numpy_impl.arange(m, dtype=np.int32)
    group = numpy_impl.sum(
        (numpy_shapes.expand_dims(rows, 1) >= ends).astype(np.int32), axis=1
    )  # [m]
    mask = numpy_shapes.expand_dims(group, 1) == numpy_impl.arange(g, dtype=np.int32)  # [m, g]
    del precision
    every = dot_general(
        x, w, (([1], [1]), ([], [])), preferred_element_type=preferred_element_type
    )  # [m, g, n]
    picked = numpy_impl.where(
        numpy_shapes.expand_dims(mask, -1), every, numpy_impl.zeros((), every.dtype)
    )
    return numpy_impl.sum(picked, axis=1).astype(every.dtype)


def _remaining(rank: int, *taken) -> list[int]:
    used = {d for group in taken for d in group}
    return [d for d in range(rank) if d not in used]


def _expand_groups(x, dim: int, sizes, prefix: list[int]):
    """x[g, ...]: x with everything outside group g's stretch of `dim` set
    to zero, for each group g; sizes is [*x's prefix dims, g] (the groups
    may differ along x's `prefix` dimensions)."""
    from uir._src.lax_impl import broadcast_in_dim

    g = sizes.shape[-1]
    ends = numpy_shapes.cumsum(sizes, axis=-1)
    starts = ends - sizes
    shape = (g, *x.shape)
    where_in = [0, *[1 + d for d in prefix]]

    def spread(v):  # [*prefix, g] -> [g, *x.shape]
        return broadcast_in_dim(numpy_shapes.moveaxis(v, -1, 0), shape, where_in)

    position = ops.iota(np.dtype(sizes.dtype), shape, 1 + dim)
    inside = (spread(starts) <= position) & (position < spread(ends))
    wide = ops.broadcast_to(x, shape, "ragged_dot") if x.ndim else x
    return numpy_impl.where(inside, wide, numpy_impl.zeros((), x.dtype))


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
    from uir._src.lax_impl import dot_general

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
    "broadcast_like",
    "conv_general_dilated_local",
    "conv_general_dilated_patches",
    "ragged_dot",
    "ragged_dot_general",
    "rng_bit_generator",
    "rng_uniform",
    "scatter_apply",
]
