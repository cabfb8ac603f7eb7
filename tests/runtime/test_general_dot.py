"""Dots in every form against the reference evaluator and NumPy: batch,
free and contracting dimensions in any order, any layout, and element
types BLAS's row-major GEMM does not take (integers with wraparound,
complex numbers, narrow floats, mixed operand types). Compiled, each runs
as a "gemm" thunk of the runtime's own, never on the evaluator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import uir

DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "s8": np.int8,
    "s32": np.int32,
    "u8": np.uint8,
    "s64": np.int64,
    "u32": np.uint32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "c64": np.complex64,
    "c128": np.complex128,
    "s4": ml_dtypes.int4,
    "pred": np.bool_,
}
# (lhs, rhs, result): one type throughout, and the mixed forms HLO allows.
TYPE_TRIPLES = [(t, t, t) for t in DTYPES if t not in ("s4", "pred")] + [
    ("s8", "s8", "s32"),
    ("u8", "s8", "s32"),
    ("bf16", "bf16", "f32"),
    ("f16", "f16", "f32"),
    ("s32", "s32", "f32"),
    ("f32", "f32", "c64"),
    ("bf16", "s4", "bf16"),  # int4 weights, one per byte
    ("s4", "s8", "s32"),
    ("pred", "pred", "pred"),  # the or of ands
    ("pred", "pred", "s32"),  # counts
]


def _shape(dtype, dims, layout):
    body = f"{dtype}[{','.join(map(str, dims))}]"
    return body + "{" + ",".join(map(str, layout)) + "}" if dims else body


def _data(rng, dtype, shape):
    np_type = DTYPES[dtype]
    if dtype == "s4":
        return rng.integers(-8, 8, shape).astype(np_type)
    if dtype == "pred":
        return rng.random(shape) < 0.3
    if dtype.startswith(("s", "u")):
        info = np.iinfo(np_type)
        # Large values too, so that integer products wrap.
        return rng.integers(info.min, info.max, shape, dtype=np_type, endpoint=True)
    if dtype.startswith("c"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np_type)
    return rng.standard_normal(shape).astype(np_type)


@st.composite
def dot_cases(draw):
    nb, nm, nn, nk = (draw(st.integers(0, 2)) for _ in range(4))
    size = st.integers(1, 5)
    batch = [draw(size) for _ in range(nb)]
    m, n, k = ([draw(size) for _ in range(r)] for r in (nm, nn, nk))
    # Each operand's dimensions in a random order, with a random layout.
    lhs_roles = [("b", i) for i in range(nb)] + [("m", i) for i in range(nm)]
    lhs_roles += [("k", i) for i in range(nk)]
    rhs_roles = [("b", i) for i in range(nb)] + [("n", i) for i in range(nn)]
    rhs_roles += [("k", i) for i in range(nk)]
    lhs_roles = draw(st.permutations(lhs_roles))
    rhs_roles = draw(st.permutations(rhs_roles))
    types = draw(st.sampled_from(TYPE_TRIPLES))
    ranks = (len(lhs_roles), len(rhs_roles), nb + nm + nn)
    if types[2].startswith("c"):
        # Relayout copies of complex arrays still run on the evaluator
        # ("complex values"): complex dots in row-major arrays here.
        layouts = [list(range(r - 1, -1, -1)) for r in ranks]
    else:
        layouts = [draw(st.permutations(range(r))) for r in ranks]
    return batch, m, n, k, lhs_roles, rhs_roles, types, layouts


def _out_roles(lhs_roles, rhs_roles, nb):
    """The result's dimensions: batch, then each operand's free ones in
    the order the operand holds them."""
    return (
        [("b", i) for i in range(nb)]
        + [r for r in lhs_roles if r[0] == "m"]
        + [r for r in rhs_roles if r[0] == "n"]
    )


def _module(case):
    batch, m, n, k, lhs_roles, rhs_roles, (lt, rt, ot), (ll, rl, ol) = case
    sizes = {"b": batch, "m": m, "n": n, "k": k}
    ldims = [sizes[r][i] for r, i in lhs_roles]
    rdims = [sizes[r][i] for r, i in rhs_roles]
    odims = [sizes[r][i] for r, i in _out_roles(lhs_roles, rhs_roles, len(batch))]

    def where(roles, role):
        return [roles.index((role, i)) for i in range(len(sizes[role]))]

    attrs = []
    for key, roles, role in [
        ("lhs_batch_dims", lhs_roles, "b"),
        ("lhs_contracting_dims", lhs_roles, "k"),
        ("rhs_batch_dims", rhs_roles, "b"),
        ("rhs_contracting_dims", rhs_roles, "k"),
    ]:
        attrs.append(f"{key}={{{','.join(map(str, where(roles, role)))}}}")
    text = f"""HloModule dot

ENTRY e {{
  a = {_shape(lt, ldims, ll)} parameter(0)
  b = {_shape(rt, rdims, rl)} parameter(1)
  ROOT d = {_shape(ot, odims, ol)} dot(a, b), {", ".join(attrs)}
}}
"""
    return text, ldims, rdims


def _specs(case):
    """The einsum subscripts of the dot's operands and result."""
    batch, m, n, k, lhs_roles, rhs_roles, _types, _ = case
    letters = {}
    for role, count in (("b", len(batch)), ("m", len(m)), ("n", len(n)), ("k", len(k))):
        for i in range(count):
            letters[(role, i)] = "abcdefghijklmnop"[len(letters)]
    spec_l = "".join(letters[r] for r in lhs_roles)
    spec_r = "".join(letters[r] for r in rhs_roles)
    spec_o = "".join(letters[r] for r in _out_roles(lhs_roles, rhs_roles, len(batch)))
    return spec_l, spec_r, spec_o


def _einsum(case, x, y):
    ot = case[6][2]
    spec_l, spec_r, spec_o = _specs(case)
    wide = np.complex128 if ot.startswith("c") else np.float64
    if ot == "pred":  # whether any product is true
        counts = np.einsum(f"{spec_l},{spec_r}->{spec_o}", x.astype(np.int64), y.astype(np.int64))
        return counts != 0
    if ot.startswith(("s", "u")):
        # Exact products modulo 2^64 (the result's width divides it).
        x64, y64 = x.astype(np.int64).astype(np.uint64), y.astype(np.int64).astype(np.uint64)
        return np.einsum(f"{spec_l},{spec_r}->{spec_o}", x64, y64).astype(DTYPES[ot])
    return np.einsum(f"{spec_l},{spec_r}->{spec_o}", x.astype(wide), y.astype(wide))


def _magnitude(case, x, y):
    """Each result element's sum of |products|: the scale its rounding
    errors are relative to (a sum that cancels to something small keeps the
    errors of its large terms)."""
    spec_l, spec_r, spec_o = _specs(case)
    ax, ay = np.abs(x).astype(np.float64), np.abs(y).astype(np.float64)
    return np.einsum(f"{spec_l},{spec_r}->{spec_o}", ax, ay)


def _check(got, want, reference, ot, magnitude):
    got = np.asarray(got)
    assert got.dtype == DTYPES[ot]
    if ot.startswith(("s", "u", "pred")):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, reference)
        return
    narrow = ot in ("f16", "bf16")
    tol = 3e-2 if narrow else 1e-4
    wide = np.complex128 if ot.startswith("c") else np.float64
    # Relative to the result, and to the products' magnitude where the sum
    # cancels: summed in another order, a cancelling sum differs by the
    # rounding of its large terms.
    bound = tol * (1 + np.abs(reference) + magnitude)
    for have, name in ((np.asarray(want).astype(wide), "evaluator"), (reference, "numpy")):
        err = np.abs(got.astype(wide) - have)
        assert np.all(err <= bound), (
            f"differs from the {name} by {err.max()} where the bound is "
            f"{bound.flat[int(np.argmax(err - bound))]}:\n{got}\n{have}"
        )


@settings(max_examples=80, deadline=None)
@given(dot_cases(), st.integers(0, 2**32 - 1))
# s32 products near 1e18 that cancel to -3e15: f32 sums in two orders differ
# by 2e-4 of the result (the rounding of the large terms), not of the sum.
@example(
    case=(
        [3, 2],
        [4],
        [1],
        [4, 4],
        [("k", 1), ("b", 1), ("m", 0), ("k", 0), ("b", 0)],
        [("k", 1), ("b", 1), ("n", 0), ("k", 0), ("b", 0)],
        ("s32", "s32", "f32"),
        [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3]],
    ),
    seed=3,
)
def test_dots_in_every_form_match_the_evaluator_and_numpy(case, seed):
    text, ldims, rdims = _module(case)
    lt, rt, ot = case[6]
    rng = np.random.default_rng(seed)
    x, y = _data(rng, lt, ldims), _data(rng, rt, rdims)
    module = uir.hlo.parse_module(text)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], (exe.fallbacks, text)
    got = exe(x, y)
    _check(got, uir.evaluate(module, x, y), _einsum(case, x, y), ot, _magnitude(case, x, y))


@pytest.mark.parametrize(("lt", "rt", "ot"), TYPE_TRIPLES)
def test_each_type_runs_as_a_gemm_thunk(lt, rt, ot):
    # [2,5,3] . [2,3,4] over the middle dimension of the lhs's other order.
    case = (
        [2],
        [5],
        [4],
        [3],
        [("k", 0), ("b", 0), ("m", 0)],
        [("b", 0), ("k", 0), ("n", 0)],
        (lt, rt, ot),
        [[0, 1, 2], [2, 1, 0], [2, 1, 0]],
    )
    text, ldims, rdims = _module(case)
    rng = np.random.default_rng(3)
    x, y = _data(rng, lt, ldims), _data(rng, rt, rdims)
    module = uir.hlo.parse_module(text)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    assert exe.thunk_kinds.get("gemm", 0) >= 1, exe.thunk_text
    _check(exe(x, y), uir.evaluate(module, x, y), _einsum(case, x, y), ot, _magnitude(case, x, y))


def test_a_dot_with_an_epilogue_of_an_integer_type_runs_compiled():
    text = """HloModule m

ENTRY e {
  a = s32[16,8] parameter(0)
  b = s32[8,4] parameter(1)
  d = s32[16,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[] constant(3)
  cb = s32[16,4] broadcast(c), dimensions={}
  ROOT r = s32[16,4] multiply(d, cb)
}
"""
    module = uir.hlo.parse_module(text)
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, (16, 8), dtype=np.int32)
    y = rng.integers(-1000, 1000, (8, 4), dtype=np.int32)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    np.testing.assert_array_equal(exe(x, y), (x.astype(np.int64) @ y * 3).astype(np.int32))
    np.testing.assert_array_equal(exe(x, y), uir.evaluate(module, x, y))
