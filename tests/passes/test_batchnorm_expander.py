"""batchnorm_expander against the evaluator: batch-norm-training,
-inference and -grad of random shapes, feature dimensions and float types,
expanded, and compiled, give the evaluator's values for the original ops
(which it computes in f64 and rounds once)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
from uir._src.core.evaluate import random_arguments


def _module(dtype: str, dims: list[int], feature: int) -> str:
    shape = f"{dtype}[{','.join(map(str, dims))}]"
    vec = f"{dtype}[{dims[feature]}]"
    bn = f"epsilon=0.001, feature_index={feature}"
    return f"""HloModule bn
ENTRY e {{
  x = {shape} parameter(0)
  s = {vec} parameter(1)
  o = {vec} parameter(2)
  dy = {shape} parameter(3)
  t = ({shape}, {vec}, {vec}) batch-norm-training(x, s, o), {bn}
  m = {vec} get-tuple-element(t), index=1
  v = {vec} get-tuple-element(t), index=2
  g = ({shape}, {vec}, {vec}) batch-norm-grad(x, s, m, v, dy), {bn}
  i = {shape} batch-norm-inference(x, s, o, m, v), {bn}
  ROOT r = (({shape}, {vec}, {vec}), ({shape}, {vec}, {vec}), {shape}) tuple(t, g, i)
}}
"""


def _leaves(x):
    return [y for z in x for y in _leaves(z)] if isinstance(x, tuple) else [np.asarray(x)]


def _close(got, want, dtype):
    tol = {"f64": 1e-10, "f32": 2e-5, "bf16": 2e-2, "f16": 4e-3}[dtype]
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        scale = max(1.0, float(np.abs(w64).max())) if w64.size else 1.0
        np.testing.assert_allclose(g64, w64, rtol=tol, atol=tol * scale)


@settings(max_examples=30, deadline=None)
@given(
    dims=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    data=st.data(),
    dtype=st.sampled_from(["f32", "f64", "bf16", "f16"]),
    shift=st.sampled_from([0.0, 5.0]),
)
def test_expanded_batch_norms_evaluate_and_compile_like_the_originals(dims, data, dtype, shift):
    feature = data.draw(st.integers(0, len(dims) - 1))
    m = uir.hlo.parse_module(_module(dtype, dims, feature))
    args = random_arguments(m, seed=len(dims))
    args[0] = (args[0].astype(np.float32) + shift).astype(args[0].dtype)  # data off zero
    want = uir.evaluate(m, *args)
    expanded = uir.passes.run(m, ["batchnorm_expander"])
    assert "batch-norm" not in expanded.to_text()
    _close(uir.evaluate(expanded, *args), want, dtype)
    exe = uir.compile(m, backend="cpu")
    assert exe.fallbacks == []
    _close(exe(*args), want, dtype)
