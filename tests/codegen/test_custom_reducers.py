"""Reductions whose reducer is a computation of its own (reduce-expander):
compiled with no fallback over any set of axes and lengths that take one
level or several, matching the evaluator (which folds in order) and
NumPy. The reducers are associative with init as identity, as HLO
requires; the tree order changes float rounding only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp
from uir import lax

# name: (HLO reducer body over p0..p(2n-1), operand types, init literals)
REDUCERS = {
    "max_abs": (
        "a = f32[] abs(p1)\n  ROOT r = f32[] maximum(p0, a)",
        ["f32"],
        ["0"],
    ),
    "any_nonzero": (
        "z = f32[] constant(0)\n  n = pred[] compare(p1, z), direction=NE\n"
        "  o = pred[] compare(p0, z), direction=NE\n  e = pred[] or(o, n)\n"
        "  one = f32[] constant(1)\n  ROOT r = f32[] select(e, one, z)",
        ["f32"],
        ["0"],
    ),
    "complex_product": ("ROOT r = c64[] multiply(p0, p1)", ["c64"], ["(1, 0)"]),
    "max_and_count": (
        "gt = pred[] compare(p0, p2), direction=GT\n"
        "  lt = pred[] compare(p0, p2), direction=LT\n"
        "  both = s32[] add(p1, p3)\n  top = f32[] select(gt, p0, p2)\n"
        "  cl = s32[] select(lt, p3, both)\n  c = s32[] select(gt, p1, cl)\n"
        "  ROOT t = (f32[], s32[]) tuple(top, c)",
        ["f32", "s32"],
        ["-inf", "0"],
    ),
}


def _module(name, dims, axes):
    body, types, inits = REDUCERS[name]
    n = len(types)
    params = [f"p{k} = {types[k % n]}[] parameter({k})" for k in range(2 * n)]
    shape = ",".join(map(str, dims))
    kept = ",".join(str(d) for k, d in enumerate(dims) if k not in axes)
    entry = [f"x{k} = {t}[{shape}] parameter({k})" for k, t in enumerate(types)]
    entry += [
        f"i{k} = {t}[] constant({v})" for k, (t, v) in enumerate(zip(types, inits, strict=True))
    ]
    xs = ", ".join(f"x{k}" for k in range(n))
    ins = ", ".join(f"i{k}" for k in range(n))
    out = f"{types[0]}[{kept}]" if n == 1 else "(" + ", ".join(f"{t}[{kept}]" for t in types) + ")"
    dims_attr = ",".join(map(str, axes))
    entry.append(f"ROOT r = {out} reduce({xs}, {ins}), dimensions={{{dims_attr}}}, to_apply=f")
    text = (
        "HloModule m\n\nf {\n  " + "\n  ".join(params) + "\n  " + body + "\n}\n\n"
        "ENTRY e {\n  " + "\n  ".join(entry) + "\n}\n"
    )
    return uir.hlo.parse_module(text)


def _args(name, dims, rng):
    _, types, _ = REDUCERS[name]
    out = []
    for t in types:
        if t == "c64":
            # Unit-modulus values: products stay near the unit circle.
            out.append(np.exp(1j * rng.uniform(-0.1, 0.1, dims)).astype(np.complex64))
        elif t == "s32":
            out.append(np.ones(dims, np.int32))
        elif name == "any_nonzero":
            out.append((rng.random(dims) < 0.05).astype(np.float32) * rng.standard_normal(dims))
        else:
            out.append(np.floor(rng.standard_normal(dims) * 4).astype(np.float32))  # ties
    return [a.astype(np.float32) if a.dtype == np.float64 else a for a in out]


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(sorted(REDUCERS)),
    dims=st.lists(st.sampled_from([1, 2, 3, 7, 17, 40, 300]), min_size=1, max_size=3),
    data=st.data(),
)
def test_custom_reducers_compile_over_any_axes(name, dims, data):
    if np.prod(dims) > 50000:
        dims = dims[:2]
    axes = sorted(data.draw(st.sets(st.integers(0, len(dims) - 1), min_size=1)))
    module = _module(name, dims, axes)
    args = _args(name, dims, np.random.default_rng(sum(dims) + len(axes)))
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = exe(*args)
    want = uir.evaluate(module, *args)
    got = got if isinstance(got, tuple | list) else [got]
    want = want if isinstance(want, tuple | list) else [want]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


def test_complex_determinants_compile_and_match_numpy():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 6, 6)) + 1j * rng.standard_normal((3, 6, 6))).astype(np.complex64)
    det = uir.jit(unp.linalg.det)
    assert det.lower(a).compile().fallbacks == []
    np.testing.assert_allclose(det(a), np.linalg.det(a), rtol=1e-4)
    sign, logdet = uir.jit(unp.linalg.slogdet)(a)
    want_sign, want_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign, want_sign, atol=1e-4)
    np.testing.assert_allclose(logdet, want_log, atol=1e-4)


@pytest.mark.parametrize("n", [5, 16, 17, 1000, 100000])
def test_long_rows_take_one_kernel_per_level(n):
    x = np.random.default_rng(n).standard_normal((4, n)).astype(np.float32)
    f = uir.jit(
        lambda v: lax.reduce(v, np.float32(0), lambda p, q: unp.maximum(p, unp.abs(q)), (1,))
    )
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == []
    levels = 1
    while n > 16:
        n = -(-n // 16)
        levels += 1
    assert compiled.executable.thunk_kinds.get("kernel") == levels, compiled.executable.thunk_text
    np.testing.assert_array_equal(f(x), np.max(np.abs(x), axis=1))
