"""Does my softmax compile to one kernel, agree with the evaluator on every
backend, and survive the pipeline on random modules?"""

import numpy as np
from hypothesis import given, settings

import uir
import uir.numpy as unp
from uir.testing import assert_fusion, assert_matches_evaluator, assert_passes_preserve
from uir.testing import strategies as us


def softmax(x):
    e = unp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_softmax_runs_as_one_kernel(uir_report):
    x = np.random.default_rng(0).standard_normal((32, 100)).astype(np.float32)
    uir_report(softmax, x)  # on failure, the compile's HTML report is kept
    assert_fusion(softmax, x, kernels=1)


def test_softmax_matches_the_evaluator(uir_backend):
    x = np.random.default_rng(1).standard_normal((8, 17)).astype(np.float32)
    assert_matches_evaluator(softmax, x, backends=[uir_backend])


@settings(max_examples=20, deadline=None)
@given(us.arrays(np.float32, us.shapes(min_dims=1, max_dims=3, max_side=6)))
def test_softmax_rows_sum_to_one(x):
    np.testing.assert_allclose(np.asarray(uir.jit(softmax)(x)).sum(axis=-1), 1, rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(us.hlo_modules(max_ops=6))
def test_the_pipeline_preserves_random_modules(text):
    assert_passes_preserve(uir.hlo.parse_module(text))
