"""Shared by the transformation tests: central finite differences."""

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
