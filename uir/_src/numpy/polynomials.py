"""jax.numpy's polynomials: polyval, polyadd, polysub, polymul, polydiv,
polyder, polyint, poly and polyfit."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, products, reductions, ufuncs
from uir._src.numpy.manipulation import atleast_1d, pad_constant, stack
from uir._src.numpy.signal import convolve
from uir._src.numpy.ufuncs import _floats
from uir._src.numpy.ufuncs import _floats as _inexact
from uir._src.numpy.util import public_asarray


@eager
def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients p (highest first) at x, by Horner's rule."""
    p, x = asarray(p), asarray(x)
    out = creation.zeros_like(x * p[0])
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


def _poly_pad(a, b):
    a, b = atleast_1d(asarray(a)), atleast_1d(asarray(b))
    n = builtins.max(a.shape[0], b.shape[0])
    return manipulation.pad_constant(a, [(n - a.shape[0], 0)]), manipulation.pad_constant(
        b, [(n - b.shape[0], 0)]
    )


@eager
def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest first)."""
    a, b = _poly_pad(a1, a2)
    return a + b


@eager
def polysub(a1, a2):
    """The difference of two polynomials."""
    a, b = _poly_pad(a1, a2)
    return a - b


@eager
def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials."""
    return convolve(atleast_1d(asarray(a1)), atleast_1d(asarray(a2)))


@eager
def polyder(p, m: int = 1):
    """The m-th derivative of polynomial p."""
    p = asarray(p)
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return creation.zeros((0,), p.dtype)
        p = p[:-1] * creation.arange(n - 1, 0, -1).astype(p.dtype)
    return p


@eager
def polyint(p, m: int = 1, k=None):
    """The m-th antiderivative of polynomial p (integration constants k, 0 by default)."""
    p = _floats(p)
    ks = [0.0] * m if k is None else list(np.atleast_1d(k))
    for i in range(m):
        n = p.shape[0]
        p = manipulation.concatenate(
            [
                p / creation.arange(n, 0, -1).astype(p.dtype),
                public_asarray([ks[i]]).astype(p.dtype),
            ]
        )
    return p


# --- polyfit, mask_indices -----------------------------------------------------------


@eager(static=("deg",))
def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y),
    coefficients highest power first, as JAX: the Vandermonde matrix with
    its columns scaled to unit norm, solved through the SVD. full=True adds
    (residuals, rank, singular values, rcond); cov=True the covariance."""
    from uir._src.numpy import linalg as np_linalg

    deg = int(deg)
    if deg < 0:
        fail("polyfit", f"needs deg >= 0, got {deg}")
    x, y = ops.promote("polyfit", _inexact(x), _inexact(y))
    if x.ndim != 1 or x.shape[0] == 0:
        fail("polyfit", f"needs a non-empty vector x, got {ops.describe(x)}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        fail("polyfit", f"needs y of x's length (1-D or 2-D), got {ops.describe(y)}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.dtype(x.dtype)).eps)
    lhs = creation.vander(x, order)
    rhs = y
    if w is not None:
        w = _inexact(w)
        if w.ndim != 1 or w.shape[0] != y.shape[0]:
            fail("polyfit", f"needs weights of y's length, got {ops.describe(w)}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = ufuncs.sqrt(reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = np_linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, public_asarray(rcond)
    if cov:
        vbase = np_linalg.inv(products.matmul(lhs.T, lhs)) / products.outer(scale, scale)
        if cov == "unscaled":
            fac = public_asarray(1.0, x.dtype)
        else:
            if x.shape[0] <= order:
                fail(
                    "polyfit",
                    "the number of data points must exceed the order to scale the covariance",
                )
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, vbase * manipulation.reshape(fac, (1,))[0]
        return c, vbase[:, :, None] * fac
    return c


@eager
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or a
    square matrix's characteristic polynomial from its eigenvalues: not
    supported)."""
    z = asarray(seq_of_zeros)
    if z.ndim != 1:
        fail("poly", "takes a 1-D sequence of roots")
    out = creation.ones((1,), _floats(z).dtype if not dtypes.is_complex(z.dtype) else z.dtype)
    for i in range(z.shape[0]):
        out = convolve(out, stack([creation.ones((), out.dtype), -z[i].astype(out.dtype)]))
    return out


@eager
def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """(quotient, remainder) of polynomial u by v (v's leading coefficient nonzero)."""
    u, v = _floats(u), _floats(v)
    n, m = u.shape[0], v.shape[0]
    if m > n:
        return creation.zeros((1,), u.dtype), u
    rem = u
    q = []
    for k in range(n - m + 1):
        c = rem[k] / v[0]
        q.append(c)
        rem = rem - pad_constant(c * v, [(k, n - m - k)])
    return stack(q), rem


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients p (highest first): the
    eigenvalues of its companion matrix, complex. With strip_zeros (the
    default) leading zeros are dropped and trailing ones give roots at 0,
    which needs concrete coefficients (outside uir.jit), as in JAX."""
    from uir._src.core import tracing

    if strip_zeros:
        if tracing.current() is not None or isinstance(p, ops.Tracer):
            fail(
                "roots",
                "strip_zeros=True needs concrete coefficients: use strip_zeros=False under jit",
            )
        coeffs = np.atleast_1d(np.asarray(p))
        if coeffs.ndim != 1:
            fail("roots", f"takes a 1-D array of coefficients, got shape {coeffs.shape}")
        nonzero = np.flatnonzero(coeffs)
        if nonzero.size == 0:
            return public_asarray(np.zeros(0, dtypes.canonicalize(np.complex128)))
        trailing = len(coeffs) - 1 - int(nonzero[-1])
        core = coeffs[int(nonzero[0]) : int(nonzero[-1]) + 1]
        found = _companion_roots(core) if len(core) > 1 else None
        zeros = np.zeros(trailing, dtypes.canonicalize(np.complex128))
        if found is None:
            return public_asarray(zeros)
        return public_asarray(
            np.concatenate([np.asarray(found), zeros.astype(np.asarray(found).dtype)])
        )
    return _companion_roots(p)


@eager
def _companion_roots(p):
    from uir._src.numpy.linalg import eigvals

    c = _inexact(atleast_1d(asarray(p)))
    n = c.shape[0] - 1
    if n < 1:
        return creation.zeros((0,), np.result_type(c.dtype, np.complex64))
    below = (np.arange(n)[:, None] == np.arange(n)[None, :] + 1).astype(np.dtype(c.dtype))
    top = ufuncs.divide(ufuncs.negative(c[1:]), c[0])
    companion = ufuncs.where(
        (np.arange(n) == 0)[:, None], manipulation.broadcast_to(top, (n, n)), below
    )
    return eigvals(companion)


__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
]
