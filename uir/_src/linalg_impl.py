"""uir.numpy.linalg: cholesky through XLA's cholesky op; solve, inv, det and
slogdet through an LU factorization with partial pivoting traced as a loop
over columns (row swaps and eliminations on whole arrays, leading batch
dimensions included) and XLA's triangular-solve; vector and matrix norms."""

from __future__ import annotations

import numpy as np

import uir.numpy as jnp
from uir._src import dtypes, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail


def _square(a, name: str):
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        fail(
            f"linalg.{name}",
            f"needs square matrices in the last two dimensions, got {ops.describe(a)}",
        )
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        a = a.astype(dtypes.default_float())
    return a


@eager
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """L with a = L L^H (U with a = U^H U when upper), for Hermitian
    positive-definite a; NaNs where a is not positive-definite."""
    a = _square(a, "cholesky")
    if symmetrize_input:
        a = (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2
    low = ops._comp().emit("cholesky", a, lower=True, shape=(a.shape, a.dtype), op_name="cholesky")
    return jnp.conj(jnp.swapaxes(low, -1, -2)) if upper else low


def _triangular_solve(a, b, *, lower: bool, unit_diagonal: bool):
    """x with a x = b for triangular a (b: [..., n, k])."""
    return ops._comp().emit(
        "triangular-solve",
        a,
        b,
        left_side=True,
        lower=lower,
        unit_diagonal=unit_diagonal,
        transpose_a="NO_TRANSPOSE",
        shape=(b.shape, b.dtype),
        op_name="triangular_solve",
    )


def _lu(a):
    """(lu, permutation, swaps): L below the diagonal (unit diagonal
    implied) and U on and above it with P a = L U, as LAPACK's getrf; the
    permutation as row indices, swaps the number of row exchanges."""
    from uir import lax

    n = a.shape[-1]
    batch = a.shape[:-2]
    rows = ops.iota(np.dtype(np.int32), a.shape, a.ndim - 2)
    cols = ops.iota(np.dtype(np.int32), a.shape, a.ndim - 1)
    perm0 = jnp.broadcast_to(jnp.arange(n, dtype=np.int32), (*batch, n))
    swaps0 = jnp.zeros(batch, np.int32)

    def step(k, state):
        lu, perm, swaps = state
        column = jnp.sum(jnp.where(cols == k, lu, 0), axis=-1)  # [..., n]
        index = jnp.arange(n, dtype=np.int32)
        magnitude = jnp.where(index >= k, jnp.abs(column), -1)
        p = jnp.argmax(magnitude, axis=-1).astype(np.int32)  # [...]
        p_ = jnp.expand_dims(jnp.expand_dims(p, -1), -1)
        row_k = jnp.sum(jnp.where(rows == k, lu, 0), axis=-2, keepdims=True)
        row_p = jnp.sum(jnp.where(rows == p_, lu, 0), axis=-2, keepdims=True)
        lu = jnp.where(rows == k, row_p, jnp.where(rows == p_, row_k, lu))
        pk = jnp.sum(jnp.where(index == k, perm, 0), axis=-1, keepdims=True)
        pp = jnp.sum(jnp.where(index == jnp.expand_dims(p, -1), perm, 0), axis=-1, keepdims=True)
        perm = jnp.where(index == k, pp, jnp.where(index == jnp.expand_dims(p, -1), pk, perm))
        swaps = swaps + (p != k).astype(np.int32)
        pivot_row = jnp.sum(jnp.where(rows == k, lu, 0), axis=-2, keepdims=True)  # [..., 1, n]
        pivot = jnp.sum(jnp.where(cols == k, pivot_row, 0), axis=-1, keepdims=True)  # [..., 1, 1]
        column = jnp.sum(jnp.where(cols == k, lu, 0), axis=-1, keepdims=True)  # [..., n, 1]
        safe = jnp.where(pivot == 0, 1, pivot)
        factors = jnp.where(rows > k, column / safe, 0)  # [..., n, 1] broadcast over columns
        lu = lu - jnp.where(cols > k, factors * pivot_row, 0)
        lu = jnp.where((cols == k) & (rows > k), factors, lu)
        return lu, perm, swaps

    return lax.fori_loop(0, n, step, (a, perm0, swaps0))


@eager
def lu_factor(a):
    """(lu, pivots-as-permutation) of P a = L U with partial pivoting."""
    lu, perm, _ = _lu(_square(a, "lu_factor"))
    return lu, perm


@eager
def solve(a, b):
    """x with a x = b; b is a vector (a's last dimension) or a matrix."""
    a = _square(a, "solve")
    b = asarray(b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = jnp.expand_dims(b, -1)
    a, b = ops.promote("solve", a, b)
    if b.shape[-2] != a.shape[-1]:
        fail("linalg.solve", f"{ops.describe(a)} and {ops.describe(b)} do not fit")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = jnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    lu, perm, _ = _lu(a)
    pb = jnp.take_along_axis(b, jnp.broadcast_to(jnp.expand_dims(perm, -1), b.shape), axis=-2)
    y = _triangular_solve(lu, pb, lower=True, unit_diagonal=True)
    x = _triangular_solve(lu, y, lower=False, unit_diagonal=False)
    return x[..., 0] if vector else x


@eager
def inv(a):
    """The inverse of a."""
    a = _square(a, "inv")
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return solve(a, eye)


@eager
def slogdet(a):
    """(sign, log|det a|)."""
    a = _square(a, "slogdet")
    lu, _, swaps = _lu(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    parity = jnp.where(swaps % 2 == 1, -1, 1).astype(a.dtype)
    if dtypes.is_complex(a.dtype):
        mag = jnp.abs(diag)
        sign = parity * jnp.prod(diag / jnp.where(mag == 0, 1, mag), axis=-1)
    else:
        sign = parity * jnp.prod(jnp.sign(diag), axis=-1)
    logdet = jnp.sum(jnp.log(jnp.abs(diag)), axis=-1)
    return sign, logdet


@eager
def det(a):
    """The determinant of a."""
    a = _square(a, "det")
    lu, _, swaps = _lu(a)
    parity = jnp.where(swaps % 2 == 1, -1, 1).astype(a.dtype)
    return parity * jnp.prod(jnp.diagonal(lu, axis1=-2, axis2=-1), axis=-1)


def _pairs(n: int):
    """The (p, q) pairs p < q of a cyclic Jacobi sweep, as two int32 tables."""
    ps, qs = np.triu_indices(n, 1)
    return jnp.asarray(ps.astype(np.int32)), jnp.asarray(qs.astype(np.int32))


def _pick(table, k):
    """table[k] for a traced k, as a one-hot sum."""
    return jnp.sum(jnp.where(jnp.arange(table.shape[0], dtype=np.int32) == k, table, 0))


def _rotate_columns(m, p, q, c, s, cols):
    """m with columns p and q replaced by c*m_p - s*m_q and s*m_p + c*m_q."""
    mp = jnp.sum(jnp.where(cols == p, m, 0), axis=-1, keepdims=True)
    mq = jnp.sum(jnp.where(cols == q, m, 0), axis=-1, keepdims=True)
    return jnp.where(cols == p, c * mp - s * mq, jnp.where(cols == q, s * mp + c * mq, m))


def _jacobi_rotation(app, aqq, apq):
    """(c, s) of the rotation that zeroes apq of the symmetric 2x2 block
    [[app, apq], [apq, aqq]] (Golub and Van Loan's sym.schur2): for eigh the
    block itself, for the one-sided SVD the Gram block of two columns."""
    small = jnp.abs(apq) <= jnp.finfo(apq.dtype).tiny
    tau = (aqq - app) / (2 * jnp.where(small, 1, apq))
    t = jnp.sign(tau) / (jnp.abs(tau) + jnp.sqrt(1 + tau * tau))
    t = jnp.where(tau == 0, 1, t)
    c = jnp.where(small, 1, 1 / jnp.sqrt(1 + t * t))
    return c, jnp.where(small, 0, t * c)


_SWEEPS = 12  # cyclic Jacobi converges quadratically: a dozen sweeps reach f64 accuracy


@eager
def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """(eigenvalues ascending, eigenvectors as columns) of a real symmetric
    matrix, by cyclic Jacobi rotations (a fixed number of sweeps, traced as
    loops)."""
    from uir import lax

    a = _square(a, "eigh")
    if dtypes.is_complex(a.dtype):
        fail("linalg.eigh", "complex Hermitian matrices are not supported yet")
    if a.ndim != 2:
        fail("linalg.eigh", "batched matrices are not supported yet")
    if UPLO == "L" or (UPLO is None and not symmetrize_input):
        a = jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)
    elif UPLO == "U":
        a = jnp.triu(a) + jnp.swapaxes(jnp.triu(a, 1), -1, -2)
    elif symmetrize_input:
        a = (a + jnp.swapaxes(a, -1, -2)) / 2
    n = a.shape[-1]
    if n == 1:
        return jnp.reshape(a, (1,)), jnp.ones((1, 1), a.dtype)
    ps, qs = _pairs(n)
    rows = ops.iota(np.dtype(np.int32), a.shape, 0)
    cols = ops.iota(np.dtype(np.int32), a.shape, 1)

    def rotation(k, state):
        m, v = state
        p, q = _pick(ps, k), _pick(qs, k)
        app = jnp.sum(jnp.where((rows == p) & (cols == p), m, 0))
        aqq = jnp.sum(jnp.where((rows == q) & (cols == q), m, 0))
        apq = jnp.sum(jnp.where((rows == p) & (cols == q), m, 0))
        c, s = _jacobi_rotation(app, aqq, apq)
        m = _rotate_columns(m, p, q, c, s, cols)
        m = jnp.swapaxes(_rotate_columns(jnp.swapaxes(m, -1, -2), p, q, c, s, cols), -1, -2)
        v = _rotate_columns(v, p, q, c, s, cols)
        return m, v

    def sweep(_, state):
        return lax.fori_loop(0, ps.shape[0], rotation, state)

    m, v = lax.fori_loop(0, _SWEEPS, sweep, (a, jnp.eye(n, dtype=a.dtype)))
    w = jnp.diagonal(m)
    order = jnp.argsort(w)
    return jnp.take(w, order), jnp.take(v, order, axis=1)


@eager
def eigvalsh(a, UPLO: str | None = None):
    """The eigenvalues of a real symmetric matrix, ascending."""
    return eigh(a, UPLO)[0]


@eager
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """(u, s, vh) with a = u diag(s) vh, s descending, by one-sided Jacobi
    (Hestenes) rotations of a's columns; full_matrices=False (the reduced
    factors) only."""
    from uir import lax

    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        a = a.astype(dtypes.default_float())
    if a.ndim != 2:
        fail("linalg.svd", "batched matrices are not supported yet")
    m_, n_ = a.shape
    if full_matrices and m_ != n_ and compute_uv:
        fail("linalg.svd", "full_matrices=True for non-square matrices is not supported yet")
    transposed = m_ < n_
    x = jnp.swapaxes(a, 0, 1) if transposed else a
    n = x.shape[1]
    cols_x = ops.iota(np.dtype(np.int32), x.shape, 1)
    cols_v = ops.iota(np.dtype(np.int32), (n, n), 1)
    if n > 1:
        ps, qs = _pairs(n)

        def rotation(k, state):
            u, v = state
            p, q = _pick(ps, k), _pick(qs, k)
            up = jnp.sum(jnp.where(cols_x == p, u, 0), axis=-1)
            uq = jnp.sum(jnp.where(cols_x == q, u, 0), axis=-1)
            alpha, beta, gamma = jnp.sum(up * up), jnp.sum(uq * uq), jnp.sum(up * uq)
            c, s = _jacobi_rotation(alpha, beta, gamma)
            return _rotate_columns(u, p, q, c, s, cols_x), _rotate_columns(v, p, q, c, s, cols_v)

        def sweep(_, state):
            return lax.fori_loop(0, ps.shape[0], rotation, state)

        x, v = lax.fori_loop(0, _SWEEPS, sweep, (x, jnp.eye(n, dtype=a.dtype)))
    else:
        v = jnp.eye(1, dtype=a.dtype)
    sv = jnp.sqrt(jnp.sum(x * x, axis=0))
    order = jnp.argsort(-sv)
    sv = jnp.take(sv, order)
    if not compute_uv:
        return sv
    u = jnp.take(x, order, axis=1) / jnp.where(sv == 0, 1, sv)
    v = jnp.take(v, order, axis=1)
    if transposed:
        return v, sv, jnp.swapaxes(u, 0, 1)
    return u, sv, jnp.swapaxes(v, 0, 1)


@eager
def qr(a, mode: str = "reduced"):
    """(q, r) with a = q r, q orthonormal, r upper triangular, by Householder
    reflections (a loop over columns); mode 'reduced', 'complete' or 'r'."""
    from uir import lax

    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        a = a.astype(dtypes.default_float())
    if a.ndim != 2:
        fail("linalg.qr", "batched matrices are not supported yet")
    if mode not in ("reduced", "complete", "r"):
        fail("linalg.qr", f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = a.shape
    k = min(m, n)
    rows = jnp.arange(m, dtype=np.int32)
    cols_r = ops.iota(np.dtype(np.int32), (m, n), 1)

    def reflect(j, state):
        r, q = state
        col = jnp.sum(jnp.where(cols_r == j, r, 0), axis=1)
        x = jnp.where(rows >= j, col, 0)
        norm_x = jnp.sqrt(jnp.sum(x * x))
        xj = jnp.sum(jnp.where(rows == j, x, 0))
        alpha = jnp.where(xj > 0, -norm_x, norm_x)
        v = x - jnp.where(rows == j, alpha, 0)
        vnorm2 = jnp.sum(v * v)
        beta = jnp.where(vnorm2 == 0, 0, 2 / jnp.where(vnorm2 == 0, 1, vnorm2))
        # H = I - beta v v^T applied to r from the left and to q from the right.
        r = r - beta * jnp.outer(v, v @ r)
        q = q - beta * jnp.outer(q @ v, v)
        return r, q

    r, q = lax.fori_loop(0, k, reflect, (a, jnp.eye(m, dtype=a.dtype)))
    r = jnp.triu(r)
    if mode == "r":
        return r[:k]
    if mode == "reduced":
        return q[:, :k], r[:k]
    return q, r


@eager
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector norms (ord None/2, 1, inf, -inf, 0, p) and matrix norms
    ('fro', 1, -1, inf, -inf, and through the SVD 2, -2, 'nuc')."""
    x = asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = x.astype(dtypes.default_float())
    if axis is None:
        if ord is None:
            return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), keepdims=keepdims))
        axis = tuple(range(x.ndim))
        if x.ndim > 2:
            fail("linalg.norm", "ord needs axis for arrays of more than two dimensions")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(ops.normalize_axis(a, x.ndim, "norm") for a in axes)
    mag = jnp.abs(x)
    if len(axes) == 1:
        ax = axes[0]
        if ord is None or ord == 2:
            return jnp.sqrt(jnp.sum(mag * mag, axis=ax, keepdims=keepdims))
        if ord == np.inf:
            return jnp.max(mag, axis=ax, keepdims=keepdims)
        if ord == -np.inf:
            return jnp.min(mag, axis=ax, keepdims=keepdims)
        if ord == 0:
            return jnp.sum((mag != 0).astype(mag.dtype), axis=ax, keepdims=keepdims)
        if ord == 1:
            return jnp.sum(mag, axis=ax, keepdims=keepdims)
        if isinstance(ord, str):
            fail("linalg.norm", f"ord {ord!r} is for matrices")
        return jnp.sum(mag**ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        fail("linalg.norm", f"axis names one or two dimensions, got {axis!r}")
    r, c = axes
    if ord is None or ord == "fro":
        out = jnp.sqrt(jnp.sum(mag * mag, axis=axes, keepdims=keepdims))
    elif ord in (1, -1):
        sums = jnp.sum(mag, axis=r, keepdims=True)
        out = (jnp.max if ord == 1 else jnp.min)(sums, axis=c, keepdims=True)
        out = out if keepdims else jnp.squeeze(out, axis=(r, c))
    elif ord in (np.inf, -np.inf):
        sums = jnp.sum(mag, axis=c, keepdims=True)
        out = (jnp.max if ord == np.inf else jnp.min)(sums, axis=r, keepdims=True)
        out = out if keepdims else jnp.squeeze(out, axis=(r, c))
    elif ord in (2, -2, "nuc") and x.ndim == 2:
        sv = svd(jnp.transpose(x, (r, c)), compute_uv=False)
        out = jnp.sum(sv) if ord == "nuc" else (jnp.max(sv) if ord == 2 else jnp.min(sv))
        out = jnp.reshape(out, (1, 1)) if keepdims else out
    else:
        fail(
            "linalg.norm",
            f"matrix norm ord={ord!r} is not supported (2, -2 and 'nuc' for 2-D only)",
        )
    return out


__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "lu_factor",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "svd",
]
