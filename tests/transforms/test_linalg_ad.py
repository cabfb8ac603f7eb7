"""Derivatives through LAPACK's potrf (cholesky), trsm (triangular_solve)
getrf (lu: solve, inv, det, slogdet), syevd/heevd (eigh), gesdd/gesvd
(svd) custom calls and the tagged qr call: finite differences in float64
and complex128 in both modes, every flag of triangular_solve, second
order, vmap, and a Gaussian log-likelihood built on them; routines
without a rule raise, named."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ad_util import fd_grad

import uir
import uir.numpy as jnp
import uir.scipy.linalg as sla
from uir.lax import linalg

pytestmark = pytest.mark.usefixtures("x64")


def _spd(rng, n=4):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize(
    "lower, left, transpose, unit", list(itertools.product([True, False], repeat=4))
)
def test_triangular_solve_gradients_match_finite_differences(lower, left, transpose, unit):
    rng = np.random.default_rng(0)
    a = _spd(rng)
    a = np.tril(a) if lower else np.triu(a)
    b = rng.standard_normal((4, 3) if left else (3, 4))
    w = rng.standard_normal(b.shape)

    def f(a, b):
        x = linalg.triangular_solve(
            a, b, left_side=left, lower=lower, transpose_a=transpose, unit_diagonal=unit
        )
        return jnp.sum(jnp.sin(x) * w)

    ga, gb = uir.grad(f, argnums=(0, 1))(a, b)
    g = uir.jit(f)
    # only a's triangle (without the diagonal, if unit) is read
    k = -1 if unit else 0
    mask = np.tril(np.ones((4, 4)), k) if lower else np.triu(np.ones((4, 4)), -k)
    np.testing.assert_allclose(np.asarray(ga), fd_grad(lambda v: g(v, b), a) * mask, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), fd_grad(lambda v: g(a, v), b), atol=1e-8)
    ta, tb = rng.standard_normal(a.shape) * mask, rng.standard_normal(b.shape)
    _, dot = uir.jvp(f, (a, b), (ta, tb))
    eps = 1e-6
    fd = (float(g(a + eps * ta, b + eps * tb)) - float(g(a - eps * ta, b - eps * tb))) / (2 * eps)
    assert abs(float(dot) - fd) < 1e-7 * max(1.0, abs(fd))


def test_cholesky_in_both_modes_and_second_order():
    rng = np.random.default_rng(1)
    a = _spd(rng)
    w = rng.standard_normal((4, 4))

    def f(a):
        return jnp.sum(jnp.linalg.cholesky(a) * w)

    g = uir.jit(f)
    np.testing.assert_allclose(np.asarray(uir.grad(f)(a)), fd_grad(g, a), atol=1e-8)
    t = rng.standard_normal((4, 4))
    t = t + t.T
    _, tl = uir.jvp(jnp.linalg.cholesky, (a,), (t,))
    eps = 1e-6
    fd = (np.linalg.cholesky(a + eps * t) - np.linalg.cholesky(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tl), fd, atol=1e-8)
    # second order: the rules' own ops (trsm, dot) differentiate again
    gf = uir.grad(f)
    h = np.asarray(uir.jacfwd(gf)(a)).reshape(16, 16)
    fd2 = np.stack(
        [fd_grad(lambda v, i=i: np.asarray(gf(v)).ravel()[i], a).ravel() for i in range(16)]
    )
    np.testing.assert_allclose(h, fd2, atol=1e-6)
    np.testing.assert_allclose(np.asarray(uir.jacrev(gf)(a)).reshape(16, 16), fd2, atol=1e-6)


def test_gaussian_log_likelihood_through_cho_factor_and_cho_solve():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3))

    def nll(s):
        cov = s @ s.T + 0.5 * jnp.eye(3)
        c, low = sla.cho_factor(cov, lower=True)
        logdet = 2 * jnp.sum(jnp.log(jnp.diagonal(c)))
        quad = jnp.sum(x.T * sla.cho_solve((c, low), x.T))
        return 0.5 * (quad + 5 * logdet)

    s = rng.standard_normal((3, 3))
    np.testing.assert_allclose(
        np.asarray(uir.grad(nll)(s)), fd_grad(uir.jit(nll), s), rtol=1e-6, atol=1e-8
    )


LU_FUNCTIONS = {
    "solve": lambda a, w: jnp.sum(jnp.linalg.solve(a, w[0]) * w[1]),
    "inv": lambda a, w: jnp.sum(jnp.linalg.inv(a) * w),
    "det": lambda a, w: jnp.linalg.det(a),
    "slogdet": lambda a, w: jnp.linalg.slogdet(a)[1],
    "slogdet_qr": lambda a, w: (
        jnp.linalg.slogdet(a, method="qr")[1] * jnp.linalg.slogdet(a, method="qr")[0]
    ),
    "lu": lambda a, w: jnp.sum(linalg.lu(a)[0] * w),
    "batched_solve": lambda a, w: jnp.sum(jnp.linalg.solve(jnp.stack([a, a.T]), w) ** 2),
}


@pytest.mark.parametrize("name", sorted(LU_FUNCTIONS))
def test_lu_based_functions_in_both_modes(name):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4)) + 2 * np.eye(4)
    w = rng.standard_normal((2, 4, 4)) if name == "batched_solve" else rng.standard_normal((4, 4))

    def f(a):
        return LU_FUNCTIONS[name](a, w)

    fd = fd_grad(uir.jit(f), a)
    np.testing.assert_allclose(np.asarray(uir.grad(f)(a)), fd, rtol=1e-6, atol=1e-8)
    t = rng.standard_normal((4, 4))
    _, dot = uir.jvp(f, (a,), (t,))
    assert abs(float(dot) - float(np.sum(fd * t))) < 1e-6 * max(1.0, abs(float(dot)))


EIGH_FUNCTIONS = {
    "eigenvalues": lambda a, w: jnp.sum(jnp.linalg.eigh(a)[0] * w[0]),
    "eigenvectors": lambda a, w: jnp.sum(jnp.abs(jnp.linalg.eigh(a)[1]) * w),  # sign-free
    "eigvalsh_cubed": lambda a, w: jnp.sum(jnp.linalg.eigvalsh(a) ** 3),
    "batched": lambda a, w: jnp.sum(jnp.linalg.eigh(jnp.stack([a, a @ a]))[1] ** 2 * w),
}


@pytest.mark.parametrize("name", sorted(EIGH_FUNCTIONS))
def test_eigh_in_both_modes(name):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4))
    a = a + a.T
    w = rng.standard_normal((4, 4))

    def f(a):
        return EIGH_FUNCTIONS[name](a, w)

    fd = fd_grad(uir.jit(f), a)
    np.testing.assert_allclose(np.asarray(uir.grad(f)(a)), fd, rtol=1e-5, atol=1e-7)
    t = rng.standard_normal((4, 4))
    t = t + t.T
    _, dot = uir.jvp(f, (a,), (t,))
    assert abs(float(dot) - float(np.sum(fd * t))) < 1e-5 * max(1.0, abs(float(dot)))


def test_a_routine_without_a_rule_raises_named():
    # orgqr alone forms q from Householder vectors: no derivative (as in
    # JAX; jnp.linalg.qr has one, through its tagged call)
    with pytest.raises(uir.TraceError, match=r"custom call 'lapack_dorgqr_ffi'"):
        uir.grad(lambda a: jnp.sum(linalg.householder_product(a, a[:, 0])))(np.eye(3) * 2.0)
    # eigenvectors of a non-symmetric matrix (as JAX without enable_eigvec_derivs)
    with pytest.raises(uir.TraceError, match=r"eigenvectors of a non-symmetric matrix"):
        uir.grad(lambda a: jnp.sum(jnp.abs(jnp.linalg.eig(a)[1])))(np.eye(3) * 2.0)


def _sample(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _check_both_modes(f, x, t, rtol=1e-6):
    """jvp along t equals a central difference, and the gradient paired
    with t (Re sum(g t), JAX's convention for complex inputs) equals it."""
    eps = 1e-6
    g = uir.jit(f)
    fd = (float(g(x + eps * t)) - float(g(x - eps * t))) / (2 * eps)
    _, dot = uir.jvp(f, (x,), (t,))
    grad = np.asarray(uir.grad(f)(x))
    paired = float(np.real(np.sum(grad * t)))
    scale = max(1.0, abs(fd))
    assert abs(float(dot) - fd) < rtol * scale, (float(dot), fd)
    assert abs(paired - float(dot)) < 1e-9 * scale, (paired, float(dot))


QR_CASES = [
    ((5, 3), False, False),
    ((5, 3), True, False),
    ((3, 3), True, False),
    ((3, 5), False, False),
    ((3, 5), True, False),
    ((2, 4, 3), False, False),
    ((5, 3), False, True),
    ((3, 5), False, True),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape, full, pivoting", QR_CASES)
def test_qr_in_both_modes(shape, full, pivoting, dtype):
    rng = np.random.default_rng(5)
    x, t = _sample(rng, shape, dtype), _sample(rng, shape, dtype)
    wq = rng.standard_normal(linalg.qr(x, full_matrices=full)[0].shape)

    def f(a):
        q, r, *_ = linalg.qr(a, full_matrices=full, pivoting=pivoting)
        return jnp.sum(jnp.abs(q) ** 3 * wq) + jnp.sum(jnp.abs(r) ** 2 * jnp.cos(jnp.real(r)))

    _check_both_modes(f, x, t)


def test_qr_derivatives_of_q_and_r_match_differences():
    rng = np.random.default_rng(6)
    x, t = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    for mode in ("reduced", "complete", "r"):
        f = uir.jit(lambda a, mode=mode: jnp.linalg.qr(a, mode=mode))
        _, dot = uir.jvp(lambda a, mode=mode: jnp.linalg.qr(a, mode=mode), (x,), (t,))
        eps = 1e-6
        for got, plus, minus in zip(
            dot if mode != "r" else (dot,),
            f(x + eps * t) if mode != "r" else (f(x + eps * t),),
            f(x - eps * t) if mode != "r" else (f(x - eps * t),),
            strict=True,
        ):
            fd = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
            np.testing.assert_allclose(np.asarray(got), fd, atol=1e-7)


def test_qr_keeps_its_tag_and_batches_natively():
    x = np.random.default_rng(7).standard_normal((3, 5, 4))

    def q_of(a):
        return jnp.linalg.qr(a)[0]

    text = uir.jit(uir.vmap(q_of)).lower(x).as_text()
    assert 'uir_rule="linalg.qr(full_matrices=0, pivoting=0)"' in text
    assert "while" not in text  # not a loop over the batch
    np.testing.assert_allclose(
        np.asarray(uir.vmap(q_of)(x)), np.stack([np.asarray(q_of(v)) for v in x]), atol=1e-12
    )
    per_example = uir.vmap(uir.grad(lambda a: jnp.sum(q_of(a) ** 3)))(x)
    whole = uir.grad(lambda a: jnp.sum(uir.vmap(q_of)(a) ** 3))(x)
    np.testing.assert_allclose(np.asarray(per_example), np.asarray(whole), atol=1e-12)
    # the tag survives text: a parsed module's gradient goes through the rule
    m = uir.hlo.parse_module(uir.jit(q_of).lower(x[0]).as_text())
    ct = np.random.default_rng(8).standard_normal((5, 4))
    _, got = uir.evaluate(uir.transforms.vjp_module(m), x[0], ct)
    _, pull = uir.vjp(q_of, x[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(pull(ct)[0]), atol=1e-12)


SVD_CASES = [((5, 3), False), ((3, 3), True), ((3, 5), False), ((2, 4, 3), False)]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape, full", SVD_CASES)
def test_svd_in_both_modes(shape, full, dtype):
    rng = np.random.default_rng(8)
    x, t = _sample(rng, shape, dtype), _sample(rng, shape, dtype)
    w = rng.standard_normal(shape)

    def f(a):
        u, s, vh = linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        # invariant under the vectors' phases: u f(s) vh and s
        rebuilt = (u[..., :k] * jnp.sin(s)[..., None, :]) @ vh[..., :k, :]
        return jnp.sum(jnp.abs(rebuilt) ** 2 * w) + jnp.sum(s**3)

    _check_both_modes(f, x, t)
    # singular values alone (LAPACK's mode N): their derivative computes the vectors
    _check_both_modes(lambda a: jnp.sum(jnp.sin(jnp.linalg.svd(a, compute_uv=False))), x, t)


def test_svd_full_matrices_of_a_non_square_matrix_has_no_derivative():
    with pytest.raises(uir.TraceError, match="full matrices of a non-square"):
        uir.grad(lambda a: jnp.sum(jnp.linalg.svd(a)[0]))(np.ones((4, 3)))


@pytest.mark.parametrize("name", sorted(EIGH_FUNCTIONS))
def test_complex_eigh_in_both_modes(name):
    rng = np.random.default_rng(9)
    a = _sample(rng, (4, 4), np.complex128)
    a = a + a.conj().T
    t = _sample(rng, (4, 4), np.complex128)
    t = t + t.conj().T
    w = rng.standard_normal((4, 4))
    fn = EIGH_FUNCTIONS[name]
    if name == "batched":

        def fn(a, w):
            return jnp.sum(jnp.abs(jnp.linalg.eigh(jnp.stack([a, a @ a]))[1]) ** 2 * w)

    _check_both_modes(lambda v: jnp.real(fn(v, w)), a, t, rtol=1e-5)


COMPLEX_LINALG = {
    "cholesky": lambda a: jnp.sum(
        jnp.abs(jnp.linalg.cholesky(a @ a.conj().T + 4 * jnp.eye(3))) ** 2
    ),
    "solve": lambda a: jnp.sum(
        jnp.abs(jnp.linalg.solve(a + 3 * jnp.eye(3), jnp.arange(6.0).reshape(3, 2))) ** 2
    ),
    "det": lambda a: jnp.abs(jnp.linalg.det(a + 3 * jnp.eye(3))),
    "triangular": lambda a: jnp.sum(
        jnp.abs(
            linalg.triangular_solve(
                jnp.tril(a) + 3 * jnp.eye(3),
                a,
                left_side=True,
                lower=True,
                transpose_a=True,
                conjugate_a=True,
            )
        )
        ** 2
    ),
    "triangular_right": lambda a: jnp.sum(
        jnp.real(
            linalg.triangular_solve(
                jnp.triu(a) + 3 * jnp.eye(3), a * a, left_side=False, lower=False, transpose_a=True
            )
        )
        ** 2
    ),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_LINALG))
def test_complex_cholesky_lu_and_triangular_solve_in_both_modes(name):
    rng = np.random.default_rng(10)
    a, t = _sample(rng, (3, 3), np.complex128), _sample(rng, (3, 3), np.complex128)
    _check_both_modes(COMPLEX_LINALG[name], a, t)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
def test_lu_of_any_shape_in_both_modes(shape, dtype):
    rng = np.random.default_rng(14)
    x, t = _sample(rng, shape, dtype), _sample(rng, shape, dtype)
    w = rng.standard_normal(shape)
    _check_both_modes(lambda a: jnp.sum(jnp.abs(linalg.lu(a)[0]) ** 3 * w), x, t)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigenvalues_of_a_general_matrix_in_both_modes(dtype):
    rng = np.random.default_rng(15)
    x, t = _sample(rng, (4, 4), dtype), _sample(rng, (4, 4), dtype)

    def f(a):
        w = jnp.linalg.eigvals(a)
        return jnp.sum(jnp.abs(w) ** 3) + jnp.sum(jnp.real(w) ** 2)

    _check_both_modes(f, x, t)
