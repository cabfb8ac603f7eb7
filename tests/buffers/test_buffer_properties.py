"""Buffer assignment on random modules (tests/buffer_modules.py): after the
default pipeline, or only copy-insertion and a scheduler, the assignment
passes check(), and the optimized module still computes what the input
did."""

from __future__ import annotations

import numpy as np
from buffer_modules import modules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2.0, (4, 3)).astype(np.float32) for _ in range(2)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=modules(), mode=st.sampled_from(["default", "list", "dfs", "postorder"]))
def test_buffer_assignment_checks_on_random_modules(text, mode):
    module = uir.hlo.parse_module(text)
    module.verify()
    if mode == "default":
        out = uir.passes.default_pipeline().run(module)
    else:
        out = uir.schedule.run(uir.passes.run(module, ["copy-insertion"]), algorithm=mode)
    assert out.is_scheduled
    out.verify()
    ba = uir.buffers.assign(out)
    ba.check()
    # Every temporary sits inside the arena, and the arena is no smaller
    # than the most bytes live at once.
    assert ba.arena_bytes >= ba.peak_bytes
    args = _inputs(0)
    for want, got in zip(uir.evaluate(module, *args), uir.evaluate(out, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
