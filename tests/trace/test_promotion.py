"""uir.numpy's type promotion against jax.numpy's, on every pair of types
(64-bit types off, as by default) and Python scalars (weakly typed): the
result type of each binary function, or an error where JAX raises one."""

from __future__ import annotations

import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

import uir
import uir.numpy as unp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    ml_dtypes.bfloat16,
    np.float32,
    np.float64,
    np.complex64,
]
VALUES = [np.ones(2, t) for t in TYPES] + [True, 3, 2.5, 1 + 2j]
PAIRS = [
    (a, b)
    for a, b in itertools.product(VALUES, repeat=2)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray)
]
OPS = [
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "floor_divide",
    "remainder",
    "power",
    "maximum",
    "minimum",
    "arctan2",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "bitwise_and",
    "left_shift",
    "equal",
    "where",
]


def _result(module, eval_shape, op, a, b):
    """The result type of op(a, b), traced only (eval_shape), or "error"."""

    def f(x, y):
        if op == "where":
            return module.where(np.array([True, False]), x, y)
        return getattr(module, op)(x, y)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(eval_shape(f, a, b).dtype)
    except (TypeError, ValueError):
        return "error"


@pytest.mark.parametrize("op", OPS)
def test_binary_functions_promote_as_jax_numpy_does(op):
    wrong = []
    for a, b in PAIRS:
        theirs = _result(jnp, jax.eval_shape, op, a, b)
        ours = _result(unp, uir.eval_shape, op, a, b)
        if theirs != ours:
            wrong.append(
                f"{getattr(a, 'dtype', type(a).__name__)}, {getattr(b, 'dtype', type(b).__name__)}:"
                f" jax {theirs}, uir {ours}"
            )
    assert wrong == [], f"{len(wrong)} of {len(PAIRS)} pairs differ: " + "; ".join(wrong[:8])
