"""The activation and normalization functions of jax.nn (uir.nn's implementation)."""

from __future__ import annotations

import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.lax.lax import stop_gradient
from uir._src.numpy import creation, einsum, manipulation, reductions, ufuncs
from uir._src.numpy.util import public_asarray


@eager
def relu(x):
    return ufuncs.maximum(x, 0)


@eager
def sigmoid(x):
    x = public_asarray(x)
    return ops.unary(
        "logistic",
        x if dtypes.is_float(x.dtype) else x.astype(dtypes.default_float()),
        op_name="logistic",
    )


@eager
def silu(x):
    return ufuncs.multiply(x, sigmoid(x))


swish = silu


@eager
def gelu(x, approximate: bool = True):
    """The tanh approximation by default (as jax.nn.gelu); approximate=False
    is the exact x * Phi(x) with erf."""
    x = public_asarray(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + ufuncs.tanh(inner))
    return 0.5 * x * (1 + ufuncs.erf(x / math.sqrt(2)))


def _masked(where) -> dict:
    """max's keywords for a maximum over the elements `where` selects."""
    return {} if where is None else {"initial": -np.inf, "where": where}


@eager
def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    """log(sum(b * exp(a))) over `axis` (only where `where` holds), stably;
    with return_sign, (log|sum|, sign(sum)), else NaN where the sum is
    negative (jax.nn.logsumexp)."""
    x = public_asarray(a)
    # The shift cancels out: no derivative flows through the max (as JAX).
    m = stop_gradient(reductions.max(x, axis=axis, keepdims=True, **_masked(where)))
    m = ufuncs.where(ufuncs.isfinite(m), m, 0)
    e = ufuncs.exp(x - m)
    if b is not None:
        e = e * public_asarray(b)
    total = reductions.sum(e, axis=axis, keepdims=True, where=where)
    sign = ufuncs.sign(total)
    if return_sign or not dtypes.is_complex(total.dtype):
        total = ufuncs.abs(total)
    out = ufuncs.log(total) + m
    if not keepdims:
        axes = ops.normalize_axes(axis, x.ndim, "logsumexp")
        if axes:
            out = manipulation.squeeze(out, axis=tuple(axes))
            sign = manipulation.squeeze(sign, axis=tuple(axes))
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = ufuncs.where(ufuncs.less(sign, 0), np.nan, out)
    return out


@eager
def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) over `axis`, stably; with `where`, over the
    elements it selects, and 0 elsewhere (jax.nn.softmax)."""
    x = public_asarray(x)
    top = stop_gradient(reductions.max(x, axis=axis, keepdims=True, **_masked(where)))
    unnormalized = ufuncs.exp(x - top)
    out = unnormalized / reductions.sum(unnormalized, axis=axis, keepdims=True, where=where)
    return out if where is None else ufuncs.where(where, out, 0)


@eager
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) over `axis`, stably; with `where`, over the elements
    it selects, and -inf elsewhere (jax.nn.log_softmax)."""
    x = public_asarray(x)
    shifted = x - stop_gradient(reductions.max(x, axis=axis, keepdims=True, **_masked(where)))
    total = reductions.sum(ufuncs.exp(shifted), axis=axis, keepdims=True, where=where)
    out = shifted - ufuncs.log(total)
    return out if where is None else ufuncs.where(where, out, -np.inf)


@eager
def one_hot(x, num_classes: int, dtype=None, axis: int = -1):
    x = public_asarray(x)
    classes = ops.iota(dtypes.default_int(), (num_classes,), 0)
    ax = ops.normalize_axis(axis, x.ndim + 1, "one_hot")
    shape = list(x.shape)
    shape.insert(ax, num_classes)
    lhs = manipulation.expand_dims(x, ax)
    rhs = manipulation.reshape(classes, [num_classes if i == ax else 1 for i in range(len(shape))])
    return ufuncs.equal(lhs, rhs).astype(dtype if dtype is not None else dtypes.default_float())


@eager
def layer_norm(x, scale=None, offset=None, axis=-1, epsilon: float = 1e-5):
    """(x - mean) / sqrt(var + epsilon) over `axis`, then * scale + offset."""
    x = public_asarray(x)
    mean = reductions.mean(x, axis=axis, keepdims=True)
    var = reductions.mean(ufuncs.square(x - mean), axis=axis, keepdims=True)
    y = (x - mean) * ufuncs.rsqrt(var + epsilon)
    if scale is not None:
        y = y * scale
    if offset is not None:
        y = y + offset
    return y


@eager
def relu6(x):
    """min(max(x, 0), 6)."""
    return ufuncs.minimum(ufuncs.maximum(x, 0), 6.0)


@eager
def leaky_relu(x, negative_slope: float = 0.01):
    """x where positive, negative_slope * x elsewhere."""
    x = public_asarray(x)
    return ufuncs.where(x >= 0, x, negative_slope * x)


@eager
def elu(x, alpha: float = 1.0):
    """x where positive, alpha * (exp(x) - 1) elsewhere."""
    x = public_asarray(x)
    safe = ufuncs.where(x > 0, 0.0, x)
    return ufuncs.where(x > 0, x, alpha * ufuncs.expm1(safe))


@eager
def celu(x, alpha: float = 1.0):
    """max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)."""
    x = public_asarray(x)
    return ufuncs.maximum(x, 0.0) + alpha * ufuncs.expm1(ufuncs.minimum(x, 0.0) / alpha)


@eager
def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


@eager
def softplus(x):
    """log(1 + exp(x)), computed as logaddexp(x, 0)."""
    x = public_asarray(x)
    if not dtypes.is_float(x.dtype):
        x = x.astype(dtypes.default_float())
    return ufuncs.maximum(x, 0.0) + ufuncs.log1p(ufuncs.exp(-ufuncs.abs(x)))


@eager
def sparse_plus(x):
    """0 below -1, (x + 1)^2 / 4 on [-1, 1], x above."""
    x = public_asarray(x)
    return ufuncs.where(x <= -1.0, 0.0, ufuncs.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@eager
def sparse_sigmoid(x):
    """0 below -1, (x + 1) / 2 on [-1, 1], 1 above."""
    return 0.5 * ufuncs.clip(public_asarray(x) + 1.0, 0.0, 2.0)


@eager
def soft_sign(x):
    """x / (|x| + 1)."""
    x = public_asarray(x)
    return x / (ufuncs.abs(x) + 1)


@eager
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x)."""
    return -softplus(-public_asarray(x))


@eager
def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(public_asarray(x) + 3.0) / 6.0


@eager
def hard_silu(x):
    """x * hard_sigmoid(x)."""
    x = public_asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@eager
def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = public_asarray(x)
    return ufuncs.where(x > 1, 1, ufuncs.where(x < -1, -1, x)).astype(x.dtype)


@eager
def mish(x):
    """x * tanh(softplus(x))."""
    x = public_asarray(x)
    return x * ufuncs.tanh(softplus(x))


@eager
def squareplus(x, b: float = 4):
    """(x + sqrt(x^2 + b)) / 2."""
    x = public_asarray(x)
    return (x + ufuncs.sqrt(x * x + b)) / 2


@eager
def tanh(x):
    """The hyperbolic tangent (jax.nn.tanh is jax.numpy.tanh)."""
    return ufuncs.tanh(x)


def identity(x):
    """x itself."""
    return x


@eager
def glu(x, axis: int = -1):
    """The first half of x along `axis` gated by the sigmoid of the second."""
    x = public_asarray(x)
    ax = ops.normalize_axis(axis, x.ndim, "glu")
    if x.shape[ax] % 2:
        ops.fail("glu", f"axis {ax} of {ops.describe(x)} must have an even size")
    a, b = manipulation.split(x, 2, axis=ax)
    return a * sigmoid(b)


@eager
def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate on both sides of log(2)."""
    x = public_asarray(x)
    return ufuncs.where(
        x > math.log(2),
        ufuncs.log1p(-ufuncs.exp(-x)),
        ufuncs.log(-ufuncs.expm1(-x)),
    )


@eager
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """log(mean(exp(x))) over `axis`, stably."""
    x = public_asarray(x)
    if where is not None:
        ops.fail("logmeanexp", "where= is not supported yet")
    axes = ops.normalize_axes(axis, x.ndim, "logmeanexp")
    count = 1
    for a in axes:
        count *= x.shape[a]
    return logsumexp(x, axis=axis, keepdims=keepdims) - math.log(count)


@eager
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon: float = 1e-5, where=None, *, algorithm="fast"
):
    """(x - mean) / sqrt(variance + epsilon) over `axis`, mean and variance
    computed (over the elements `where` selects) when not given: 'fast' as
    mean(x²) - mean(x)², 'stable' as mean((x - mean)²)."""
    if algorithm not in ("fast", "stable"):
        ops.fail("standardize", f"algorithm must be 'fast' or 'stable', got {algorithm!r}")
    x = public_asarray(x)
    if mean is None:
        mean = reductions.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "fast":
            squares = reductions.mean(ufuncs.square(x), axis=axis, keepdims=True, where=where)
            variance = squares - ufuncs.square(mean)
        else:
            variance = reductions.mean(
                ufuncs.square(x - mean), axis=axis, keepdims=True, where=where
            )
    return (x - mean) * ufuncs.rsqrt(variance + epsilon)


@eager
def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale=None,
    is_causal: bool = False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size=None,
    implementation=None,
    return_residual: bool = False,
):
    """softmax(Q K^T * scale + bias, masked) V over [batch, seq, heads, dim]
    (or without the batch), as jax.nn.dot_product_attention's XLA path;
    grouped queries share key/value heads. With return_residual, also the
    log-sum-exp of each query's logits, [batch, seq, heads]."""
    q, k, v = (
        public_asarray(query),
        public_asarray(key),
        public_asarray(value),
    )
    if implementation not in (None, "xla"):
        ops.fail(
            "dot_product_attention", f"implementation {implementation!r}: uir has the xla path only"
        )
    if (
        query_seq_lengths is not None
        or key_value_seq_lengths is not None
        or local_window_size is not None
    ):
        ops.fail(
            "dot_product_attention", "sequence lengths and local windows are not supported yet"
        )
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        ops.fail(
            "dot_product_attention", "query, key and value are [batch, seq, heads, dim] arrays"
        )
    heads, kv_heads = q.shape[2], k.shape[2]
    if heads % kv_heads:
        ops.fail(
            "dot_product_attention", f"{heads} query heads do not group over {kv_heads} key heads"
        )
    if kv_heads != heads:
        k = manipulation.repeat(k, heads // kv_heads, axis=2)
        v = manipulation.repeat(v, heads // kv_heads, axis=2)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = einsum.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if bias is not None:
        logits = logits + public_asarray(bias)
    big_negative = public_asarray(np.finfo(np.float32).min / 2).astype(logits.dtype)
    if mask is not None:
        logits = ufuncs.where(public_asarray(mask), logits, big_negative)
    if is_causal:
        t, s = logits.shape[-2], logits.shape[-1]
        causal = creation.arange(t)[:, None] >= creation.arange(s)[None, :]
        logits = ufuncs.where(causal, logits, big_negative)
    probs = softmax(logits, axis=-1)
    out = einsum.einsum("bhqk,bkhd->bqhd", probs, v)
    if not return_residual:
        return out[0] if unbatched else out
    residual = manipulation.swapaxes(logsumexp(logits, axis=-1), 1, 2)
    return (out[0], residual[0]) if unbatched else (out, residual)


__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "layer_norm",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
