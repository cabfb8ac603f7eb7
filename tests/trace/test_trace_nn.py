"""uir.nn against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

import uir
from uir import nn

X = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32) * 3


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


CASES = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "silu": (nn.silu, lambda x: x / (1 + np.exp(-x))),
    "gelu_tanh": (
        nn.gelu,
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "gelu_exact": (
        lambda x: nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
    ),
    "softmax": (nn.softmax, _softmax),
    "softmax_axis0": (lambda x: nn.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    "log_softmax": (nn.log_softmax, lambda x: np.log(_softmax(x))),
    "logsumexp": (nn.logsumexp, lambda x: np.log(np.exp(x).sum())),
    "logsumexp_axis": (lambda x: nn.logsumexp(x, axis=1), lambda x: np.log(np.exp(x).sum(1))),
    "layer_norm": (
        nn.layer_norm,
        lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nn_functions_match_numpy(name):
    f, ref = CASES[name]
    np.testing.assert_allclose(uir.jit(f)(X), ref(X.astype(np.float64)), rtol=2e-5, atol=2e-5)


def test_one_hot():
    labels = np.array([0, 2, 1, 2], np.int32)
    np.testing.assert_array_equal(uir.jit(lambda v: nn.one_hot(v, 3))(labels), np.eye(3)[labels])
    assert uir.jit(lambda v: nn.one_hot(v, 3, axis=0))(labels).shape == (3, 4)


def test_logsumexp_is_stable_for_large_inputs():
    x = np.array([1000.0, 1000.0], np.float32)
    assert np.isclose(uir.jit(nn.logsumexp)(x), 1000 + np.log(2))
