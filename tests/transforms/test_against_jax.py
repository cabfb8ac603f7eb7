"""The transformations beside JAX's (the xla marker: make test-xla installs
JAX): the same functions written once against a namespace, gradients and
batched results equal, and an SGD loop whose loss curve follows JAX's
step by step."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import uir
import uir.lax
import uir.nn
import uir.numpy

pytestmark = pytest.mark.xla


class Ns:
    def __init__(self, np_, lax, nn, t):
        self.np, self.lax, self.nn, self.t = np_, lax, nn, t


def _namespaces(jax):
    import jax.numpy as jnp

    return (
        Ns(uir.numpy, uir.lax, uir.nn, uir),
        Ns(jnp, jax.lax, jax.nn, jax),
    )


def mlp_loss(ns, params, x, y):
    h = x
    for w, b in params[:-1]:
        h = ns.nn.gelu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -ns.np.mean(ns.np.sum(ns.nn.log_softmax(logits) * y, axis=-1))


def layer_norm(ns, x, g):
    mu = ns.np.mean(x, axis=-1, keepdims=True)
    var = ns.np.var(x, axis=-1, keepdims=True)
    return ns.np.sum(((x - mu) / ns.np.sqrt(var + 1e-5) * g) ** 2)


def attention(ns, q, k, v, mask):
    s = q @ k.T / 4.0
    s = ns.np.where(mask, s, -1e9)
    return ns.np.sum(ns.nn.softmax(s, axis=-1) @ v)


def unrolled_rnn(ns, w, xs):
    h, total = ns.np.zeros(w.shape[0], w.dtype), 0.0
    for x in xs:
        h = ns.np.tanh(h @ w + x)
        total = total + ns.np.sum(h)
    return ns.np.sum(h) + total


def _init(rng, sizes):
    return [
        (
            (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
            np.zeros(b, np.float32),
        )
        for a, b in itertools.pairwise(sizes)
    ]


def test_gradients_match_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(0)
    params = _init(rng, [8, 16, 16, 4])
    x = rng.standard_normal((12, 8)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 12)]
    cases = [
        (mlp_loss, (params, x, y)),
        (layer_norm, (x, rng.standard_normal(8).astype(np.float32))),
        (
            attention,
            (x, x * 0.5, rng.standard_normal((12, 3)).astype(np.float32), np.tri(12, dtype=bool)),
        ),
    ]
    for fn, args in cases:
        g_uir = uir.grad(lambda *a, fn=fn: fn(mine, *a))(*args)
        g_jax = jax_x32.grad(lambda *a, fn=fn: fn(theirs, *a))(*args)
        for a, b in zip(
            uir.tree_util.tree_leaves(g_uir), jax_x32.tree_util.tree_leaves(g_jax), strict=True
        ):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def test_jacobians_hessian_and_per_example_gradients_match_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    x = np.array([0.3, -0.7, 1.1], np.float32)

    def f(ns, v):
        return ns.np.sin(v) * ns.np.sum(v**2) + ns.np.tanh(v[::-1])

    for name in ("jacfwd", "jacrev"):
        a = getattr(uir, name)(lambda v: f(mine, v))(x)
        b = getattr(jax_x32, name)(lambda v: f(theirs, v))(x)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    h1 = uir.hessian(lambda v: mine.np.sum(f(mine, v) ** 2))(x)
    h2 = jax_x32.hessian(lambda v: theirs.np.sum(f(theirs, v) ** 2))(x)
    np.testing.assert_allclose(np.asarray(h1), np.asarray(h2), rtol=1e-4, atol=1e-5)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    xs = rng.standard_normal((5, 6, 4)).astype(np.float32)
    a = uir.vmap(uir.grad(lambda w, s: unrolled_rnn(mine, w, s)), in_axes=(None, 0))(w, xs)
    b = jax_x32.vmap(jax_x32.grad(lambda w, s: unrolled_rnn(theirs, w, s)), in_axes=(None, 0))(
        w, xs
    )
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def test_sgd_loss_curve_follows_jax(jax_x32):
    """200 SGD steps of an MLP classifier on a synthetic set: the two loss
    curves agree step by step within float32 tolerance."""
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(2)
    centers = rng.standard_normal((4, 8)).astype(np.float32) * 2
    labels = rng.integers(0, 4, 128)
    x = (centers[labels] + rng.standard_normal((128, 8))).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[labels]
    init = _init(rng, [8, 32, 4])

    def step_for(ns, jit):
        vg = ns.t.value_and_grad(lambda p: mlp_loss(ns, p, x, y))

        def step(p):
            loss, g = vg(p)
            return [
                (w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(p, g, strict=True)
            ], loss

        return jit(step)

    curves = []
    for ns, jit in ((mine, uir.jit), (theirs, jax_x32.jit)):
        step, p, losses = step_for(ns, jit), init, []
        for _ in range(200):
            p, loss = step(p)
            losses.append(float(loss))
        curves.append(np.array(losses))
    np.testing.assert_allclose(curves[0], curves[1], rtol=2e-3, atol=2e-4)
    assert curves[0][-1] < 0.5 * curves[0][0]
