"""uir.random against jax.random: the bits JAX 0.10.2 gives for the same
keys (recorded below from jax.random on CPU; a plain list of its outputs),
the distributions' statistics, and the same draws traced and eager.

Keys, split, fold_in, bits, uniform on [0, 1), bernoulli, randint,
permutation, choice and categorical give JAX's bits exactly. Floats made by
arithmetic on the uniform draws (normal through erf_inv, truncated_normal,
exponential, gumbel, scaled uniforms) agree to a few ulp: XLA:CPU contracts
a multiply and an add into one FMA, and has log1p polynomials of its own,
while uir rounds each HLO op as the HLO says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp
import uir.random as ur

# Recorded with jax 0.10.2 (jax.random, default threefry2x32, CPU).
K0 = [0, 0]
KEY_42 = [0, 42]
SPLIT = [[1797259609, 2579123966], [928981903, 3453687069]]
SPLIT5 = [
    [1797259609, 2579123966],
    [928981903, 3453687069],
    [4146024105, 2718843009],
    [2467461003, 3840466878],
    [2285895361, 433833334],
]
FOLD_IN_3 = [2467461003, 3840466878]
FOLD_IN_BIG = [1096428972, 2246797316]  # fold_in(PRNGKey(0), 2**31 - 5)
BITS = [4070199207, 4202968722, 1427181096, 2012915765, 2447653815, 710830403, 1332275837]
BITS_2D = [[2895194379, 4185947648, 1300703658], [1906787632, 3139134342, 2709822315]]  # key 7
UNIFORM_BITS = [
    1064475214,
    1064993846,
    1051337244,
    1055913296,
    1058137146,
    1042905504,
    1050595796,
    1060143564,
]
UNIFORM_BF16_BITS = [16166, 16146, 15904, 15952, 16182, 16004, 16120, 16254]
NORMAL = [
    1.622642159461975,
    2.0252647399902344,
    -0.4335944354534149,
    -0.07861734926700592,
    0.17609089612960815,
    -0.9720892310142517,
    -0.49529874324798584,
    0.49437859654426575,
]
RANDINT = [9, 0, 2, 3, 1, 7, 2, 3, 3, 3]
RANDINT_WIDE = [-354494, -264423, -41818, -301095, -203476, -566848]  # key 3, [-1e6, 7)
PERMUTATION = [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]
CHOICE_NO_REPLACE = [0, 1, 8, 5, 6]
CHOICE = [96, 27, 40, 53, 68, 84]  # key 1, 100, (6,)
BERNOULLI = [0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]
CATEGORICAL = [1, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2]
TRUNCATED_NORMAL = [
    1.5094677209854126,
    1.747393012046814,
    -0.1746756136417389,
    0.10624171793460846,
    0.31906944513320923,
    -0.541344404220581,
]
EXPONENTIAL = [
    2.9501280784606934,
    3.8434245586395264,
    0.4039035439491272,
    0.6323691010475159,
    0.843711256980896,
    0.1809261590242386,
]


def _ulps(got, want):
    """Differences in ulps of the larger of |want| and 1: the transforms
    work on uniforms in [0, 1), whose rounding is on that scale."""
    scale = np.spacing(np.maximum(np.abs(want), np.float32(1)))
    return np.abs(got.astype(np.float64) - want) / scale


def _eq(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(want, dtype))


K = ur.PRNGKey(0)


@pytest.mark.parametrize(
    "seed, want", [(0, K0), (42, KEY_42), (-1, [0, 2**32 - 1]), (2**31 - 1, [0, 2**31 - 1])]
)
def test_keys_of_seeds_are_jaxs(seed, want):
    _eq(ur.PRNGKey(seed), want, np.uint32)
    _eq(ur.key(seed), want, np.uint32)


def test_seeds_that_do_not_fit_32_bits_need_x64():
    with pytest.raises(OverflowError, match="enable_x64"):
        ur.PRNGKey(2**40)
    with pytest.raises(TypeError, match="integer"):
        ur.PRNGKey(1.5)


def test_split_and_fold_in_are_jaxs():
    _eq(ur.split(K), SPLIT, np.uint32)
    _eq(ur.split(K, 5), SPLIT5, np.uint32)
    _eq(ur.fold_in(K, 3), FOLD_IN_3, np.uint32)
    _eq(ur.fold_in(K, 2**31 - 5), FOLD_IN_BIG, np.uint32)


def test_bits_are_jaxs():
    _eq(ur.bits(K, (7,)), BITS, np.uint32)
    _eq(ur.bits(ur.PRNGKey(7), (2, 3)), BITS_2D, np.uint32)


def test_uniform_floats_are_jaxs_bits():
    _eq(np.asarray(ur.uniform(K, (8,))).view(np.uint32), UNIFORM_BITS, np.uint32)
    bf16 = ur.uniform(K, (8,), dtype="bfloat16")
    _eq(np.asarray(bf16).view(np.uint16), UNIFORM_BF16_BITS, np.uint16)


def test_integer_draws_are_jaxs():
    _eq(ur.randint(K, (10,), 0, 10), RANDINT, np.int32)
    _eq(ur.randint(ur.PRNGKey(3), (6,), -1000000, 7), RANDINT_WIDE, np.int32)
    _eq(ur.permutation(K, 10), PERMUTATION, np.int32)
    _eq(ur.choice(K, 10, (5,), replace=False), CHOICE_NO_REPLACE, np.int32)
    _eq(ur.choice(ur.PRNGKey(1), 100, (6,)), CHOICE, np.int32)
    _eq(ur.bernoulli(K, 0.3, (16,)), BERNOULLI, np.bool_)
    logits = np.log(np.array([0.1, 0.2, 0.7], np.float32))
    _eq(ur.categorical(K, logits, shape=(12,)), CATEGORICAL, np.int32)


@pytest.mark.parametrize(
    "draw, want",
    [
        (lambda: ur.normal(K, (8,)), NORMAL),
        (lambda: ur.truncated_normal(K, -1.0, 2.0, (6,)), TRUNCATED_NORMAL),
        (lambda: ur.exponential(K, (6,)), EXPONENTIAL),
    ],
)
def test_float_transforms_are_within_a_few_ulp_of_jax(draw, want):
    got = np.asarray(draw())
    want = np.array(want, np.float32)
    assert got.dtype == np.float32
    assert np.all(_ulps(got, want) <= 4), (got, want)


# --- distributions ------------------------------------------------------------------


def test_uniform_and_normal_have_their_moments():
    u = np.asarray(ur.uniform(ur.PRNGKey(5), (200_000,)), np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    n = np.asarray(ur.normal(ur.PRNGKey(6), (200_000,)), np.float64)
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    assert abs(np.mean(n**3)) < 0.03 and abs(np.mean(n**4) - 3) < 0.06
    scaled = np.asarray(ur.uniform(ur.PRNGKey(7), (10_000,), minval=-3.0, maxval=2.0))
    assert scaled.min() >= -3 and scaled.max() < 2


def test_truncated_normal_stays_inside_its_bounds():
    t = np.asarray(ur.truncated_normal(ur.PRNGKey(8), -0.5, 1.5, (50_000,)))
    assert t.min() > -0.5 and t.max() < 1.5
    # The truncated standard normal's mean on (-0.5, 1.5).
    from math import erf, exp, pi, sqrt

    def pdf(x):
        return exp(-x * x / 2) / sqrt(2 * pi)

    def cdf(x):
        return 0.5 * (1 + erf(x / sqrt(2)))

    mean = (pdf(-0.5) - pdf(1.5)) / (cdf(1.5) - cdf(-0.5))
    assert abs(t.mean() - mean) < 0.01


@given(
    low=st.integers(-(2**31), 2**31 - 2), span=st.integers(1, 2**31), seed=st.integers(0, 2**31 - 1)
)
@settings(max_examples=40, deadline=None)
def test_randint_stays_in_its_range(low, span, seed):
    high = min(low + span, 2**31 - 1)
    r = np.asarray(ur.randint(ur.PRNGKey(seed), (64,), low, high))
    assert r.dtype == np.int32 and r.min() >= low and r.max() < max(high, low + 1)


@given(n=st.integers(1, 300), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=30, deadline=None)
def test_permutations_are_permutations(n, seed):
    p = np.asarray(ur.permutation(ur.PRNGKey(seed), n))
    np.testing.assert_array_equal(np.sort(p), np.arange(n))


def test_choice_without_replacement_draws_distinct_rows():
    rows = np.arange(40, dtype=np.float32).reshape(20, 2)
    got = np.asarray(ur.choice(ur.PRNGKey(9), rows, (7,), replace=False))
    assert got.shape == (7, 2) and len({tuple(r) for r in got.tolist()}) == 7
    assert {tuple(r) for r in got.tolist()} <= {tuple(r) for r in rows.tolist()}
    with pytest.raises(uir.TraceError, match="larger sample"):
        ur.choice(ur.PRNGKey(9), 5, (6,), replace=False)


def test_categorical_and_bernoulli_follow_their_probabilities():
    p = np.array([0.1, 0.2, 0.7], np.float32)
    c = np.asarray(ur.categorical(ur.PRNGKey(10), np.log(p), shape=(60_000,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / c.size, p, atol=0.01)
    b = np.asarray(ur.bernoulli(ur.PRNGKey(11), 0.25, (60_000,)))
    assert abs(b.mean() - 0.25) < 0.01


def test_split_keys_give_independent_streams():
    a, b = np.asarray(ur.split(ur.PRNGKey(12)))
    ua, ub = np.asarray(ur.uniform(a, (5000,))), np.asarray(ur.uniform(b, (5000,)))
    assert abs(np.corrcoef(ua, ub)[0, 1]) < 0.05
    assert not np.array_equal(ua, ub)


# --- traced ---------------------------------------------------------------------------


def test_draws_inside_jit_equal_the_eager_ones():
    @uir.jit
    def f(key):
        k1, k2 = ur.split(key)
        return ur.normal(k1, (4, 3)), ur.randint(k2, (5,), 0, 100), ur.permutation(k2, 8)

    n, r, p = f(K)
    k1, k2 = np.asarray(ur.split(K))
    np.testing.assert_array_equal(n, ur.normal(k1, (4, 3)))
    np.testing.assert_array_equal(r, ur.randint(k2, (5,), 0, 100))
    np.testing.assert_array_equal(p, ur.permutation(k2, 8))


def test_a_loop_folds_its_step_into_the_key():
    from uir import lax

    @uir.jit
    def total(key):
        def body(i, acc):
            return acc + ur.uniform(ur.fold_in(key, i), (3,))

        return lax.fori_loop(0, 4, body, unp.zeros(3, np.float32))

    want = sum(np.asarray(ur.uniform(ur.fold_in(K, i), (3,))) for i in range(4))
    np.testing.assert_allclose(total(K), want, rtol=1e-6)


def test_a_malformed_key_is_refused_naming_the_function():
    with pytest.raises(uir.TraceError, match=r"uniform.*uint32\[2\]"):
        ur.uniform(np.zeros(2, np.int32), (3,))


# --- live against JAX (make test-xla) -------------------------------------------------


@pytest.mark.xla
@pytest.mark.parametrize("seed", [0, 1, 2024])
def test_every_draw_matches_the_installed_jax(seed, jax_x32):
    jax = jax_x32
    jr = jax.random
    jk, uk = jr.PRNGKey(seed), ur.PRNGKey(seed)
    np.testing.assert_array_equal(uk, np.asarray(jk))
    exact = [
        (lambda r, k: r.split(k, 3)),
        (lambda r, k: r.fold_in(k, 17)),
        (lambda r, k: r.bits(k, (4, 5))),
        (lambda r, k: r.uniform(k, (100,))),
        (lambda r, k: r.randint(k, (50,), -5, 50)),
        (lambda r, k: r.permutation(k, 33)),
        (lambda r, k: r.choice(k, 30, (4,), replace=False)),
        (lambda r, k: r.bernoulli(k, 0.4, (40,))),
    ]
    for draw in exact:
        np.testing.assert_array_equal(draw(ur, uk), np.asarray(draw(jr, jk)))
    for draw in [lambda r, k: r.normal(k, (1000,)), lambda r, k: r.gumbel(k, (100,))]:
        got, want = np.asarray(draw(ur, uk)), np.asarray(draw(jr, jk))
        assert np.all(_ulps(got, want) <= 4)


# --- more distributions ---------------------------------------------------------------

N = 100_000


def _draw(fn, *args, **kwargs):
    return np.asarray(fn(ur.PRNGKey(21), *args, **kwargs), np.float64)


@pytest.mark.parametrize(
    "name, draw, median, mean",
    [
        ("cauchy", lambda: _draw(ur.cauchy, (N,)), 0.0, None),
        ("laplace", lambda: _draw(ur.laplace, (N,)), 0.0, 0.0),
        ("logistic", lambda: _draw(ur.logistic, (N,)), 0.0, 0.0),
        ("lognormal", lambda: _draw(ur.lognormal, 0.5, (N,)), 1.0, float(np.exp(0.125))),
        ("pareto", lambda: _draw(ur.pareto, 3.0, (N,)), 2 ** (1 / 3), 1.5),
        ("maxwell", lambda: _draw(ur.maxwell, (N,)), None, 2 * np.sqrt(2 / np.pi)),
        (
            "weibull_min",
            lambda: _draw(ur.weibull_min, 2.0, 1.5, (N,)),
            2 * np.log(2) ** (1 / 1.5),
            None,
        ),
        (
            "rayleigh",
            lambda: _draw(ur.rayleigh, 2.0, (N,)),
            2 * np.sqrt(2 * np.log(2)),
            2 * np.sqrt(np.pi / 2),
        ),
        ("wald", lambda: _draw(ur.wald, 1.5, (N,)), None, 1.5),
        ("geometric", lambda: _draw(ur.geometric, 0.3, (N,)), None, 1 / 0.3),
        ("triangular", lambda: _draw(ur.triangular, 0.0, 0.3, 1.0, (N,)), None, 1.3 / 3),
        ("double_sided_maxwell", lambda: _draw(ur.double_sided_maxwell, 1.0, 2.0, (N,)), None, 1.0),
    ],
)
def test_distributions_have_their_medians_and_means(name, draw, median, mean):
    x = draw()
    assert x.shape == (N,) and np.all(np.isfinite(x))
    if median is not None:
        assert abs(np.median(x) - median) < 0.02 * max(1.0, abs(median)), np.median(x)
    if mean is not None:
        assert abs(x.mean() - mean) < 0.03 * max(1.0, abs(mean)), x.mean()


def test_rademacher_is_plus_or_minus_one():
    r = np.asarray(ur.rademacher(ur.PRNGKey(22), (1000,)))
    assert set(np.unique(r).tolist()) == {-1, 1} and abs(r.mean()) < 0.1


@pytest.mark.xla
@pytest.mark.parametrize(
    "draw",
    [
        lambda r, k: r.cauchy(k, (50,)),
        lambda r, k: r.laplace(k, (50,)),
        lambda r, k: r.rademacher(k, (50,)),
        lambda r, k: r.weibull_min(k, 2.0, 1.5, (50,)),
        lambda r, k: r.geometric(k, 0.3, (50,)),
        lambda r, k: r.triangular(k, 0.0, 0.3, 1.0, (50,)),
    ],
)
def test_uniform_transforms_give_jaxs_bits(draw, jax_x32):
    jax = jax_x32
    got, want = (
        np.asarray(draw(ur, ur.PRNGKey(3))),
        np.asarray(draw(jax.random, jax.random.PRNGKey(3))),
    )
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# --- the gamma family -------------------------------------------------------------------


@pytest.mark.parametrize("a", [0.3, 1.0, 2.5, 9.0])
def test_gamma_has_mean_and_variance_a(a):
    g = _draw(ur.gamma, a, (N,))
    assert g.min() > 0
    assert abs(g.mean() - a) < 0.03 * a + 0.01 and abs(g.var() - a) < 0.06 * a + 0.02


def test_loggamma_stays_finite_for_tiny_shapes():
    lg = _draw(ur.loggamma, 0.01, (20_000,))
    # E[log X] for X ~ Gamma(a) is digamma(a); digamma(0.01) = -100.56...
    assert np.all(np.isfinite(lg)) and abs(lg.mean() + 100.56) < 1.0


@pytest.mark.parametrize(
    "name, draw, mean, var",
    [
        ("beta", lambda: _draw(ur.beta, 2.0, 5.0, (N,)), 2 / 7, 10 / (49 * 8)),
        ("chisquare", lambda: _draw(ur.chisquare, 4.0, (N,)), 4.0, 8.0),
        ("f", lambda: _draw(ur.f, 5.0, 10.0, (N,)), 10 / 8, None),
        ("t", lambda: _draw(ur.t, 6.0, (N,)), 0.0, 1.5),
        ("generalized_normal", lambda: _draw(ur.generalized_normal, 2.0, (N,)), 0.0, 0.5),
    ],
)
@pytest.mark.slow
def test_gamma_based_distributions_have_their_moments(name, draw, mean, var):
    x = draw()
    assert np.all(np.isfinite(x))
    assert abs(x.mean() - mean) < 0.03 * max(1.0, abs(mean))
    if var is not None:
        assert abs(x.var() - var) < 0.06 * max(1.0, var)


@pytest.mark.slow
def test_dirichlet_rows_sum_to_one_with_the_right_means():
    alpha = np.array([1.0, 2.0, 3.0], np.float32)
    d = _draw(ur.dirichlet, alpha, (N,))
    np.testing.assert_allclose(d.sum(1), 1, atol=1e-5)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=0.01)


@pytest.mark.slow
def test_ball_points_lie_inside_the_unit_ball_spread_as_r_cubed():
    b = _draw(ur.ball, 3, 2, (N,))
    radius = np.linalg.norm(b, axis=1)
    assert radius.max() <= 1 and abs(radius.mean() - 0.75) < 0.01  # E[r] = d / (d + 1)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_has_its_mean_and_covariance(method):
    mean = np.array([1.0, -1.0], np.float32)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    x = _draw(ur.multivariate_normal, mean, cov, (N,), method=method)
    np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)


@pytest.mark.parametrize("n, m", [(4, None), (5, 3), (3, 5)])
def test_orthogonal_matrices_are_orthonormal(n, m):
    o = np.asarray(ur.orthogonal(ur.PRNGKey(30), n, m=m), np.float64)
    assert o.shape == (n, n if m is None else m)
    small = min(o.shape)
    gram = o.T @ o if o.shape[0] >= o.shape[1] else o @ o.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


def test_orthogonal_matrices_come_in_batches():
    o = np.asarray(ur.orthogonal(ur.PRNGKey(31), 4, shape=(2, 3)), np.float64)
    assert o.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(
        o @ np.swapaxes(o, -1, -2), np.broadcast_to(np.eye(4), o.shape), atol=1e-5
    )
    assert not np.allclose(o[0, 0], o[1, 2])
