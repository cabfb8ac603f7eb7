"""jax.lax's random-bit operations: rng_uniform and rng_bit_generator."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.lax import RandomAlgorithm


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
    from uir._src.lax.lax import bitcast_convert_type

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


__all__ = [
    "rng_bit_generator",
    "rng_uniform",
]
