"""The linear-algebra programs whose JAX CPU dumps live in tests/data/jax_linalg/.

Each case names a JAX function (through a namespace `J` with J.jnp, J.lax
(jax.lax.linalg) and J.jsl (jax.scipy.linalg), so that this module imports
without JAX), its inputs, and a check of the results against NumPy: values
where they are unique (solutions, determinants, factors with a fixed sign
convention, eigen- and singular values), the defining identities where a
sign or phase is free (Q R = A, U S V^H = A, A V = V diag(w)).

tools/jax_linalg_dumps.py writes the dumps from this table;
tests/eval/test_lapack_targets.py evaluates them with uir.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    jax: Callable  # J -> the function JAX traces
    inputs: tuple  # (kind, shape) per input; kinds in make_input
    dtype: str = "float32"
    check: Callable = None  # (inputs, outputs, tol) -> None, asserting
    optimized: bool = False  # also keep XLA:CPU's optimized module


def tolerance(dtype) -> float:
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def make_input(kind: str, shape: tuple, dtype: str, seed: int) -> np.ndarray:
    """A well-conditioned input of `kind`: general, spd (Hermitian positive
    definite), symmetric (Hermitian), lower/upper (triangular with a strong
    diagonal), or pivots (zeros, for QR with pivoting)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if kind == "pivots":
        return np.zeros(shape, np.int32)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if kind == "spd":
        n = shape[-1]
        x = x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)
    elif kind == "symmetric":
        x = x + np.conj(np.swapaxes(x, -1, -2))
    elif kind in ("lower", "upper"):
        n = shape[-1]
        x = (np.tril(x) if kind == "lower" else np.triu(x)) + 2 * n * np.eye(n)
    elif kind == "diagonal":  # the main diagonal of a tridiagonal system
        x = x + 8.0
    return x.astype(dt)


def inputs_of(case: Case) -> list[np.ndarray]:
    return [make_input(k, s, case.dtype, seed=i) for i, (k, s) in enumerate(case.inputs)]


# --- checks -----------------------------------------------------------------------


def _close(got, want, tol, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    err = float(np.max(np.abs(got - want), initial=0.0))
    assert err <= tol * scale * 10, f"{what}: off by {err:.3g} (scale {scale:.3g})"


def _h(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _unitary(q, tol, what):
    k = q.shape[-1]
    _close(_h(q) @ q, np.broadcast_to(np.eye(k), (*q.shape[:-2], k, k)), tol, what)


def like(reference: Callable) -> Callable:
    """The outputs equal reference(*inputs) (NumPy), each one."""

    def check(x, out, tol):
        want = reference(
            *[np.asarray(v, np.complex128 if v.dtype.kind == "c" else np.float64) for v in x]
        )
        want = want if isinstance(want, tuple) else (want,)
        assert len(out) == len(want), f"{len(out)} results, expected {len(want)}"
        for i, (g, w) in enumerate(zip(out, want, strict=True)):
            _close(g, w, tol, f"result {i}")

    return check


def check_qr(x, out, tol):
    a = x[0]
    q, r = out
    _close(q @ r, a, tol, "Q R")
    _unitary(q, tol, "Q^H Q")
    _close(np.tril(r, -1), np.zeros_like(r), tol, "R below the diagonal")
    # NumPy's LAPACK makes the same Householder choices: R equal up to the
    # signs of its rows.
    r_np = np.linalg.qr(
        a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), mode="reduced"
    )[1]
    k = min(a.shape[-2:])
    _close(np.abs(r[..., :k, :]), np.abs(r_np[..., :k, :]), tol, "|R| against NumPy")


def check_qr_r(x, out, tol):
    (r,) = out
    r_np = np.linalg.qr(x[0].astype(np.float64), mode="r")
    _close(np.abs(r), np.abs(r_np), tol, "|R| against NumPy")


def check_qr_pivoting(x, out, tol):
    a = x[0]
    q, r, p = out
    _close(q @ r, a[..., :, p], tol, "Q R = A P")
    _unitary(q, tol, "Q^T Q")
    assert sorted(p.tolist()) == list(range(a.shape[-1]))
    d = np.abs(np.diagonal(r))
    assert np.all(d[:-1] >= d[1:] - tol * d[0] * 10), f"|diag R| not decreasing: {d}"


def check_eigh(x, out, tol):
    a = x[0]
    w, v = out
    _close(
        w,
        np.linalg.eigvalsh(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)),
        tol,
        "eigenvalues",
    )
    _close(a @ v, v * w[..., None, :], tol, "A V = V diag(w)")
    _unitary(v, tol, "V^H V")


def check_svd(x, out, tol):
    a = x[0]
    u, s, vh = out
    _close(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), tol, "singular values")
    k = s.shape[-1]
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, tol, "U S V^H")
    _unitary(u, tol, "U^H U")
    _unitary(_h(vh), tol, "V^H V")


def _same_spectrum(got, want, tol):
    """Each eigenvalue of one list is one of the other (orders differ)."""
    got, want = np.asarray(got, np.complex128).ravel(), np.asarray(want, np.complex128).ravel()
    assert got.shape == want.shape, f"{got.size} eigenvalues, expected {want.size}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    distance = np.abs(got[:, None] - want[None, :])
    assert distance.min(axis=0).max() <= tol * scale * 10, f"eigenvalues {got}, expected {want}"
    assert distance.min(axis=1).max() <= tol * scale * 10, f"eigenvalues {got}, expected {want}"


def check_eig(x, out, tol):
    a = x[0]
    w, v = out
    _same_spectrum(w, np.linalg.eigvals(a.astype(np.complex128)), tol)
    _close(a @ v, v * w[..., None, :], tol, "A V = V diag(w)")
    _close(np.linalg.norm(v, axis=-2), np.ones(v.shape[-1]), tol, "unit eigenvectors")


def check_eigvals(x, out, tol):
    (w,) = out
    _same_spectrum(w, np.linalg.eigvals(x[0].astype(np.complex128)), tol)


def check_lu(x, out, tol):
    a = x[0]
    p, low, up = out
    _close(p @ low @ up, a, tol, "P L U")
    _close(
        np.diagonal(low, axis1=-2, axis2=-1),
        np.ones((*low.shape[:-2], min(a.shape[-2:]))),
        tol,
        "unit diagonal of L",
    )
    _close(np.tril(up, -1), np.zeros_like(up), tol, "U below the diagonal")
    assert np.all(np.abs(np.tril(low, -1)) <= 1 + tol), "partial pivoting keeps |L| <= 1"


def check_schur(x, out, tol):
    a = x[0]
    t, z = out
    _close(z @ t @ _h(z), a, tol, "Z T Z^H")
    _unitary(z, tol, "Z^H Z")
    _close(np.tril(t, -2), np.zeros_like(t), tol, "T quasi-triangular")


def check_hessenberg(x, out, tol):
    a = x[0]
    h, q = out
    _close(q @ h @ _h(q), a, tol, "Q H Q^H")
    _unitary(q, tol, "Q^H Q")
    _close(np.tril(h, -2), np.zeros_like(h), tol, "H upper Hessenberg")


def check_tridiagonal(x, out, tol):
    a = x[0]
    _, d, e, _ = out
    t = (
        np.diag(d.astype(np.float64))
        + np.diag(e.astype(np.float64), 1)
        + np.diag(e.astype(np.float64), -1)
    )
    _close(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a.astype(np.float64)), tol, "eigenvalues kept")


def _tridiagonal_solve(dl, d, du, b):
    n = d.shape[-1]
    t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[: n - 1], 1)
    return np.linalg.solve(t, b)


def _reflectors(a, taus):
    """The m x m product H_1 ... H_k of the Householder reflectors that
    geqrf leaves below the diagonal of a, with scales taus."""
    m = a.shape[0]
    q = np.eye(m, dtype=a.dtype)
    for i in range(taus.shape[0]):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m) - taus[i] * np.outer(v, np.conj(v)))
    return q


def _householder(a, taus):
    return _reflectors(a, taus)[:, : a.shape[1]]


def _ormqr_left_transposed(a, taus, c):
    return _h(_reflectors(a, taus)) @ c


def _lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


def _cho_solve(c, b):
    return np.linalg.solve(c @ _h(c), b)


def _slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


J_SVD_QR = "qr"  # SvdAlgorithm member used by the QR-iteration case

CASES: list[Case] = [
    # LU: getrf + trsm
    Case(
        "solve_f32",
        lambda J: J.jnp.linalg.solve,
        (("general", (4, 4)), ("general", (4,))),
        check=like(np.linalg.solve),
        optimized=True,
    ),
    Case(
        "solve_batched_f32",
        lambda J: J.jnp.linalg.solve,
        (("general", (3, 5, 5)), ("general", (3, 5, 2))),
        check=like(np.linalg.solve),
    ),
    Case(
        "solve_f64",
        lambda J: J.jnp.linalg.solve,
        (("general", (6, 6)), ("general", (6, 3))),
        dtype="float64",
        check=like(np.linalg.solve),
    ),
    Case(
        "solve_c64",
        lambda J: J.jnp.linalg.solve,
        (("general", (4, 4)), ("general", (4, 2))),
        dtype="complex64",
        check=like(np.linalg.solve),
    ),
    Case("inv_f32", lambda J: J.jnp.linalg.inv, (("general", (5, 5)),), check=like(np.linalg.inv)),
    Case("det_f32", lambda J: J.jnp.linalg.det, (("general", (5, 5)),), check=like(np.linalg.det)),
    Case(
        "slogdet_f64",
        lambda J: J.jnp.linalg.slogdet,
        (("general", (2, 4, 4)),),
        dtype="float64",
        check=like(_slogdet),
    ),
    Case("lu_f32", lambda J: J.jsl.lu, (("general", (5, 5)),), check=check_lu),
    Case(
        "lu_solve_f32",
        lambda J: lambda a, b: J.jsl.lu_solve(J.jsl.lu_factor(a), b),
        (("general", (5, 5)), ("general", (5, 2))),
        check=like(np.linalg.solve),
    ),
    # Cholesky: potrf
    Case(
        "cholesky_f32",
        lambda J: J.jnp.linalg.cholesky,
        (("spd", (5, 5)),),
        check=like(np.linalg.cholesky),
        optimized=True,
    ),
    Case(
        "cholesky_batched_f32",
        lambda J: J.jnp.linalg.cholesky,
        (("spd", (2, 4, 4)),),
        check=like(np.linalg.cholesky),
    ),
    Case(
        "cholesky_f64",
        lambda J: J.jnp.linalg.cholesky,
        (("spd", (6, 6)),),
        dtype="float64",
        check=like(np.linalg.cholesky),
    ),
    Case(
        "cholesky_c64",
        lambda J: J.jnp.linalg.cholesky,
        (("spd", (4, 4)),),
        dtype="complex64",
        check=like(np.linalg.cholesky),
    ),
    Case(
        "cho_solve_f32",
        lambda J: lambda c, b: J.jsl.cho_solve((c, True), b),
        (("lower", (4, 4)), ("general", (4, 2))),
        check=like(_cho_solve),
    ),
    # Triangular solves: trsm
    Case(
        "solve_triangular_lower_f32",
        lambda J: lambda a, b: J.jsl.solve_triangular(a, b, lower=True),
        (("lower", (5, 5)), ("general", (5, 3))),
        check=like(lambda a, b: np.linalg.solve(np.tril(a), b)),
    ),
    Case(
        "solve_triangular_upper_trans_f32",
        lambda J: lambda a, b: J.jsl.solve_triangular(a, b, trans=1),
        (("upper", (5, 5)), ("general", (5, 2))),
        check=like(lambda a, b: np.linalg.solve(np.triu(a).T, b)),
    ),
    Case(
        "solve_triangular_c128",
        lambda J: lambda a, b: J.jsl.solve_triangular(a, b, lower=True, trans=2),
        (("lower", (4, 4)), ("general", (4, 2))),
        dtype="complex128",
        check=like(lambda a, b: np.linalg.solve(_h(np.tril(a)), b)),
    ),
    # QR: geqrf + orgqr/ungqr, geqp3, ormqr
    Case(
        "qr_f32", lambda J: J.jnp.linalg.qr, (("general", (6, 4)),), check=check_qr, optimized=True
    ),
    Case(
        "qr_complete_f32",
        lambda J: lambda a: J.jnp.linalg.qr(a, mode="complete"),
        (("general", (4, 6)),),
        check=check_qr,
    ),
    Case(
        "qr_r_f32",
        lambda J: lambda a: J.jnp.linalg.qr(a, mode="r"),
        (("general", (5, 3)),),
        check=check_qr_r,
    ),
    Case(
        "qr_batched_f64",
        lambda J: J.jnp.linalg.qr,
        (("general", (2, 5, 3)),),
        dtype="float64",
        check=check_qr,
    ),
    Case(
        "qr_c64",
        lambda J: J.jnp.linalg.qr,
        (("general", (4, 4)),),
        dtype="complex64",
        check=check_qr,
    ),
    Case(
        "qr_pivoting_f32",
        lambda J: lambda a: J.jsl.qr(a, pivoting=True),
        (("general", (5, 4)),),
        check=check_qr_pivoting,
    ),
    Case(
        "householder_product_f32",
        lambda J: J.lax.householder_product,
        (("general", (5, 3)), ("general", (3,))),
        check=like(_householder),
    ),
    Case(
        "ormqr_f32",
        lambda J: lambda a, taus, c: J.lax.ormqr(a, taus, c, left=True, transpose=True),
        (("general", (5, 3)), ("general", (3,)), ("general", (5, 2))),
        check=like(_ormqr_left_transposed),
    ),
    # Symmetric eigenproblem: syevd/heevd
    Case(
        "eigh_f32",
        lambda J: J.jnp.linalg.eigh,
        (("symmetric", (5, 5)),),
        check=check_eigh,
        optimized=True,
    ),
    Case(
        "eigh_batched_f32",
        lambda J: J.jnp.linalg.eigh,
        (("symmetric", (3, 4, 4)),),
        check=check_eigh,
    ),
    Case(
        "eigh_f64",
        lambda J: J.jnp.linalg.eigh,
        (("symmetric", (6, 6)),),
        dtype="float64",
        check=check_eigh,
    ),
    Case(
        "eigh_c64",
        lambda J: J.jnp.linalg.eigh,
        (("symmetric", (4, 4)),),
        dtype="complex64",
        check=check_eigh,
    ),
    Case(
        "eigh_c128",
        lambda J: J.jnp.linalg.eigh,
        (("symmetric", (5, 5)),),
        dtype="complex128",
        check=check_eigh,
    ),
    Case(
        "eigvalsh_f32",
        lambda J: J.jnp.linalg.eigvalsh,
        (("symmetric", (5, 5)),),
        check=like(np.linalg.eigvalsh),
    ),
    # SVD: gesdd, gesvd
    Case(
        "svd_f32",
        lambda J: J.jnp.linalg.svd,
        (("general", (5, 3)),),
        check=check_svd,
        optimized=True,
    ),
    Case(
        "svd_reduced_f32",
        lambda J: lambda a: J.jnp.linalg.svd(a, full_matrices=False),
        (("general", (3, 5)),),
        check=check_svd,
    ),
    Case(
        "svd_values_f32",
        lambda J: lambda a: J.jnp.linalg.svd(a, compute_uv=False),
        (("general", (4, 6)),),
        check=like(lambda a: np.linalg.svd(a, compute_uv=False)),
    ),
    Case(
        "svd_batched_f64",
        lambda J: J.jnp.linalg.svd,
        (("general", (2, 4, 3)),),
        dtype="float64",
        check=check_svd,
    ),
    Case(
        "svd_c64",
        lambda J: J.jnp.linalg.svd,
        (("general", (4, 3)),),
        dtype="complex64",
        check=check_svd,
    ),
    Case(
        "svd_qr_algorithm_f32",
        lambda J: lambda a: J.lax.svd(a, algorithm=J.lax.SvdAlgorithm.QR),
        (("general", (5, 4)),),
        check=lambda x, out, tol: check_svd(x, (out[0], out[1], out[2]), tol),
    ),
    Case(
        "norm_2_f32",
        lambda J: lambda a: J.jnp.linalg.norm(a, ord=2),
        (("general", (4, 5)),),
        check=like(lambda a: np.linalg.norm(a, ord=2)),
    ),
    Case(
        "pinv_f32", lambda J: J.jnp.linalg.pinv, (("general", (5, 3)),), check=like(np.linalg.pinv)
    ),
    Case(
        "lstsq_f32",
        lambda J: lambda a, b: J.jnp.linalg.lstsq(a, b)[0],
        (("general", (6, 3)), ("general", (6,))),
        check=like(_lstsq),
    ),
    # Nonsymmetric eigenproblem and Schur: geev, gees; Hessenberg and
    # tridiagonal reductions: gehrd, sytrd; tridiagonal systems: gtsv
    Case("eig_f32", lambda J: J.jnp.linalg.eig, (("general", (4, 4)),), check=check_eig),
    Case(
        "eig_f64",
        lambda J: J.jnp.linalg.eig,
        (("general", (5, 5)),),
        dtype="float64",
        check=check_eig,
    ),
    Case(
        "eig_c64",
        lambda J: J.jnp.linalg.eig,
        (("general", (4, 4)),),
        dtype="complex64",
        check=check_eig,
    ),
    Case(
        "eigvals_f32", lambda J: J.jnp.linalg.eigvals, (("general", (6, 6)),), check=check_eigvals
    ),
    Case("schur_f32", lambda J: J.jsl.schur, (("general", (5, 5)),), check=check_schur),
    Case(
        "schur_c64",
        lambda J: J.jsl.schur,
        (("general", (4, 4)),),
        dtype="complex64",
        check=check_schur,
    ),
    Case(
        "hessenberg_f32",
        lambda J: lambda a: J.jsl.hessenberg(a, calc_q=True),
        (("general", (5, 5)),),
        check=check_hessenberg,
    ),
    Case(
        "tridiagonal_f32",
        lambda J: J.lax.tridiagonal,
        (("symmetric", (5, 5)),),
        check=check_tridiagonal,
    ),
    Case(
        "tridiagonal_solve_f32",
        lambda J: J.lax.tridiagonal_solve,
        (("general", (6,)), ("diagonal", (6,)), ("general", (6,)), ("general", (6, 2))),
        check=like(_tridiagonal_solve),
    ),
]

BY_NAME = {c.name: c for c in CASES}
