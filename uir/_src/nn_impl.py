"""The activation and normalization functions of jax.nn (uir.nn's implementation)."""

from __future__ import annotations

import math

import numpy as np

import uir.numpy as jnp
from uir._src import dtypes, ops
from uir._src.eager import eager


@eager
def relu(x):
    return jnp.maximum(x, 0)


@eager
def sigmoid(x):
    x = jnp.asarray(x)
    return ops.unary(
        "logistic",
        x if dtypes.is_float(x.dtype) else x.astype(dtypes.default_float()),
        op_name="logistic",
    )


@eager
def silu(x):
    return jnp.multiply(x, sigmoid(x))


swish = silu


@eager
def gelu(x, approximate: bool = True):
    """The tanh approximation by default (as jax.nn.gelu); approximate=False
    is the exact x * Phi(x) with erf."""
    x = jnp.asarray(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + jnp.tanh(inner))
    return 0.5 * x * (1 + jnp.erf(x / math.sqrt(2)))


@eager
def logsumexp(a, axis=None, keepdims: bool = False):
    x = jnp.asarray(a)
    m = jnp.max(x, axis=axis, keepdims=True)
    m = jnp.where(jnp.isfinite(m), m, 0)
    out = jnp.log(jnp.sum(jnp.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        axes = ops.normalize_axes(axis, x.ndim, "logsumexp")
        out = jnp.squeeze(out, axis=tuple(axes)) if axes else out
    return out


@eager
def softmax(x, axis=-1):
    x = jnp.asarray(x)
    unnormalized = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return unnormalized / jnp.sum(unnormalized, axis=axis, keepdims=True)


@eager
def log_softmax(x, axis=-1):
    x = jnp.asarray(x)
    shifted = x - jnp.max(x, axis=axis, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))


@eager
def one_hot(x, num_classes: int, dtype=None, axis: int = -1):
    x = jnp.asarray(x)
    classes = ops.iota(dtypes.default_int(), (num_classes,), 0)
    ax = ops.normalize_axis(axis, x.ndim + 1, "one_hot")
    shape = list(x.shape)
    shape.insert(ax, num_classes)
    lhs = jnp.expand_dims(x, ax)
    rhs = jnp.reshape(classes, [num_classes if i == ax else 1 for i in range(len(shape))])
    return jnp.equal(lhs, rhs).astype(dtype if dtype is not None else dtypes.default_float())


@eager
def layer_norm(x, scale=None, offset=None, axis=-1, epsilon: float = 1e-5):
    """(x - mean) / sqrt(var + epsilon) over `axis`, then * scale + offset."""
    x = jnp.asarray(x)
    mean = jnp.mean(x, axis=axis, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axis, keepdims=True)
    y = (x - mean) * jnp.rsqrt(var + epsilon)
    if scale is not None:
        y = y * scale
    if offset is not None:
        y = y + offset
    return y


__all__ = [
    "gelu",
    "layer_norm",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "swish",
]
del np
