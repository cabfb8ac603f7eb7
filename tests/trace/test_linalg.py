"""uir.numpy.linalg against NumPy: solve, inv, det, slogdet (an LU with
partial pivoting traced as a loop), cholesky (XLA's op) and norms, on
random well-conditioned matrices, batched, traced and eager."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as jnp

la = jnp.linalg


def _matrices(n: int, seed: int, batch=()):
    r = np.random.default_rng(seed)
    a = r.standard_normal((*batch, n, n))
    # Diagonally weighted so the systems are well conditioned, but rows
    # still need exchanging (the largest entry is rarely on the diagonal).
    a = a + np.eye(n) * n / 4
    return a.astype(np.float32)


@given(n=st.integers(1, 12), k=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None)
def test_solve_matches_numpy(n, k, seed):
    a = _matrices(n, seed)
    b = np.random.default_rng(seed + 1).standard_normal((n, k)).astype(np.float32)
    want = np.linalg.solve(a.astype(np.float64), b)
    np.testing.assert_allclose(la.solve(a, b), want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(la.solve(a, b[:, 0]), want[:, 0], rtol=1e-3, atol=1e-3)


@given(n=st.integers(1, 10), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None)
def test_det_slogdet_and_inv_match_numpy(n, seed):
    a = _matrices(n, seed)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(la.det(a), np.linalg.det(a64), rtol=2e-3)
    sign, logdet = la.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(a64)
    assert sign == want_sign
    np.testing.assert_allclose(logdet, want_logdet, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(la.inv(a), np.linalg.inv(a64), rtol=2e-3, atol=2e-3)


def test_a_matrix_that_needs_pivoting_is_solved():
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]], np.float32)  # a[0, 0] == 0
    b = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(la.solve(a, b), np.linalg.solve(a, b), rtol=1e-5)
    np.testing.assert_allclose(la.det(a), np.linalg.det(a), rtol=1e-5)
    # Odd row exchanges flip the determinant's sign.
    swapped = a[[1, 0, 2]]
    np.testing.assert_allclose(la.det(swapped), -np.linalg.det(a), rtol=1e-5)


def test_batched_systems_and_broadcast_right_hand_sides():
    a = _matrices(4, 3, batch=(2, 3))
    b = np.random.default_rng(4).standard_normal((4, 2)).astype(np.float32)
    want = np.linalg.solve(a.astype(np.float64), np.broadcast_to(b, (2, 3, 4, 2)))
    np.testing.assert_allclose(la.solve(a, b), want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(la.det(a), np.linalg.det(a.astype(np.float64)), rtol=2e-3)


def test_cholesky_matches_numpy_lower_and_upper():
    r = np.random.default_rng(5)
    m = r.standard_normal((6, 6))
    spd = (m @ m.T + 6 * np.eye(6)).astype(np.float32)
    low = np.linalg.cholesky(spd.astype(np.float64))
    np.testing.assert_allclose(la.cholesky(spd), low, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(la.cholesky(spd, upper=True), low.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5])
def test_vector_norms_match_numpy(ord):
    v = np.random.default_rng(6).standard_normal(9).astype(np.float32)
    np.testing.assert_allclose(
        la.norm(v, ord), np.linalg.norm(v.astype(np.float64), ord), rtol=1e-5
    )


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
def test_matrix_norms_match_numpy(ord):
    a = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(
        la.norm(a, ord), np.linalg.norm(a.astype(np.float64), ord), rtol=1e-5
    )
    np.testing.assert_allclose(
        la.norm(a, ord, axis=(0, 1), keepdims=True),
        np.linalg.norm(a.astype(np.float64), ord, axis=(0, 1), keepdims=True),
        rtol=1e-5,
    )


def test_linalg_traces_inside_jit_and_in_f64():
    a = _matrices(5, 8)
    b = np.ones(5, np.float32)

    @uir.jit
    def f(a, b):
        return la.solve(a, b), la.det(a), la.norm(a)

    x, d, n = f(a, b)
    np.testing.assert_allclose(n, np.linalg.norm(a.astype(np.float64)), rtol=1e-5)
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(d, np.linalg.det(a.astype(np.float64)), rtol=2e-3)
    uir.config.update("enable_x64", True)
    try:
        a64 = a.astype(np.float64)
        np.testing.assert_allclose(
            la.solve(a64, b.astype(np.float64)), np.linalg.solve(a64, b), rtol=1e-10
        )
    finally:
        uir.config.update("enable_x64", False)


def test_non_square_matrices_are_refused_naming_the_function():
    with pytest.raises(uir.TraceError, match=r"linalg\.solve.*square"):
        la.solve(np.ones((3, 4), np.float32), np.ones(3, np.float32))
    with pytest.raises(uir.TraceError, match="matrix norm ord=3 is not one of"):
        la.norm(np.ones((2, 3, 3), np.float32), 3, axis=(1, 2))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_singular_value_norms_of_batched_matrices_match_numpy(ord):
    x = np.random.default_rng(3).standard_normal((2, 4, 3, 5)).astype(np.float32)
    for axis, keepdims in (((1, 3), False), ((3, 1), True), ((-2, -1), False)):
        np.testing.assert_allclose(
            la.norm(x, ord, axis=axis, keepdims=keepdims),
            np.linalg.norm(x, ord, axis=axis, keepdims=keepdims),
            rtol=1e-5,
        )


def _symmetric(n: int, seed: int):
    m = np.random.default_rng(seed).standard_normal((n, n))
    return ((m + m.T) / 2).astype(np.float32)


@given(n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=15, deadline=None)
def test_eigh_diagonalizes_symmetric_matrices(n, seed):
    s = _symmetric(n, seed)
    w, v = la.eigh(s)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s.astype(np.float64)), atol=2e-5 * n)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, s, atol=2e-5 * n)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=2e-5 * n)
    assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(la.eigvalsh(s), w)


@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (7, 4), (4, 7), (12, 3)])
def test_svd_reconstructs_and_matches_numpys_singular_values(shape):
    a = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    u, s, vh = la.svd(a, full_matrices=False)
    k = min(shape)
    assert u.shape == (shape[0], k) and s.shape == (k,) and vh.shape == (k, shape[1])
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), atol=1e-5)
    np.testing.assert_allclose(u @ np.diag(s) @ vh, a, atol=1e-5)
    np.testing.assert_allclose(u.T @ u, np.eye(k), atol=1e-5)
    # LAPACK finds the values alone by another route: equal to a few ulp.
    np.testing.assert_allclose(la.svd(a, compute_uv=False), s, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (7, 4), (4, 7)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_factors_into_orthonormal_and_upper_triangular(shape, mode):
    a = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    out = la.qr(a, mode=mode)
    want_r = np.linalg.qr(a.astype(np.float64), mode=mode if mode != "r" else "r")
    r = out if mode == "r" else out[1]
    want_r = want_r if mode == "r" else want_r[1]
    assert r.shape == want_r.shape
    np.testing.assert_allclose(np.abs(r), np.abs(want_r), atol=1e-5)  # rows' signs may differ
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    if mode != "r":
        q = out[0]
        np.testing.assert_allclose(q @ r, a, atol=1e-5)
        np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-5)
