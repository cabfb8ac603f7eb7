"""uir.lax's special functions (lgamma, digamma, igamma, igammac, betainc,
bessel_i0e, bessel_i1e, zeta, polygamma) against SciPy in float32 and
float64, their values at the edges (zeros, poles, infinities, NaN, out of
the domain) as JAX gives them, and, where JAX is installed, against
jax.lax on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.lax as lax

sp = pytest.importorskip("scipy.special")

rng = np.random.default_rng(0)
N = 400
GRIDS = {
    "lgamma": (lambda: (rng.uniform(-20, 40, N),), sp.gammaln),
    "digamma": (lambda: (rng.uniform(-20, 40, N),), sp.digamma),
    "igamma": (lambda: (rng.uniform(0.05, 40, N), rng.uniform(0, 60, N)), sp.gammainc),
    "igammac": (lambda: (rng.uniform(0.05, 40, N), rng.uniform(0, 60, N)), sp.gammaincc),
    "betainc": (
        lambda: (rng.uniform(0.05, 30, N), rng.uniform(0.05, 30, N), rng.uniform(0, 1, N)),
        sp.betainc,
    ),
    "bessel_i0e": (lambda: (rng.uniform(-30, 30, N),), sp.i0e),
    "bessel_i1e": (lambda: (rng.uniform(-30, 30, N),), sp.i1e),
    "zeta": (lambda: (rng.uniform(1.1, 20, N), rng.uniform(0.1, 20, N)), sp.zeta),
    "polygamma": (
        lambda: (rng.integers(0, 5, N).astype(np.float64), rng.uniform(0.2, 20, N)),
        lambda m, x: sp.polygamma(m.astype(int), x),
    ),
}


@pytest.fixture
def x64():
    uir.config.update("enable_x64", True)
    yield
    uir.config.update("enable_x64", False)


def _compare(got, want, rtol, atol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_float32_matches_scipy(name):
    make, reference = GRIDS[name]
    args = [a.astype(np.float32) for a in make()]
    got = getattr(lax, name)(*args)
    assert got.dtype == np.float32 and got.shape == (N,)
    _compare(got, reference(*[a.astype(np.float64) for a in args]), rtol=2e-4, atol=2e-6)


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_float64_matches_scipy(name, x64):
    make, reference = GRIDS[name]
    args = make()
    got = getattr(lax, name)(*args)
    assert got.dtype == np.float64
    _compare(got, reference(*args), rtol=1e-10, atol=1e-13)


def test_bfloat16_and_float16_compute_in_float32():
    import ml_dtypes

    x = np.array([0.5, 3.0, 7.25], np.float32)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        got = lax.lgamma(x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got, np.float32), sp.gammaln(x), rtol=1e-2)


INF, NAN = np.inf, np.nan
EDGES = {
    "lgamma": [((0.0,), INF), ((-0.0,), INF), ((-3.0,), INF), ((INF,), INF), ((-INF,), INF), ((NAN,), NAN)],
    "digamma": [((0.0,), NAN), ((-2.0,), NAN), ((-INF,), NAN), ((INF,), INF), ((NAN,), NAN)],
    "igamma": [
        ((2.0, 0.0), 0.0), ((2.0, INF), 1.0), ((0.0, 3.0), 1.0), ((0.0, 0.0), NAN),
        ((-1.0, 2.0), NAN), ((2.0, -1.0), NAN), ((NAN, 1.0), NAN),
    ],
    "igammac": [
        ((2.0, 0.0), 1.0), ((2.0, INF), 0.0), ((0.0, 3.0), 0.0), ((0.0, 0.5), 0.0),
        ((0.0, 0.0), NAN), ((-1.0, 2.0), NAN), ((1.0, NAN), NAN),
    ],
    "betainc": [
        ((2.0, 3.0, 0.0), 0.0), ((2.0, 3.0, 1.0), 1.0), ((2.0, 0.0, 0.5), 0.0), ((0.0, 2.0, 0.5), 1.0),
        ((0.0, 0.0, 0.5), NAN), ((2.0, 3.0, 1.5), NAN), ((-1.0, 3.0, 0.5), NAN),
    ],
    "bessel_i0e": [((INF,), 0.0), ((-INF,), 0.0), ((NAN,), NAN)],
    "bessel_i1e": [((0.0,), 0.0), ((INF,), 0.0), ((-INF,), -0.0), ((NAN,), NAN)],
    "zeta": [((1.0, 2.0), INF), ((0.5, 2.0), NAN), ((2.0, -1.0), INF), ((3.0, -1.0), NAN), ((2.0, -1.5), None)],
    "polygamma": [((1.0, 0.0), INF), ((2.0, 0.0), NAN), ((1.5, 2.0), NAN), ((-1.0, 2.0), NAN), ((0.0, INF), INF)],
}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(EDGES))
def test_values_at_the_edges_are_jaxs(name, dtype, x64):
    for args, want in EDGES[name]:
        got = float(getattr(lax, name)(*[np.asarray(a, dtype) for a in args]))
        if want is None:  # finite, by the formula
            assert np.isfinite(got), (name, args, got)
        elif np.isnan(want):
            assert np.isnan(got), (name, args, got)
        else:
            assert got == want, (name, args, got)


def test_integers_and_mixed_dtypes_are_refused_naming_the_op():
    with pytest.raises(uir.TraceError, match="lgamma does not accept dtype int32"):
        lax.lgamma(np.arange(3, dtype=np.int32))
    with pytest.raises(uir.TraceError, match=r"lax\.igamma requires arguments to have the same"):
        lax.igamma(np.ones(3, np.float32), np.ones(3, np.float16))
    assert lax.igamma(np.float32(2.0), 1.5).dtype == np.float32  # a Python scalar takes the dtype


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.1, 50), x=st.floats(0, 80))
def test_igamma_and_igammac_add_up_to_one(a, x):
    p = lax.igamma(np.float32(a), np.float32(x))
    q = lax.igammac(np.float32(a), np.float32(x))
    # At x == a the two take different routes (series, fraction), and
    # exp(a log x - x - lgamma(a)) cancels: in float32 JAX's own sum is off
    # by up to 3.8e-5 over a <= 50.
    assert abs(float(p) + float(q) - 1) < 6e-5


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.1, 30), b=st.floats(0.1, 30), x=st.floats(1e-3, 1 - 1e-3))
def test_betainc_is_symmetric(a, b, x):
    left = float(lax.betainc(np.float32(a), np.float32(b), np.float32(x)))
    right = float(lax.betainc(np.float32(b), np.float32(a), np.float32(1 - x)))
    assert abs(left + right - 1) < 1e-4


def test_they_trace_inside_jit_and_run_compiled():
    x = np.linspace(0.5, 9.5, 16, dtype=np.float32)

    @uir.jit
    def f(x):
        return lax.lgamma(x) + lax.digamma(x), lax.igamma(x, x * 0.5), lax.betainc(x, x, x / 10)

    got = f(x)
    want = (
        lax.lgamma(x) + lax.digamma(x),
        lax.igamma(x, x * 0.5),
        lax.betainc(x, x, x / 10),
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.xla
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(GRIDS))
def test_matches_jax_lax(name, dtype, jax_x32):
    jax = jax_x32
    wide = dtype == np.float64
    jax.config.update("jax_enable_x64", wide)
    uir.config.update("enable_x64", wide)
    try:
        args = [a.astype(dtype) for a in GRIDS[name][0]()]
        want = np.asarray(getattr(jax.lax, name)(*args))
        got = np.asarray(getattr(lax, name)(*args))
    finally:
        jax.config.update("jax_enable_x64", False)
        uir.config.update("enable_x64", False)
    assert got.dtype == want.dtype
    # XLA fuses multiply-adds and has exp/log/pow of its own: a few ulp.
    _compare(
        got,
        want,
        rtol=2e-5 if dtype == np.float32 else 1e-12,
        atol=1e-6 if dtype == np.float32 else 1e-14,
    )
