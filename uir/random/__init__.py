"""uir.random: jax.random's keys and distributions on Threefry-2x32, giving
the bits JAX gives for the same key."""

from uir._src.random_impl import (
    PRNGKey,
    bernoulli,
    bits,
    categorical,
    choice,
    exponential,
    fold_in,
    gumbel,
    key,
    key_data,
    normal,
    permutation,
    randint,
    split,
    truncated_normal,
    uniform,
    wrap_key_data,
)

__all__ = [
    "PRNGKey",
    "bernoulli",
    "bits",
    "categorical",
    "choice",
    "exponential",
    "fold_in",
    "gumbel",
    "key",
    "key_data",
    "normal",
    "permutation",
    "randint",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
]
