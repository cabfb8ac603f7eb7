"""More of uir.numpy against NumPy (values and shapes) and, where JAX is
installed (make test-xla), against jax.numpy (dtypes too): creation,
manipulation, elementwise, NaN-aware and order statistics, search."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import uir
import uir.numpy as u

r = np.random.default_rng(0)
x = r.standard_normal((4, 5)).astype(np.float32)
y = r.standard_normal((4, 5)).astype(np.float32)
v = r.standard_normal(7).astype(np.float32)
w = np.abs(r.standard_normal(5)).astype(np.float32)
xn = x.copy()
xn[1, 2] = np.nan
xn[3, :] = np.nan
ii = r.integers(0, 6, 10).astype(np.int32)
CASES = {
    "acos": lambda m: m.acos(np.clip(x, -1, 1)),
    "atan2": lambda m: m.atan2(x, y),
    "pow": lambda m: m.pow(np.abs(x), y),
    "concat": lambda m: m.concat([x, y], axis=1),
    "permute_dims": lambda m: m.permute_dims(x, (1, 0)),
    "astype": lambda m: m.astype(x, m.int32),
    "positive": lambda m: m.positive(x),
    "fabs": lambda m: m.fabs(x),
    "deg2rad": lambda m: m.deg2rad(x),
    "rad2deg": lambda m: m.rad2deg(x),
    "signbit": lambda m: m.signbit(np.array([-0.0, 0.0, -1, 2, np.nan], np.float32)),
    "copysign": lambda m: m.copysign(x, y),
    "fmax": lambda m: m.fmax(xn, y),
    "fmin": lambda m: m.fmin(xn, y),
    "hypot": lambda m: m.hypot(x, y),
    "logaddexp": lambda m: m.logaddexp(x, y),
    "logaddexp2": lambda m: m.logaddexp2(x, y),
    "float_power": lambda m: m.float_power(np.abs(x), 2),
    "heaviside": lambda m: m.heaviside(np.array([-1, 0, 2], np.float32), np.float32(0.5)),
    "sinc": lambda m: m.sinc(np.array([0, 0.5, 1.5], np.float32)),
    "ldexp": lambda m: m.ldexp(x, np.int32(3)),
    "modf": lambda m: m.modf(x * 3),
    "divmod": lambda m: m.divmod(x * 3, np.float32(2)),
    "isneginf": lambda m: m.isneginf(np.array([-np.inf, 1, np.inf], np.float32)),
    "isclose": lambda m: m.isclose(x, x + 1e-6),
    "allclose": lambda m: m.allclose(x, x + 1e-6),
    "array_equal": lambda m: m.array_equal(x, x),
    "array_equiv": lambda m: m.array_equiv(x, x[0:1]),
    "nan_to_num": lambda m: m.nan_to_num(np.array([np.nan, np.inf, -np.inf, 1], np.float32)),
    "angle": lambda m: m.angle(x + 1j * y),
    "isreal": lambda m: m.isreal(x + 0j),
    "empty": lambda m: m.empty((2, 3)).shape,
    "identity": lambda m: m.identity(3),
    "tri": lambda m: m.tri(3, 4, 1),
    "tril": lambda m: m.tril(x, -1),
    "triu": lambda m: m.triu(x, 1),
    "diagonal": lambda m: m.diagonal(x, 1),
    "diag v": lambda m: m.diag(v, -1),
    "diag m": lambda m: m.diag(x),
    "diagflat": lambda m: m.diagflat(x[:2, :2]),
    "trace": lambda m: m.trace(x),
    "vander": lambda m: m.vander(v[:4]),
    "logspace": lambda m: m.logspace(0, 2, 5),
    "geomspace": lambda m: m.geomspace(1, 100, 5),
    "meshgrid": lambda m: m.meshgrid(v[:3], w),
    "indices": lambda m: m.indices((2, 3)),
    "tril_indices": lambda m: m.tril_indices(4),
    "atleast_2d": lambda m: m.atleast_2d(v),
    "atleast_3d": lambda m: m.atleast_3d(x),
    "hstack": lambda m: m.hstack([x, y]),
    "vstack": lambda m: m.vstack([v, v]),
    "dstack": lambda m: m.dstack([x, y]),
    "column_stack": lambda m: m.column_stack([v, v]),
    "array_split": lambda m: m.array_split(v, 3),
    "hsplit": lambda m: m.hsplit(x, [2]),
    "vsplit": lambda m: m.vsplit(x, 2),
    "fliplr": lambda m: m.fliplr(x),
    "flipud": lambda m: m.flipud(x),
    "rot90": lambda m: m.rot90(x),
    "rot90 3": lambda m: m.rot90(x, 3),
    "roll": lambda m: m.roll(x, 2, 1),
    "roll flat": lambda m: m.roll(x, -3),
    "roll 2": lambda m: m.roll(x, (1, 2), (0, 1)),
    "rollaxis": lambda m: m.rollaxis(np.zeros((2, 3, 4)), 2).shape,
    "matrix_transpose": lambda m: m.matrix_transpose(x),
    "append": lambda m: m.append(x, y, axis=0),
    "broadcast_arrays": lambda m: m.broadcast_arrays(x, v[:5]),
    "unstack": lambda m: m.unstack(x, axis=1),
    "resize": lambda m: m.resize(v, (3, 4)),
    "kron": lambda m: m.kron(x[:2, :2], y[:2, :3]),
    "inner": lambda m: m.inner(x, y),
    "cross": lambda m: m.cross(x[:, :3], y[:, :3]),
    "matvec": lambda m: m.matvec(x, w),
    "vecmat": lambda m: m.vecmat(x[:, :4], y[:4]),
    "vecdot": lambda m: m.vecdot(x, y),
    "ptp": lambda m: m.ptp(x, 1),
    "count_nonzero": lambda m: m.count_nonzero(ii),
    "average": lambda m: m.average(x, 1, w),
    "nansum": lambda m: m.nansum(xn, 1),
    "nanmax": lambda m: m.nanmax(xn, 1),
    "nanmin": lambda m: m.nanmin(xn),
    "nanmean": lambda m: m.nanmean(xn, 0),
    "nanvar": lambda m: m.nanvar(xn, 0),
    "nanstd": lambda m: m.nanstd(xn, 1),
    "nanargmax": lambda m: m.nanargmax(xn[:3], 1),
    "nancumsum": lambda m: m.nancumsum(xn, 1),
    "cumulative_sum": lambda m: m.cumulative_sum(x, axis=1, include_initial=True),
    "diff": lambda m: m.diff(x, 2, 1),
    "diff pre": lambda m: m.diff(v, prepend=0.0, append=np.float32(1)),
    "ediff1d": lambda m: m.ediff1d(v, to_begin=np.float32(9)),
    "trapezoid": lambda m: m.trapezoid(x, axis=1),
    "trapezoid x": lambda m: m.trapezoid(w, np.cumsum(w)),
    "quantile": lambda m: m.quantile(x, np.float32(0.3), axis=1),
    "quantile many": lambda m: m.quantile(x, np.array([0.1, 0.9], np.float32)),
    "percentile": lambda m: m.percentile(x, 75, axis=0),
    "median": lambda m: m.median(x, axis=1),
    "nanmedian": lambda m: m.nanmedian(xn[:3], axis=1),
    "median keep": lambda m: m.median(x, axis=0, keepdims=True),
    "searchsorted": lambda m: m.searchsorted(np.sort(v), x[0]),
    "searchsorted r": lambda m: m.searchsorted(
        np.array([1, 2, 2, 3], np.float32), np.array([2.0], np.float32), side="right"
    ),
    "digitize": lambda m: m.digitize(x[0], np.sort(v)),
    "select": lambda m: m.select([x > 1, x < -1], [x, -x], 0.0),
    "choose": lambda m: m.choose(ii % 2, [v[:1].repeat(10), w[:1].repeat(10)]),
    "bincount": lambda m: m.bincount(ii, length=6) if m is not np else np.bincount(ii, minlength=6),
    "interp": lambda m: m.interp(x[0], np.sort(v), np.arange(7, dtype=np.float32)),
    "polyval": lambda m: m.polyval(v[:3], x),
    "convolve": lambda m: m.convolve(v, w),
    "convolve same": lambda m: m.convolve(v, w, "same"),
    "convolve valid": lambda m: m.convolve(v, w, "valid"),
    "correlate": lambda m: m.correlate(v, w),
    "correlate full": lambda m: m.correlate(v, w, "full"),
    "correlate same": lambda m: m.correlate(v, w, "same"),
}

ii2 = r.integers(-50, 50, 8).astype(np.int32)
jj2 = r.integers(1, 40, 8).astype(np.int32)
pp = np.array([1.0, -2.0, 3.0], np.float32)
qq = np.array([4.0, 5.0], np.float32)
PHASE = (np.cumsum(r.uniform(0, 2, 20)) % (2 * np.pi)).astype(np.float32)
MORE_CASES = {
    "bartlett": lambda m: m.bartlett(7),
    "hanning": lambda m: m.hanning(8),
    "hamming": lambda m: m.hamming(5),
    "blackman": lambda m: m.blackman(6),
    "bitwise_count": lambda m: m.bitwise_count(ii2),
    "frexp": lambda m: m.frexp(np.array([0.0, 1.0, 8.0, -3.5, 0.3, 1e-30, np.inf], np.float32)),
    "sort_complex": lambda m: m.sort_complex(np.array([1 + 2j, 1 - 1j, -3 + 0j], np.complex64)),
    "polyadd": lambda m: m.polyadd(pp, qq),
    "polysub": lambda m: m.polysub(qq, pp),
    "polymul": lambda m: m.polymul(pp, qq),
    "polyder": lambda m: m.polyder(pp),
    "polyder2": lambda m: m.polyder(pp, 2),
    "polyint": lambda m: m.polyint(pp),
    "isin": lambda m: m.isin(ii2, jj2),
    "isin inv": lambda m: m.isin(ii2, jj2, invert=True),
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 3, 5])),
    "fill_diagonal": lambda m: (
        m.fill_diagonal(x, 9.0, inplace=False) if m is not np else _filled(x, 9.0)
    ),
    "cov": lambda m: m.cov(x[:3]),
    "cov cols": lambda m: m.cov(x[:3], rowvar=False),
    "corrcoef": lambda m: m.corrcoef(x[:3]),
    "unwrap": lambda m: m.unwrap(PHASE),
    "gcd": lambda m: m.gcd(ii2, jj2),
    "lcm": lambda m: m.lcm(ii2, jj2),
}
CASES.update(MORE_CASES)


def _polydiv_padded(m, u_, v_):
    """polydiv, with NumPy's remainder padded back to u's length (JAX keeps
    it whole; NumPy drops its leading zeros, a shape that depends on the data)."""
    q, rem = m.polydiv(u_, v_)
    rem = np.asarray(rem)
    return q, np.concatenate([np.zeros(len(u_) - len(rem), rem.dtype), rem])


CASES.update(
    {
        "spacing": lambda m: m.spacing(np.array([1.0, -2.0, 1e-3], np.float32)),
        "i0": lambda m: m.i0(np.array([0.0, 0.5, 2.0, -3.0, 10.0], np.float32)),
        "kaiser": lambda m: m.kaiser(7, 5.0),
        "lexsort": lambda m: m.lexsort((np.array([1, 1, 0, 0]), np.array([2, 1, 2, 1]))),
        "ravel_multi_index": lambda m: m.ravel_multi_index(
            (np.array([0, 2, 1]), np.array([1, 3, 0])), (3, 4)
        ),
        "unravel_index": lambda m: m.unravel_index(np.array([5, 11, 0]), (3, 4)),
        "delete": lambda m: m.delete(x, np.array([0, 2]), axis=1),
        "delete flat": lambda m: m.delete(x, 3),
        "insert": lambda m: m.insert(x, 2, np.float32(9.0), axis=1),
        "insert flat": lambda m: m.insert(np.arange(5.0, dtype=np.float32), 1, np.float32(7.0)),
        "fromfunction": lambda m: m.fromfunction(lambda i, j: i + 2 * j, (3, 4), dtype=np.float32),
        "gradient": lambda m: m.gradient(x, axis=1),
        "gradient all": lambda m: m.gradient(x),
        "block": lambda m: m.block(
            [
                [np.ones((2, 2), np.float32), np.zeros((2, 3), np.float32)],
                [np.zeros((1, 2), np.float32), np.ones((1, 3), np.float32)],
            ]
        ),
        "poly": lambda m: m.poly(np.array([1.0, 2.0, -3.0], np.float32)),
        "polydiv": lambda m: _polydiv_padded(
            m, np.array([1.0, -3.0, 0.0, 4.0], np.float32), np.array([1.0, 2.0], np.float32)
        ),
        "convolve shorter first": lambda m: m.convolve(w[:4], v[:6], "same"),
        "correlate shorter first": lambda m: m.correlate(w[:4], v[:6], "full"),
    }
)


def _filled(a, value):
    out = a.copy()
    np.fill_diagonal(out, value)
    return out


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [np.asarray(x)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name):
    got = _leaves(CASES[name](u))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy on all-NaN slices
        want = _leaves(CASES[name](np))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, equal_nan=True)


@pytest.mark.xla
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_numpy_with_its_dtypes(name, jax_x32):
    jnp = jax_x32.numpy
    got, want = _leaves(CASES[name](u)), _leaves(CASES[name](jnp))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, equal_nan=True)


def test_the_same_functions_trace_inside_jit():
    @uir.jit
    def f(a, b):
        return (
            u.tril(a),
            u.roll(a, 2, 1),
            u.nanmean(a, 0),
            u.median(a, axis=1),
            u.searchsorted(u.sort(b), a[0]),
            u.hstack([a, a]),
            u.isclose(a, a),
        )

    for got, want in zip(
        f(x, v),
        (
            u.tril(x),
            u.roll(x, 2, 1),
            u.nanmean(x, 0),
            u.median(x, axis=1),
            u.searchsorted(np.sort(v), x[0]),
            u.hstack([x, x]),
            u.isclose(x, x),
        ),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_bincount_needs_its_length_while_tracing():
    with pytest.raises(uir.TraceError, match="length="):
        u.bincount(ii)
