"""JAX's LAPACK custom calls (lapack_sgetrf_ffi, ...) as uir's built-in
targets: JAX's own CPU dumps of jnp.linalg, jax.scipy.linalg and
jax.lax.linalg programs (tests/data/jax_linalg, written by
tools/jax_linalg_dumps.py from tests/linalg_cases.py) evaluated and compiled
by uir against NumPy, hand-written calls of each target over batches, types
and layouts, and the errors a malformed call gets."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from linalg_cases import CASES, inputs_of, tolerance

import uir

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "jax_linalg"
OPTIMIZED = [c for c in CASES if c.optimized]


def results(out) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_jax_dump_evaluates_like_numpy(case):
    module = uir.hlo.load(DATA / f"{case.name}.hlo")
    module.verify()
    x = inputs_of(case)
    case.check(x, results(uir.evaluate(module, *x)), tolerance(case.dtype))


@pytest.mark.parametrize("case", OPTIMIZED, ids=lambda c: c.name)
def test_xla_optimized_dump_evaluates_like_numpy(case):
    module = uir.hlo.load(DATA / f"{case.name}.opt.hlo")
    module.verify()
    x = inputs_of(case)
    case.check(x, results(uir.evaluate(module, *x)), tolerance(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_jax_dump_compiled_runs_like_numpy(case):
    module = uir.hlo.load(DATA / f"{case.name}.hlo")
    x = inputs_of(case)
    case.check(x, results(uir.compile(module)(*x)), tolerance(case.dtype))


@pytest.mark.parametrize(
    "name", [c.name for c in CASES[:12]] + [f"{c.name}.opt" for c in OPTIMIZED]
)
def test_jax_dump_prints_and_parses_back(name):
    text = str(uir.hlo.load(DATA / f"{name}.hlo"))
    assert str(uir.hlo.parse_module(text)) == text
    assert "lapack_" in text and "_ffi" in text


def test_every_lapack_target_is_built_in():
    names = set(uir.custom_call.registered())
    routines = [
        "getrf",
        "potrf",
        "geqrf",
        "geqp3",
        "gesdd",
        "gesvd",
        "trsm",
        "geev",
        "gees",
        "gehrd",
        "gtsv",
    ]
    for p in "sdcz":
        real = p in "sd"
        for r in routines + (
            ["orgqr", "ormqr", "syevd", "sytrd"] if real else ["ungqr", "unmqr", "heevd", "hetrd"]
        ):
            assert f"lapack_{p}{r}_ffi" in names


# --- hand-written calls ----------------------------------------------------------

TYPES = {np.float32: "f32", np.float64: "f64", np.complex64: "c64", np.complex128: "c128"}
PREFIX = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}


def shape(dtype, dims, column_major=False) -> str:
    t = dtype if isinstance(dtype, str) else TYPES[dtype]
    r = len(dims)
    layout = ""
    if column_major and r >= 2:
        layout = "{" + ",".join(str(d) for d in [r - 2, r - 1, *range(r - 3, -1, -1)]) + "}"
    return f"{t}[{','.join(map(str, dims))}]{layout}"


def call(target, operands, result, config, column_major=True):
    """A module whose root is custom-call `target` on parameters shaped
    like `operands`, with result shape text `result` and backend_config
    `config`, as JAX writes it."""
    params = "\n".join(
        f"  p{i} = {shape(o.dtype.type if o.dtype.type in TYPES else 's32', o.shape)} parameter({i})"
        for i, o in enumerate(operands)
    )
    names = ", ".join(f"p{i}" for i in range(len(operands)))
    constraints = ", ".join(
        shape(
            o.dtype.type if o.dtype.type in TYPES else "s32", o.shape, column_major and o.ndim >= 2
        )
        for o in operands
    )
    text = (
        f"HloModule m\n\nENTRY e {{\n{params}\n  ROOT c = {result} custom-call({names}), "
        f'custom_call_target="{target}", operand_layout_constraints={{{constraints}}}, '
        f"api_version=API_VERSION_TYPED_FFI, backend_config={{{config}}}\n}}\n"
    )
    return uir.hlo.parse_module(text)


def general(dims, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(dims)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(dims)
    return x.astype(dtype)


def tol(dtype):
    return tolerance(dtype) * 10


dtypes = st.sampled_from(list(TYPES))
batches = st.sampled_from([(), (2,), (2, 3)])


@settings(max_examples=40, deadline=None)
@given(dtype=dtypes, batch=batches, m=st.integers(1, 7), n=st.integers(1, 7))
def test_getrf_pivots_reconstruct_the_matrix(dtype, batch, m, n):
    a = general((*batch, m, n), dtype)
    k = min(m, n)
    module = call(
        f"lapack_{PREFIX[dtype]}getrf_ffi",
        [a],
        f"({shape(dtype, a.shape, True)}, s32[{','.join(map(str, (*batch, k)))}], s32[{','.join(map(str, batch))}])",
        "",
    )
    lu, ipiv, info = uir.evaluate(module, a)
    assert np.all(info == 0) and ipiv.min() >= 1 and ipiv.max() <= m  # LAPACK's 1-based pivots
    for idx in np.ndindex(*batch):
        low = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        up = np.triu(lu[idx])[:k, :]
        pa = a[idx].copy()
        for i, p in enumerate(ipiv[idx]):
            pa[[i, p - 1]] = pa[[p - 1, i]]
        np.testing.assert_allclose(low @ up, pa, atol=tol(dtype) * max(m, n))


@settings(max_examples=30, deadline=None)
@given(dtype=dtypes, batch=batches, n=st.integers(1, 7), lower=st.booleans())
def test_potrf_factors_and_keeps_the_other_triangle(dtype, batch, n, lower):
    x = general((*batch, n, n), dtype)
    a = (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)
    uplo = 76 if lower else 85
    module = call(
        f"lapack_{PREFIX[dtype]}potrf_ffi",
        [a],
        f"({shape(dtype, a.shape, True)}, s32[{','.join(map(str, batch))}])",
        f"uplo = {uplo} : ui8",
    )
    factor, info = uir.evaluate(module, a)
    assert np.all(info == 0)
    want = np.linalg.cholesky(a.astype(np.complex128))
    if lower:
        np.testing.assert_allclose(np.tril(factor), want, atol=tol(dtype) * n)
        np.testing.assert_array_equal(np.triu(factor, 1), np.triu(a, 1))
    else:
        np.testing.assert_allclose(
            np.triu(factor), np.conj(np.swapaxes(want, -1, -2)), atol=tol(dtype) * n
        )
        np.testing.assert_array_equal(np.tril(factor, -1), np.tril(a, -1))


def test_potrf_reports_a_matrix_that_is_not_positive_definite():
    a = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    module = call(
        "lapack_spotrf_ffi", [a], f"({shape(np.float32, (2, 2), True)}, s32[])", "uplo = 76 : ui8"
    )
    _, info = uir.evaluate(module, a)
    assert info == 2  # the leading minor of order 2 is not positive


@settings(max_examples=40, deadline=None)
@given(
    dtype=dtypes,
    batch=batches,
    m=st.integers(1, 6),
    n=st.integers(1, 6),
    left=st.booleans(),
    lower=st.booleans(),
    trans=st.sampled_from("NTC"),
    unit=st.booleans(),
)
def test_trsm_solves_every_side_triangle_and_transpose(
    dtype, batch, m, n, left, lower, trans, unit
):
    k = m if left else n
    a = general((*batch, k, k), dtype, seed=1) + 3 * k * np.eye(k, dtype=dtype)
    b = general((*batch, m, n), dtype, seed=2)
    config = f"diag = {85 if unit else 78} : ui8, side = {76 if left else 82} : ui8, trans_x = {ord(trans)} : ui8, uplo = {76 if lower else 85} : ui8"
    module = call(f"lapack_{PREFIX[dtype]}trsm_ffi", [a, b], shape(dtype, b.shape, True), config)
    x = uir.evaluate(module, a, b)
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t - np.diagonal(t, axis1=-2, axis2=-1)[..., None] * np.eye(k) + np.eye(k)
    op = {"N": t, "T": np.swapaxes(t, -1, -2), "C": np.conj(np.swapaxes(t, -1, -2))}[trans]
    np.testing.assert_allclose(op @ x if left else x @ op, b, atol=tol(dtype) * k * 4)


@settings(max_examples=30, deadline=None)
@given(dtype=dtypes, batch=batches, n=st.integers(1, 7), vectors=st.booleans())
def test_syevd_values_ascend_and_vectors_diagonalize(dtype, batch, n, vectors):
    x = general((*batch, n, n), dtype)
    a = (x + np.conj(np.swapaxes(x, -1, -2))).astype(dtype)
    real = TYPES[dtype].replace("c64", "f32").replace("c128", "f64")
    routine = "syevd" if np.dtype(dtype).kind == "f" else "heevd"
    module = call(
        f"lapack_{PREFIX[dtype]}{routine}_ffi",
        [a],
        f"({shape(dtype, a.shape, True)}, {shape(real, (*batch, n))}, s32[{','.join(map(str, batch))}])",
        f"mode = {86 if vectors else 78} : ui8, uplo = 76 : ui8",
    )
    v, w, info = uir.evaluate(module, a)
    assert np.all(info == 0)
    np.testing.assert_allclose(
        w, np.linalg.eigvalsh(a.astype(np.complex128)), atol=tol(dtype) * n * 4
    )
    if vectors:
        np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol(dtype) * n * 8)


@settings(max_examples=30, deadline=None)
@given(
    dtype=dtypes,
    batch=batches,
    m=st.integers(1, 6),
    n=st.integers(1, 6),
    mode=st.sampled_from("ASN"),
    routine=st.sampled_from(["gesdd", "gesvd"]),
)
def test_svd_in_every_mode(dtype, batch, m, n, mode, routine):
    a = general((*batch, m, n), dtype)
    k = min(m, n)
    real = TYPES[dtype].replace("c64", "f32").replace("c128", "f64")
    u_dims = (*batch, m, m if mode == "A" else k)
    vt_dims = (*batch, n if mode == "A" else k, n)
    module = call(
        f"lapack_{PREFIX[dtype]}{routine}_ffi",
        [a],
        f"({shape(dtype, a.shape, True)}, {shape(real, (*batch, k))}, {shape(dtype, u_dims, True)}, "
        f"{shape(dtype, vt_dims, True)}, s32[{','.join(map(str, batch))}])",
        f"mode = {ord(mode)} : ui8",
    )
    _, s, u, vt, info = uir.evaluate(module, a)
    assert np.all(info == 0)
    np.testing.assert_allclose(
        s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), atol=tol(dtype) * 8
    )
    if mode != "N":
        np.testing.assert_allclose(
            (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=tol(dtype) * 16
        )
    else:
        assert not np.any(u) and not np.any(vt)


def test_geev_unpacks_a_complex_conjugate_pair():
    # A rotation: eigenvalues +-i, eigenvectors (1, -+i)/sqrt(2).
    a = np.array([[0.0, -1.0], [1.0, 0.0]], np.float64)
    module = call(
        "lapack_dgeev_ffi",
        [a],
        "(f64[2], f64[2], c128[2,2]{0,1}, c128[2,2]{0,1}, s32[])",
        "compute_left = 86 : ui8, compute_right = 86 : ui8",
    )
    wr, wi, vl, vr, info = uir.evaluate(module, a)
    assert info == 0
    np.testing.assert_allclose(wr + 1j * wi, [1j, -1j], atol=1e-12)
    np.testing.assert_allclose(vr[:, 1], np.conj(vr[:, 0]), atol=1e-12)
    w = wr + 1j * wi
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-12)
    np.testing.assert_allclose(np.conj(vl).T @ a, w[:, None] * np.conj(vl).T, atol=1e-12)


def test_geev_does_not_decompose_a_matrix_with_nan():
    a = np.array([[1.0, np.nan], [0.0, 1.0]], np.float32)
    module = call(
        "lapack_sgeev_ffi",
        [a],
        "(f32[2], f32[2], c64[2,2]{0,1}, c64[2,2]{0,1}, s32[])",
        "compute_left = 78 : ui8, compute_right = 86 : ui8",
    )
    *_, vr, info = uir.evaluate(module, a)
    assert info == -4 and not np.any(vr)


def test_a_row_major_call_gets_the_same_results():
    # The targets read the logical matrix whatever the layout constraints.
    a = general((3, 3), np.float32) + 3 * np.eye(3, dtype=np.float32)
    result = "(f32[3,3], s32[3], s32[])"
    col = uir.evaluate(call("lapack_sgetrf_ffi", [a], result, "", column_major=True), a)
    row = uir.evaluate(call("lapack_sgetrf_ffi", [a], result, "", column_major=False), a)
    for c, r in zip(col, row, strict=True):
        np.testing.assert_array_equal(c, r)


# --- malformed calls ----------------------------------------------------------------


def error_of(module, *args) -> str:
    with pytest.raises(uir.CustomCallError) as e:
        uir.evaluate(module, *args)
    return str(e.value)


def test_a_result_of_the_wrong_shape_is_refused_before_lapack_runs():
    a = general((4, 4), np.float32)
    module = call("lapack_sgetrf_ffi", [a], "(f32[4,4]{0,1}, s32[3], s32[])", "")
    message = error_of(module, a)
    assert "lapack_sgetrf_ffi" in message and "%c" in message
    assert "result 1 (ipiv) must be s32[4], got s32[3]" in message


def test_a_missing_attribute_is_named():
    a = general((3, 3), np.float32)
    module = call("lapack_spotrf_ffi", [a], "(f32[3,3]{0,1}, s32[])", "")
    assert "needs attribute 'uplo' in its backend_config" in error_of(module, a)


def test_an_attribute_outside_lapacks_characters_is_refused():
    a = general((3, 3), np.float32)
    module = call("lapack_spotrf_ffi", [a], "(f32[3,3]{0,1}, s32[])", "uplo = 88 : ui8")
    assert "attribute uplo = 88 must be 76 ('L') or 85 ('U')" in error_of(module, a)


def test_an_operand_of_the_wrong_type_is_refused():
    a = general((3, 3), np.float64)
    module = call("lapack_sgetrf_ffi", [a], "(f64[3,3]{0,1}, s32[3], s32[])", "")
    assert "operand 0 (x) must be a f32 array of rank 2 or more, got f64[3,3]" in error_of(
        module, a
    )


def test_a_non_square_matrix_is_refused_where_lapack_needs_one():
    a = general((3, 4), np.float32)
    module = call(
        "lapack_ssyevd_ffi",
        [a],
        "(f32[3,4]{0,1}, f32[3], s32[])",
        "mode = 86 : ui8, uplo = 76 : ui8",
    )
    assert "x must be square, got f32[3,4]" in error_of(module, a)


def test_svd_mode_o_is_refused_as_in_jaxlib():
    a = general((3, 3), np.float32)
    module = call(
        "lapack_sgesdd_ffi",
        [a],
        "(f32[3,3]{0,1}, f32[3], f32[3,3]{0,1}, f32[3,3]{0,1}, s32[])",
        "mode = 79 : ui8",
    )
    assert "mode 'O'" in error_of(module, a)


def test_a_malformed_call_fails_the_compiled_executable_too():
    a = general((4, 4), np.float32)
    exe = uir.compile(call("lapack_sgetrf_ffi", [a], "(f32[4,4]{0,1}, s32[2], s32[])", ""))
    with pytest.raises(uir.CustomCallError, match="ipiv"):
        exe(a)


# Loop bodies updating their state through custom calls that write in place:
# readers of the old state must run before the buffer changes (a chain's
# first writer through a tuple-shaped custom call, and a chain member that
# reads the old state through another operand).
IN_PLACE_LOOPS = {
    "geqp3 through a get-tuple-element": (
        '\nHloModule m\ncond {\n  s = (s32[], f32[4,3], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  n = s32[] get-tuple-element(s), index=2\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\nbody {\n  s = (s32[], f32[4,3], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  n = s32[] get-tuple-element(s), index=2\n  p = f32[4,3] get-tuple-element(s), index=1\n  ten = f32[] constant(10)\n  tb = f32[4,3] broadcast(ten), dimensions={}\n  f = f32[4,3] add(p, tb)\n  one1 = f32[] constant(1)\n  ob1 = f32[4] broadcast(one1), dimensions={}\n  r = f32[3] dot(ob1, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  c = s32[3] convert(r)\n  q = (f32[4,3], s32[3], f32[3]) custom-call(f, c), custom_call_target="lapack_sgeqp3_ffi", output_to_operand_aliasing={{0}: (0, {}), {1}: (1, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}\n  a = f32[4,3] get-tuple-element(q), index=0\n  u = f32[1,3] slice(a), slice={[0:1],[0:3]}\n  zi = s32[] constant(0)\n  d = f32[4,3] dynamic-update-slice(a, u, zi, zi)\n  one = s32[] constant(1)\n  next = s32[] add(i, one)\n  ROOT t = (s32[], f32[4,3], s32[]) tuple(next, d, n)\n}\nENTRY main {\n  a = f32[4,3] parameter(0)\n  n = s32[] parameter(1)\n  zero = s32[] constant(0)\n  init = (s32[], f32[4,3], s32[]) tuple(zero, a, n)\n  w = (s32[], f32[4,3], s32[]) while(init), condition=cond, body=body\n  ROOT r = f32[4,3] get-tuple-element(w), index=1\n}\n',
        np.array([[1, 2, 5], [-1, -2, -5], [0, 0, 1], [0, 0, -1]], np.float32),
    ),
    "trsm reading the old state": (
        '\nHloModule m\ncond {\n  s = (s32[], f32[4,4], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  n = s32[] get-tuple-element(s), index=2\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\nbody {\n  s = (s32[], f32[4,4], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  n = s32[] get-tuple-element(s), index=2\n  p = f32[4,4] get-tuple-element(s), index=1\n  ten = f32[] constant(10)\n  tb = f32[4,4] broadcast(ten), dimensions={}\n  f = f32[4,4] add(p, tb)\n  x = f32[4,4] custom-call(p, f), custom_call_target="lapack_strsm_ffi", output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}\n  u = f32[1,4] slice(x), slice={[0:1],[0:4]}\n  zi = s32[] constant(0)\n  d = f32[4,4] dynamic-update-slice(x, u, zi, zi)\n  one = s32[] constant(1)\n  next = s32[] add(i, one)\n  ROOT t = (s32[], f32[4,4], s32[]) tuple(next, d, n)\n}\nENTRY main {\n  a = f32[4,4] parameter(0)\n  n = s32[] parameter(1)\n  zero = s32[] constant(0)\n  init = (s32[], f32[4,4], s32[]) tuple(zero, a, n)\n  w = (s32[], f32[4,4], s32[]) while(init), condition=cond, body=body\n  ROOT r = f32[4,4] get-tuple-element(w), index=1\n}\n',
        (np.arange(16).reshape(4, 4) % 5 + 3 * np.eye(4)).astype(np.float32),
    ),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_LOOPS))
def test_a_loop_over_in_place_custom_calls_compiles_like_the_evaluator(name):
    text, a = IN_PLACE_LOOPS[name]
    for n in (1, 3):
        want = uir.evaluate(uir.hlo.parse_module(text), a, np.int32(n))
        got = uir.compile(uir.hlo.parse_module(text))(a, np.int32(n))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_zero_column_right_hand_side_of_a_tridiagonal_solve_is_empty():
    # LAPACK's gtsv writes b(n, 1) even for no right-hand side.
    d = np.ones(3, np.float32)
    module = call(
        "lapack_sgtsv_ffi",
        [d, 4 * d, d, np.zeros((3, 0), np.float32)],
        "(f32[3], f32[3], f32[3], f32[3,0]{0,1}, s32[])",
        "",
    )
    *_, x, info = uir.evaluate(module, d, 4 * d, d, np.zeros((3, 0), np.float32))
    assert x.shape == (3, 0) and info == 0


# --- against XLA:CPU -----------------------------------------------------------------


@pytest.mark.xla
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_jax_lowering_today_evaluates_like_jax(case, jax_x32):
    """The installed JAX's own lowering of each case, evaluated by uir,
    against JAX's results on the same inputs."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
    from jax_linalg_dumps import jax_namespace, lower

    jax = jax_x32
    try:
        lowered = lower(case, jax)
        x = inputs_of(case)
        want = results(tuple(jax.tree_util.tree_leaves(jax.jit(case.jax(jax_namespace()))(*x))))
        got = results(uir.evaluate(uir.hlo.parse_module(lowered.as_text(dialect="hlo")), *x))
    finally:
        jax.config.update("jax_enable_x64", False)
    case.check(x, got, tolerance(case.dtype))
    case.check(x, want, tolerance(case.dtype))  # the reference agrees with JAX itself
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
