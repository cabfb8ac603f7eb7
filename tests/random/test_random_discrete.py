"""uir.random's poisson, binomial and multinomial: JAX's bits for the same
key (values recorded from jax 0.10.2, and compared live where JAX is
installed), and their moments."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.random as ur

KEY = ur.PRNGKey(7)
LAM = np.array([0.5, 4.0, 12.0, 80.0, 0.0], np.float32)  # Knuth, rejection, zero
N = np.array([5.0, 50.0, 200.0, 1000.0], np.float32)  # inversion and BTRS
P = np.array([0.2, 0.7, 0.5, 0.01], np.float32)
PROBS = np.array([0.2, 0.5, 0.3], np.float32)


def test_poisson_gives_jaxs_counts():
    got = ur.poisson(KEY, LAM, shape=(2, 5))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[2, 1, 8, 69, 0], [0, 7, 10, 70, 0]])


def test_binomial_gives_jaxs_counts():
    got = ur.binomial(KEY, N, P, shape=(2, 4))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[1, 31, 102, 9], [2, 35, 93, 10]])


def test_multinomial_gives_jaxs_counts():
    got = ur.multinomial(KEY, 20.0, PROBS, shape=(2, 3))
    np.testing.assert_array_equal(got, [[5, 9, 6], [6, 7, 7]])
    assert np.all(got.sum(-1) == 20)


@pytest.mark.parametrize("lam", [0.7, 6.0, 25.0, 400.0])
def test_poisson_has_its_mean_and_variance(lam):
    draws = ur.poisson(ur.PRNGKey(1), np.float32(lam), shape=(20000,)).astype(np.float64)
    assert abs(draws.mean() - lam) < 4 * np.sqrt(lam / 20000)
    assert abs(draws.var() / lam - 1) < 0.06


@pytest.mark.parametrize("n, p", [(8, 0.3), (40, 0.9), (500, 0.4), (3000, 0.02)])
def test_binomial_has_its_mean_and_variance(n, p):
    draws = ur.binomial(ur.PRNGKey(2), np.float32(n), np.float32(p), shape=(20000,))
    draws = draws.astype(np.float64)
    assert draws.min() >= 0 and draws.max() <= n and np.all(draws == np.floor(draws))
    var = n * p * (1 - p)
    assert abs(draws.mean() - n * p) < 4 * np.sqrt(var / 20000)
    assert abs(draws.var() / var - 1) < 0.06


def test_binomial_edge_cases_are_jaxs():
    got = ur.binomial(
        KEY,
        np.array([-1.0, np.nan, np.inf, 7.0, 7.0], np.float32),
        np.array([0.5, 0.5, 0.5, np.nan, 1.0], np.float32),
    )
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == np.inf and np.isnan(got[3])
    assert got[4] == 7.0  # p = 1: every trial succeeds


def test_bad_dtypes_are_refused():
    with pytest.raises(uir.TraceError, match="poisson: dtype must be an integer type"):
        ur.poisson(KEY, 3.0, dtype=np.float32)
    with pytest.raises(uir.TraceError, match="binomial: dtype must be a float type"):
        ur.binomial(KEY, 3.0, 0.5, dtype=np.int32)


@pytest.mark.slow
@settings(max_examples=8, deadline=None)  # each new shape traces and compiles
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(0, 60), k=st.integers(2, 5))
def test_multinomial_counts_add_up_to_n(seed, n, k):
    probs = np.random.default_rng(seed).dirichlet(np.ones(k)).astype(np.float32)
    counts = ur.multinomial(ur.PRNGKey(seed), np.float32(n), probs, shape=(3, k))
    assert counts.shape == (3, k)
    np.testing.assert_array_equal(counts.sum(-1), n)
    assert np.all(counts >= 0)


@pytest.mark.xla
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_the_same_key_gives_jaxs_counts(seed, jax_x32):
    jr = jax_x32.random
    key = jr.PRNGKey(seed)
    raw = np.asarray(jr.key_data(key))
    # Rates on one side of 10 each: where one array mixes both, JAX runs the
    # rejection loop on stand-in rates of 1e5 too, and their float32
    # lgamma (about 1e6) rests on the last bits of XLA's own log, which
    # uir's may miss by an ulp; the loop then runs a different number of
    # times, and a later acceptance overwrites an earlier one.
    for lam in (
        np.array([0.5, 4.0, 9.5, 0.0], np.float32),
        np.array([12.0, 80.0, 30.0, 250.0], np.float32),
    ):
        np.testing.assert_array_equal(
            ur.poisson(raw, lam, shape=(5, 4)), np.asarray(jr.poisson(key, lam, shape=(5, 4)))
        )
    np.testing.assert_array_equal(
        ur.binomial(raw, N, P, shape=(3, 4)), np.asarray(jr.binomial(key, N, P, shape=(3, 4)))
    )
    np.testing.assert_array_equal(
        ur.multinomial(raw, 30.0, PROBS, shape=(5, 3)),
        np.asarray(jr.multinomial(key, 30.0, PROBS, shape=(5, 3))),
    )


def test_poisson_and_binomial_run_with_64_bit_types():
    uir.config.update("enable_x64", True)
    try:
        counts = ur.poisson(ur.PRNGKey(0), 3.0, (4,))
        assert counts.dtype == np.int64 and counts.shape == (4,)
        draws = ur.multinomial(ur.PRNGKey(1), 10.0, np.array([0.5, 0.5], np.float32))
        assert draws.dtype == np.float64 and draws.sum() == 10
    finally:
        uir.config.update("enable_x64", False)
