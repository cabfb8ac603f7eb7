"""uir.nn: the activation and normalization functions of jax.nn."""

from uir._src.nn_impl import (  # noqa: F401
    gelu,
    layer_norm,
    log_softmax,
    logsumexp,
    one_hot,
    relu,
    sigmoid,
    silu,
    softmax,
    swish,
)
