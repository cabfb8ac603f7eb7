"""uir.random's counting distributions, on JAX's algorithms and key splits:
poisson (Knuth's product of uniforms below 10, Hoermann's transformed
rejection above), binomial (geometric inversion where n min(p, 1 - p) <= 10,
Hoermann's BTRS above) and multinomial (a binomial per outcome over the
remaining count, in a scan)."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax import control_flow
from uir._src.numpy import creation, manipulation, reductions, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.util import public_asarray
from uir._src.random.distributions import uniform
from uir._src.random.prng import _check_key, _shape, split


def _int_dtype(dtype, op: str) -> np.dtype:
    d = np.dtype(dtypes.default_int()) if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_int(d):
        fail(op, f"dtype must be an integer type, got {d}")
    return d


def _knuth(key, lam, shape, dtype, max_iters):
    """Knuth: the number of uniforms whose product stays above exp(-lam),
    minus one; each step splits the key and draws one uniform array."""

    def cond(carry):
        i, _, _, log_prod = carry
        return reductions.any(log_prod > -lam) & (i < max_iters)

    def body(carry):
        i, k, rng, log_prod = carry
        keys = split(rng)
        k = ufuncs.where(log_prod > -lam, k + 1, k)
        u = uniform(keys[1], shape, np.float32)
        return i + 1, k, keys[0], log_prod + ufuncs.log(u)

    start = (
        public_asarray(np.int32(0)),
        creation.zeros(shape, dtype),
        key,
        creation.zeros(shape, np.float32),
    )
    k = control_flow.while_loop(cond, body, start)[1]
    return (k - 1).astype(dtype)


def _until_accepted(key, shape, dtype, max_iters, propose):
    """JAX's rejection loop: each step splits the key in three, draws
    uniforms u and v of `dtype` from the second and third keys and takes
    propose(u, v) -> (k, accept); an element holds its last accepted k (a
    later acceptance overwrites an earlier one, as in JAX), and the loop
    runs until every element has accepted once."""

    def cond(carry):
        i, _, accepted, _ = carry
        return reductions.any(~accepted) & (i < max_iters)

    def body(carry):
        i, k_out, accepted, rng = carry
        keys = split(rng, 3)
        k, accept = propose(uniform(keys[1], shape, dtype), uniform(keys[2], shape, dtype))
        return i + 1, ufuncs.where(accept, k, k_out), accepted | accept, keys[0]

    start = (
        public_asarray(np.int32(0)),
        creation.full(shape, -1, dtype),
        creation.zeros(shape, np.bool_),
        key,
    )
    return control_flow.while_loop(cond, body, start)[1]


def _rejection(key, lam, shape, dtype, max_iters):
    """Hoermann's transformed rejection (PTRS) for large lam."""
    from uir._src.lax.special import lgamma

    log_lam = ufuncs.log(lam)
    b = 0.931 + 2.53 * ufuncs.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(u, v):
        u = u - 0.5
        us = 0.5 - ufuncs.abs(u)
        k = ufuncs.floor((2 * a / us + b) * u + lam + 0.43)
        s = ufuncs.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        return k, accept1 | (~reject & (s <= t))

    return _until_accepted(key, shape, lam.dtype, max_iters, propose).astype(dtype)


@eager
def poisson(key, lam, shape=None, dtype=None):
    """Poisson counts with rate lam (int32 by default), JAX's draws: Knuth's
    algorithm where lam < 10 (or NaN), transformed rejection elsewhere,
    0 where lam is 0."""
    key = _check_key(key, "poisson")
    d = _int_dtype(dtype, "poisson")
    lam = asarray(lam)
    shape = tuple(lam.shape) if shape is None else _shape(shape, "poisson")
    lam = manipulation.broadcast_to(lam, shape).astype(np.float32)
    use_knuth = ufuncs.isnan(lam) | (lam < 10)
    max_iters = min(int(np.iinfo(d).max), int(np.iinfo(np.int32).max))  # the loop counter is int32
    knuth = _knuth(key, ufuncs.where(use_knuth, lam, 0.0), shape, d, max_iters)
    rejection = _rejection(key, ufuncs.where(use_knuth, 1e5, lam), shape, d, max_iters)
    out = ufuncs.where(use_knuth, knuth, rejection)
    return ufuncs.where(lam == 0, creation.zeros_like(out), out)


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k):
    """log k! minus its Stirling approximation: a table to 9, a series
    above."""
    table = public_asarray(np.asarray(_STIRLING_TAIL, np.dtype(k.dtype)))
    small = k <= 9
    k = ufuncs.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    index = ufuncs.floor(k).astype(np.int32)
    return ufuncs.where(small, np_indexing._take(table, index), approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    """The number of geometric(prob) gaps that fit in count draws."""

    log1m = ufuncs.log1p(-prob)

    def cond(carry):
        i, _, geom_sum, _ = carry
        return reductions.any(geom_sum <= count) & (i < max_iters)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        keys = split(rng)
        num_geom = ufuncs.where(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(keys[0], shape, prob.dtype)
        geom = ufuncs.ceil(ufuncs.log(u) / log1m)
        return i + 1, num_geom, geom_sum + geom, keys[1]

    zeros = creation.zeros(shape, prob.dtype)
    start = (public_asarray(np.int32(0)), zeros, zeros, key)
    k = control_flow.while_loop(cond, body, start)[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    """Hoermann's BTRS (transformed rejection with squeeze)."""
    stddev = ufuncs.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = ufuncs.floor((count + 1) * prob)

    def propose(u, v):
        u = u - 0.5
        us = 0.5 - ufuncs.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = ufuncs.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = ufuncs.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * ufuncs.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * ufuncs.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * ufuncs.log(r * (count - k + 1) / (k + 1))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(count - k)
        )
        return k, accept1 | (~reject & (v <= ub))

    return _until_accepted(key, shape, prob.dtype, max_iters, propose).astype(dtype)


@eager
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial counts of n trials with success probability p, as floats
    (JAX's draws): inversion where n min(p, 1 - p) <= 10, BTRS elsewhere;
    NaN for a negative or NaN n or an invalid p, inf for an infinite n."""
    key = _check_key(key, "binomial")
    d = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(d):
        fail("binomial", f"dtype must be a float type, got {d}")
    count, prob = asarray(n), asarray(p)
    if not (dtypes.is_float(prob.dtype) or dtypes.is_complex(prob.dtype)):
        prob = prob.astype(dtypes.default_float())
    if shape is None:
        shape = tuple(np.broadcast_shapes(count.shape, prob.shape))
    else:
        shape = _shape(shape, "binomial")
        try:
            if np.broadcast_shapes(shape, count.shape, prob.shape) != shape:
                raise ValueError
        except ValueError:
            fail("binomial", f"shape {shape} does not fit n {count.shape} and p {prob.shape}")
    count = manipulation.broadcast_to(count.astype(prob.dtype), shape)
    prob = manipulation.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = ufuncs.where(p_lt_half, prob, 1.0 - prob)
    count_bad = ufuncs.isnan(count) | (count < 0.0)
    count_inf = ufuncs.isinf(count)
    q_nan, q_neg = ufuncs.isnan(q), q < 0.0
    q = ufuncs.where(q_nan | q_neg, 0.01, q)
    use_inversion = count_bad | (count * q <= 10.0)
    count = ufuncs.floor(count)
    max_iters = int(np.iinfo(np.int32).max)  # "unbounded", as JAX: the loop counter is int32
    samples = ufuncs.where(
        use_inversion,
        _binomial_inversion(key, ufuncs.where(use_inversion, count, 0.0), q, shape, d, max_iters),
        _btrs(
            key,
            ufuncs.where(use_inversion, 1e4, count),
            ufuncs.where(use_inversion, 0.5, q),
            shape,
            d,
            max_iters,
        ),
    )
    invalid = q_neg | q_nan | count_bad
    samples = ufuncs.where(invalid, public_asarray(np.nan, d), samples)
    samples = ufuncs.where(count_inf & ~invalid, public_asarray(np.inf, d), samples)
    keep = p_lt_half | count_bad | q_nan | count_inf
    return ufuncs.where(keep, samples, count.astype(d) - samples)


@eager
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n trials over the outcomes of p (the last axis), as floats:
    a binomial per outcome of the count still left, with its share of the
    probability left (JAX's draws)."""

    del unroll
    key = _check_key(key, "multinomial")
    n, p = asarray(n), asarray(p)
    if not dtypes.is_float(p.dtype):
        p = p.astype(dtypes.default_float())
    n, p = ops.promote("multinomial", n.astype(p.dtype) if not dtypes.is_float(n.dtype) else n, p)
    d = np.dtype(dtypes.default_float()) if dtype is None else dtypes.canonicalize(dtype)
    shape = tuple(p.shape) if shape is None else _shape(shape, "multinomial")
    n = manipulation.broadcast_to(n, shape[:-1])
    p = manipulation.moveaxis(manipulation.broadcast_to(p, shape), -1, 0)
    remaining = manipulation.flip(reductions.cumsum(manipulation.flip(p, 0), axis=0), 0)
    ratios = p / ufuncs.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, ufuncs.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - count, count

    _, counts = control_flow.scan(step, n, (ratios, keys))
    return manipulation.moveaxis(counts, 0, -1).astype(d)


__all__ = [
    "binomial",
    "multinomial",
    "poisson",
]
