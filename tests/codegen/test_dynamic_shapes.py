"""Bounded dynamic shapes (f32[<=N]) on the CPU backend: a module whose
dynamic sizes pass only through ops that keep elements apart (elementwise
ops, broadcast, transpose, reshapes adding or dropping dimensions of one)
runs compiled at its bounds, arguments padded and results cut to the sizes
they come from; any other op on a dynamic dimension keeps the module on the
evaluator, listed with the op in Executable.fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

import uir

CHAIN = """HloModule d

ENTRY e {
  x = f32[3,<=50] parameter(0)
  y = f32[<=50] parameter(1)
  b = f32[3,<=50] broadcast(y), dimensions={1}
  s = f32[3,<=50] add(x, b)
  e = f32[3,<=50] exponential(s)
  t = f32[<=50,3] transpose(e), dimensions={1,0}
  r = f32[<=50,1,3] reshape(t)
  c = s32[<=50,1,3] convert(r)
  ROOT o = (f32[<=50,1,3], s32[<=50,1,3], f32[3,<=50]) tuple(r, c, x)
}
"""


# A module head with the scalar sum its reductions apply.
SUMS = """HloModule d

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""


@pytest.mark.parametrize("n", [0, 1, 17, 50])
def test_a_chain_of_dynamic_sizes_runs_compiled_and_cut_to_size(n):
    module = uir.hlo.parse_module(CHAIN)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds, exe.fallbacks
    rng = np.random.default_rng(n)
    x = rng.standard_normal((3, n)).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    got, want = exe(x, y), uir.evaluate(module, x, y)
    r = np.exp(x + y).T.reshape(n, 1, 3)
    for g, w, ref in zip(got, want, (r, r.astype(np.int32), x), strict=True):
        assert np.asarray(g).shape == np.asarray(w).shape == ref.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)
        np.testing.assert_allclose(g, ref, rtol=1e-6)


def test_a_reduction_over_a_dynamic_dimension_stays_on_the_evaluator():
    module = uir.hlo.parse_module(
        SUMS
        + """
ENTRY e {
  x = f32[<=40] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
"""
    )
    exe = uir.compile(module, backend="cpu")
    (reason,) = exe.fallbacks
    assert "dynamic shapes run on the evaluator" in reason and "reduce" in reason, reason
    x = np.arange(7, dtype=np.float32)
    np.testing.assert_allclose(exe(x), 21)  # the valid entries only


def test_dynamic_arguments_past_their_bound_are_refused_and_do_not_serialize():
    exe = uir.compile(uir.hlo.parse_module(CHAIN), backend="cpu")
    with pytest.raises(uir.ArgumentError, match=r"takes shape \(3, <=50\)"):
        exe(np.zeros((3, 51), np.float32), np.zeros(51, np.float32))
    with pytest.raises(uir.ArgumentError, match=r"takes shape \(3, <=50\)"):
        exe(np.zeros((4, 5), np.float32), np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="dynamic size"):
        exe.serialize()


def test_a_profile_of_dynamic_sizes_returns_the_cut_result():
    exe = uir.compile(uir.hlo.parse_module(CHAIN), backend="cpu")
    x, y = np.ones((3, 5), np.float32), np.ones(5, np.float32)
    profile = exe.profile(x, y)
    assert np.asarray(profile.result[0]).shape == (5, 1, 3)


def test_dynamic_sizes_that_meet_in_one_op_must_be_equal():
    exe = uir.compile(uir.hlo.parse_module(CHAIN), backend="cpu")
    with pytest.raises(uir.ArgumentError, match="sizes must be equal"):
        exe(np.zeros((3, 5), np.float32), np.zeros(6, np.float32))


def test_the_evaluator_runs_the_module_as_written_when_it_cannot_be_padded():
    # The passes turn the transpose and reshape into bitcasts, which the
    # evaluator does not carry dynamic sizes through: the fallback runs the
    # module it was given.
    module = uir.hlo.parse_module(
        SUMS
        + """
ENTRY e {
  x = f32[<=10,3] parameter(0)
  t = f32[3,<=10] transpose(x), dimensions={1,0}
  r = f32[3,<=10,1] reshape(t)
  m = f32[3,<=10,1] multiply(r, r)
  z = f32[] constant(0)
  ROOT s = f32[3,1] reduce(m, z), dimensions={1}, to_apply=add
}
"""
    )
    exe = uir.compile(module, backend="cpu")
    assert "reduce over a dynamic dimension" in exe.fallbacks[0]
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(np.asarray(exe(x)).ravel(), (x * x).sum(0))
