"""Twenty-four everyday programs as a new user writes them against JAX
(jax.numpy, jax.lax, jax.nn, jax.random, jax.numpy.fft, jax.image,
jax.scipy, jax.debug), run unchanged with uir's modules of the same names
under uir.jit and compared with jax.jit on the same inputs. Each program
takes the namespace it runs against, so the text is the same for both.

    make test-xla      # installs jax[cpu]; runs these with the other `xla` tests"""

from __future__ import annotations

import types

import numpy as np
import pytest

import uir

pytestmark = pytest.mark.xla  # make test-xla installs JAX and runs these
jax = pytest.importorskip("jax")


def _namespace(which: str) -> types.SimpleNamespace:
    if which == "jax":
        import jax.image
        import jax.nn
        import jax.numpy
        import jax.numpy.fft
        import jax.random
        import jax.scipy.linalg
        import jax.scipy.signal
        import jax.scipy.special
        import jax.scipy.stats

        root = jax
    else:
        import uir.image
        import uir.nn
        import uir.numpy
        import uir.numpy.fft
        import uir.random
        import uir.scipy

        root = uir
    return types.SimpleNamespace(
        jit=root.jit,
        jnp=root.numpy,
        lax=root.lax,
        nn=root.nn,
        random=root.random,
        image=root.image,
        scipy=root.scipy,
    )


RNG = np.random.default_rng(42)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# Each program: (namespace) -> (function, arguments).


def mlp(ns):
    def f(x, w1, b1, w2):
        h = ns.nn.gelu(ns.jnp.dot(x, w1, preferred_element_type=ns.jnp.float32) + b1)
        return ns.nn.log_softmax(h @ w2, axis=-1)

    return f, (f32(32, 64), f32(64, 128), f32(128), f32(128, 10))


def attention(ns):
    def f(q, k, v):
        return ns.nn.dot_product_attention(q, k, v, is_causal=True)

    return f, (f32(2, 16, 4, 8), f32(2, 16, 4, 8), f32(2, 16, 4, 8))


def advanced_indexing(ns):
    idx = np.array([3, 0, 7, 7])

    def f(x, i, j):
        a = x[idx, 2:5]
        b = x[i, j]
        c = x.at[i, 7].set(-1.0)
        return a.sum() + b.sum() + c[..., None, :].sum(axis=-1).mean()

    return f, (f32(10, 9), np.array([1, 4, 2]), np.array([0, 8, 3]))


def masked_max(ns):
    def f(x):
        return ns.jnp.max(x, axis=1, initial=-1.0, where=x < 0.5), ns.jnp.sum(x, where=x > 0)

    return f, (f32(8, 16),)


def spectrum(ns):
    def f(x):
        spec = ns.jnp.fft.rfft(x, axis=-1)
        power = ns.jnp.abs(spec) ** 2
        freqs = ns.jnp.fft.rfftfreq(x.shape[-1], d=0.1)
        return power, freqs, ns.jnp.fft.irfft(spec, n=x.shape[-1])

    return f, (f32(4, 64),)


def piecewise_activation(ns):
    def f(x):
        return ns.jnp.piecewise(
            x, [x < -1, x > 1], [lambda v: -1.0 - 0 * v, lambda v: 1.0 + 0 * v, lambda v: v]
        )

    return f, (f32(100) * 2,)


def image_resize(ns):
    def f(img):
        up = ns.image.resize(img, (32, 48, 3), "bilinear")
        down = ns.image.resize(up, (8, 12, 3), "lanczos3")
        return up.mean(), down

    return f, (f32(16, 24, 3),)


def gaussian_log_likelihood(ns):
    def f(x, mu, sigma):
        return ns.scipy.stats.norm.logpdf(x, mu, sigma).sum() + ns.scipy.special.logsumexp(x)

    return f, (f32(50), np.float32(0.3), np.float32(1.7))


def cholesky_solve(ns):
    def f(a, b):
        spd = a @ a.T + 4 * ns.jnp.eye(a.shape[0])
        c = ns.scipy.linalg.cho_factor(spd)
        return ns.scipy.linalg.cho_solve(c, b)

    return f, (f32(6, 6), f32(6, 2))


def lu_solve_triangular(ns):
    def f(a, b):
        lu_piv = ns.scipy.linalg.lu_factor(a + 5 * ns.jnp.eye(5))
        x = ns.scipy.linalg.lu_solve(lu_piv, b)
        return ns.scipy.linalg.solve_triangular(ns.jnp.triu(a) + 3 * ns.jnp.eye(5), x, lower=False)

    return f, (f32(5, 5), f32(5))


def smoothing(ns):
    def f(x, k):
        return ns.scipy.signal.convolve(x, k, mode="same"), ns.jnp.convolve(x, k, mode="valid")

    return f, (f32(64), f32(5))


def random_augment(ns):
    def f(key, x):
        k1, k2 = ns.random.split(key)
        noise = ns.random.normal(k1, x.shape)
        keep = ns.random.bernoulli(k2, 0.9, x.shape)
        return ns.jnp.where(keep, x + 0.1 * noise, 0.0)

    return f, (np.asarray(uir.random.PRNGKey(0)), f32(8, 8))


def cumulative_stats(ns):
    def f(x):
        return (
            ns.jnp.cumsum(x, axis=0),
            ns.jnp.cumprod(1 + 0.01 * x, axis=1),
            ns.lax.cummax(x, axis=1),
        )

    return f, (f32(16, 32),)


def argmax_accuracy(ns):
    def f(logits, labels):
        pred = ns.jnp.argmax(logits, axis=-1)
        return ns.jnp.mean(pred == labels), ns.jnp.take_along_axis(
            logits, labels[:, None], axis=1
        ).sum()

    return f, (f32(64, 10), RNG.integers(0, 10, 64))


def while_newton(ns):
    def f(x):
        def cond(state):
            return state[0] < 25

        def body(state):
            i, y = state
            return i + 1, 0.5 * (y + x / y)

        return ns.lax.while_loop(cond, body, (0, ns.jnp.ones_like(x)))[1]

    return f, (np.abs(f32(1000)) + 0.5,)


def scan_rnn(ns):
    def f(xs, w):
        def step(h, x):
            h = ns.jnp.tanh(x + h @ w)
            return h, h.sum()

        return ns.lax.scan(step, ns.jnp.zeros(w.shape[0]), xs)

    return f, (f32(20, 8), f32(8, 8) * 0.3)


def topk_sort(ns):
    def f(x):
        vals, idx = ns.lax.top_k(x, 5)
        return vals, idx, ns.jnp.sort(x, axis=0)[:3], ns.jnp.argsort(-x, axis=1)[:, :2]

    return f, (f32(6, 40),)


def segment_scatter(ns):
    def f(values, seg):
        totals = ns.jnp.zeros(5).at[seg].add(values)
        counts = ns.jnp.zeros(5).at[seg].add(1.0)
        return totals / ns.jnp.maximum(counts, 1.0)

    return f, (f32(40), RNG.integers(0, 5, 40))


def padding_conv(ns):
    def f(img, k):
        padded = ns.jnp.pad(img, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="reflect")
        return ns.lax.conv_general_dilated(
            padded, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    return f, (f32(2, 12, 12, 3), f32(5, 5, 3, 4))


def einsum_bilinear(ns):
    def f(x, w, y):
        return ns.jnp.einsum("...i,ij,...j->...", x, w, y), ns.jnp.einsum("ii->i", w)

    return f, (f32(4, 3, 6), f32(6, 6), f32(4, 3, 6))


def quantile_normalize(ns):
    def f(x):
        q = ns.jnp.quantile(x, ns.jnp.array([0.25, 0.5, 0.75]), axis=0)
        return (x - q[1]) / (q[2] - q[0]), ns.jnp.percentile(x, 90.0)

    return f, (f32(100, 4),)


def ufunc_methods(ns):
    def f(x, y):
        return ns.jnp.add.outer(x, y), ns.jnp.maximum.accumulate(x), ns.jnp.logaddexp.reduce(y)

    return f, (f32(7), f32(5))


def layer_norm_mlp(ns):
    def f(x, w):
        h = ns.nn.standardize(x, axis=-1)
        h = ns.nn.relu(h @ w)
        return ns.nn.softmax(h, axis=-1), ns.nn.one_hot(ns.jnp.argmax(h, axis=-1), w.shape[1])

    return f, (f32(16, 32), f32(32, 12))


def special_functions(ns):
    def f(x):
        p = ns.scipy.special.expit(x)
        return (
            ns.scipy.special.gammaln(ns.jnp.abs(x) + 1),
            ns.scipy.special.erf(x),
            ns.scipy.special.xlogy(p, p),
            ns.scipy.special.ndtri(ns.jnp.clip(p, 0.01, 0.99)),
        )

    return f, (f32(32),)


PROGRAMS = [
    mlp,
    attention,
    advanced_indexing,
    masked_max,
    spectrum,
    piecewise_activation,
    image_resize,
    gaussian_log_likelihood,
    cholesky_solve,
    lu_solve_triangular,
    smoothing,
    random_augment,
    cumulative_stats,
    argmax_accuracy,
    while_newton,
    scan_rnn,
    topk_sort,
    segment_scatter,
    padding_conv,
    einsum_bilinear,
    quantile_normalize,
    ufunc_methods,
    layer_norm_mlp,
    special_functions,
]


def test_there_are_twenty_four():
    assert len(PROGRAMS) == 24


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_runs_unchanged_and_matches_jax(program, jax_x32):
    theirs_ns, ours_ns = _namespace("jax"), _namespace("uir")
    fn, args = program(theirs_ns)
    want = jax.tree_util.tree_leaves(theirs_ns.jit(fn)(*args))
    fn, _ = program(ours_ns)
    got = uir.tree_util.tree_leaves(ours_ns.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert np.shape(g) == w.shape, (np.shape(g), w.shape)
        assert np.asarray(g).dtype == w.dtype, (np.asarray(g).dtype, w.dtype)
        np.testing.assert_allclose(
            np.asarray(g, np.float64), w.astype(np.float64), rtol=2e-4, atol=2e-4
        )
