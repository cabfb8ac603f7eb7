"""uir.scipy.linalg against SciPy: the solvers and their (c, lower) and
(lu, piv) pairs, the decompositions in SciPy's spellings, expm, and the
special matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import uir
import uir.scipy.linalg as ul

RNG = np.random.default_rng(1)
A = RNG.standard_normal((5, 5)).astype(np.float32)
SPD = (A @ A.T + 5 * np.eye(5)).astype(np.float32)
B = RNG.standard_normal((5, 3)).astype(np.float32)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(
        np.asarray(got, np.complex128), np.asarray(want, np.complex128), rtol=tol, atol=tol
    )


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_and_cho_solve(lower):
    close(ul.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower))
    c, low = ul.cho_factor(SPD, lower=lower)
    assert low is lower
    close(ul.cho_solve((c, low), B), sl.cho_solve(sl.cho_factor(SPD, lower=lower), B))
    close(ul.cho_solve((c, low), B[:, 0]), sl.cho_solve(sl.cho_factor(SPD, lower=lower), B[:, 0]))


@pytest.mark.parametrize("trans", [0, 1, 2, "T"])
def test_lu_solve_and_solve_triangular(trans):
    code = {"T": 1}.get(trans, trans)
    close(
        ul.lu_solve(ul.lu_factor(A), B, trans=trans),
        sl.lu_solve(sl.lu_factor(A), B, trans=code),
        1e-3,
    )
    close(
        ul.solve_triangular(np.triu(SPD), B, trans=trans),
        sl.solve_triangular(np.triu(SPD), B, trans=code),
    )
    kw = dict(trans=trans, lower=True, unit_diagonal=True)
    close(
        ul.solve_triangular(SPD, B[:, 0], **kw),
        sl.solve_triangular(SPD, B[:, 0], **{**kw, "trans": code}),
        1e-3,
    )


@pytest.mark.parametrize("shape", [(5, 5), (5, 3), (3, 5)])
def test_lu_and_qr_in_every_mode(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    for got, want in zip(ul.lu(a), sl.lu(a), strict=True):
        close(got, want)
    for got, want in zip(ul.lu(a, permute_l=True), sl.lu(a, permute_l=True), strict=True):
        close(got, want)
    for mode in ("full", "economic", "r"):
        got, want = ul.qr(a, mode=mode), sl.qr(a, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):  # signs of q's columns are free
            close(np.abs(g), np.abs(w))
    q, r, p = ul.qr(a, pivoting=True)
    close(q @ r, a[:, np.asarray(p)])


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos", "upper triangular"])
def test_solve_reads_the_triangle_assume_a_names(assume_a):
    close(
        ul.solve(np.triu(SPD), B, assume_a=assume_a), sl.solve(np.triu(SPD), B, assume_a=assume_a)
    )


def test_decompositions():
    w, v = ul.eigh(SPD)
    close(w, sl.eigh(SPD)[0])
    close(v @ np.diag(w) @ v.T, SPD, 1e-3)
    close(ul.eigh(SPD, eigvals_only=True), sl.eigh(SPD, eigvals_only=True))
    t, z = ul.schur(A)
    close(z @ t @ z.T, A)
    h, q = ul.hessenberg(A, calc_q=True)
    hr, _ = sl.hessenberg(A, calc_q=True)
    close(np.abs(h), np.abs(hr))
    close(q @ h @ q.T, A)
    for side in ("right", "left"):
        for got, want in zip(ul.polar(A, side=side), sl.polar(A, side=side), strict=True):
            close(got, want)
    close(ul.det(A), sl.det(A))
    close(ul.inv(A), sl.inv(A), 1e-3)
    close(ul.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))


@pytest.mark.parametrize("scale", [0.01, 1.0, 8.0])
def test_expm_by_scaling_and_squaring(scale):
    want = sl.expm(A.astype(np.float64) * scale)
    close(np.asarray(ul.expm(A * scale)) / np.abs(want).max(), want / np.abs(want).max(), 1e-4)


C, R = np.arange(1.0, 5.0), np.arange(10.0, 16.0)


@pytest.mark.parametrize(
    "name, args",
    [
        ("toeplitz", (C, R)),
        ("toeplitz", (C,)),
        ("hankel", (C, R)),
        ("hankel", (C,)),
        ("circulant", (C,)),
        ("companion", (C,)),
        ("fiedler", (C,)),
        ("fiedler_companion", (np.arange(1.0, 9.0),)),
        ("fiedler_companion", (np.array([2.0, 3.0]),)),
        ("leslie", (C, R[:3])),
        ("block_diag", (np.ones((2, 2)), 3.0, np.arange(3.0))),
        ("hadamard", (8,)),
        ("hilbert", (4,)),
        ("invhilbert", (5,)),
        ("pascal", (5,)),
        ("pascal", (5, "lower")),
        ("invpascal", (5,)),
        ("invpascal", (4, "upper")),
        ("helmert", (5,)),
        ("helmert", (5, True)),
        ("dft", (4,)),
        ("dft", (5, "sqrtn")),
        ("convolution_matrix", (C, 3, "full")),
        ("convolution_matrix", (C, 7, "same")),
        ("convolution_matrix", (C, 3, "same")),
        ("convolution_matrix", (C, 7, "valid")),
    ],
)
def test_special_matrices_match_scipy(name, args):
    close(getattr(ul, name)(*args), getattr(sl, name)(*args))


def test_toeplitz_batches_over_leading_dimensions_and_traces():
    c = RNG.standard_normal((2, 3)).astype(np.float32)
    got = uir.jit(ul.toeplitz)(c)
    for k in range(2):
        close(got[k], sl.toeplitz(c[k]))


def test_unsupported_forms_say_so():
    with pytest.raises(uir.TraceError, match="generalized"):
        ul.eigh(SPD, b=SPD)
    with pytest.raises(uir.TraceError, match="trans"):
        ul.solve_triangular(SPD, B, trans=3)
