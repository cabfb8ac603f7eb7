"""Gradients through convolutions, pooling, loops, branches, custom rules
and checkpoints beside JAX's (the xla marker): a conv net with pooling, a
scan RNN, cond, fori_loop with static bounds, a custom_vjp log-sum-exp,
checkpoint under each policy, an Adam loop on the conv net whose loss
curve follows JAX's, and the decompositions (qr, svd, eigh, slogdet by qr)
on real and complex inputs."""

from __future__ import annotations

import numpy as np
import pytest

import uir

pytestmark = pytest.mark.xla


class Ns:
    def __init__(self, t, np_, lax, nn, name, policies):
        self.t, self.np, self.lax, self.nn = t, np_, lax, nn
        self.checkpoint_name, self.policies = name, policies


def _namespaces(jax):
    import jax.ad_checkpoint
    import jax.numpy as jnp

    return (
        Ns(uir, uir.numpy, uir.lax, uir.nn, uir.checkpoint_name, uir.checkpoint_policies),
        Ns(
            jax,
            jnp,
            jax.lax,
            jax.nn,
            jax.ad_checkpoint.checkpoint_name,
            jax.checkpoint_policies,
        ),
    )


def _close(a, b, rtol=2e-4, atol=2e-5):
    la, lb = (np.asarray(v) for v in a), (np.asarray(v) for v in b)
    for x, y in zip(la, lb, strict=True):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def _leaves(tree):
    return uir.tree_util.tree_leaves(tree)


# --- a conv net with pooling ----------------------------------------------------------


def conv_net(ns, p, x, y):
    dn = ("NHWC", "HWIO", "NHWC")
    h = ns.lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=dn)
    h = ns.nn.relu(h + p["b1"])
    h = ns.lax.reduce_window(h, -np.inf, ns.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = ns.lax.conv_general_dilated(h, p["c2"], (2, 2), "SAME", dimension_numbers=dn)
    h = ns.np.tanh(h + p["b2"])
    h = ns.lax.reduce_window(h, 0.0, ns.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
    logits = ns.np.reshape(h, (h.shape[0], -1)) @ p["w"]
    return -ns.np.mean(ns.np.sum(ns.nn.log_softmax(logits) * y, axis=-1))


def _conv_params(rng):
    f32 = np.float32
    return {
        "c1": (rng.standard_normal((3, 3, 2, 6)) * 0.3).astype(f32),
        "b1": (rng.standard_normal(6) * 0.1).astype(f32),
        "c2": (rng.standard_normal((3, 3, 6, 8)) * 0.2).astype(f32),
        "b2": np.zeros(8, f32),
        "w": (rng.standard_normal((2 * 2 * 8, 5)) * 0.2).astype(f32),
    }


def _conv_data(rng, n=8):
    x = rng.standard_normal((n, 8, 8, 2)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, n)]
    return x, y


def test_conv_net_with_pooling_gradients_match_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(0)
    p, (x, y) = _conv_params(rng), _conv_data(rng)
    a = uir.jit(uir.grad(lambda q: conv_net(mine, q, x, y)))(p)
    b = jax_x32.jit(jax_x32.grad(lambda q: conv_net(theirs, q, x, y)))(p)
    for k in p:
        np.testing.assert_allclose(np.asarray(a[k]), np.asarray(b[k]), rtol=5e-4, atol=2e-5)


def test_adam_on_the_conv_net_follows_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(1)
    p0, (x, y) = _conv_params(rng), _conv_data(rng, 16)

    def step_for(ns, jit):
        vg = ns.t.value_and_grad(lambda q: conv_net(ns, q, x, y))

        def step(p, m, v, t):
            loss, g = vg(p)
            m = {k: 0.9 * m[k] + 0.1 * g[k] for k in p}
            v = {k: 0.999 * v[k] + 0.001 * g[k] * g[k] for k in p}
            p = {
                k: p[k] - 0.01 * (m[k] / (1 - 0.9**t)) / (ns.np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
                for k in p
            }
            return p, m, v, loss

        return jit(step)

    curves = []
    for ns, jit in ((mine, uir.jit), (theirs, jax_x32.jit)):
        step = step_for(ns, jit)
        p = p0
        m = {k: np.zeros_like(w) for k, w in p0.items()}
        v = {k: np.zeros_like(w) for k, w in p0.items()}
        losses = []
        for t in range(1, 41):
            p, m, v, loss = step(p, m, v, np.float32(t))
            losses.append(float(loss))
        curves.append(np.array(losses))
    np.testing.assert_allclose(curves[0], curves[1], rtol=5e-3, atol=5e-4)
    assert curves[0][-1] < 0.5 * curves[0][0]


# --- loops and branches ---------------------------------------------------------------


def scan_rnn(ns, w, u, xs):
    def cell(h, x):
        h = ns.np.tanh(h @ w + x @ u)
        return h, ns.np.sum(h * h)

    h, ys = ns.lax.scan(cell, ns.np.zeros(w.shape[0], w.dtype), xs)
    return ns.np.sum(h) + ns.np.sum(ys)


def branchy(ns, w, x):
    def pos(a):
        return ns.np.sum(ns.np.sin(a @ w))

    def neg(a):
        return ns.np.sum((a @ w) ** 2) * 0.1

    return ns.lax.cond(ns.np.sum(x) > 0, pos, neg, x) + ns.lax.cond(
        ns.np.sum(x) < 0, pos, neg, x * 2.0
    )


def fori(ns, w, x):
    return ns.np.sum(ns.lax.fori_loop(0, 6, lambda i, h: ns.np.tanh(h @ w) + 0.1 * i, x))


def test_loops_and_branches_match_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((6, 6)) * 0.5).astype(np.float32)
    u = (rng.standard_normal((3, 6)) * 0.5).astype(np.float32)
    xs = rng.standard_normal((7, 3)).astype(np.float32)
    x = rng.standard_normal(6).astype(np.float32)
    for f, args, nums in (
        (scan_rnn, (w, u, xs), (0, 1, 2)),
        (branchy, (w, x), (0, 1)),
        (branchy, (w, -x), (0, 1)),
        (fori, (w, x), (0, 1)),
    ):
        a = uir.jit(uir.grad(lambda *v, f=f: f(mine, *v), argnums=nums))(*args)
        b = jax_x32.jit(jax_x32.grad(lambda *v, f=f: f(theirs, *v), argnums=nums))(*args)
        _close(a, b)
    # forward mode through the scan
    tw = rng.standard_normal(w.shape).astype(np.float32)
    a = uir.jvp(lambda v: scan_rnn(mine, v, u, xs), (w,), (tw,))
    b = jax_x32.jvp(lambda v: scan_rnn(theirs, v, u, xs), (w,), (tw,))
    _close(a, b)


# --- custom rules and checkpoint ------------------------------------------------------


def _logsumexp(ns):
    @ns.t.custom_vjp
    def lse(x):
        return ns.np.log(ns.np.sum(ns.np.exp(x)))

    def fwd(x):
        m = ns.np.max(x)
        y = m + ns.np.log(ns.np.sum(ns.np.exp(x - m)))
        return y, (x, y)

    def bwd(res, g):
        x, y = res
        return (g * ns.np.exp(x - y),)

    lse.defvjp(fwd, bwd)
    return lse


def test_custom_vjp_logsumexp_matches_jax(jax_x32):
    mine, theirs = _namespaces(jax_x32)
    x = np.array([[1.0, 2.0, 300.0], [-4.0, 0.5, 0.25]], np.float32)
    ours, jaxs = _logsumexp(mine), _logsumexp(theirs)
    a = uir.jit(uir.grad(lambda v: ours(v[0]) + 2.0 * ours(v[1])))(x)
    b = jax_x32.jit(jax_x32.grad(lambda v: jaxs(v[0]) + 2.0 * jaxs(v[1])))(x)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-7)
    per_row = uir.vmap(uir.grad(ours))(x)
    np.testing.assert_allclose(
        np.asarray(per_row), np.asarray(jax_x32.vmap(jax_x32.grad(jaxs))(x)), rtol=1e-5, atol=1e-7
    )


def deep_mlp(ns, policy, params, x):
    def layer(h, w, b, i):
        z = ns.checkpoint_name(h @ w + b, f"pre{i}")
        return ns.np.tanh(z)

    for i, (w, b) in enumerate(params):
        f = layer if policy == "off" else ns.t.checkpoint(layer, policy=policy, static_argnums=(3,))
        x = f(x, w, b, i)
    return ns.np.sum(x**2)


POLICIES = [
    "off",
    None,
    "nothing_saveable",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    ("save_only_these_names", "pre1"),
]


def _policy(ns, spec):
    if spec in ("off", None):
        return spec
    if isinstance(spec, tuple):
        return getattr(ns.policies, spec[0])(*spec[1:])
    return getattr(ns.policies, spec)


@pytest.mark.parametrize("spec", POLICIES, ids=str)
def test_checkpoint_policies_match_jax(jax_x32, spec):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(4)
    params = [
        (
            (rng.standard_normal((8, 8)) * 0.4).astype(np.float32),
            (rng.standard_normal(8) * 0.1).astype(np.float32),
        )
        for _ in range(4)
    ]
    x = rng.standard_normal((5, 8)).astype(np.float32)
    a = uir.jit(uir.grad(lambda p: deep_mlp(mine, _policy(mine, spec), p, x)))(params)
    b = jax_x32.jit(jax_x32.grad(lambda p: deep_mlp(theirs, _policy(theirs, spec), p, x)))(params)
    _close(_leaves(a), jax_x32.tree_util.tree_leaves(b))


# --- decompositions and complex inputs ------------------------------------------------

DECOMPOSITIONS = {
    "qr_reduced": lambda ns, a: (
        ns.np.sum(ns.np.abs(ns.np.linalg.qr(a)[0]) ** 3)
        + ns.np.sum(ns.np.abs(ns.np.linalg.qr(a)[1]) ** 2)
    ),
    "qr_complete": lambda ns, a: ns.np.sum(ns.np.abs(ns.np.linalg.qr(a, mode="complete")[0]) ** 3),
    "qr_wide": lambda ns, a: ns.np.sum(ns.np.abs(ns.np.linalg.qr(a.T)[1]) ** 3),
    "svd": lambda ns, a: (
        ns.np.sum(ns.np.linalg.svd(a, full_matrices=False)[1] ** 3)
        + ns.np.sum(ns.np.abs(ns.np.linalg.svd(a, full_matrices=False)[0][:, 0]) ** 3)
    ),
    "singular_values": lambda ns, a: ns.np.sum(ns.np.sin(ns.np.linalg.svd(a, compute_uv=False))),
    "eigh": lambda ns, a: (
        ns.np.sum(ns.np.abs(ns.np.linalg.eigh(a.T @ a)[1]) ** 3)
        + ns.np.sum(ns.np.linalg.eigvalsh(a.T @ a) ** 2)
    ),
    "slogdet_qr": lambda ns, a: ns.np.linalg.slogdet(a[:3, :3], method="qr")[1],
}


@pytest.mark.parametrize(
    "name, complex_input",
    # (slogdet's method='qr' is for real matrices, in JAX too)
    [(n, c) for n in sorted(DECOMPOSITIONS) for c in (False, True) if not (c and "slogdet" in n)],
)
def test_decomposition_gradients_match_jax(jax_x32, name, complex_input):
    mine, theirs = _namespaces(jax_x32)
    rng = np.random.default_rng(12)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    if complex_input:
        a = (a + 1j * rng.standard_normal((5, 3))).astype(np.complex64)
    f = DECOMPOSITIONS[name]
    if complex_input and name == "eigh":

        def f(ns, a):
            h = ns.np.conj(a.T) @ a
            return ns.np.sum(ns.np.abs(ns.np.linalg.eigh(h)[1]) ** 3) + ns.np.sum(
                ns.np.linalg.eigvalsh(h) ** 2
            )

    ours = uir.jit(uir.grad(lambda v: f(mine, v)))(a)
    want = jax_x32.jit(jax_x32.grad(lambda v: f(theirs, v)))(a)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(want), rtol=2e-3, atol=2e-4)
