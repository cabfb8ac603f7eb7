"""Complex arithmetic compiled: each complex value is built as its two
real parts (the tensors read as arrays of twice as many reals), checked
against the evaluator and NumPy for every op family the kernels take,
in c64 and c128, through moves, reductions, constants and layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

TYPES = {"c64": (np.complex64, "f32", np.float32), "c128": (np.complex128, "f64", np.float64)}

# name: (HLO body over complex a, b [6,5] and real r [6,5] giving ROOT of
# type T (complex) or R (real), NumPy of the same)
CASES = {
    "add": ("ROOT o = {c}[6,5] add(a, b)", lambda a, b, r: a + b),
    "subtract": ("ROOT o = {c}[6,5] subtract(a, b)", lambda a, b, r: a - b),
    "multiply": ("ROOT o = {c}[6,5] multiply(a, b)", lambda a, b, r: a * b),
    "divide": ("ROOT o = {c}[6,5] divide(a, b)", lambda a, b, r: a / b),
    "negate": ("ROOT o = {c}[6,5] negate(a)", lambda a, b, r: -a),
    "power": ("ROOT o = {c}[6,5] power(a, b)", lambda a, b, r: np.power(a, b)),
    "exp": ("ROOT o = {c}[6,5] exponential(a)", lambda a, b, r: np.exp(a)),
    "log": ("ROOT o = {c}[6,5] log(a)", lambda a, b, r: np.log(a)),
    "abs": ("ROOT o = {f}[6,5] abs(a)", lambda a, b, r: np.abs(a)),
    "real_imag": (
        "x = {f}[6,5] real(a)\n  y = {f}[6,5] imag(b)\n  ROOT o = {f}[6,5] multiply(x, y)",
        lambda a, b, r: a.real * b.imag,
    ),
    "complex": (
        "i = {f}[6,5] negate(r)\n  ROOT o = {c}[6,5] complex(r, i)",
        lambda a, b, r: r - 1j * r,
    ),
    "convert": (
        "x = {c}[6,5] convert(r)\n  ROOT o = {c}[6,5] multiply(x, a)",
        lambda a, b, r: r * a,
    ),
    "compare": (
        "s = {c}[6,5] select(m, a, b)\n  e = pred[6,5] compare(s, a), direction=EQ\n"
        "  n = pred[6,5] compare(s, b), direction=NE\n  ROOT o = pred[6,5] and(e, n)",
        lambda a, b, r: (np.where(r > 0, a, b) == a) & (np.where(r > 0, a, b) != b),
    ),
    "moves": (
        "t = {c}[5,6] transpose(a), dimensions={{1,0}}\n"
        "  s = {c}[5,3] slice(t), slice={{[0:5], [1:4]}}\n"
        "  k = {c}[] constant((1.5, -2))\n"
        "  kb = {c}[5,3] broadcast(k), dimensions={{}}\n"
        "  ROOT o = {c}[5,3] add(s, kb)",
        lambda a, b, r: a.T[:, 1:4] + (1.5 - 2j),
    ),
    "sum_rows": (
        "z = {c}[] constant((0, 0))\n  p = {c}[6,5] multiply(a, b)\n"
        "  ROOT o = {c}[6] reduce(p, z), dimensions={{1}}, to_apply=add",
        lambda a, b, r: (a * b).sum(axis=1),
    ),
    "constant_array": (
        "k = {c}[2] constant({{(1, 2), (3, -4)}})\n  kb = {c}[6,5,2] broadcast(k), dimensions={{2}}\n"
        "  ab = {c}[6,5,2] broadcast(a), dimensions={{0,1}}\n"
        "  ROOT o = {c}[6,5,2] multiply(ab, kb)",
        lambda a, b, r: a[:, :, None] * np.array([1 + 2j, 3 - 4j]),
    ),
}


def _module(body, c, f):
    return uir.hlo.parse_module(f"""HloModule m

add {{
  x = {c}[] parameter(0)
  y = {c}[] parameter(1)
  ROOT s = {c}[] add(x, y)
}}

ENTRY e {{
  a = {c}[6,5] parameter(0)
  b = {c}[6,5] parameter(1)
  r = {f}[6,5] parameter(2)
  zero = {f}[] constant(0)
  zb = {f}[6,5] broadcast(zero), dimensions={{}}
  m = pred[6,5] compare(r, zb), direction=GT
  {body.format(c=c, f=f)}
}}
""")


def _args(rng, ctype, ftype):
    a = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(ctype)
    b = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(ctype)
    r = rng.standard_normal((6, 5)).astype(ftype)
    return a, b, r


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("c", sorted(TYPES))
def test_complex_ops_compile_and_match_the_evaluator_and_numpy(name, c):
    ctype, f, ftype = TYPES[c]
    body, numpy_fn = CASES[name]
    module = _module(body, c, f)
    a, b, r = _args(np.random.default_rng(11), ctype, ftype)
    if name == "compare":
        b = np.where(np.arange(30).reshape(6, 5) % 3 == 0, a, b)  # some equal pairs
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = np.asarray(exe(a, b, r))
    want = np.asarray(uir.evaluate(module, a, b, r))
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-5 if c == "c64" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, numpy_fn(a, b, r), rtol=tol * 10, atol=tol * 10)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["add", "subtract", "multiply", "divide"]), min_size=1, max_size=4),
    st.sampled_from(sorted(TYPES)),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_random_complex_chains_in_any_layout(ops, c, transposed, seed):
    ctype, _f, ftype = TYPES[c]
    layout = "{0,1}" if transposed else "{1,0}"
    lines, value = [], "a"
    for k, op in enumerate(ops):
        other = "b" if k % 2 == 0 else "a"
        lines.append(f"v{k} = {c}[6,5]{layout} {op}({value}, {other})")
        value = f"v{k}"
    lines[-1] = "ROOT " + lines[-1]
    text = f"""HloModule m

ENTRY e {{
  a = {c}[6,5]{layout} parameter(0)
  b = {c}[6,5]{layout} parameter(1)
  {chr(10).join("  " + line if i else line for i, line in enumerate(lines))}
}}
"""
    module = uir.hlo.parse_module(text)
    a, b, _ = _args(np.random.default_rng(seed), ctype, ftype)
    b = b + (2 + 2j)  # away from zero: divisions stay tame
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    tol = 1e-4 if c == "c64" else 1e-11
    np.testing.assert_allclose(exe(a, b), uir.evaluate(module, a, b), rtol=tol, atol=tol)
