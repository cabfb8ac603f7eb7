"""Property tests for the Unified IR: random fusions over awkward shapes (1,
primes, sizes that divide into no tile) lower to iGraphs that verify, print
and parse back, and that the interpreter runs to the evaluator's results."""

from __future__ import annotations

import numpy as np
from fusion_strategies import fusion_modules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir
import uir.igraph as ig
from uir._src.core.evaluate import random_arguments


def _check(text: str, hardware: str) -> None:
    module = uir.hlo.parse_module(text)
    out = uir.passes.default_pipeline().run(module)
    kg = ig.lower(out, hardware)
    assert kg.count("fallback") == 0, kg.to_text()
    for node in kg.nodes:
        for g in node.igraphs:
            g.verify()
            assert ig.parse(g.to_text()) == g
    args = random_arguments(out, 1)
    # Inputs shrink with the longest dim, so that sums over it stay near 1
    # and the evaluator's and the tiles' summation orders agree to 1e-4.
    scale = 1.0 / np.sqrt(max(max(a.shape, default=1) for a in args))
    args = [(a * scale).astype(a.dtype) for a in args]
    got, want = ig.interpret(kg, *args), uir.evaluate(out, *args)
    # The evaluator sums 10^6 f32 terms one after another, the tiles in
    # blocks: neither order is exact, and they may differ by about 1e-2
    # there; elsewhere they agree to 1e-4.
    tol = 2e-2 if max(max(a.shape, default=1) for a in args) > 10**5 else 1e-4
    # An exponential's relative error is its argument's absolute error, and
    # its argument is ln|result|: through a chain (exp(exp(exp(x - sum))) ~
    # 5e30) a sum's last-bit difference grows by about ln|result| at each
    # step, so each element's relative bound grows with ln|result| too.
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        growth = np.maximum(1.0, np.log(np.abs(w)))
        growth = np.where(np.isfinite(growth), growth, 1.0)
        ok = (np.abs(g - w) <= tol + tol * growth * np.abs(w)) | (g == w)
    ok |= np.isnan(g) & np.isnan(w)
    assert ok.all(), f"{(~ok).sum()} of {ok.size} differ: got {g[~ok][:4]}, want {w[~ok][:4]}"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=fusion_modules(), hardware=st.sampled_from(["cpu", "reference-cpu", "gpu"]))
def test_random_fusions_lower_verify_and_interpret_like_the_evaluator(text, hardware):
    _check(text, hardware)


def test_a_million_and_three_elements():
    """1000003 is prime: no tile divides it, so every kernel has a tail."""
    n = 1000003
    text = f"""HloModule big
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}}
ENTRY main {{
  p0 = f32[{n}] parameter(0)
  e = f32[{n}] exponential(p0)
  z = f32[] constant(0)
  s = f32[] reduce(e, z), dimensions={{0}}, to_apply=add
  b = f32[{n}] broadcast(s), dimensions={{}}
  ROOT d = f32[{n}] divide(e, b)
}}
"""
    x = (np.random.default_rng(0).standard_normal(n) * 0.1).astype(np.float32)
    out = uir.passes.default_pipeline().run(uir.hlo.parse_module(text))
    kg = ig.lower(out)
    assert kg.count("fallback") == 0
    np.testing.assert_allclose(ig.interpret(kg, x), uir.evaluate(out, x), rtol=1e-4)
