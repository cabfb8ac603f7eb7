"""jax.scipy.special: SciPy's special functions on uir.lax's special-function
kernels (lgamma, digamma, igamma, betainc, erf_inv, the Bessel functions)
and uir.numpy's elementwise functions. Every function computes in a float
type: integer and boolean arguments promote to the default float, as in
JAX."""

from __future__ import annotations

import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.lax import special as lax_special
from uir._src.nn import functions as nn
from uir._src.numpy import manipulation, ufuncs
from uir._src.numpy.util import public_asarray


def _floats(*xs):
    """`xs` promoted together, as JAX promotes, then to a float type, and
    broadcast to one shape (lax's special functions take equal shapes)."""
    xs = ops.promote("scipy.special", *xs) if len(xs) > 1 else [public_asarray(xs[0])]
    if len(xs) > 1:
        shape = np.broadcast_shapes(*(x.shape for x in xs))
        xs = [manipulation.broadcast_to(x, shape) for x in xs]
    out = []
    for x in xs:
        if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
            x = ops.convert(x, dtypes.default_float(), x.weak_type)
        out.append(x)
    return out


def _zero_where(cond, value):
    return ufuncs.where(cond, 0.0, value).astype(value.dtype)


@eager
def erf(x):
    return ufuncs.erf(*_floats(x))


@eager
def erfc(x):
    (x,) = _floats(x)
    return ufuncs.subtract(1, ufuncs.erf(x)) if dtypes.is_complex(x.dtype) else lax_special.erfc(x)


@eager
def erfinv(x):
    return lax_special.erf_inv(*_floats(x))


@eager
def expit(x):
    return nn.sigmoid(*_floats(x))


@eager
def logit(x):
    (x,) = _floats(x)
    return ufuncs.log(ufuncs.divide(x, ufuncs.subtract(1, x)))


@eager
def gammaln(x):
    return lax_special.lgamma(*_floats(x))


@eager
def loggamma(x):
    """log Γ(x) for real x: NaN where Γ(x) < 0, as scipy.special.loggamma."""
    (x,) = _floats(x)
    return ufuncs.where(ufuncs.less(gammasgn(x), 0), np.nan, lax_special.lgamma(x))


@eager
def gammasgn(x):
    """The sign of Γ(x): +1 for x > 0, alternating between the poles below
    0, the sign of the zero at ±0, NaN at the poles and at NaN."""
    (x,) = _floats(x)
    floor = ufuncs.floor(x)
    odd = ufuncs.not_equal(ufuncs.remainder(floor, 2), 0)
    negative = ufuncs.where(odd, -1.0, 1.0)
    sign = ufuncs.where(ufuncs.greater(x, 0), 1.0, negative)
    zero = ufuncs.equal(x, 0)
    sign = ufuncs.where(zero, ufuncs.where(ufuncs.signbit(x), -1.0, 1.0), sign)
    pole = ufuncs.logical_and(ufuncs.less(x, 0), ufuncs.equal(x, floor))
    sign = ufuncs.where(ufuncs.logical_or(pole, ufuncs.isnan(x)), np.nan, sign)
    return ops.convert(sign, x.dtype, x.weak_type)


@eager
def gamma(x):
    (x,) = _floats(x)
    return ufuncs.multiply(gammasgn(x), ufuncs.exp(lax_special.lgamma(x)))


@eager
def betaln(a, b):
    a, b = _floats(a, b)
    return ufuncs.subtract(
        ufuncs.add(lax_special.lgamma(a), lax_special.lgamma(b)),
        lax_special.lgamma(ufuncs.add(a, b)),
    )


@eager
def beta(a, b):
    a, b = _floats(a, b)
    sign = ufuncs.multiply(ufuncs.multiply(gammasgn(a), gammasgn(b)), gammasgn(ufuncs.add(a, b)))
    return ufuncs.multiply(sign, ufuncs.exp(betaln(a, b)))


@eager
def betainc(a, b, x):
    return lax_special.betainc(*_floats(a, b, x))


@eager
def gammainc(a, x):
    return lax_special.igamma(*_floats(a, x))


@eager
def gammaincc(a, x):
    return lax_special.igammac(*_floats(a, x))


@eager
def digamma(x):
    return lax_special.digamma(*_floats(x))


@eager
def polygamma(n, x):
    n, x = _floats(n, x)
    return lax_special.polygamma(n, x)


@eager
def zeta(x, q=None):
    """Hurwitz's ζ(x, q); Riemann's (q = 1) without q."""
    if q is None:
        (x,) = _floats(x)
        q = ops.convert(public_asarray(1.0), x.dtype)
    x, q = _floats(x, q)
    return lax_special.zeta(x, q)


@eager
def xlogy(x, y):
    """x·log(y), 0 where x is 0 (even where y is 0)."""
    x, y = _floats(x, y)
    return _zero_where(ufuncs.equal(x, 0), ufuncs.multiply(x, ufuncs.log(y)))


@eager
def xlog1py(x, y):
    """x·log1p(y), 0 where x is 0."""
    x, y = _floats(x, y)
    return _zero_where(ufuncs.equal(x, 0), ufuncs.multiply(x, ufuncs.log1p(y)))


@eager
def entr(x):
    """-x·log(x) for x > 0, 0 at 0, -inf below."""
    (x,) = _floats(x)
    value = ufuncs.negative(xlogy(x, x))
    return ufuncs.where(ufuncs.less(x, 0), -np.inf, value)


@eager
def rel_entr(p, q):
    """p·log(p/q) where p > 0 and q > 0; 0 where p is 0 and q ≥ 0; inf elsewhere."""
    p, q = _floats(p, q)
    both = ufuncs.logical_and(ufuncs.greater(p, 0), ufuncs.greater(q, 0))
    safe_q = ufuncs.where(both, q, 1)
    value = ufuncs.multiply(p, ufuncs.log(ufuncs.divide(ufuncs.where(both, p, 1), safe_q)))
    zero = ufuncs.logical_and(ufuncs.equal(p, 0), ufuncs.greater_equal(q, 0))
    return ufuncs.where(both, value, ufuncs.where(zero, 0.0, np.inf))


@eager
def kl_div(p, q):
    """p·log(p/q) - p + q where p > 0 and q > 0; q where p is 0 and q ≥ 0; inf elsewhere."""
    p, q = _floats(p, q)
    both = ufuncs.logical_and(ufuncs.greater(p, 0), ufuncs.greater(q, 0))
    value = ufuncs.add(ufuncs.subtract(rel_entr(p, q), p), q)
    zero = ufuncs.logical_and(ufuncs.equal(p, 0), ufuncs.greater_equal(q, 0))
    return ufuncs.where(both, value, ufuncs.where(zero, q, np.inf))


@eager
def i0e(x):
    return lax_special.bessel_i0e(*_floats(x))


@eager
def i1e(x):
    return lax_special.bessel_i1e(*_floats(x))


@eager
def i0(x):
    (x,) = _floats(x)
    return ufuncs.multiply(ufuncs.exp(ufuncs.abs(x)), lax_special.bessel_i0e(x))


@eager
def i1(x):
    (x,) = _floats(x)
    return ufuncs.multiply(ufuncs.exp(ufuncs.abs(x)), lax_special.bessel_i1e(x))


@eager(static=("exact",))
def factorial(n, exact: bool = False):
    """n! as Γ(n + 1) (0 for negative n); exact=True is refused, as JAX
    refuses it."""
    if exact:
        ops.fail("factorial", "factorial with exact=True is not supported (JAX refuses it too)")
    (n,) = _floats(n)
    return ufuncs.where(ufuncs.less(n, 0), 0.0, ufuncs.exp(lax_special.lgamma(ufuncs.add(n, 1))))


@eager(static=("repetition",))
def comb(N, k, *, repetition: bool = False):
    """The number of combinations of N things taken k at a time (with
    repetition: of N + k - 1); 0 where k > N, k < 0 or N < 0."""
    N, k = _floats(N, k)
    if repetition:
        N = ufuncs.subtract(ufuncs.add(N, k), 1)
    value = ufuncs.exp(
        ufuncs.subtract(
            lax_special.lgamma(ufuncs.add(N, 1)),
            ufuncs.add(
                lax_special.lgamma(ufuncs.add(k, 1)),
                lax_special.lgamma(ufuncs.add(ufuncs.subtract(N, k), 1)),
            ),
        )
    )
    outside = ufuncs.logical_or(
        ufuncs.logical_or(ufuncs.greater(k, N), ufuncs.less(k, 0)), ufuncs.less(N, 0)
    )
    return ufuncs.where(outside, 0.0, value)


@eager
def poch(z, m):
    """Pochhammer's rising factorial Γ(z + m) / Γ(z)."""
    z, m = _floats(z, m)
    zm = ufuncs.add(z, m)
    sign = ufuncs.multiply(gammasgn(zm), gammasgn(z))
    value = ufuncs.exp(ufuncs.subtract(lax_special.lgamma(zm), lax_special.lgamma(z)))
    return ufuncs.where(ufuncs.equal(m, 0), 1.0, ufuncs.multiply(sign, value))


@eager(static=("d",))
def multigammaln(a, d: int):
    """The log of the multivariate gamma function of dimension d."""
    (a,) = _floats(a)
    d = int(d)
    total = ufuncs.multiply(lax_special.lgamma(a), 0) + d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        total = ufuncs.add(total, lax_special.lgamma(ufuncs.subtract(a, j / 2)))
    return total


@eager
def boxcox(x, lmbda):
    """(x^λ - 1)/λ, log(x) at λ = 0."""
    x, lmbda = _floats(x, lmbda)
    zero = ufuncs.equal(lmbda, 0)
    safe = ufuncs.where(zero, 1, lmbda)
    value = ufuncs.divide(ufuncs.expm1(ufuncs.multiply(safe, ufuncs.log(x))), safe)
    return ufuncs.where(zero, ufuncs.log(x), value)


@eager
def boxcox1p(x, lmbda):
    """((1 + x)^λ - 1)/λ, log1p(x) at λ = 0."""
    x, lmbda = _floats(x, lmbda)
    zero = ufuncs.equal(lmbda, 0)
    safe = ufuncs.where(zero, 1, lmbda)
    value = ufuncs.divide(ufuncs.expm1(ufuncs.multiply(safe, ufuncs.log1p(x))), safe)
    return ufuncs.where(zero, ufuncs.log1p(x), value)


# --- the normal distribution's functions -----------------------------------------


@eager
def ndtr(x):
    """Φ(x), the standard normal distribution function."""
    (x,) = _floats(x)
    return ufuncs.multiply(0.5, lax_special.erfc(ufuncs.multiply(x, -1 / math.sqrt(2))))


def _log_pdf(x):
    return ufuncs.subtract(ufuncs.multiply(ufuncs.square(x), -0.5), 0.5 * math.log(2 * math.pi))


def _log_ndtr_asymptotic(x, series_order: int):
    """log Φ(x) for x ≪ 0: log(φ(x)/-x) plus the log of the asymptotic series
    1 + Σ (-1)^n (2n-1)!! / x^(2n)."""
    x2 = ufuncs.square(x)
    total, term, even = 1.0, 1.0, ufuncs.reciprocal(x2)
    for n in range(1, series_order + 1):
        term = ufuncs.multiply(term, ufuncs.multiply(even, -(2 * n - 1)))
        total = ufuncs.add(total, term)
    return ufuncs.add(
        ufuncs.subtract(_log_pdf(x), ufuncs.log(ufuncs.negative(x))), ufuncs.log(total)
    )


@eager(static=("series_order",))
def log_ndtr(x, series_order: int = 3):
    """log Φ(x), accurate in both tails: log1p(-Φ(-x)) above, the
    asymptotic series far below (as JAX's segments: 5 and -10 in 32 bits,
    8 and -20 in 64)."""
    if not 0 <= int(series_order) <= 30:
        ops.fail("log_ndtr", f"series_order must be in [0, 30], got {series_order}")
    (x,) = _floats(x)
    wide = np.dtype(x.dtype) == np.float64
    upper, lower = (8.0, -20.0) if wide else (5.0, -10.0)
    high = ufuncs.log1p(ufuncs.negative(ndtr(ufuncs.negative(x))))
    middle = ufuncs.log(ndtr(ufuncs.maximum(x, lower)))
    low = _log_ndtr_asymptotic(ufuncs.minimum(x, lower), int(series_order))
    return ufuncs.where(
        ufuncs.greater(x, upper), high, ufuncs.where(ufuncs.greater(x, lower), middle, low)
    )


@eager
def ndtri(p):
    """Φ⁻¹(p): erf⁻¹ in the middle, a rational start in the tails (Abramowitz
    and Stegun 26.2.23), then Newton steps on log Φ; ±inf at 0 and 1, NaN
    outside [0, 1]."""
    (p,) = _floats(p)
    q = ufuncs.minimum(p, ufuncs.subtract(1, p))  # the nearer tail
    safe_q = ufuncs.clip(q, 1e-300 if np.dtype(p.dtype) == np.float64 else 1e-37, 0.5)
    middle = ufuncs.multiply(
        math.sqrt(2), lax_special.erf_inv(ufuncs.subtract(ufuncs.multiply(safe_q, 2), 1))
    )
    t = ufuncs.sqrt(ufuncs.multiply(ufuncs.log(safe_q), -2))
    numerator = ufuncs.add(
        2.515517, ufuncs.multiply(t, ufuncs.add(0.802853, ufuncs.multiply(t, 0.010328)))
    )
    denominator = ufuncs.add(
        1,
        ufuncs.multiply(
            t,
            ufuncs.add(
                1.432788, ufuncs.multiply(t, ufuncs.add(0.189269, ufuncs.multiply(t, 0.001308)))
            ),
        ),
    )
    tail = ufuncs.negative(ufuncs.subtract(t, ufuncs.divide(numerator, denominator)))
    x = ufuncs.where(ufuncs.less(safe_q, 1e-2), tail, middle)
    log_q = ufuncs.log(safe_q)
    for _ in range(3):
        log_cdf = log_ndtr(x)
        x = ufuncs.subtract(
            x,
            ufuncs.multiply(
                ufuncs.subtract(log_cdf, log_q), ufuncs.exp(ufuncs.subtract(log_cdf, _log_pdf(x)))
            ),
        )
    x = ufuncs.where(ufuncs.greater(p, 0.5), ufuncs.negative(x), x)
    x = ufuncs.where(ufuncs.equal(p, 0), -np.inf, ufuncs.where(ufuncs.equal(p, 1), np.inf, x))
    outside = ufuncs.logical_or(ufuncs.less(p, 0), ufuncs.greater(p, 1))
    return ufuncs.where(ufuncs.logical_or(outside, ufuncs.isnan(p)), np.nan, x)


# --- the softmax family, on uir.nn's -------------------------------------------------


@eager(static=("axis", "keepdims", "return_sign"))
def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    return nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)


@eager(static=("axis",))
def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as SciPy's)."""
    return nn.softmax(*_floats(x), axis=axis)


@eager(static=("axis",))
def log_softmax(x, /, *, axis=None):
    return nn.log_softmax(*_floats(x), axis=axis)


__all__ = [
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "factorial",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "poch",
    "polygamma",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]
