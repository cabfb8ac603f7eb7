"""Programs written for JAX in the jax.numpy style, run unchanged with
`import uir.numpy as jnp`, against NumPy versions of the same math."""

from __future__ import annotations

import math

import numpy as np

import uir
import uir.numpy as jnp
from uir import lax, nn

RNG = np.random.default_rng(3)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(got, want, tol=2e-5):
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.maximum(x @ w + b, 0)
    w, b = params[-1]
    return x @ w + b


def test_mlp_forward():
    params = [
        (rand(8, 16) * 0.3, rand(16)),
        (rand(16, 16) * 0.3, rand(16)),
        (rand(16, 4) * 0.3, rand(4)),
    ]
    x = rand(5, 8)
    want = x
    for w, b in params[:-1]:
        want = np.maximum(want @ w + b, 0)
    want = want @ params[-1][0] + params[-1][1]
    close(uir.jit(mlp)(params, x), want)


def attention(q, k, v):
    d = q.shape[-1]
    scores = q @ jnp.swapaxes(k, -1, -2) / jnp.sqrt(d)
    weights = nn.softmax(scores, axis=-1)
    return weights @ v


def test_attention():
    q, k, v = rand(2, 4, 6, 8), rand(2, 4, 6, 8), rand(2, 4, 6, 8)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    close(uir.jit(attention)(q, k, v), w @ v)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return gamma * (x - mean) / jnp.sqrt(var + eps) + beta


def test_layer_norm():
    x, g, b = rand(3, 7), rand(7), rand(7)
    want = g * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) + b
    close(uir.jit(layer_norm)(x, g, b), want)


def cross_entropy(logits, labels):
    logp = logits - nn.logsumexp(logits, axis=-1, keepdims=True)
    return -jnp.mean(jnp.sum(logp * nn.one_hot(labels, logits.shape[-1]), axis=-1))


def test_cross_entropy_loss_with_logsumexp():
    logits = rand(6, 5)
    labels = RNG.integers(0, 5, 6).astype(np.int32)
    lse = np.log(np.exp(logits).sum(-1, keepdims=True))
    want = -np.mean((logits - lse)[np.arange(6), labels])
    close(uir.jit(cross_entropy)(logits, labels), want)


def cumulative_sum(xs):
    def step(carry, x):
        carry = carry + x
        return carry, carry

    return lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)[1]


def test_scan_based_cumulative_sum():
    xs = rand(7, 3)
    close(uir.jit(cumulative_sum)(xs), np.cumsum(xs, axis=0))


def newton_sqrt(a):
    def cond(state):
        x, i = state
        return jnp.logical_and(jnp.abs(x * x - a) > 1e-6, i < 50)

    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1

    return lax.while_loop(cond, body, (a, 0))[0]


def test_newton_iteration_with_while_loop():
    a = np.float32(7.0)
    close(uir.jit(newton_sqrt)(a), math.sqrt(7.0), 1e-5)


def horner(coeffs, x):
    return lax.fori_loop(0, coeffs.shape[0], lambda i, acc: acc * x + coeffs[i], jnp.zeros_like(x))


def test_polynomial_with_fori_loop():
    coeffs = np.array([2, -3, 0.5, 1], np.float32)
    x = np.linspace(-2, 2, 9).astype(np.float32)
    close(uir.jit(horner)(coeffs, x), np.polyval(coeffs, x))


def power_iteration(a, steps=30):
    v = jnp.ones(a.shape[0]) / jnp.sqrt(a.shape[0])

    def body(_, v):
        w = a @ v
        return w / jnp.sqrt(jnp.sum(w * w))

    v = lax.fori_loop(0, steps, body, v)
    return v @ (a @ v)


def test_power_iteration_finds_the_top_eigenvalue():
    m = rand(5, 5)
    a = m @ m.T + np.diag(np.arange(5, dtype=np.float32) * 3)
    close(uir.jit(power_iteration)(a), np.linalg.eigvalsh(a.astype(np.float64)).max(), 1e-3)


def kmeans_assign(points, centers):
    d2 = jnp.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    return jnp.argmin(d2, axis=1)


def test_kmeans_assignment_step():
    points, centers = rand(20, 2), rand(3, 2)
    want = np.argmin(((points[:, None] - centers[None]) ** 2).sum(-1), axis=1)
    np.testing.assert_array_equal(uir.jit(kmeans_assign)(points, centers), want)


def rnn(params, xs):
    wx, wh, b = params

    def cell(h, x):
        h = jnp.tanh(x @ wx + h @ wh + b)
        return h, h

    return lax.scan(cell, jnp.zeros(wh.shape[0]), xs)


def test_rnn_with_scan():
    wx, wh, b = rand(3, 4) * 0.5, rand(4, 4) * 0.5, rand(4)
    xs = rand(6, 3)
    h = np.zeros(4, np.float32)
    hs = []
    for x in xs:
        h = np.tanh(x @ wx + h @ wh + b)
        hs.append(h)
    last, got = uir.jit(rnn)((wx, wh, b), xs)
    close(got, np.stack(hs))
    close(last, h)


def gelu_mlp_block(x, w1, w2):
    return x + nn.gelu(x @ w1) @ w2


def test_residual_gelu_block():
    x, w1, w2 = rand(4, 8), rand(8, 16) * 0.3, rand(16, 8) * 0.3
    h = x @ w1
    g = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    close(uir.jit(gelu_mlp_block)(x, w1, w2), x + g @ w2)


def normalize_rows(x):
    norms = jnp.sqrt(jnp.sum(x * x, axis=1, keepdims=True))
    return jnp.where(norms > 0, x / jnp.maximum(norms, 1e-12), 0.0)


def test_row_normalization_with_where():
    x = rand(4, 3)
    x[2] = 0
    n = np.sqrt((x * x).sum(1, keepdims=True))
    close(uir.jit(normalize_rows)(x), np.where(n > 0, x / np.maximum(n, 1e-12), 0))


def sgd_step(params, x, y, lr=0.1):
    w, b = params
    pred = x @ w + b
    err = pred - y
    gw = x.T @ err / x.shape[0]
    gb = jnp.mean(err, axis=0)
    return (w - lr * gw, b - lr * gb), jnp.mean(err**2)


def test_hand_written_linear_regression_step():
    x, y = rand(16, 3), rand(16, 1)
    w, b = rand(3, 1), rand(1)
    (nw, nb), loss = uir.jit(sgd_step)((w, b), x, y)
    err = x @ w + b - y
    close(nw, w - 0.1 * x.T @ err / 16)
    close(nb, b - 0.1 * err.mean(0))
    close(loss, (err**2).mean())


def pairwise_distances(a, b):
    return jnp.sqrt(
        jnp.maximum(jnp.sum(a**2, 1)[:, None] + jnp.sum(b**2, 1)[None, :] - 2 * a @ b.T, 0)
    )


def test_pairwise_distances():
    a, b = rand(5, 3), rand(4, 3)
    want = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    close(uir.jit(pairwise_distances)(a, b), want, 1e-4)


def conv_net(x, w1, w2):
    y = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.mean(y, axis=(1, 2)) @ w2


def test_small_conv_net():
    x, w1, w2 = rand(2, 8, 8, 3), rand(3, 3, 3, 4) * 0.5, rand(4, 2)
    # NumPy: SAME 3x3 conv via padding and shifted sums.
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = sum(
        np.einsum("nhwc,co->nhwo", xp[:, i : i + 8, j : j + 8], w1[i, j])
        for i in range(3)
        for j in range(3)
    )
    y = np.maximum(y, 0).reshape(2, 4, 2, 4, 2, 4).max(axis=(2, 4))
    close(uir.jit(conv_net)(x, w1, w2), y.mean(axis=(1, 2)) @ w2, 1e-4)


def top_k_mask(scores, k):
    order = jnp.argsort(-scores, axis=-1)
    ranks = jnp.argsort(order, axis=-1)
    return jnp.where(ranks < k, scores, -jnp.inf)


def test_top_k_masking_with_argsort():
    s = rand(3, 7)
    got = uir.jit(top_k_mask, static_argnums=1)(s, 2)
    thresh = np.sort(s, axis=-1)[:, -2:-1]
    np.testing.assert_array_equal(np.isfinite(got), s >= thresh)


def exponential_moving_average(xs, alpha):
    def step(avg, x):
        avg = alpha * x + (1 - alpha) * avg
        return avg, avg

    return lax.scan(step, xs[0], xs)[1]


def test_exponential_moving_average_with_scan():
    xs = rand(10)
    want, avg = [], xs[0]
    for x in xs:
        avg = 0.3 * x + 0.7 * avg
        want.append(avg)
    close(uir.jit(exponential_moving_average)(xs, np.float32(0.3)), want)


def embedding_bag(table, ids, weights):
    rows = table[ids]
    return jnp.sum(rows * weights[..., None], axis=-2)


def test_embedding_lookup_and_weighted_sum():
    table = rand(10, 4)
    ids = np.array([[1, 3, 3], [0, 9, 2]], np.int32)
    w = rand(2, 3)
    close(uir.jit(embedding_bag)(table, ids, w), np.einsum("bkd,bk->bd", table[ids], w))


def histogram_counts(values, bins):
    counts = jnp.zeros(bins, jnp.int32)
    idx = jnp.clip((values * bins).astype(jnp.int32), 0, bins - 1)
    return counts.at[idx].add(1)


def test_histogram_with_scatter_add():
    v = RNG.uniform(0, 1, 50).astype(np.float32)
    got = uir.jit(histogram_counts, static_argnums=1)(v, 5)
    np.testing.assert_array_equal(got, np.bincount(np.clip((v * 5).astype(int), 0, 4), minlength=5))


def masked_mean(x, mask):
    return jnp.sum(jnp.where(mask, x, 0), axis=-1) / jnp.maximum(jnp.sum(mask, axis=-1), 1)


def test_masked_mean():
    x = rand(4, 6)
    mask = RNG.integers(0, 2, (4, 6)).astype(bool)
    want = np.where(mask, x, 0).sum(-1) / np.maximum(mask.sum(-1), 1)
    close(uir.jit(masked_mean)(x, mask), want)


def gradient_descent_quadratic(a, b, steps):
    def body(_, x):
        return x - 0.1 * (a @ x - b)

    return lax.fori_loop(0, steps, body, jnp.zeros_like(b))


def test_gradient_descent_on_a_quadratic_converges():
    m = rand(3, 3)
    a = m @ m.T / 3 + np.eye(3, dtype=np.float32)
    b = rand(3)
    close(
        uir.jit(gradient_descent_quadratic, static_argnums=2)(a, b, 300),
        np.linalg.solve(a, b),
        1e-3,
    )


def piecewise(x):
    return lax.switch(
        jnp.clip(jnp.floor(x).astype(jnp.int32), 0, 2), [jnp.sin, jnp.cos, lambda v: v * v], x
    )


def test_piecewise_function_with_switch():
    for v in (0.5, 1.5, 2.5, -3.0, 7.0):
        want = np.sin(v) if v < 1 else np.cos(v) if v < 2 else v * v
        close(uir.jit(piecewise)(np.float32(v)), want)
