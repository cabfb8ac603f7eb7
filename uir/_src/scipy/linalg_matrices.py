"""jax.scipy.linalg's special matrices: those built from data (toeplitz,
hankel, circulant, companion, fiedler, leslie, block_diag,
convolution_matrix), traced like any array; and those of a size alone
(hadamard, hilbert, pascal, helmert, dft and the exact inverses), computed
at trace time in integers and rounded once to the result's type."""

from __future__ import annotations

import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import fail
from uir._src.numpy import creation, manipulation, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.util import public_asarray


def _size(n, name: str) -> int:
    if not isinstance(n, (int, np.integer)) or n < 0:
        fail(name, f"n must be a non-negative integer, got {n!r}")
    return int(n)


def _floats(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(dtypes.default_float())


@eager
def toeplitz(c, r=None):
    """The Toeplitz matrix of first column c and first row r (r[0] ignored;
    conj(c) without r); leading dimensions of c and r batch."""
    c = public_asarray(c)
    r = ufuncs.conj(c) if r is None else public_asarray(r)
    c, r = ops.promote("toeplitz", c, r)
    if c.ndim == 0:
        c = manipulation.reshape(c, (1,))
    if r.ndim == 0:
        r = manipulation.reshape(r, (1,))
    m, n = c.shape[-1], r.shape[-1]
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = manipulation.broadcast_to(c, (*batch, m))
    r = manipulation.broadcast_to(r, (*batch, n))
    # Element (i, j) is c[i - j] below the diagonal and r[j - i] above: one
    # take from r reversed then c.
    values = manipulation.concatenate([manipulation.flip(r[..., 1:], -1), c], axis=-1)
    index = np.arange(m)[:, None] - np.arange(n)[None, :] + (n - 1)
    return np_indexing.take(values, index, axis=-1)


@eager
def hankel(c, r=None):
    """The Hankel matrix of first column c and last row r (r[0] ignored;
    zeros without r)."""
    c = manipulation.ravel(public_asarray(c))
    r = creation.zeros_like(c) if r is None else manipulation.ravel(public_asarray(r))
    c, r = ops.promote("hankel", c, r)
    m, n = c.shape[0], r.shape[0]
    values = manipulation.concatenate([c, r[1:]])
    index = np.arange(m)[:, None] + np.arange(n)[None, :]
    return np_indexing.take(values, index)


@eager
def circulant(c):
    """The circulant matrix of first column c (leading dimensions batch)."""
    c = public_asarray(c)
    if c.ndim == 0:
        c = manipulation.reshape(c, (1,))
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return np_indexing.take(c, index, axis=-1)


def _coefficients(a, name: str):
    a = public_asarray(a)
    if a.ndim != 1:
        fail(name, f"takes a one-dimensional array, got {ops.describe(a)}")
    if a.shape[0] < 2:
        fail(name, f"needs at least two coefficients, got {ops.describe(a)}")
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        a = ops.convert(a, dtypes.default_float())
    return a


@eager
def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest
    first): first row -a[1:]/a[0], ones below the diagonal."""
    a = _coefficients(a, "companion")
    n = a.shape[0] - 1
    first = ufuncs.divide(ufuncs.negative(a[1:]), a[0])
    below = (np.arange(n)[:, None] == np.arange(n)[None, :] + 1).astype(a.dtype)
    top = (np.arange(n) == 0)[:, None]
    return ufuncs.where(top, manipulation.broadcast_to(first, (n, n)), below)


@eager
def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial with
    coefficients a (highest first): the same eigenvalues as companion(a)."""
    a = _coefficients(a, "fiedler_companion")
    c = ufuncs.divide(a[1:], a[0])
    n = c.shape[0]
    rows, cols = [0], [0]
    for k in range(1, n):
        rows.append(2 * (k // 2))
        cols.append(2 * ((k - 1) // 2) + 1)
    where_c = np.full((n, n), -1)
    where_c[rows, cols] = np.arange(n)
    ones = np.zeros((n, n), dtype=bool)
    if n > 1:
        ones[1, 0] = True
    for j in range(1, n):
        if 2 * j + 1 < n:
            ones[2 * j + 1, 2 * j - 1] = True
    for j in range(n):
        if 2 * j + 2 < n:
            ones[2 * j, 2 * j + 2] = True
    picked = np_indexing.take(ufuncs.negative(c), np.maximum(where_c, 0))
    return ufuncs.where(where_c >= 0, picked, ones.astype(np.dtype(c.dtype)))


@eager
def fiedler(a):
    """|a[i] - a[j]|: the symmetric Fiedler matrix of a."""
    a = manipulation.ravel(public_asarray(a))
    return ufuncs.abs(ufuncs.subtract(a[:, None], a[None, :]))


@eager
def leslie(f, s):
    """The Leslie matrix: fecundities f on the first row, survival rates s
    below the diagonal."""
    f, s = public_asarray(f), public_asarray(s)
    if f.ndim != 1 or s.ndim != 1 or s.shape[0] != f.shape[0] - 1:
        fail("leslie", f"needs f of n and s of n - 1 values, got {f.shape} and {s.shape}")
    f, s = ops.promote("leslie", f, s)
    n = f.shape[0]
    if n == 1:
        return manipulation.reshape(f, (1, 1))
    below = np.arange(n)[:, None] == np.arange(n)[None, :] + 1
    # Row j + 1 holds s[j] in column j.
    column = np.broadcast_to(np.minimum(np.arange(n), n - 2), (n, n))
    sub = ufuncs.where(below, np_indexing.take(s, column), 0).astype(f.dtype)
    top = (np.arange(n) == 0)[:, None]
    return ufuncs.where(top, manipulation.broadcast_to(f, (n, n)), sub)


def block_diag(*arrs):
    """The block-diagonal matrix of arrs (a scalar a 1x1 block, a vector one row)."""
    return _block_diag(arrs)


@eager
def _block_diag(arrs):
    if not arrs:
        return creation.zeros((1, 0), dtypes.default_float())
    blocks = [public_asarray(a) for a in arrs]
    blocks = ops.promote("block_diag", *blocks) if len(blocks) > 1 else blocks
    blocks = [manipulation.reshape(b, (1, -1)) if b.ndim < 2 else b for b in blocks]
    if any(b.ndim != 2 for b in blocks):
        fail("block_diag", "takes arrays of at most two dimensions")
    width = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        rows.append(manipulation.pad_constant(b, [(0, 0), (start, width - start - b.shape[1])]))
        start += b.shape[1]
    return manipulation.concatenate(rows, axis=0)


@eager(static=("n", "mode"))
def convolution_matrix(a, n: int, mode: str = "full"):
    """A with A @ v = numpy.convolve(a, v, mode) for every v of n values."""
    a = public_asarray(a)
    if a.ndim != 1 or a.shape[0] == 0:
        fail("convolution_matrix", f"takes a non-empty vector, got {ops.describe(a)}")
    n = _size(n, "convolution_matrix")
    if n == 0:
        fail("convolution_matrix", "n must be positive")
    m = a.shape[0]
    full = m + n - 1
    if mode == "full":
        rows = np.arange(full)
    elif mode == "same":
        start = (min(m, n) - 1) // 2  # the middle of the full result, as NumPy's
        rows = np.arange(start, start + max(m, n))
    elif mode == "valid":
        rows = np.arange(min(m, n) - 1, max(m, n))
    else:
        fail("convolution_matrix", f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    k = rows[:, None] - np.arange(n)[None, :]  # the index into a
    inside = (k >= 0) & (k < m)
    picked = np_indexing.take(a, np.clip(k, 0, m - 1))
    return ufuncs.where(inside, picked, 0).astype(a.dtype)


def hadamard(n: int, dtype=int):
    """Sylvester's Hadamard matrix of order n (a power of 2)."""
    n = _size(n, "hadamard")
    if n < 1 or n & (n - 1):
        fail("hadamard", f"n must be a positive power of 2, got {n}")
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return public_asarray(h.astype(dtypes.canonicalize(np.dtype(dtype))))


def hilbert(n: int):
    """1 / (i + j + 1)."""
    n = _size(n, "hilbert")
    i = np.arange(n)
    return public_asarray(_floats(1.0 / (i[:, None] + i[None, :] + 1)))


def invhilbert(n: int):
    """The exact inverse of hilbert(n), from its closed form in integers."""
    n = _size(n, "invhilbert")
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            out[i, j] = (
                (-1) ** (i + j)
                * (i + j + 1)
                * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1)
                * math.comb(i + j, i) ** 2
            )
    return public_asarray(_floats(out.astype(np.float64) if n else np.zeros((0, 0))))


def _pascal_lower(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object).reshape(
        n, n
    )


def pascal(n: int, kind: str | None = None):
    """Binomial coefficients: C(i + j, i) ('symmetric', the default), C(i, j)
    ('lower') or its transpose ('upper')."""
    n = _size(n, "pascal")
    kind = kind or "symmetric"
    low = _pascal_lower(n)
    if kind == "lower":
        out = low
    elif kind == "upper":
        out = low.T
    elif kind == "symmetric":
        out = low.dot(low.T) if n else low
    else:
        fail("pascal", f"kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return public_asarray(_floats(out.astype(np.float64)))


def invpascal(n: int, kind: str | None = None):
    """The exact inverse of pascal(n, kind)."""
    n = _size(n, "invpascal")
    kind = kind or "symmetric"
    sign = np.array([[(-1) ** (i + j) for j in range(n)] for i in range(n)], dtype=object).reshape(
        n, n
    )
    inv_low = _pascal_lower(n) * sign
    if kind == "lower":
        out = inv_low
    elif kind == "upper":
        out = inv_low.T
    elif kind == "symmetric":
        out = inv_low.T.dot(inv_low) if n else inv_low
    else:
        fail("invpascal", f"kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return public_asarray(_floats(out.astype(np.float64)))


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order n: orthonormal rows, the first constant
    (dropped unless full)."""
    n = _size(n, "helmert")
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    if n:
        h[0] = 1
        d[0] = n
    h = h / np.sqrt(d)[:, None] if n else h
    return public_asarray(_floats(h if full else h[1:]))


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The discrete Fourier transform matrix exp(-2πi jk/n), divided by n
    (scale 'n') or √n ('sqrtn')."""
    n = _size(n, "dft")
    if scale not in (None, "n", "sqrtn"):
        fail("dft", f"scale must be None, 'n' or 'sqrtn', got {scale!r}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    if scale == "n":
        m = m / n
    elif scale == "sqrtn":
        m = m / math.sqrt(n)
    target = (
        dtypes.canonicalize(np.dtype(dtype))
        if dtype is not None
        else dtypes.canonicalize(np.complex128)
    )
    return public_asarray(m.astype(target))


__all__ = [
    "block_diag",
    "circulant",
    "companion",
    "convolution_matrix",
    "dft",
    "fiedler",
    "fiedler_companion",
    "hadamard",
    "hankel",
    "helmert",
    "hilbert",
    "invhilbert",
    "invpascal",
    "leslie",
    "pascal",
    "toeplitz",
]
