"""jax.lax's special functions, computed as JAX and XLA compute them on CPU,
from elementwise ops: lgamma and digamma (Lanczos, g = 7, with reflection
below 1/2, as XLA's CHLO expansion), zeta (Hurwitz, Euler-Maclaurin: ten
terms and twelve Bernoulli corrections) and polygamma, bessel_i0e and
bessel_i1e (Cephes' Chebyshev series), igamma and igammac (Cephes' series
and continued fraction, each element stopping once converged) and betainc
(Lentz's continued fraction, the whole array stopping together). Float
arguments only, of one dtype (Python scalars take it); float16 and bfloat16
compute in float32. Constants are written in double and rounded to the
working type, as XLA does."""

from __future__ import annotations

import inspect
import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray
from uir._src.lax import control_flow
from uir._src.lax import elementwise as ew
from uir._src.lax.elementwise import _FLOAT, _check, _same
from uir._src.lax.lax import full_like


# What the series below need beyond lax's elementwise functions: NumPy's
# tests and reduction on the core's emitters (lax calls none of NumPy's
# functions); the arguments are floats, checked by the callers.
def _isnan(x):
    x = asarray(x)
    return ops.compare(x, x, "NE", "isnan")


def _isinf(x):
    x = asarray(x)
    return ops.compare(ew.abs(x), asarray(np.array(np.inf, x.dtype)), "EQ", "isinf")


def _any(x):
    x = asarray(x)
    return ops.reduce(x, "or", range(x.ndim), "any")


# Giles' single-precision erf^-1 ("Approximating the erfinv function", GPU
# Computing Gems, 2011), in the form XLA computes it: w = -log1p(-x^2), one
# polynomial in w - 2.5 below 5 and one in sqrt(w) - 3 above; +-1 go to
# +-inf.
_ERF_INV_SMALL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERF_INV_LARGE = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _erf_inv_f32(x):
    f = np.float32
    w = ops.unary(
        "negate", ops.unary("log-plus-one", ops.binary("multiply", x, ops.unary("negate", x)))
    )
    small = ops.compare(w, asarray(f(5)), "LT", "lt")
    w = ops.select(
        small,
        ops.binary("add", w, asarray(f(-2.5))),
        ops.binary("add", ops.unary("sqrt", w), asarray(f(-3))),
    )

    def coefficient(i):
        return ops.select(
            small,
            ops.broadcast_to(asarray(f(_ERF_INV_SMALL[i])), x.shape),
            ops.broadcast_to(asarray(f(_ERF_INV_LARGE[i])), x.shape),
        )

    p = coefficient(0)
    for i in range(1, len(_ERF_INV_SMALL)):
        p = ops.binary("add", coefficient(i), ops.binary("multiply", p, w))
    result = ops.binary("multiply", p, x)
    edge = ops.compare(ops.unary("abs", x), asarray(f(1)), "EQ", "eq")
    return ops.select(edge, ops.binary("multiply", x, asarray(f(np.inf))), result)


@eager
def erf_inv(x):
    """The inverse of erf, elementwise: as XLA computes it for f32 (narrower
    floats in f32); f64 refines that estimate with two Newton steps on
    erf(y) = x (accurate to about an ulp, not XLA's f64 polynomial bits)."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = ops.convert(x, dtypes.default_float())
    if x.dtype == np.float32:
        return _erf_inv_f32(x)
    if x.dtype != np.float64:
        return ops.convert(_erf_inv_f32(ops.convert(x, np.float32)), x.dtype)
    y = ops.convert(_erf_inv_f32(ops.convert(x, np.float32)), np.float64)
    two_over_sqrt_pi = asarray(np.float64(2 / np.sqrt(np.pi)))
    for _ in range(2):
        slope = ops.binary(
            "multiply",
            two_over_sqrt_pi,
            ops.unary("exponential", ops.unary("negate", ops.binary("multiply", y, y))),
        )
        step = ops.binary("divide", ops.binary("subtract", ops.unary("erf", y), x), slope)
        finite = ops.is_finite(y)
        y = ops.select(finite, ops.binary("subtract", y, step), y)
    return y


_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (
    676.520368121885098567009190444019,
    -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,
    -176.61502916214059906584551354,
    12.507343278686904814458936853,
    -0.13857109526572011689554707,
    9.984369578019570859563e-6,
    1.50563273514931155834e-7,
)
_LOG_SQRT_2PI = 0.91893853320467274
_LOG_PI = 1.1447298858494002
_LOG_LANCZOS_T = math.log(_LANCZOS_G + 0.5)  # 2.0149030205422647


def _args(name: str, *xs):
    """The arguments as one float dtype (float32 for narrower floats) and
    the dtype to return in."""
    xs = [_check(name, x, _FLOAT) for x in _same(name, *xs)]
    out = np.dtype(xs[0].dtype)
    work = out if out in (np.float32, np.float64) else np.dtype(np.float32)
    return [ops.convert(x, work) for x in xs], out


def _c(value, like):
    """A constant in `like`'s dtype."""
    return asarray(np.asarray(value, np.dtype(like.dtype)))


def _lanczos(x):
    """The shared Lanczos terms: (reflect, z, a, a', t, log t)."""
    reflect = x < 0.5
    z = ops.select(reflect, -x, x - 1)
    a = full_like(x, _LANCZOS_BASE)
    a_prime = full_like(x, 0)
    for k, c in enumerate(_LANCZOS, 1):
        d = z + float(k)
        a = a + c / d
        a_prime = a_prime - c / (d * d)
    t = (_LANCZOS_G + 0.5) + z
    log_t = _LOG_LANCZOS_T + ew.log1p(z / (_LANCZOS_G + 0.5))
    return reflect, z, a, a_prime, t, log_t


def _lgamma(x):
    reflect, z, a, _, t, log_t = _lanczos(x)
    r = ((z + 0.5) - t / log_t) * log_t
    lg = (_LOG_SQRT_2PI + r) + ew.log(a)
    ax = ew.abs(x)
    frac = ax - ew.floor(ax)
    frac = ops.select(frac > 0.5, 1 - frac, frac)
    den = ew.log(ew.sin(np.pi * frac))
    lr = ops.select(ops.is_finite(den), (_LOG_PI - den) - lg, -den)
    out = ops.select(reflect, lr, lg)
    return ops.select(_isinf(x), _c(np.inf, x), out)


def _digamma(x):
    reflect, _, a, a_prime, t, log_t = _lanczos(x)
    d = (log_t + a_prime / a) - _LANCZOS_G / t
    rx = x + ew.abs(ew.floor(x + 0.5))
    d = ops.select(reflect, d - (np.pi * ew.cos(np.pi * rx)) / ew.sin(np.pi * rx), d)
    return ops.select((x <= 0) & (x == ew.floor(x)), _c(np.nan, x), d)


_ZETA = (
    -7.1661652561756670113e18,
    1.8152105401943546773e17,
    -4.5979787224074726105e15,
    1.1646782814350067249e14,
    -2.950130727918164224e12,
    7.47242496e10,
    -1.8924375803183791606e9,
    47900160.0,
    -1209600.0,
    30240.0,
    -720.0,
    12.0,
)


def _zeta(x, q):
    s = ew.pow(q, -x)
    acc = q
    for _ in range(9):
        acc = acc + 1
        s = s + ew.pow(acc, -x)
    acc = acc + 1
    qn = ew.pow(acc, -x)
    corr = (qn * acc) / (x - 1)
    r2 = 1 / (acc * acc)
    h = full_like(x, 0)
    for i in range(11):
        h = ((x + float(22 - 2 * i)) * (x + float(21 - 2 * i))) * (r2 * (h + 1.0 / _ZETA[i]))
    tail = qn * (0.5 + (x / acc) * (1.0 / _ZETA[11] + h))
    out = (s + corr) + tail
    nan, inf = _c(np.nan, x), _c(np.inf, x)
    x_int = x == ew.floor(x)
    out = ops.select(x < 1, nan, out)
    out = ops.select((q <= 0) & ~x_int, nan, out)
    q_pole = (q <= 0) & (q == ew.floor(q))
    out = ops.select(q_pole, ops.select(x_int & (ew.rem(x, 2.0) == 0), inf, nan), out)
    return ops.select(x == 1, inf, out)


def _chebyshev(x, coefficients):
    b0 = full_like(x, 0)
    b1 = full_like(x, 0)
    b2 = full_like(x, 0)
    for c in coefficients:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


_I0E_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)  # fmt: skip
_I0E_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)  # fmt: skip
_I1E_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)  # fmt: skip
_I1E_B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)  # fmt: skip


def _bessel(x, a, b, a_f32: int, b_f32: int, times_z: bool):
    """Cephes' scaled Bessel series: z = |x|; below 8 a series in z / 2 - 2,
    above a series in 32 / z - 2 over sqrt(z). float32 keeps the last
    a_f32 and b_f32 coefficients."""
    if x.dtype == np.float32:
        a, b = a[-a_f32:], b[-b_f32:]
    z = ew.abs(x)
    small = _chebyshev(0.5 * z - 2.0, a)
    small = z * small if times_z else small
    large = _chebyshev(32.0 / z - 2.0, b) / ew.sqrt(z)
    return ops.select(z <= 8.0, small, large)


# --- the incomplete gamma functions -------------------------------------------------


def _eps(x) -> float:
    return float(np.finfo(np.dtype(x.dtype)).eps)


def _igamma_series(ax, x, a, enabled):
    """(ans ax) / a with ans = 1 + x/(a+1) + x^2/((a+1)(a+2)) + ...,
    each element summing until its term is below eps of the sum."""

    eps = _eps(x)

    def cond(state):
        return _any(state[0])

    def body(state):
        on, r, c, ans = state
        r1 = r + 1
        c1 = c * (x / r1)
        ans1 = ans + c1
        return (
            on & (c1 / ans1 > eps),
            ops.select(on, r1, r),
            ops.select(on, c1, c),
            ops.select(on, ans1, ans),
        )

    one = full_like(x, 1)
    _, _, _, ans = control_flow.while_loop(cond, body, (enabled, a, one, one))
    return (ans * ax) / a


def _igammac_fraction(ax, x, a, enabled):
    """ans ax, ans Cephes' continued fraction for the upper incomplete
    gamma function, at most 2000 steps, each element stopping once its
    relative change is below eps."""

    eps = _eps(x)
    big = 1.0 / eps
    y = 1 - a
    z = x + y + 1
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1

    def cond(state):
        return (state[1] < 2000) & _any(state[0])

    def body(state):
        on, c, y, z, pkm2, qkm2, pkm1, qkm1, ans = state
        c1 = c + 1
        y1, z1 = y + 1, z + 2
        yc = y1 * c1.astype(x.dtype)
        pk = pkm1 * z1 - pkm2 * yc
        qk = qkm1 * z1 - qkm2 * yc
        nonzero = qk != 0
        r = pk / ops.select(nonzero, qk, 1)
        t = ops.select(nonzero, ew.abs((ans - r) / r), 1)
        ans1 = ops.select(nonzero, r, ans)
        scale = ops.select(ew.abs(pk) > big, eps, 1).astype(x.dtype)
        new = (y1, z1, pkm1 * scale, qkm1 * scale, pk * scale, qk * scale, ans1)
        old = (y, z, pkm2, qkm2, pkm1, qkm1, ans)
        kept = tuple(ops.select(on, n, o) for n, o in zip(new, old, strict=True))
        return (on & (t > eps), c1, *kept)

    state = (enabled, asarray(np.int32(0)), y, z, pkm2, qkm2, pkm1, qkm1, ans)
    return control_flow.while_loop(cond, body, state)[-1] * ax


def _igamma_common(a, x):
    ax = (a * ew.log(x) - x) - _lgamma(a)
    underflow = ax < -float(np.log(np.finfo(np.dtype(x.dtype)).max))
    domain = (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | _isnan(a) | _isnan(x)
    return ew.exp(ax), underflow, domain


def _igamma(a, x):
    ax, underflow, domain = _igamma_common(a, x)
    use_fraction = (x >= 1) & (x > a)
    enabled = ~((x == 0) | domain | underflow | _isinf(x) & (x > 0))
    out = ops.select(
        use_fraction,
        1 - _igammac_fraction(ax, x, a, enabled & use_fraction),
        _igamma_series(ax, x, a, enabled & ~use_fraction),
    )
    out = ops.select(x == 0, _c(0, x), out)
    out = ops.select(_isinf(x) & (x > 0), _c(1, x), out)
    return ops.select(domain, _c(np.nan, x), out)


def _igammac(a, x):
    ax, underflow, domain = _igamma_common(a, x)
    use_series = (x < 1) | (x < a)
    positive_inf = _isinf(x) & (x > 0)
    enabled = ~(domain | underflow | positive_inf | (a == 0))
    out = ops.select(
        use_series,
        1 - _igamma_series(ax, x, a, enabled & use_series),
        _igammac_fraction(ax, x, a, enabled & ~use_series),
    )
    out = ops.select(positive_inf | (a == 0), _c(0, x), out)
    return ops.select(domain, _c(np.nan, x), out)


def _betainc(a, b, x):

    inf, nan = _c(np.inf, x), _c(np.nan, x)
    a_zero = (a == 0) | (b == inf)
    b_zero = (b == 0) | (a == inf)
    zero = (b_zero & (x != 1)) | (a_zero & (x == 0))
    one = (a_zero & (x != 0)) | (b_zero & (x == 1))
    invalid = (
        (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero)
        | _isnan(a) | _isnan(b) | _isnan(x)
    )  # fmt: skip
    fast = x < (a + 1) / (a + b + 2)
    a, b, x = (
        ops.select(fast, a, b),
        ops.select(fast, b, a),
        ops.select(fast, x, 1 - x),
    )
    f32 = x.dtype == np.float32
    small = tol = _eps(x) / 2
    steps = 200 if f32 else 600

    def numerator(n):
        """a_n of DLMF 8.17.22 (a_1 = 1), for the loop's step n."""
        m = ((n - 1) // 2).astype(x.dtype)
        even_first = -(a + b) * x / (a + 1)
        even = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        odd = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        value = ops.select(n % 2 == 0, ops.select(m == 0, even_first, even), odd)
        return ops.select(n == 1, full_like(x, 1), value)

    def cond(state):
        return (state[0] < steps) & state[4]

    def body(state):
        n, h, c, d, _ = state
        an = numerator(n)
        c1 = 1 + an / c
        c1 = ops.select(ew.abs(c1) < small, small, c1).astype(x.dtype)
        dd = 1 + an * d
        dd = ops.select(ew.abs(dd) < small, small, dd).astype(x.dtype)
        d1 = 1 / dd
        delta = c1 * d1
        return n + 1, h * delta, c1, d1, _any(ew.abs(delta - 1) >= tol)

    start = full_like(x, small)
    state = (
        asarray(np.int32(1)),
        start,
        start,
        full_like(x, 0),
        asarray(True),
    )
    h = control_flow.while_loop(cond, body, state)[1]
    tiny = 2 * float(np.finfo(np.dtype(x.dtype)).tiny)
    log1m = ew.log1p(-x)
    lb, lab = _lgamma(b), _lgamma(a + b)
    f = ops.select(
        a < tiny,
        ew.exp(log1m * b - (lb - lab)),
        ew.exp(ew.log(x) * a + log1m * b - (_lgamma(a) + (lb - lab))) / a,
    )
    out = h * f
    out = ops.select(fast, out, 1 - out)
    out = ops.select(zero, _c(0, x), out)
    out = ops.select(one, _c(1, x), out)
    return ops.select(invalid, nan, out)


# --- jax.lax ---------------------------------------------------------------------------


def _elementwise(name: str, fn, params: str):
    """lax.<name>(...) with jax.lax's parameter names (`params`, spaced)."""
    signature = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params.split()]
    )

    def f(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            ops.fail(f"lax.{name}", f"takes ({', '.join(signature.parameters)}): {e}")
        xs, out = _args(name, *bound.args)
        return ops.convert(fn(*xs), out)

    f.__name__ = f.__qualname__ = name
    f.__signature__ = signature
    return eager(f)


lgamma = _elementwise("lgamma", _lgamma, "x")
lgamma.__doc__ = "log |Gamma(x)|, elementwise (Lanczos, as XLA)."
digamma = _elementwise("digamma", _digamma, "x")
digamma.__doc__ = "The digamma function Gamma'(x) / Gamma(x), elementwise."
zeta = _elementwise("zeta", _zeta, "x q")
zeta.__doc__ = "The Hurwitz zeta function zeta(x, q) = sum over k >= 0 of (q + k)^-x."
bessel_i0e = _elementwise(
    "bessel_i0e", lambda x: _bessel(x, _I0E_A, _I0E_B, 18, 7, times_z=False), "x"
)
bessel_i0e.__doc__ = "exp(-|x|) I0(x), elementwise."
bessel_i1e = _elementwise(
    "bessel_i1e",
    lambda x: ew.sign(x) * _bessel(x, _I1E_A, _I1E_B, 17, 7, times_z=True),
    "x",
)
bessel_i1e.__doc__ = "exp(-|x|) I1(x), elementwise."
igamma = _elementwise("igamma", _igamma, "a x")
igamma.__doc__ = "The regularized lower incomplete gamma function P(a, x)."
igammac = _elementwise("igammac", _igammac, "a x")
igammac.__doc__ = "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."
betainc = _elementwise("betainc", _betainc, "a b x")
betainc.__doc__ = "The regularized incomplete beta function I_x(a, b)."


def _erfc(x):
    """1 - erf(x) where that loses nothing (|x| < 1/2); beyond, Q(1/2, x²),
    the upper incomplete gamma function, whose continued fraction keeps
    erfc's relative accuracy far into its tail (2 - Q below -1/2)."""
    one = _c(1, x)
    q = _igammac(full_like(x, 0.5), x * x)
    tail = ops.select(x < 0, 2 - q, q)
    return ops.select(ew.abs(x) < 0.5, one - ew.erf(x), tail)


erfc = _elementwise("erfc", _erfc, "x")
erfc.__doc__ = "1 - erf(x), elementwise, accurate where it is small (x ≫ 0)."


def _polygamma(m, x):
    sign = 2 * ew.rem(m, 2.0) - 1
    out = (sign * ew.exp(_lgamma(m + 1))) * _zeta(m + 1, x)
    out = ops.select(m == 0, _digamma(x), out)
    return ops.select((m != ew.floor(m)) | (m < 0), _c(np.nan, x), out)


polygamma = _elementwise("polygamma", _polygamma, "m x")
polygamma.__doc__ = "The m-th derivative of digamma at x (m a float holding a whole number)."


__all__ = [
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "digamma",
    "erf_inv",
    "erfc",
    "igamma",
    "igammac",
    "lgamma",
    "polygamma",
    "zeta",
]
