"""uir.evaluate as a Python API: argument checking that names the
parameter, tuple parameters, inputs read in place (and never written),
inputs in other layouts, results that are fresh arrays."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir

ADD = """
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = f32[2,3] add(x, y)
}
"""

TUPLE_PARAM = """
ENTRY e {
  t = (f32[3], (s32[], bf16[2])) parameter(0)
  a = f32[3] get-tuple-element(t), index=0
  inner = (s32[], bf16[2]) get-tuple-element(t), index=1
  n = s32[] get-tuple-element(inner), index=0
  f = f32[] convert(n)
  b = f32[3] broadcast(f), dimensions={}
  s = f32[3] add(a, b)
  ROOT r = (f32[3], bf16[2]) tuple(s, get-tuple-element(inner), index=1)
}
"""


def module(text):
    return uir.hlo.parse_module(text)


def test_wrong_argument_count_dtype_and_shape_name_the_parameter():
    m = module(ADD)
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        uir.evaluate(m, x)
    with pytest.raises(
        TypeError, match=r"parameter 1 \(%y: f32\[2,3\]\{1,0\}\) takes float32, got float64"
    ):
        uir.evaluate(m, x, np.zeros((2, 3)))
    with pytest.raises(
        ValueError,
        match=r"parameter 0 \(%x: f32\[2,3\]\{1,0\}\) takes shape \(2, 3\), got \(3, 2\)",
    ):
        uir.evaluate(m, np.zeros((3, 2), np.float32), x)


def test_tuple_parameters_take_nested_tuples():
    m = uir.hlo.parse_module(
        TUPLE_PARAM.replace("tuple(s, get-tuple-element(inner), index=1)", "tuple(s, h)").replace(
            "  ROOT r", "  h = bf16[2] get-tuple-element(inner), index=1\n  ROOT r"
        )
    )
    a = np.array([1, 2, 3], np.float32)
    h = np.array([0.5, -2], ml_dtypes.bfloat16)
    s, h_out = uir.evaluate(m, (a, (np.int32(10), h)))
    np.testing.assert_array_equal(s, [11, 12, 13])
    assert h_out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(h_out, h)
    with pytest.raises(TypeError, match="takes a tuple"):
        uir.evaluate(m, a)
    with pytest.raises(ValueError, match="tuple of 2, got 1 elements"):
        uir.evaluate(m, (a,))
    with pytest.raises(TypeError, match=r"element 1, element 1 takes bfloat16, got float32"):
        uir.evaluate(m, (a, (np.int32(1), h.astype(np.float32))))


@pytest.mark.parametrize(
    "make",
    [
        lambda a: np.asfortranarray(a),
        lambda a: np.ascontiguousarray(np.repeat(a, 2, axis=1))[:, ::2],
        lambda a: a.astype(a.dtype.newbyteorder(">")),
        lambda a: a.copy(),
    ],
    ids=["fortran", "strided", "big-endian", "contiguous"],
)
def test_inputs_in_any_layout_give_the_same_result(make):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((2, 3)).astype(np.float32)
    got = uir.evaluate(module(ADD), make(x), make(y))
    np.testing.assert_array_equal(got, x + y)


def test_results_never_alias_inputs_and_inputs_are_not_written():
    identity = module(
        "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(x, x)\n}"
    )
    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False  # read in place: the evaluator never needs to write it
    a, b = uir.evaluate(identity, x)
    assert not np.shares_memory(a, x) and not np.shares_memory(a, b)
    a[0] = 100
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    np.testing.assert_array_equal(b, [0, 1, 2, 3])


def test_large_inputs_are_read_without_a_copy(run_python):
    # A 512 MiB input and an op that reads one element: a copied input would
    # raise the peak resident size by 512 MiB.
    out = run_python(
        """
import resource, numpy as np, uir
n = 1 << 27
m = uir.hlo.parse_module(f'''ENTRY e {{
  x = f32[{n}] parameter(0)
  ROOT s = f32[1] slice(x), slice={{[5:6]}}
}}''')
x = np.ones(n, np.float32)
x[5] = 7
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
got = uir.evaluate(m, x)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert got[0] == 7, got
print((after - before) // 1024)
"""
    )
    grown_mib = int(out.stdout.strip().splitlines()[-1])
    assert grown_mib < 64, grown_mib
