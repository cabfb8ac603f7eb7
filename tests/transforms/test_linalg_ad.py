"""Derivatives through LAPACK's potrf (cholesky), trsm (triangular_solve)
getrf (lu: solve, inv, det, slogdet) and syevd (eigh) custom calls: finite differences
in float64 in both modes, every flag of triangular_solve, second order,
and a Gaussian log-likelihood built on them; routines without a rule
raise, named."""

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
    with pytest.raises(uir.TraceError, match=r"custom call 'lapack_dgeqrf_ffi'"):
        uir.grad(lambda a: jnp.sum(jnp.linalg.qr(a)[1]))(np.eye(3) * 2.0)
