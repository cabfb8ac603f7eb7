"""uir.numpy.linalg and uir.lax.linalg traced as JAX lowers them on CPU:
the programs of tests/linalg_cases.py traced by uir call the same LAPACK
targets as JAX's own dumps of them (tests/data/jax_linalg) and give NumPy's
results, batched and in every LAPACK type; jax.numpy.linalg's other names
against NumPy; and, where JAX is installed, each against jax.jit on the
same inputs."""

from __future__ import annotations

import inspect
import pathlib
import re
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from linalg_cases import CASES, inputs_of, tolerance

import uir
import uir.lax.linalg as lax_linalg
import uir.numpy as unp
import uir.numpy.linalg as la

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "jax_linalg"
UIR = types.SimpleNamespace(jnp=unp, lax=lax_linalg, jsl=None)


def _uir_function(case):
    """The case's function over uir, or None where it uses what uir does
    not have (jax.scipy.linalg; lax.linalg's schur, hessenberg,
    tridiagonal, ormqr)."""
    if "J.jsl" in inspect.getsource(case.jax):
        return None
    try:
        return case.jax(UIR)
    except AttributeError:
        return None


TRACED = [c for c in CASES if _uir_function(c) is not None]


def targets(text: str) -> list[str]:
    return sorted(set(re.findall(r'custom_call_target="([^"]+)"', text)))


def results(out) -> list[np.ndarray]:
    if isinstance(out, (tuple, list)):
        return [np.asarray(o) for o in out]
    return [np.asarray(out)]


@pytest.fixture
def x64_for():
    """Turns 64-bit types on for a 64-bit case (as JAX needs them), off
    again after the test."""
    yield lambda case: uir.config.update(
        "enable_x64", np.dtype(case.dtype) in (np.float64, np.complex128)
    )
    uir.config.update("enable_x64", False)


def test_most_cases_trace_with_uir():
    assert len(TRACED) >= 30, [c.name for c in TRACED]


@pytest.mark.parametrize("case", TRACED, ids=lambda c: c.name)
def test_a_traced_case_calls_jaxs_lapack_targets_and_matches_numpy(case, x64_for):
    x64_for(case)
    x = inputs_of(case)
    fn = uir.jit(_uir_function(case))
    text = fn.lower(*x).as_text()
    assert targets(text) == targets((DATA / f"{case.name}.hlo").read_text())
    case.check(x, results(fn(*x)), tolerance(case.dtype))


@pytest.mark.parametrize(
    "case", [c for c in TRACED if c.name.endswith("_f32")][:8], ids=lambda c: c.name
)
def test_a_traced_case_runs_eagerly_and_on_the_evaluator_alike(case):
    x = inputs_of(case)
    fn = _uir_function(case)
    eager = results(fn(*x))
    evaluated = results(uir.jit(fn, backend="eval")(*x))
    for e, v in zip(eager, evaluated, strict=True):
        np.testing.assert_allclose(e, v, rtol=1e-5, atol=1e-5)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _x64(dtype):
    uir.config.update("enable_x64", np.dtype(dtype) in (np.float64, np.complex128))


def _general(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return 5e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9


@settings(max_examples=25, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    batch=st.sampled_from([(), (3,), (2, 2)]),
    n=st.integers(1, 6),
    k=st.integers(1, 3),
)
def test_solve_inv_det_and_slogdet_match_numpy(dtype, batch, n, k):
    _x64(dtype)
    try:
        a = _general((*batch, n, n), dtype, 1) + 2 * n * np.eye(n, dtype=dtype)
        b = _general((*batch, n, k), dtype, 2)
        t = _tol(dtype)
        np.testing.assert_allclose(la.solve(a, b), np.linalg.solve(a, b), rtol=t, atol=t)
        np.testing.assert_allclose(la.inv(a), np.linalg.inv(a), rtol=t, atol=t)
        np.testing.assert_allclose(la.det(a), np.linalg.det(a), rtol=t * n)
        sign, logdet = la.slogdet(a)
        want_sign, want_logdet = np.linalg.slogdet(a)
        np.testing.assert_allclose(sign, want_sign, rtol=t, atol=t)
        np.testing.assert_allclose(logdet, want_logdet, rtol=t, atol=t)
    finally:
        uir.config.update("enable_x64", False)


@settings(max_examples=25, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    batch=st.sampled_from([(), (2,), (2, 3)]),
    m=st.integers(1, 6),
    n=st.integers(1, 6),
)
def test_batched_svd_qr_and_eigh_in_every_type(dtype, batch, m, n):
    _x64(dtype)
    try:
        a = _general((*batch, m, n), dtype, 3)
        t = _tol(dtype)
        u, s, vh = la.svd(a, full_matrices=False)
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=t, atol=t)
        np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, rtol=t, atol=t * 4)
        q, r = la.qr(a)
        np.testing.assert_allclose(q @ r, a, rtol=t, atol=t * 4)
        np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a)[1]), rtol=t, atol=t * 4)
        h = a[..., :m, :m] + np.conj(np.swapaxes(a[..., :m, :m], -1, -2)) if m <= n else None
        if h is not None:
            w, v = la.eigh(h)
            np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=t, atol=t * 4)
            np.testing.assert_allclose(h @ v, v * w[..., None, :], rtol=t, atol=t * 8)
    finally:
        uir.config.update("enable_x64", False)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan():
    # As JAX: NaN where the factor would be, zeros above the diagonal.
    a = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    factor = la.cholesky(a)
    assert np.all(np.isnan(factor[np.tril_indices(2)])) and factor[0, 1] == 0
    good = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
    np.testing.assert_allclose(la.cholesky(good), np.linalg.cholesky(good), rtol=1e-6)
    np.testing.assert_allclose(la.cholesky(good, upper=True), np.linalg.cholesky(good).T, rtol=1e-6)


def test_a_singular_matrix_has_slogdet_zero_and_minus_infinity():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], np.float32)
    a4 = np.zeros((4, 4), np.float32)
    for m in (a, a4):
        sign, logdet = la.slogdet(m)
        assert sign == 0 and logdet == -np.inf
    assert la.det(a4) == 0


def test_lax_lu_gives_pivots_and_permutation_as_jax():
    a = _general((2, 4, 4), np.float32, 5)
    lu, pivots, perm = lax_linalg.lu(a)
    for i in range(2):
        p = np.eye(4, dtype=np.float32)[perm[i]]
        low = np.tril(lu[i], -1) + np.eye(4)
        np.testing.assert_allclose(p @ a[i], low @ np.triu(lu[i]), atol=1e-5)
        rows = np.arange(4)
        for j, piv in enumerate(pivots[i]):
            rows[[j, piv]] = rows[[piv, j]]
        np.testing.assert_array_equal(rows, perm[i])


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize(
    "transpose_a, conjugate_a", [(False, False), (True, False), (True, True), (False, True)]
)
def test_lax_triangular_solve_in_every_form(left_side, lower, transpose_a, conjugate_a):
    a = _general((3, 3), np.complex64, 1) + 6 * np.eye(3, dtype=np.complex64)
    b = _general((3, 2) if left_side else (2, 3), np.complex64, 2)
    x = lax_linalg.triangular_solve(
        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a
    )
    t = np.tril(a) if lower else np.triu(a)
    t = np.conj(t) if conjugate_a else t
    t = t.T if transpose_a else t
    np.testing.assert_allclose(t @ x if left_side else x @ t, b, atol=1e-5)


def test_eig_and_eigvals_of_a_rotation_are_complex():
    a = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)
    w, v = la.eig(a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(w), [-1j, 1j], atol=1e-6)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-6)
    np.testing.assert_allclose(np.sort_complex(la.eigvals(a)), [-1j, 1j], atol=1e-6)


def test_svd_of_a_hermitian_matrix_comes_from_its_eigendecomposition():
    h = _general((4, 4), np.float32, 8)
    h = h + h.T
    u, s, vh = la.svd(h, hermitian=True)
    np.testing.assert_allclose(s, np.linalg.svd(h, compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose((u * s) @ vh, h, atol=1e-5)


def test_pinv_lstsq_rank_cond_and_matrix_power_match_numpy():
    a = _general((6, 4), np.float64, 4)
    b = _general((6,), np.float64, 5)
    uir.config.update("enable_x64", True)
    try:
        np.testing.assert_allclose(la.pinv(a), np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
        x, resid, rank, s = la.lstsq(a, b)
        wx, wresid, wrank, ws = np.linalg.lstsq(a, b, rcond=None)
        np.testing.assert_allclose(x, wx, rtol=1e-9)
        np.testing.assert_allclose(resid, wresid, rtol=1e-9)
        assert rank == wrank
        np.testing.assert_allclose(s, ws, rtol=1e-9)
        low_rank = a[:, :2] @ _general((2, 4), np.float64, 6)
        assert la.matrix_rank(low_rank) == np.linalg.matrix_rank(low_rank) == 2
        sq = _general((4, 4), np.float64, 7) + 4 * np.eye(4)
        for p in (None, 2, -2, 1, np.inf, "fro"):
            np.testing.assert_allclose(la.cond(sq, p), np.linalg.cond(sq, p), rtol=1e-9)
        for n in (0, 1, 2, 5, -3):
            np.testing.assert_allclose(
                la.matrix_power(sq, n), np.linalg.matrix_power(sq, n), rtol=1e-9
            )
        np.testing.assert_allclose(la.svdvals(a), np.linalg.svd(a, compute_uv=False), rtol=1e-9)
    finally:
        uir.config.update("enable_x64", False)


def test_tensor_and_array_api_names_match_numpy():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 6)).astype(np.float32)
    t = rng.standard_normal((6, 2, 3)).astype(np.float32) + 0
    sq = (rng.standard_normal((2, 3, 2, 3)) + 3 * np.eye(6).reshape(2, 3, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        la.tensorinv(sq, ind=2), np.linalg.tensorinv(sq, ind=2), rtol=1e-4, atol=1e-5
    )
    rhs = rng.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        la.tensorsolve(sq, rhs), np.linalg.tensorsolve(sq, rhs), rtol=1e-4, atol=1e-5
    )
    mats = [rng.standard_normal(s).astype(np.float32) for s in ((10,), (10, 3), (3, 40), (40, 5))]
    np.testing.assert_allclose(la.multi_dot(mats), np.linalg.multi_dot(mats), rtol=1e-4)
    np.testing.assert_allclose(la.matrix_norm(a), np.linalg.matrix_norm(a), rtol=1e-5)
    np.testing.assert_allclose(la.vector_norm(a), np.linalg.vector_norm(a), rtol=1e-5)
    np.testing.assert_allclose(
        la.vector_norm(a, ord=1, axis=-1), np.linalg.vector_norm(a, ord=1, axis=-1), rtol=1e-5
    )
    np.testing.assert_allclose(la.trace(a[..., :3]), np.linalg.trace(a[..., :3]), rtol=1e-5)
    np.testing.assert_allclose(la.diagonal(a, offset=1), np.linalg.diagonal(a, offset=1))
    np.testing.assert_allclose(la.matrix_transpose(a), np.linalg.matrix_transpose(a))
    np.testing.assert_allclose(
        la.outer(a[0, 0], t[0, 0]), np.linalg.outer(a[0, 0], t[0, 0]), rtol=1e-6
    )
    np.testing.assert_allclose(
        la.cross(a[..., :3], a[..., 3:]), np.linalg.cross(a[..., :3], a[..., 3:]), rtol=1e-5
    )
    np.testing.assert_allclose(la.vecdot(a, a), np.linalg.vecdot(a, a), rtol=1e-5)
    np.testing.assert_allclose(la.matmul(a, t[:, 0]), np.linalg.matmul(a, t[:, 0]), rtol=1e-5)
    np.testing.assert_allclose(
        la.tensordot(a, t, axes=1), np.linalg.tensordot(a, t, axes=1), rtol=1e-4
    )
    with pytest.raises(uir.TraceError, match=r"linalg\.outer: needs vectors"):
        la.outer(a, a)


@pytest.mark.xla
@pytest.mark.parametrize("case", TRACED, ids=lambda c: c.name)
def test_a_traced_case_matches_jax_jit_on_the_same_inputs(case, jax_x32):
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
    from jax_linalg_dumps import jax_namespace

    jax = jax_x32
    wide = np.dtype(case.dtype) in (np.float64, np.complex128)
    jax.config.update("jax_enable_x64", wide)
    uir.config.update("enable_x64", wide)
    try:
        x = inputs_of(case)
        want = results(jax.tree_util.tree_leaves(jax.jit(case.jax(jax_namespace()))(*x)))
        got = results(uir.jit(_uir_function(case))(*x))
    finally:
        jax.config.update("jax_enable_x64", False)
        uir.config.update("enable_x64", False)
    assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want]
    case.check(x, got, tolerance(case.dtype))
    case.check(x, want, tolerance(case.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lax_schur_and_hessenberg_factor_the_matrix(dtype):
    _x64(dtype)
    try:
        a = _general((2, 5, 5), dtype, 12)
        t, vs = lax_linalg.schur(a)
        tol = _tol(dtype) * 10
        np.testing.assert_allclose(vs @ t @ np.conj(np.swapaxes(vs, -1, -2)), a, atol=tol)
        assert np.abs(np.tril(t, -2)).max() <= tol  # quasi-triangular
        (t_only,) = lax_linalg.schur(a, compute_schur_vectors=False)
        np.testing.assert_allclose(t_only, t, atol=tol)
        packed, taus = lax_linalg.hessenberg(a)
        h = np.triu(packed, -1)
        q = np.stack([_reflectors_product(packed[i], taus[i]) for i in range(2)])
        np.testing.assert_allclose(q @ h @ np.conj(np.swapaxes(q, -1, -2)), a, atol=tol)
    finally:
        uir.config.update("enable_x64", False)


def _reflectors_product(packed, taus):
    """Q = H_1 ... H_{n-1} with H_i = I - tau_i v_i v_i^H, v_i below the
    sub-diagonal of column i (gehrd's storage)."""
    n = packed.shape[0]
    q = np.eye(n, dtype=packed.dtype)
    for i in range(n - 1):
        v = np.zeros(n, packed.dtype)
        v[i + 1] = 1
        v[i + 2 :] = packed[i + 2 :, i]
        q = q @ (np.eye(n) - taus[i] * np.outer(v, np.conj(v)))
    return q


def test_lax_tridiagonal_keeps_the_eigenvalues():
    h = _general((6, 6), np.float32, 13)
    h = h + h.T
    arr, d, e, taus = lax_linalg.tridiagonal(h)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(h), atol=1e-4)
    assert arr.shape == (6, 6) and taus.shape == (5,)


def test_lax_symmetric_product_and_cholesky_update_match_numpy():
    a = _general((2, 3, 4), np.float32, 14)
    c = _general((2, 3, 3), np.float32, 15)
    out = lax_linalg.symmetric_product(a, c, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(out, 2 * a @ np.swapaxes(a, -1, -2) + 0.5 * c, rtol=1e-5, atol=1e-5)
    sym = lax_linalg.symmetric_product(a, c, symmetrize_output=True)
    np.testing.assert_allclose(sym, np.swapaxes(sym, -1, -2))
    spd = _general((4, 4), np.float64, 16)
    spd = spd @ spd.T + 4 * np.eye(4)
    r = np.linalg.cholesky(spd).T  # upper: spd = R^T R
    w = _general((4,), np.float64, 17)
    uir.config.update("enable_x64", True)
    try:
        updated = lax_linalg.cholesky_update(r, w)
    finally:
        uir.config.update("enable_x64", False)
    np.testing.assert_allclose(updated.T @ updated, spd + np.outer(w, w), rtol=1e-10)
    np.testing.assert_allclose(np.tril(updated, -1), 0, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 4), (5, 5), (9, 2)])
def test_qdwh_polar_decomposition_compiled_like_the_evaluator(shape):
    # Its QR steps once miscompiled: a fused gemm's product overwrote the
    # previous iterate, whose buffer the result shared, before the epilogue
    # read it (6 iterations where 4 converge).
    x = _general(shape, np.float32, 21)
    compiled = uir.jit(lambda v: lax_linalg.qdwh(v))(x)
    evaluated = uir.jit(lambda v: lax_linalg.qdwh(v), backend="eval")(x)
    u, h, iterations, converged = compiled
    assert int(iterations) == int(evaluated[2]) and bool(converged)
    np.testing.assert_allclose(u, evaluated[0], atol=1e-5)
    np.testing.assert_allclose(u @ h, x, atol=1e-5)
    np.testing.assert_allclose(u.T @ u, np.eye(shape[1]), atol=1e-5)
    np.testing.assert_allclose(h, h.T, atol=1e-6)
    assert np.linalg.eigvalsh(h.astype(np.float64)).min() > -1e-5


@pytest.mark.xla
def test_qdwh_matches_jax(jax_x32):
    x = _general((7, 4), np.float32, 22)
    got = lax_linalg.qdwh(x)
    want = jax_x32.lax.linalg.qdwh(x)
    assert int(got[2]) == int(want[2]) and bool(got[3]) == bool(want[3])
    np.testing.assert_allclose(got[0], want[0], atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], atol=1e-5)


def test_vector_norm_over_several_axes_is_one_vector():
    x = _general((2, 3, 4), np.float32, 23)
    for ord_ in (2, 1, np.inf, 0, 3):
        np.testing.assert_allclose(
            la.vector_norm(x, ord=ord_, axis=(0, 2)),
            np.linalg.vector_norm(x, ord=ord_, axis=(0, 2)),
            rtol=1e-5,
        )
    np.testing.assert_allclose(
        la.vector_norm(x, axis=(0, 2), keepdims=True),
        np.linalg.vector_norm(x, axis=(0, 2), keepdims=True),
        rtol=1e-5,
    )


def test_empty_systems_solve_to_empty_arrays():
    for a in (np.zeros((0, 0), np.float32), np.zeros((2, 0, 0), np.float32)):
        assert la.inv(a).shape == a.shape
        assert la.solve(a, np.zeros((*a.shape[:-1], 3), np.float32)).shape == (*a.shape[:-1], 3)


def test_solve_takes_only_a_one_dimensional_b_as_a_vector():
    a = _general((2, 3, 3), np.float32, 24) + 3 * np.eye(3, dtype=np.float32)
    b = _general((3,), np.float32, 25)
    np.testing.assert_allclose(la.solve(a, b), np.linalg.solve(a, b[:, None])[..., 0], rtol=1e-5)
    bm = _general((3, 3), np.float32, 26)
    np.testing.assert_allclose(la.solve(a, bm), np.linalg.solve(a, bm), rtol=1e-4, atol=1e-5)
    with pytest.raises(uir.TraceError, match="a batch of vectors is solve"):
        la.solve(a, _general((2, 3), np.float32, 27))


def test_lu_pivots_to_permutation_runs_eagerly():
    perm = lax_linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 4)
    np.testing.assert_array_equal(perm, [2, 0, 1, 3])
