"""Shared by the transformation tests: central finite differences and the
transpose identity."""

from __future__ import annotations

import numpy as np


def fd_grad(f, x, eps=1e-6):
    """Central differences of a scalar f at x (float64)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = (float(f(xp)) - float(f(xm))) / (2 * eps)
    return g


def check_vjp_transposes_jvp(fn, x, rng):
    """<vjp(ct), t> == <ct, jvp(t)> for random t and ct (no oracle needed),
    and jvp's primal output is fn's."""
    import uir

    t = rng.standard_normal(np.shape(x))
    y, y_dot = uir.jvp(fn, (x,), (t,))
    ct = rng.standard_normal(np.shape(y))
    _, pull = uir.vjp(fn, x)
    (x_bar,) = pull(ct)
    lhs = float(np.sum(np.asarray(x_bar) * t))
    rhs = float(np.sum(ct * np.asarray(y_dot)))
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), (lhs, rhs)
    np.testing.assert_allclose(np.asarray(y), np.asarray(uir.jit(fn)(x)), rtol=1e-12)
