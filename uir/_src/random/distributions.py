"""jax.random's distributions, drawn from threefry bits."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax import control_flow
from uir._src.numpy import creation, manipulation, products, reductions, ufuncs
from uir._src.random.prng import _add, _bits, _shape, fold_in, split

# --- floats -------------------------------------------------------------------------


def _float_dtype(dtype, op: str) -> np.dtype:
    d = dtypes.canonicalize(dtypes.default_float() if dtype is None else dtype)
    if not dtypes.is_float(d):
        fail(op, f"dtype must be a float type, got {d}")
    return d


def _uniform(key, shape, dtype, minval, maxval, op: str):
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    # Types with fewer than 8 mantissa bits draw 8 bits (JAX's rule).
    rng_bits = 8 if nmant < 8 else nbits
    uint = np.dtype(f"uint{nbits}")
    raw = _bits(key, rng_bits, shape, op)
    if rng_bits != nbits:
        raw = ops.convert(raw, uint)
    one_bits = np.array(1.0, dtype).view(uint)
    mantissa = ops.binary(
        "shift-right-logical", raw, asarray(np.array(rng_bits - nmant, uint)), op_name="shift_right"
    )
    float_bits = ops.binary("or", mantissa, asarray(one_bits), op_name="or")
    from uir._src.lax.lax import bitcast_convert_type

    floats = ops.binary(
        "subtract", bitcast_convert_type(float_bits, dtype), asarray(np.array(1.0, dtype))
    )
    lo = ops.convert(asarray(minval), dtype)
    hi = ops.convert(asarray(maxval), dtype)
    scaled = _add(ops.binary("multiply", floats, ops.binary("subtract", hi, lo)), lo)
    scaled = ops.broadcast_to(scaled, shape) if scaled.shape != tuple(shape) else scaled
    return ops.binary("maximum", lo, scaled, op_name="max")


@eager
def uniform(key, shape: Sequence[int] = (), dtype=None, minval=0.0, maxval=1.0):
    """Floats uniform in [minval, maxval)."""
    d = _float_dtype(dtype, "uniform")
    return _uniform(key, _shape(shape, "uniform"), d, minval, maxval, "uniform")


def _erf_inv(x):
    from uir._src.lax.special import erf_inv

    return erf_inv(x)


@eager
def normal(key, shape: Sequence[int] = (), dtype=None):
    """Standard normal floats."""
    d = _float_dtype(dtype, "normal")
    lo = np.nextafter(np.array(-1.0, d), np.array(0.0, d))
    u = _uniform(key, _shape(shape, "normal"), d, lo, np.array(1.0, d), "normal")
    return ops.binary("multiply", asarray(np.array(np.sqrt(2), d)), _erf_inv(u))


@eager
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats truncated to (lower, upper)."""

    d = _float_dtype(dtype, "truncated_normal")
    lower, upper = ops.convert(asarray(lower), d), ops.convert(asarray(upper), d)
    out_shape = (
        ops.broadcast_shapes("truncated_normal", lower.shape, upper.shape)
        if shape is None
        else _shape(shape, "truncated_normal")
    )
    sqrt2 = asarray(np.array(np.sqrt(2), d))
    a = ufuncs.erf(ops.binary("divide", lower, sqrt2))
    b = ufuncs.erf(ops.binary("divide", upper, sqrt2))
    u = _uniform(key, out_shape, d, a, b, "truncated_normal")
    out = ops.binary("multiply", sqrt2, _erf_inv(u))
    return ufuncs.clip(
        out,
        ufuncs.nextafter(lower, asarray(np.array(np.inf, d))),
        ufuncs.nextafter(upper, asarray(np.array(-np.inf, d))),
    )


def _mode(mode, op: str) -> str:
    if mode is None:
        return "low"
    if mode not in ("low", "high"):
        fail(op, f"mode must be 'low' or 'high', got {mode!r}")
    return mode


@eager(static=("shape", "mode"))
def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Booleans, True with probability p; mode 'high' draws twice the bits,
    right for p below 2^-mantissa too."""

    mode = _mode(mode, "bernoulli")
    p = asarray(p)
    if not dtypes.is_float(p.dtype):
        p = ops.convert(p, dtypes.default_float())
    out_shape = p.shape if shape is None else _shape(shape, "bernoulli")
    if mode == "low":
        return ufuncs.less(_uniform(key, out_shape, p.dtype, 0.0, 1.0, "bernoulli"), p)
    both = _uniform(key, (2, *out_shape), p.dtype, 0.0, 1.0, "bernoulli")
    fine = ufuncs.multiply(both[1], float(2.0 ** -dtypes.finfo(p.dtype).nmant))
    return ufuncs.less(fine, ufuncs.subtract(p, both[0]))


@eager
def exponential(key, shape: Sequence[int] = (), dtype=None):
    """Exponential floats of rate 1: -log1p(-u)."""

    d = _float_dtype(dtype, "exponential")
    u = _uniform(key, _shape(shape, "exponential"), d, 0.0, 1.0, "exponential")
    return ufuncs.negative(ufuncs.log1p(ufuncs.negative(u)))


def _gumbel(key, shape, d, mode: str):
    info = dtypes.finfo(d)
    if mode == "low":
        tiny = np.array(info.tiny, d)
        u = _uniform(key, shape, d, tiny, np.array(1.0, d), "gumbel")
        return ufuncs.negative(ufuncs.log(ufuncs.negative(ufuncs.log(u))))
    # 'high': a second uniform refines the first below 1/2, so that the
    # smallest draws (the largest Gumbel values) are not rounded to 0.
    both = _uniform(key, (2, *shape), d, 0.0, 1.0, "gumbel")
    high, low = both[0], both[1]
    refined = ufuncs.add(
        ufuncs.add(high, ufuncs.multiply(low, float(2.0**-info.nmant))), float(info.tiny)
    )
    x = ufuncs.where(ufuncs.greater_equal(high, 0.5), high, refined).astype(d)
    return ufuncs.negative(ufuncs.log(ufuncs.negative(ufuncs.log1p(ufuncs.negative(x)))))


@eager(static=("shape", "dtype", "mode"))
def gumbel(key, shape: Sequence[int] = (), dtype=None, mode=None):
    """Standard Gumbel floats: -log(-log(u)), u uniform in [tiny, 1); mode
    'high' draws twice the bits for the far tail."""

    d = _float_dtype(dtype, "gumbel")
    return _gumbel(key, _shape(shape, "gumbel"), d, _mode(mode, "gumbel"))


@eager(static=("axis", "shape", "replace", "mode"))
def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None):
    """Indices drawn with probabilities softmax(logits) along `axis`: the
    argmax of logits plus Gumbel noise, as JAX draws them; without
    replacement, the top k of one noisy draw (the Gumbel top-k trick), k
    the product of shape's leading dimensions."""

    mode = _mode(mode, "categorical")
    logits = asarray(logits)
    ax = ops.normalize_axis(axis, logits.ndim, "categorical")
    if not replace:
        return _categorical_without_replacement(key, logits, ax, shape, mode)
    batch = tuple(s for i, s in enumerate(logits.shape) if i != ax)
    if shape is None:
        shape = batch
    else:
        shape = _shape(shape, "categorical")
        if shape[len(shape) - len(batch) :] != batch:
            fail("categorical", f"shape {shape} must end with the batch shape {batch}")
    prefix = shape[: len(shape) - len(batch)]
    full = [*shape[len(shape) - len(batch) :]]
    full.insert(ax, logits.shape[ax])
    noise = _gumbel(key, (*prefix, *full), _float_dtype(logits.dtype, "categorical"), mode)
    expanded = ops.reshape(logits, (1,) * len(prefix) + logits.shape)
    return reductions.argmax(_add(noise, expanded), axis=ax - logits.ndim if ax >= 0 else ax)


def _categorical_without_replacement(key, logits, ax: int, shape, mode: str):
    from uir._src.lax.lax import top_k

    batch = tuple(s for i, s in enumerate(logits.shape) if i != ax)
    shape = batch if shape is None else _shape(shape, "categorical")
    if shape[len(shape) - len(batch) :] != batch:
        fail("categorical", f"shape {shape} must end with the batch shape {batch}")
    prefix = shape[: len(shape) - len(batch)]
    k = math.prod(prefix)
    if k > logits.shape[ax]:
        fail(
            "categorical",
            f"cannot draw {k} samples without replacement from {logits.shape[ax]} categories",
        )
    noisy = _add(
        logits, _gumbel(key, logits.shape, _float_dtype(logits.dtype, "categorical"), mode)
    )
    _, index = top_k(ops.moveaxis(noisy, ax, -1), k)  # batch + (k,)
    index = ops.moveaxis(index, -1, 0)  # (k,) + batch
    return ops.reshape(index, shape)


def _param_shape(shape, *params, op: str):
    """`shape`, or the parameters' broadcast shape when it is None."""
    if shape is not None:
        return _shape(shape, op)
    return ops.broadcast_shapes(op, *[asarray(p).shape for p in params])


@eager
def cauchy(key, shape: Sequence[int] = (), dtype=None):
    """Standard Cauchy floats: tan(pi (u - 1/2)), u uniform in [eps, 1)."""

    d = _float_dtype(dtype, "cauchy")
    u = _uniform(key, _shape(shape, "cauchy"), d, dtypes.finfo(d).eps, 1.0, "cauchy")
    return ufuncs.tan(
        ops.binary(
            "multiply",
            asarray(np.array(np.pi, d)),
            ops.binary("subtract", u, asarray(np.array(0.5, d))),
        )
    )


@eager
def laplace(key, shape: Sequence[int] = (), dtype=None):
    """Standard Laplace floats: sign(u) log1p(-|u|), u uniform in (-1, 1)."""

    d = _float_dtype(dtype, "laplace")
    u = _uniform(key, _shape(shape, "laplace"), d, -1.0 + dtypes.finfo(d).epsneg, 1.0, "laplace")
    return ops.binary("multiply", ufuncs.sign(u), ufuncs.log1p(ufuncs.negative(ufuncs.abs(u))))


@eager
def logistic(key, shape: Sequence[int] = (), dtype=None):
    """Standard logistic floats: log(u) - log1p(-u)."""

    d = _float_dtype(dtype, "logistic")
    u = _uniform(key, _shape(shape, "logistic"), d, dtypes.finfo(d).tiny, 1.0, "logistic")
    return ops.binary("subtract", ufuncs.log(u), ufuncs.log1p(ufuncs.negative(u)))


@eager
def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """exp(sigma * a standard normal)."""

    d = _float_dtype(dtype, "lognormal")
    out_shape = _param_shape(shape, sigma, op="lognormal")
    return ufuncs.exp(
        ops.binary("multiply", normal(key, out_shape, d), ops.convert(asarray(sigma), d))
    )


@eager
def pareto(key, b, shape=None, dtype=None):
    """Pareto floats of index b: exp(exponential / b)."""

    d = _float_dtype(dtype, "pareto")
    out_shape = _param_shape(shape, b, op="pareto")
    return ufuncs.exp(
        ops.binary("divide", exponential(key, out_shape, d), ops.convert(asarray(b), d))
    )


@eager
def rademacher(key, shape: Sequence[int] = (), dtype=None):
    """-1 or 1, each with probability 1/2."""
    d = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    b = ops.convert(bernoulli(key, 0.5, _shape(shape, "rademacher")), d)
    return ops.convert(
        ops.binary(
            "subtract", ops.binary("multiply", asarray(np.array(2, d)), b), asarray(np.array(1, d))
        ),
        d,
    )


@eager
def maxwell(key, shape: Sequence[int] = (), dtype=None):
    """One-sided Maxwell floats: the norm of three standard normals."""

    d = _float_dtype(dtype, "maxwell")
    n = normal(key, (*_shape(shape, "maxwell"), 3), d)
    return ufuncs.sqrt(reductions.sum(ops.binary("multiply", n, n), axis=-1))


@eager
def double_sided_maxwell(key, loc, scale, shape: Sequence[int] = (), dtype=None):
    """Maxwell floats with a random sign, scaled and shifted."""
    d = _float_dtype(dtype, "double_sided_maxwell")
    params = ops.broadcast_shapes("double_sided_maxwell", asarray(loc).shape, asarray(scale).shape)
    out_shape = (*_shape(shape, "double_sided_maxwell"), *params) if shape else params
    keys = split(key)
    m = maxwell(ops.reshape(_slice_row(keys, 0), (2,)), out_shape, d)
    sign = rademacher(ops.reshape(_slice_row(keys, 1), (2,)), out_shape, d)
    scaled = ops.binary("multiply", ops.binary("multiply", sign, m), ops.convert(asarray(scale), d))
    return ops.binary("add", scaled, ops.convert(asarray(loc), d))


@eager
def weibull_min(key, scale, concentration, shape: Sequence[int] = (), dtype=None):
    """Weibull floats: (-log1p(-u)) ** (1 / concentration) * scale."""

    d = _float_dtype(dtype, "weibull_min")
    u = _uniform(key, _shape(shape, "weibull_min"), d, 0.0, 1.0, "weibull_min")
    base = ufuncs.negative(ufuncs.log1p(ufuncs.negative(u)))
    return ufuncs.multiply(
        ufuncs.power(base, ufuncs.divide(1.0, ops.convert(asarray(concentration), d))),
        ops.convert(asarray(scale), d),
    )


@eager
def rayleigh(key, scale=1.0, shape=None, dtype=None):
    """Rayleigh floats: scale * sqrt(-2 log u)."""

    d = _float_dtype(dtype, "rayleigh")
    out_shape = _param_shape(shape, scale, op="rayleigh")
    u = _uniform(key, out_shape, d, 0.0, 1.0, "rayleigh")
    root = ufuncs.sqrt(ops.binary("multiply", ufuncs.log(u), asarray(np.array(-2, d))))
    return ops.binary("multiply", ops.broadcast_to(ops.convert(asarray(scale), d), out_shape), root)


@eager
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats of the given mean, by Michael, Schucany and Haas."""

    d = _float_dtype(dtype, "wald")
    out_shape = _param_shape(shape, mean, op="wald")
    keys = split(key)
    mu = ops.broadcast_to(ops.convert(asarray(mean), d), out_shape)
    v = normal(ops.reshape(_slice_row(keys, 0), (2,)), out_shape, d)
    z = _uniform(ops.reshape(_slice_row(keys, 1), (2,)), out_shape, d, 0.0, 1.0, "wald")
    y = v * v
    mu2 = mu * mu
    x = mu + mu2 * y / 2 - mu / 2 * ufuncs.sqrt(4 * mu * y + mu2 * (y * y))
    return ufuncs.where(z <= mu / (mu + x), x, mu2 / x)


@eager
def geometric(key, p, shape=None, dtype=None):
    """The number of Bernoulli(p) trials up to the first success (>= 1)."""

    p = asarray(p)
    if not dtypes.is_float(p.dtype):
        p = ops.convert(p, dtypes.default_float())
    out_shape = _param_shape(shape, p, op="geometric")
    u = _uniform(key, out_shape, p.dtype, 0.0, 1.0, "geometric")
    u = ufuncs.where(ufuncs.equal(u, 0), 1, u)
    g = (
        ufuncs.floor(
            ufuncs.divide(
                ufuncs.log(u),
                ops.broadcast_to(ufuncs.log1p(ufuncs.negative(p)), out_shape),
            )
        )
        + 1
    )
    return ops.convert(g, dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype))


@eager
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] peaking at mode, by inverting the CDF."""

    d = _float_dtype(dtype, "triangular")
    out_shape = _param_shape(shape, left, mode, right, op="triangular")
    lo, mo, hi = (
        ops.broadcast_to(ops.convert(asarray(v), d), out_shape) for v in (left, mode, right)
    )
    fc = (mo - lo) / (hi - lo)
    u = _uniform(key, out_shape, d, 0.0, 1.0, "triangular")
    below = lo + ufuncs.sqrt(u * (hi - lo) * (mo - lo))
    above = hi - ufuncs.sqrt((1 - u) * (hi - lo) * (hi - mo))
    return ufuncs.where(u < fc, below, above)


# --- the gamma family -------------------------------------------------------------


def _gamma_one_plus(key, alpha, shape, d):
    """Gamma(alpha) draws for alpha >= 1 by Marsaglia and Tsang's squeeze
    (2000): every element draws (normal, uniform) pairs from keys folded
    with a round counter until it is accepted; the loop runs until all are."""

    one_third = np.array(1 / 3, d)
    dd = alpha - one_third
    c = one_third / ufuncs.sqrt(dd)

    def body(state):
        i, out, done = state
        k = fold_in(key, i)
        keys = split(k)
        x = normal(ops.reshape(_slice_row(keys, 0), (2,)), shape, d)
        u = _uniform(ops.reshape(_slice_row(keys, 1), (2,)), shape, d, 0.0, 1.0, "gamma")
        v = (1 + c * x) ** 3
        ok = (v > 0) & (
            ufuncs.log(ufuncs.where(u > 0, u, 1))
            < 0.5 * x * x + dd - dd * v + dd * ufuncs.log(ufuncs.where(v > 0, v, 1))
        )
        take = ok & ufuncs.logical_not(done)
        return i + 1, ufuncs.where(take, dd * v, out), done | ok

    def cond(state):
        return ufuncs.logical_not(reductions.all(state[2]))

    zero = ops.broadcast_to(asarray(np.zeros((), d)), shape)
    none = ops.broadcast_to(asarray(np.zeros((), np.bool_)), shape)
    _, out, _ = control_flow.while_loop(cond, body, (asarray(np.int32(0)), zero, none))
    return out


def _log_gamma_draw(key, a, shape, d):
    """log of Gamma(a) draws, accurate for small a: Gamma(a) = Gamma(a + 1) U^(1/a)."""

    keys = split(key)
    boosted = ufuncs.where(a < 1, a + 1, a)
    g = _gamma_one_plus(ops.reshape(_slice_row(keys, 0), (2,)), boosted, shape, d)
    u = _uniform(
        ops.reshape(_slice_row(keys, 1), (2,)), shape, d, dtypes.finfo(d).tiny, 1.0, "gamma"
    )
    return ufuncs.log(g) + ufuncs.where(a < 1, ufuncs.log(u) / a, 0)


def _alpha(a, shape, op: str, d):
    a = ops.convert(asarray(a), d)
    return ops.broadcast_to(a, shape)


@eager
def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats (Marsaglia and Tsang; a < 1 boosted)."""

    d = _float_dtype(dtype, "gamma")
    out_shape = _param_shape(shape, a, op="gamma")
    return ufuncs.exp(_log_gamma_draw(key, _alpha(a, out_shape, "gamma", d), out_shape, d))


@eager
def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, accurate where a is small."""
    d = _float_dtype(dtype, "loggamma")
    out_shape = _param_shape(shape, a, op="loggamma")
    return _log_gamma_draw(key, _alpha(a, out_shape, "loggamma", d), out_shape, d)


@eager
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square floats with df degrees of freedom: 2 Gamma(df / 2)."""
    d = _float_dtype(dtype, "chisquare")
    out_shape = _param_shape(shape, df, op="chisquare")
    return 2 * gamma(
        key, ops.broadcast_to(ops.convert(asarray(df), d) / 2, out_shape), out_shape, d
    )


@eager
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F floats: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)."""
    d = _float_dtype(dtype, "f")
    out_shape = _param_shape(shape, dfnum, dfden, op="f")
    keys = split(key)
    num = chisquare(ops.reshape(_slice_row(keys, 0), (2,)), dfnum, out_shape, d)
    den = chisquare(ops.reshape(_slice_row(keys, 1), (2,)), dfden, out_shape, d)
    return (num / ops.convert(asarray(dfnum), d)) / (den / ops.convert(asarray(dfden), d))


@eager
def t(key, df, shape=(), dtype=None):
    """Student's t floats: normal / sqrt(chisquare(df) / df)."""

    d = _float_dtype(dtype, "t")
    out_shape = _param_shape(shape, df, op="t") if shape is not None else asarray(df).shape
    keys = split(key)
    z = normal(ops.reshape(_slice_row(keys, 0), (2,)), out_shape, d)
    c = chisquare(ops.reshape(_slice_row(keys, 1), (2,)), df, out_shape, d)
    return z / ufuncs.sqrt(c / ops.convert(asarray(df), d))


@eager
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats: X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b), in logs."""

    d = _float_dtype(dtype, "beta")
    out_shape = _param_shape(shape, a, b, op="beta")
    keys = split(key)
    la = loggamma(ops.reshape(_slice_row(keys, 0), (2,)), a, out_shape, d)
    lb = loggamma(ops.reshape(_slice_row(keys, 1), (2,)), b, out_shape, d)
    m = ufuncs.maximum(la, lb)
    return ufuncs.exp(la - m) / (ufuncs.exp(la - m) + ufuncs.exp(lb - m))


@eager
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) floats: normalized Gamma(alpha_i) draws over the last axis."""

    d = _float_dtype(dtype, "dirichlet")
    alpha = ops.convert(asarray(alpha), d)
    if alpha.ndim < 1:
        fail("dirichlet", "alpha needs at least one dimension")
    batch = alpha.shape[:-1] if shape is None else _shape(shape, "dirichlet")
    out_shape = (*batch, alpha.shape[-1])
    lg = loggamma(key, ops.broadcast_to(alpha, out_shape), out_shape, d)
    lg = lg - reductions.max(lg, axis=-1, keepdims=True)
    g = ufuncs.exp(lg)
    return g / reductions.sum(g, axis=-1, keepdims=True)


@eager
def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats of shape parameter p: sign * Gamma(1/p)^(1/p)."""

    d = _float_dtype(dtype, "generalized_normal")
    out_shape = _shape(shape, "generalized_normal")
    pp = ops.convert(asarray(p), d)
    keys = split(key)
    g = gamma(
        ops.reshape(_slice_row(keys, 0), (2,)), ops.broadcast_to(1 / pp, out_shape), out_shape, d
    )
    sign = rademacher(ops.reshape(_slice_row(keys, 1), (2,)), out_shape, d)
    return sign * g ** (1 / pp)


@eager
def ball(key, d: int, p: float = 2, shape=(), dtype=None):
    """Points uniform in the unit p-ball of dimension d."""

    dt = _float_dtype(dtype, "ball")
    out_shape = _shape(shape, "ball")
    keys = split(key)
    g = generalized_normal(ops.reshape(_slice_row(keys, 0), (2,)), p, (*out_shape, d), dt)
    e = exponential(ops.reshape(_slice_row(keys, 1), (2,)), out_shape, dt)
    return g / (
        reductions.sum(ufuncs.abs(g) ** p, axis=-1, keepdims=True) + ops.reshape(e, (*e.shape, 1))
    ) ** (1 / p)


@eager
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Normal vectors of `mean` and covariance `cov` (factored by cholesky, eigh or svd)."""
    from uir._src.lax import linalg as lax_linalg
    from uir._src.numpy import linalg as np_linalg

    d = _float_dtype(dtype, "multivariate_normal")
    mean, cov = ops.convert(asarray(mean), d), ops.convert(asarray(cov), d)
    n = mean.shape[-1]
    batch = ops.broadcast_shapes("multivariate_normal", mean.shape[:-1], cov.shape[:-2])
    out_shape = (*batch, n) if shape is None else (*_shape(shape, "multivariate_normal"), n)
    if method == "cholesky":
        factor = lax_linalg.cholesky(cov)
    elif method == "eigh":
        w, v = np_linalg.np_eigh(cov)
        factor = v * ufuncs.sqrt(ufuncs.maximum(w, 0))
    elif method == "svd":
        u, s, _ = np_linalg.np_svd(cov)
        factor = u * ufuncs.sqrt(s)
    else:
        fail("multivariate_normal", f"method must be 'cholesky', 'eigh' or 'svd', got {method!r}")
    z = normal(key, out_shape, d)
    return mean + products.matmul(z, manipulation.swapaxes(factor, -1, -2))


@eager
def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None):
    """Matrices uniform on the orthogonal group O(n) (semi-orthogonal n x m):
    the QR of a normal matrix with r's diagonal signs moved into q."""
    from uir._src.numpy import linalg as np_linalg

    d = _float_dtype(dtype, "orthogonal")
    batch = _shape(shape, "orthogonal")
    cols = n if m is None else m
    z = normal(key, (*batch, max(n, cols), min(n, cols)), d)
    q, r = np_linalg.np_qr(z)
    signs = ufuncs.sign(creation.diagonal(r, axis1=-2, axis2=-1))
    q = q * manipulation.expand_dims(ufuncs.where(signs == 0, 1, signs), -2)
    return q if n >= cols else manipulation.swapaxes(q, -1, -2)


# --- integers -----------------------------------------------------------------------


def _clip_to(x, dtype):
    """`x` converted to integer `dtype`, clipped to its range first."""

    info = np.iinfo(dtype)
    if (
        dtypes.is_int(x.dtype)
        and np.iinfo(x.dtype).min >= info.min
        and np.iinfo(x.dtype).max <= info.max
    ):
        return ops.convert(x, dtype)
    lo = asarray(
        np.array(
            max(info.min, np.iinfo(x.dtype).min if dtypes.is_int(x.dtype) else info.min), x.dtype
        )
    )
    hi = asarray(
        np.array(
            min(info.max, np.iinfo(x.dtype).max if dtypes.is_int(x.dtype) else info.max), x.dtype
        )
    )
    return ops.convert(ufuncs.clip(x, lo, hi), dtype)


@eager
def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in [minval, maxval), as JAX draws them: two draws of
    bits combined modulo the span, so small biases stay small."""

    dtype = dtypes.canonicalize(dtypes.default_int() if dtype is None else dtype)
    if not dtypes.is_int(dtype):
        fail("randint", f"dtype must be an integer type, got {dtype}")
    shape = _shape(shape, "randint")
    minval, maxval = asarray(minval), asarray(maxval)
    if not dtypes.is_int(minval.dtype):
        minval = ops.convert(minval, dtype)
    if not dtypes.is_int(maxval.dtype):
        maxval = ops.convert(maxval, dtype)
    info = np.iinfo(dtype)
    top = (
        asarray(np.array(info.max, maxval.dtype))
        if np.iinfo(maxval.dtype).max >= info.max
        else None
    )
    out_of_range = ufuncs.greater(maxval, top) if top is not None else None
    minval, maxval = _clip_to(minval, dtype), _clip_to(maxval, dtype)
    minval = ops.broadcast_to(minval, shape)
    maxval = ops.broadcast_to(maxval, shape)
    nbits = info.bits
    keys = split(key)
    higher = _bits(ops.reshape(_slice_row(keys, 0), (2,)), nbits, shape, "randint")
    lower = _bits(ops.reshape(_slice_row(keys, 1), (2,)), nbits, shape, "randint")
    unsigned = np.dtype(f"uint{nbits}")
    span = ops.convert(ops.binary("subtract", maxval, minval), unsigned)
    one = asarray(np.ones((), unsigned))
    span = ops.select(ufuncs.less_equal(maxval, minval), ops.broadcast_to(one, shape), span)
    if out_of_range is not None:
        grow = ufuncs.logical_and(
            ops.broadcast_to(out_of_range, shape), ufuncs.greater(maxval, minval)
        )
        span = ops.select(grow, _add(span, ops.broadcast_to(one, shape)), span)
    half = asarray(np.array(2 ** (nbits // 2), unsigned))
    multiplier = ops.binary("remainder", ops.broadcast_to(half, shape), span)
    multiplier = ops.binary("remainder", ops.binary("multiply", multiplier, multiplier), span)
    offset = _add(
        ops.binary("multiply", ops.binary("remainder", higher, span), multiplier),
        ops.binary("remainder", lower, span),
    )
    offset = ops.binary("remainder", offset, span)
    return _add(minval, ops.convert(offset, dtype))


def _slice_row(keys, i: int):
    from uir._src.numpy.manipulation import slice_static

    return slice_static(keys, [i, 0], [i + 1, 2], [1, 1])


def _shuffle(key, x, axis: int):
    """JAX's shuffle: rounds of sorting by fresh 32-bit keys, enough rounds
    that ties are unlikely (3 log(n) / log(2**32 - 1))."""
    from uir._src.numpy.sorting import _sort

    size = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = split(key)
        key = ops.reshape(_slice_row(keys, 0), (2,))
        subkey = ops.reshape(_slice_row(keys, 1), (2,))
        sort_keys = _bits(subkey, 32, x.shape, "permutation")
        _, x = _sort([sort_keys, x], axis, num_keys=1, name="permutation")
    return x


@eager
def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of range(x) for an int x, else of x along `axis`
    (each slice on its own with `independent`)."""
    from uir._src.numpy.indexing import _take as take

    if isinstance(x, (int, np.integer)):
        return _shuffle(key, ops.iota(dtypes.default_int(), (int(x),), 0), 0)
    x = asarray(x)
    if not x.ndim:
        fail("permutation", "x must be an int or an array of at least one dimension")
    ax = ops.normalize_axis(axis, x.ndim, "permutation")
    if independent or x.ndim == 1:
        return _shuffle(key, x, ax)
    order = _shuffle(key, ops.iota(dtypes.default_int(), (x.shape[ax],), 0), 0)
    return take(x, order, axis=ax)


@eager(static=("shape", "replace", "axis", "mode"))
def choice(
    key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0, mode=None
):
    """Draws from a (an int n: range(n); an array: its slices along axis),
    with or without replacement, uniformly or with probabilities p (with
    replacement: the inverse of p's running sum; without: the Gumbel top-k
    trick)."""
    from uir._src.numpy.indexing import _take as take
    from uir._src.numpy.manipulation import slice_static

    shape = _shape(shape, "choice")
    if isinstance(a, (int, np.integer)):
        n = int(a)
        arr = None
    else:
        arr = asarray(a)
        if not arr.ndim:
            fail("choice", "a must be an int or an array of at least one dimension")
        n = arr.shape[ops.normalize_axis(axis, arr.ndim, "choice")]
    draws = math.prod(shape)
    if n <= 0 and draws:
        fail("choice", "a must be positive or a non-empty array")
    mode = _mode(mode, "choice")
    if p is not None:
        index = _choice_weighted(key, asarray(p), n, shape, replace, draws, mode)
    elif replace:
        index = randint(key, shape, 0, n)
    else:
        if draws > n:
            fail(
                "choice",
                f"cannot take a larger sample ({draws}) than the population ({n}) without replacement",
            )
        perm = permutation(key, n)
        index = ops.reshape(
            slice_static(perm, [0], [draws], [1]),
            shape,
        )
    if arr is None:
        return index
    return take(arr, index, axis=axis)


def _choice_weighted(key, p, n: int, shape, replace: bool, draws: int, mode: str):
    from uir._src.lax.lax import top_k
    from uir._src.numpy.searching import searchsorted

    if p.shape != (n,):
        fail("choice", f"p must be a vector of a's {n} entries along axis, got {ops.describe(p)}")
    if not dtypes.is_float(p.dtype):
        p = ops.convert(p, dtypes.default_float())
    if replace:
        running = reductions.cumsum(p)
        u = _uniform(key, shape, p.dtype, 0.0, 1.0, "choice")
        target = ufuncs.multiply(running[-1], ufuncs.subtract(1, u))
        return searchsorted(running, target).astype(dtypes.default_int())
    if draws > n:
        fail(
            "choice",
            f"cannot take a larger sample ({draws}) than the population ({n}) without replacement",
        )
    noisy = _add(_gumbel(key, (n,), p.dtype, mode), ufuncs.log(p))
    _, index = top_k(noisy, draws)
    return ops.reshape(index.astype(dtypes.default_int()), shape)


__all__ = [
    "ball",
    "bernoulli",
    "beta",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "rademacher",
    "randint",
    "rayleigh",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
]
