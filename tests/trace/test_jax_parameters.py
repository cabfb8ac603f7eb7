"""Behaviour behind the parameters tests/test_jax_signatures.py asks for:
gather and scatter modes, the older operand= keyword of cond and switch,
conv_transpose's consistent padding, lax.dot's dimension_numbers and
lax.mul's out_dtype, subsets of eigh and svd, the random modes and draws
with p or without replacement, standardize's algorithm and mask,
attention's residual, array's ndmin, weighted quantiles and covariances,
ravel_multi_index's dtype and order. Checked against NumPy (and JAX where
it is installed)."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.lax as lax
import uir.lax.linalg as lax_linalg
import uir.nn as nn
import uir.numpy as jnp
import uir.random as random

RNG = np.random.default_rng(5)
X = np.arange(20.0, dtype=np.float32).reshape(4, 5)
STARTS = np.array([[0, 1], [3, 4], [3, 2], [-1, 0], [2, 3]], np.int32)
GATHER = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)
)
SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0, 1)
)


def _windows(starts, clip: bool):
    """The reference: each start's 1x2 window, clamped or marked out of range."""
    out, inside = [], []
    for r, c in starts:
        ok = 0 <= r <= 3 and 0 <= c <= 3
        if clip:
            r, c = min(max(r, 0), 3), min(max(c, 0), 3)
        out.append((r, c))
        inside.append(ok)
    return out, inside


@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds", "fill"])
def test_gather_modes(mode):
    got = np.asarray(
        lax.gather(
            X, STARTS, GATHER, (1, 2), mode=mode, fill_value=-1.0 if mode == "fill" else None
        )
    )
    windows, inside = _windows(STARTS, clip=True)
    for k, ((r, c), ok) in enumerate(zip(windows, inside, strict=True)):
        want = X[r, c : c + 2] if (ok or mode != "fill") else [-1.0, -1.0]
        np.testing.assert_array_equal(got[k], want)
    assert np.isnan(lax.gather(X, STARTS, GATHER, (1, 2), mode="fill")[1]).all()


@pytest.mark.parametrize(
    "name", ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]
)
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_scatter_modes(name, mode):
    updates = np.full((5, 2), 100.0, np.float32)
    got = np.asarray(getattr(lax, name)(X, STARTS, updates, SCATTER, mode=mode))
    combine = {
        "scatter": lambda a, b: b,
        "scatter_add": np.add,
        "scatter_mul": np.multiply,
        "scatter_min": np.minimum,
        "scatter_max": np.maximum,
    }[name]
    want = X.copy()
    windows, inside = _windows(STARTS, clip=mode == "clip")
    for (r, c), ok in zip(windows, inside, strict=True):
        if ok or mode == "clip":
            want[r, c : c + 2] = combine(want[r, c : c + 2], 100.0)
    np.testing.assert_array_equal(got, want)


def test_gather_refuses_an_unknown_mode():
    with pytest.raises(uir.TraceError, match="mode"):
        lax.gather(X, STARTS, GATHER, (1, 2), mode="wrap")


def test_cond_and_switch_take_the_older_operand_keyword():
    assert lax.cond(True, lambda v: v + 1, lambda v: v - 1, operand=np.float32(2)) == 3
    assert lax.switch(1, [lambda v: v, lambda v: v * 10], operand=np.float32(2)) == 20
    with pytest.raises(uir.TraceError, match="operand"):
        lax.cond(True, lambda v: v, lambda v: v, np.float32(1), operand=np.float32(2))


def _conv_transpose_reference(x, w, stride, pads):
    """The gradient of a strided 1-D convolution: scatter each input times
    the (flipped) kernel, then crop the forward padding."""
    n, k = x.shape[0], w.shape[0]
    full = np.zeros((n - 1) * stride + k)
    for i in range(n):
        full[i * stride : i * stride + k] += x[i] * w
    lo, hi = pads
    return full[lo : full.shape[0] - hi]


@pytest.mark.parametrize("pads", [(0, 0), (1, 1), (2, 1)])
def test_conv_transpose_with_consistent_padding_is_the_forward_gradient(pads):
    x = RNG.standard_normal(6).astype(np.float32)
    w = RNG.standard_normal(3).astype(np.float32)
    got = lax.conv_transpose(
        x[None, None],
        w[None, None],
        (2,),
        [pads],
        dimension_numbers=("NCH", "IOH", "NCH"),
        transpose_kernel=True,
        use_consistent_padding=True,
    )
    np.testing.assert_allclose(
        got[0, 0], _conv_transpose_reference(x, w, 2, pads), rtol=1e-5, atol=1e-5
    )


def test_dot_dimension_numbers_and_mul_out_dtype():
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    got = lax.dot(a, b, dimension_numbers=(([2], [1]), ([0], [0])))
    np.testing.assert_allclose(got, np.einsum("bij,bjk->bik", a, b), rtol=1e-5, atol=1e-5)
    out = lax.mul(np.int8([100, 3]), np.int8([3, 3]), out_dtype=np.int32)
    assert out.dtype == np.int32 and list(out) == [300, 9]


def test_subsets_of_eigh_and_svd():
    a = RNG.standard_normal((5, 5)).astype(np.float32)
    sym = a + a.T
    v, w = lax_linalg.eigh(sym, subset_by_index=(1, 3))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym)[1:3], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sym @ v, v * w, rtol=1e-3, atol=1e-3)
    u, s, vh = lax_linalg.svd(a, full_matrices=False, subset_by_index=(0, 2))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False)[:2], rtol=1e-4)
    np.testing.assert_allclose(a @ vh.T, u * s, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(
        jnp.linalg.svd(a, compute_uv=False, subset_by_index=(2, 5)),
        np.linalg.svd(a, compute_uv=False)[2:],
        rtol=1e-4,
    )
    with pytest.raises(uir.TraceError, match="full_matrices"):
        lax_linalg.svd(a, subset_by_index=(0, 2))


def test_random_modes_and_draws():
    key = random.PRNGKey(0)
    for mode in ("low", "high"):
        draws = np.asarray(random.bernoulli(key, 0.3, (20000,), mode=mode))
        assert abs(draws.mean() - 0.3) < 0.02
        g = np.asarray(random.gumbel(key, (20000,), mode=mode))
        assert abs(g.mean() - np.euler_gamma) < 0.05
    tiny = np.asarray(random.bernoulli(key, 1e-9, (1000,), mode="high"))
    assert not tiny.any()
    with pytest.raises(uir.TraceError, match="mode"):
        random.gumbel(key, (3,), mode="highest-ever")
    # choice with probabilities: frequencies follow p; without replacement, distinct.
    p = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
    picks = np.asarray(random.choice(key, 4, (20000,), p=p))
    np.testing.assert_allclose(np.bincount(picks, minlength=4) / 20000, p, atol=0.02)
    once = np.asarray(random.choice(key, 10, (6,), replace=False, p=np.full(10, 0.1, np.float32)))
    assert len(set(once.tolist())) == 6
    rows = np.asarray(
        random.categorical(key, np.zeros((3, 8), np.float32), shape=(5, 3), replace=False)
    )
    assert rows.shape == (5, 3)
    for col in rows.T:
        assert len(set(col.tolist())) == 5
    assert np.array_equal(random.key(3), random.PRNGKey(3))
    assert np.array_equal(random.wrap_key_data(random.PRNGKey(3)), random.PRNGKey(3))
    with pytest.raises(ValueError, match="typed key"):
        random.key(3, dtype="key<fry>")


def test_standardize_algorithms_and_mask():
    x = (RNG.standard_normal((3, 6)) * 3 + 1000).astype(np.float32)
    mask = RNG.random((3, 6)) > 0.3
    mask[:, 0] = True
    for algorithm in ("fast", "stable"):
        got = nn.standardize(x, where=mask, algorithm=algorithm)
        mean = np.array([x[i][mask[i]].mean() for i in range(3)])[:, None]
        var = np.array([x[i][mask[i]].var() for i in range(3)])[:, None]
        tol = 1e-3 if algorithm == "stable" else 0.5
        np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-5), rtol=tol, atol=tol)


def test_attention_returns_its_log_sum_exp():
    q = RNG.standard_normal((2, 5, 3, 4)).astype(np.float32)
    k = RNG.standard_normal((2, 6, 3, 4)).astype(np.float32)
    out, lse = nn.dot_product_attention(q, k, k, return_residual=True)
    logits = np.einsum("bqhd,bkhd->bqhk", q, k) / 2.0
    want = np.log(np.exp(logits).sum(-1))
    np.testing.assert_allclose(lse, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, nn.dot_product_attention(q, k, k), rtol=1e-6)


def test_array_ndmin_order_and_copy():
    assert jnp.array(3.0, ndmin=2).shape == (1, 1)
    assert uir.jit(lambda v: jnp.array(v, ndmin=3))(np.ones(4, np.float32)).shape == (1, 1, 4)
    assert jnp.asarray([1, 2], copy=False).shape == (2,)
    with pytest.raises(uir.TraceError, match="order"):
        jnp.array([1, 2], order="F")


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_weighted_quantiles_match_numpy(name, axis):
    a = RNG.standard_normal((4, 7)).astype(np.float32)
    if name == "nanquantile":
        a[0, 2] = np.nan
        a[3, :6] = np.nan  # an all-NaN column along axis 0, a mostly-NaN row
    w = RNG.uniform(0, 2, (4, 7)).astype(np.float32)
    q = np.array([0, 0.1, 0.5, 0.77, 1.0], np.float32)
    for keepdims in (False, True):
        kw = dict(axis=axis, method="inverted_cdf", keepdims=keepdims)
        np.testing.assert_allclose(getattr(jnp, name)(a, q, **kw), getattr(np, name)(a, q, **kw))
        np.testing.assert_allclose(
            getattr(jnp, name)(a, q, weights=w, **kw), getattr(np, name)(a, q, weights=w, **kw)
        )
    with pytest.raises(uir.TraceError, match="inverted_cdf"):
        jnp.quantile(a, 0.5, weights=w)


@pytest.mark.parametrize(
    "kw",
    [
        {"fweights": [1, 2, 3, 1, 1, 2, 1, 1, 2]},
        {"aweights": np.linspace(0.1, 1, 9)},
        {"fweights": [1, 2, 3, 1, 1, 2, 1, 1, 2], "aweights": np.linspace(0.1, 1, 9), "ddof": 0},
        {"aweights": np.linspace(0.1, 1, 9), "bias": True},
    ],
)
def test_weighted_covariance_matches_numpy(kw):
    x = RNG.standard_normal((3, 9))
    np.testing.assert_allclose(
        jnp.cov(x.astype(np.float32), **kw), np.cov(x, **kw), rtol=1e-4, atol=1e-5
    )
    assert jnp.corrcoef(x, dtype=np.float32).dtype == np.float32


def test_index_helpers():
    rows, cols = np.array([1, 2, 0]), np.array([0, 3, 2])
    for order in ("C", "F"):
        got = jnp.ravel_multi_index((rows, cols), (3, 4), mode="clip", order=order, dtype=np.int16)
        assert got.dtype == np.int16
        np.testing.assert_array_equal(got, np.ravel_multi_index((rows, cols), (3, 4), order=order))
    bins = np.array([0.0, 1.0, 2.5])
    x = np.array([-1.0, 0.0, 0.5, 2.5, 9.0], np.float32)
    for method in ("scan", "sort", "compare_all"):
        np.testing.assert_array_equal(jnp.digitize(x, bins, method=method), np.digitize(x, bins))
    np.testing.assert_array_equal(jnp.isin(x, bins, method="sort"), np.isin(x, bins))


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal"])
def test_complex_numbers_order_by_real_then_imaginary_part(name):
    a = np.array([1 + 2j, 1 + 1j, 2 + 0j, 1 + 2j, -3 - 1j], np.complex64)
    b = np.array([1 + 1j, 1 + 2j, 1 + 5j, 1 + 2j, -3 + 0j], np.complex64)
    want = getattr(np, name)(a, b)
    np.testing.assert_array_equal(getattr(jnp, name)(a, b), want)
    np.testing.assert_array_equal(uir.jit(getattr(jnp, name))(a, b), want)


def test_lax_pow_takes_an_integer_exponent_and_other_ops_refuse_mixed_dtypes():
    x = np.array([2.0, -3.0, 0.5], np.float32)
    np.testing.assert_array_equal(lax.pow(x, np.array([3, 2, -2], np.int32)), [8.0, 9.0, 4.0])
    with pytest.raises(TypeError, match="same dtypes"):
        lax.sub(x, np.ones(3, np.int32))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_complex_max_and_min_follow_numpy_order(axis):
    rng = np.random.default_rng(7)
    a = (rng.integers(-2, 3, (4, 5)) + 1j * rng.integers(-2, 3, (4, 5))).astype(np.complex64)
    for name in ("max", "min"):
        want = getattr(np, name)(a, axis=axis, keepdims=True)
        np.testing.assert_array_equal(getattr(jnp, name)(a, axis=axis, keepdims=True), want)
        np.testing.assert_array_equal(
            uir.jit(lambda v, n=name: getattr(jnp, n)(v, axis=axis))(a),
            getattr(np, name)(a, axis=axis),
        )
