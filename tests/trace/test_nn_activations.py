"""uir.nn's activations against NumPy formulas (and jax.nn where JAX is
installed: make test-xla)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import uir.nn as nn

X = np.linspace(-4, 4, 41).astype(np.float32)
X64 = X.astype(np.float64)


def _softplus(x):
    return np.logaddexp(x, 0)


def _elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


REFERENCES = {
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "elu": _elu,
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: 1.0507009873554805 * _elu(x, 1.6732632423543772),
    "softplus": _softplus,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "log_sigmoid": lambda x: -_softplus(-x),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "tanh": np.tanh,
    "identity": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activations_match_their_formulas(name):
    got = np.asarray(getattr(nn, name)(X))
    assert got.dtype == np.float32 and got.shape == X.shape
    np.testing.assert_allclose(got, REFERENCES[name](X64), rtol=2e-6, atol=2e-6)


def test_glu_gates_the_first_half_by_the_second():
    x = X[:40].reshape(4, 10)
    a, b = x[:, :5].astype(np.float64), x[:, 5:].astype(np.float64)
    np.testing.assert_allclose(nn.glu(x), a / (1 + np.exp(-b)), rtol=2e-6)


def test_log1mexp_is_accurate_on_both_sides_of_log2():
    x = np.array([1e-6, 0.01, 0.5, math.log(2), 1.0, 5.0, 30.0], np.float32)
    x64 = x.astype(np.float64)
    want = np.where(x64 > math.log(2), np.log1p(-np.exp(-x64)), np.log(-np.expm1(-x64)))
    np.testing.assert_allclose(nn.log1mexp(x), want, rtol=1e-6)


def test_logmeanexp_and_standardize():
    x = np.random.default_rng(1).standard_normal((3, 50)).astype(np.float32)
    want = np.log(np.mean(np.exp(x.astype(np.float64)), axis=1))
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1), want, rtol=1e-6, atol=1e-6)
    z = np.asarray(nn.standardize(x, axis=1))
    np.testing.assert_allclose(z.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(z.var(1), 1, atol=1e-3)


def _attention(q, k, v, causal=False):
    heads, kv = q.shape[2], k.shape[2]
    k, v = np.repeat(k, heads // kv, axis=2), np.repeat(v, heads // kv, axis=2)
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if causal:
        logits = np.where(np.tril(np.ones(logits.shape[-2:], bool)), logits, -np.inf)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_dot_product_attention_matches_the_formula(causal, kv_heads):
    r = np.random.default_rng(2)
    q = r.standard_normal((2, 6, 4, 8)).astype(np.float32)
    k = r.standard_normal((2, 6, kv_heads, 8)).astype(np.float32)
    v = r.standard_normal((2, 6, kv_heads, 8)).astype(np.float32)
    got = nn.dot_product_attention(q, k, v, is_causal=causal)
    want = _attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), causal)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(
        nn.dot_product_attention(q[0], k[0], v[0], is_causal=causal), want[0], rtol=2e-5, atol=2e-5
    )


@pytest.mark.xla
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activations_match_jax_nn(name, jax_x32):
    jax = jax_x32
    np.testing.assert_allclose(
        getattr(nn, name)(X), np.asarray(getattr(jax.nn, name)(X)), rtol=2e-6, atol=2e-6
    )
