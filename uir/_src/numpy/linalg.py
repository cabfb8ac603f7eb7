"""uir.numpy.linalg's functions: jax.numpy.linalg's names built on
uir.lax.linalg's LAPACK calls (uir._src.lax.linalg) as JAX builds them:
solves and inverses from the LU, determinants, the NumPy-style faces of
cholesky, qr, eigh, svd and eig, pseudo-inverses, least squares, ranks,
condition numbers, norms and the tensor and array-API helpers."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.lax import stop_gradient
from uir._src.lax.linalg import (
    _INT,
    _geqrf,
    _h,
    _matrix,
    _real_dtype,
    _swap_last,
    cholesky,
    eig,
    eigh,
    lu,
    qr,
    qr_r,
    svd,
    triangular_solve,
)
from uir._src.numpy import creation, manipulation, products, reductions, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy import sorting as np_sorting
from uir._src.numpy.util import public_asarray


def _solve_with_lu(lu_, permutation, b):
    """x with a x = b from a's LU (b: [..., n, k])."""
    rows = manipulation.broadcast_to(manipulation.expand_dims(permutation, -1), b.shape)
    x = np_indexing.take_along_axis(b, rows, axis=-2)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)


@eager
def solve(a, b):
    """x with a x = b: b a vector (1-D) or matrices [..., m, k], batch
    dimensions broadcast (JAX's rule since 0.5: only a 1-D b is a
    vector)."""
    a = _matrix(a, "solve", square=True)
    b = asarray(b)
    a, b = ops.promote("linalg.solve", a, b)
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] != b.shape[-2]:
        fail(
            "linalg.solve",
            f"{ops.describe(a)} and {ops.describe(b)}: b's last two dimensions are not [m, k] "
            "(a batch of vectors is solve(a, b[..., None])[..., 0])",
        )
    vector = b.ndim == 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        fail("linalg.solve", f"{ops.describe(a)} and {ops.describe(b)} do not fit")
    if a.shape[-1] == 0:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = creation.zeros((*batch, *b.shape[-2:]), a.dtype)
        return out[..., 0] if vector else out
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = manipulation.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = manipulation.broadcast_to(b, (*batch, *b.shape[-2:]))
    lu_, _, permutation = lu(a)
    x = _solve_with_lu(lu_, permutation, b)
    return x[..., 0] if vector else x


@eager
def inv(a):
    """The inverse of each matrix of a."""
    a = _matrix(a, "inv", square=True)
    return solve(a, manipulation.broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape))


def _parity_sign(pivots, dtype):
    swaps = reductions.sum(
        (pivots != creation.arange(pivots.shape[-1], dtype=_INT)).astype(_INT), axis=-1
    )
    return ufuncs.where(swaps % 2 == 1, -1, 1).astype(dtype)


@eager
def slogdet(a, *, method: str | None = None):
    """(sign, log|det a|) from the LU (method 'lu', the default; sign 0 and
    -inf for a singular matrix) or from a QR (method 'qr', real only)."""
    a = _matrix(a, "slogdet", square=True)
    if method == "qr":
        if dtypes.is_complex(a.dtype):
            fail("linalg.slogdet", "method='qr' is for real matrices (as in JAX)")
        n = a.shape[-1]
        # r from qr's tagged call (which differentiates); the reflectors'
        # count of sign flips from geqrf's taus, which carry no derivative
        r = qr_r(a)
        _, taus = _geqrf(stop_gradient(a))
        diag = creation.diagonal(r, axis1=-2, axis2=-1)
        flips = reductions.prod(ufuncs.where(taus[..., : n - 1] != 0, -1, 1), axis=-1).astype(
            a.dtype
        )
        return reductions.prod(ufuncs.sign(diag), axis=-1) * flips, reductions.sum(
            ufuncs.log(ufuncs.abs(diag)), axis=-1
        )
    if method not in (None, "lu"):
        fail("linalg.slogdet", f"method must be 'lu' or 'qr', got {method!r}")
    lu_, pivots, _ = lu(a)
    diag = creation.diagonal(lu_, axis1=-2, axis2=-1)
    magnitude = ufuncs.abs(diag)
    singular = reductions.any(diag == 0, axis=-1)
    if dtypes.is_complex(a.dtype):
        units = diag / ufuncs.where(magnitude == 0, 1, magnitude).astype(a.dtype)
    else:
        units = ufuncs.sign(diag)
    sign = _parity_sign(pivots, a.dtype) * reductions.prod(units, axis=-1)
    logdet = reductions.sum(ufuncs.log(magnitude), axis=-1)
    zero = creation.zeros((), a.dtype)
    return (
        ufuncs.where(singular, zero, sign),
        ufuncs.where(singular, public_asarray(-np.inf, logdet.dtype), logdet),
    )


@eager
def det(a):
    """The determinant of each matrix: closed forms for 2x2 and 3x3 (as
    JAX), the LU otherwise."""
    a = _matrix(a, "det", square=True)
    n = a.shape[-1]
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:
        return (
            a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2]
        )
    lu_, pivots, _ = lu(a)
    diag = creation.diagonal(lu_, axis1=-2, axis2=-1)
    return _parity_sign(pivots, a.dtype) * reductions.prod(diag, axis=-1)


@eager
def np_cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """L with a = L L^H (U with a = U^H U when upper) for Hermitian positive
    definite a; NaNs where a is not positive definite."""
    low = cholesky(a, symmetrize_input=symmetrize_input)
    return _h(low) if upper else low


@eager
def np_qr(a, mode: str = "reduced"):
    """(q, r) with a = q r; mode 'reduced' (k = min(m, n) columns of q),
    'complete' (all m) or 'r' (r alone)."""
    if mode not in ("reduced", "complete", "r"):
        fail("linalg.qr", f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "r":
        # r alone: no q to form (as JAX's lowering, no orgqr)
        return qr_r(a)
    return qr(a, full_matrices=mode == "complete")


@eager
def np_eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """(eigenvalues ascending, eigenvectors as columns) of Hermitian a."""
    if UPLO not in (None, "L", "U"):
        fail("linalg.eigh", f"UPLO must be 'L' or 'U', got {UPLO!r}")
    v, w = eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return w, v


@eager
def eigvalsh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """The ascending eigenvalues of Hermitian a."""
    return np_eigh(a, UPLO, symmetrize_input)[0]


@eager
def np_svd(
    a,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index=None,
):
    """(u, s, vh) with a = u diag(s) vh, s descending; s alone without
    compute_uv; with subset_by_index (start, end), those ranks alone.
    hermitian=True takes them from the eigendecomposition, as JAX does."""
    a = _matrix(a, "svd")
    if subset_by_index is not None:
        if hermitian:
            fail("linalg.svd", "subset_by_index is not supported with hermitian=True")
        return svd(a, full_matrices=False, compute_uv=compute_uv, subset_by_index=subset_by_index)
    if not hermitian:
        return svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    v, w = eigh(a)
    s = ufuncs.abs(w)
    order = manipulation.flip(np_sorting.argsort(s, axis=-1), axis=-1)
    s = np_indexing.take_along_axis(s, order, axis=-1)
    if not compute_uv:
        return s
    sign = np_indexing.take_along_axis(ufuncs.sign(w), order, axis=-1).astype(a.dtype)
    u = np_indexing.take_along_axis(
        v, manipulation.broadcast_to(manipulation.expand_dims(order, -2), v.shape), axis=-1
    )
    return u, s, _h(u * manipulation.expand_dims(sign, -2))


@eager
def svdvals(x):
    """The singular values, descending."""
    return svd(x, compute_uv=False)


@eager
def np_eig(a):
    """(eigenvalues, right eigenvectors as columns), complex."""
    w, v = eig(a, compute_left_eigenvectors=False)
    return w, v


@eager
def eigvals(a):
    """The (complex) eigenvalues."""
    return eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


@eager
def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse through the SVD: singular values at
    or below rtol times the largest count as zero (rtol defaults to
    10 max(m, n) eps; rcond is its old name)."""
    if rcond is not None:
        if rtol is not None:
            fail("linalg.pinv", "give rtol or rcond, not both")
        rtol = rcond
    a = _matrix(a, "pinv")
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return creation.zeros((*a.shape[:-2], n, m), a.dtype)
    x = ufuncs.conj(a) if dtypes.is_complex(a.dtype) else a
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(np.finfo(np.dtype(_real_dtype(a.dtype))).eps)
    u, s, vh = np_svd(x, full_matrices=False, hermitian=hermitian)
    rtol = asarray(rtol).astype(s.dtype)
    cutoff = manipulation.expand_dims(rtol, -1) * s[..., 0:1]
    s = ufuncs.where(s > cutoff, s, np.inf).astype(u.dtype)
    return products.matmul(_swap_last(vh), _swap_last(u) / manipulation.expand_dims(s, -1))


@eager
def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """The number of singular values above the tolerance: by default the
    largest singular value times max(m, n) eps; a given rtol (or tol) is
    the threshold itself, as in JAX."""
    if tol is not None:
        if rtol is not None:
            fail("linalg.matrix_rank", "give rtol or tol, not both")
        rtol = tol
    M = asarray(M)
    if not (dtypes.is_float(M.dtype) or dtypes.is_complex(M.dtype)):
        M = M.astype(dtypes.default_float())
    if M.ndim < 2:
        return reductions.any(M != 0).astype(_INT)
    s = np_svd(
        _matrix(M, "matrix_rank"), full_matrices=False, compute_uv=False, hermitian=hermitian
    )
    if rtol is None:
        rtol = (
            reductions.max(s, axis=-1) * max(M.shape[-2:]) * float(np.finfo(np.dtype(s.dtype)).eps)
        )
    threshold = manipulation.expand_dims(asarray(rtol).astype(s.dtype), -1)
    return reductions.sum((s > threshold).astype(dtypes.default_int()), axis=-1)


@eager
def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """(x, residuals, rank, s): the least-squares solution of a x = b
    through the SVD. As JAX, the residuals |b - a x|^2 (per column of b)
    are always computed; NumPy's empty residuals (numpy_resid=True) depend
    on the rank, a traced value, and are not available."""
    if numpy_resid:
        fail(
            "linalg.lstsq",
            "numpy_resid=True makes the residuals' shape depend on the computed rank; "
            "use the default (residuals always computed)",
        )
    a = _matrix(a, "lstsq")
    b = asarray(b)
    a, b = ops.promote("linalg.lstsq", a, b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        fail(
            "linalg.lstsq",
            f"needs a 2-D a and b with its rows, got {ops.describe(a)} and {ops.describe(b)}",
        )
    vector = b.ndim == 1
    b2 = manipulation.expand_dims(b, -1) if vector else b
    m, n = a.shape
    real = _real_dtype(a.dtype)
    if m == 0 or n == 0:
        s = creation.zeros((0,), real)
        rank = public_asarray(0, _INT)
        x = creation.zeros((n, b2.shape[1]), a.dtype)
    else:
        eps = float(np.finfo(np.dtype(real)).eps)
        rcond = eps * max(m, n) if rcond is None else ufuncs.where(asarray(rcond) < 0, eps, rcond)
        u, s, vh = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= asarray(rcond).astype(real) * s[0])
        rank = reductions.sum(mask.astype(_INT))
        safe = ufuncs.where(mask, s, 1).astype(a.dtype)
        s_inv = manipulation.expand_dims(ufuncs.where(mask, 1 / safe, 0), -1)
        x = products.matmul(_h(vh), s_inv * products.matmul(_h(u), b2))
    r = b2 - products.matmul(a, x)
    resid = reductions.sum(ufuncs.real(r * ufuncs.conj(r)), axis=0)
    if vector:
        x = x[:, 0]
    return x, resid, rank, s


@eager
def matrix_power(a, n: int):
    """a raised to the integer power n by repeated squaring (the inverse's
    power for n < 0)."""
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        fail("linalg.matrix_power", f"needs square matrices, got {ops.describe(a)}")
    n = int(n)
    if n == 0:
        return manipulation.broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    square = a
    while n:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


@eager
def cond(x, p=None):
    """The condition number in norm p (2 by default: the ratio of extreme
    singular values)."""
    x = _matrix(x, "cond")
    if 0 in x.shape[-2:]:
        fail("linalg.cond", f"needs non-empty matrices, got {ops.describe(x)}")
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-1] != x.shape[-2]:
            fail("linalg.cond", f"p={p!r} needs square matrices, got {ops.describe(x)}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # A singular matrix: infinity where x itself holds no NaN (as JAX).
    has_nan = reductions.any(ufuncs.isnan(x), axis=(-2, -1))
    return ufuncs.where(ufuncs.isnan(r) & ~has_nan, np.inf, r)


@eager
def tensorinv(a, ind: int = 2):
    """The inverse of a seen as a matrix of its first `ind` dimensions by
    the rest."""
    a = asarray(a)
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = int(np.prod(a.shape[:ind]))
    matrix = manipulation.reshape(a, (rows, -1))
    if matrix.shape[-1] != rows:
        fail("linalg.tensorinv", f"{ops.describe(a)} with ind={ind} is not square as a matrix")
    return manipulation.reshape(inv(matrix), out_shape)


@eager
def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b."""
    a, b = asarray(a), asarray(b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in [ax % a.ndim for ax in axes]]
        a = manipulation.transpose(a, order + [ax % a.ndim for ax in axes])
    out_shape = a.shape[b.ndim :]
    rows = int(np.prod(b.shape))
    x = solve(manipulation.reshape(a, (rows, -1)), manipulation.reshape(b, (rows,)))
    return manipulation.reshape(x, out_shape)


@eager
def multi_dot(arrays, *, precision=None):
    """The product of the matrices, in an order that keeps the intermediate
    sizes small (the classic dynamic program over the chain)."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        fail("linalg.multi_dot", "needs at least two arrays")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = manipulation.expand_dims(arrays[0], 0)
    if last_vector:
        arrays[-1] = manipulation.expand_dims(arrays[-1], -1)
    dims = [arrays[0].shape[0]] + [x.shape[1] for x in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i, j):
        if i == j:
            return arrays[i]
        s = split[i][j]
        return products.matmul(product(i, s), product(s + 1, j))

    out = product(0, k - 1)
    if first_vector:
        out = out[0]
    if last_vector:
        out = out[..., 0]
    return out


@eager
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector norms (ord None/2, 1, inf, -inf, 0, p) and matrix norms
    ('fro', 1, -1, inf, -inf, and through the SVD 2, -2 and 'nuc')."""
    x = asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = x.astype(dtypes.default_float())
    if axis is None:
        if ord is None:
            return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), keepdims=keepdims))
        axis = tuple(range(x.ndim))
        if x.ndim > 2:
            fail("linalg.norm", "ord needs axis for arrays of more than two dimensions")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(ops.normalize_axis(a, x.ndim, "norm") for a in axes)
    mag = ufuncs.abs(x)
    if len(axes) == 1:
        ax = axes[0]
        if ord is None or ord == 2:
            return ufuncs.sqrt(reductions.sum(mag * mag, axis=ax, keepdims=keepdims))
        if ord == np.inf:
            return reductions.max(mag, axis=ax, keepdims=keepdims)
        if ord == -np.inf:
            return reductions.min(mag, axis=ax, keepdims=keepdims)
        if ord == 0:
            return reductions.sum((mag != 0).astype(mag.dtype), axis=ax, keepdims=keepdims)
        if ord == 1:
            return reductions.sum(mag, axis=ax, keepdims=keepdims)
        if isinstance(ord, str):
            fail("linalg.norm", f"ord {ord!r} is for matrices")
        return reductions.sum(mag**ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    if len(axes) != 2:
        fail("linalg.norm", f"axis names one or two dimensions, got {axis!r}")
    r, c = axes
    if ord is None or ord == "fro":
        out = ufuncs.sqrt(reductions.sum(mag * mag, axis=axes, keepdims=keepdims))
    elif ord in (1, -1):
        sums = reductions.sum(mag, axis=r, keepdims=True)
        out = (reductions.max if ord == 1 else reductions.min)(sums, axis=c, keepdims=True)
        out = out if keepdims else manipulation.squeeze(out, axis=(r, c))
    elif ord in (np.inf, -np.inf):
        sums = reductions.sum(mag, axis=c, keepdims=True)
        out = (reductions.max if ord == np.inf else reductions.min)(sums, axis=r, keepdims=True)
        out = out if keepdims else manipulation.squeeze(out, axis=(r, c))
    elif ord in (2, -2, "nuc"):
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        sv = svd(manipulation.transpose(x, (*rest, r, c)), compute_uv=False)
        reduce = (
            reductions.sum if ord == "nuc" else (reductions.max if ord == 2 else reductions.min)
        )
        out = reduce(sv, axis=-1)
        if keepdims:
            out = manipulation.expand_dims(out, tuple(sorted((r, c))))
    else:
        fail(
            "linalg.norm",
            f"matrix norm ord={ord!r} is not one of None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf",
        )
    return out


@eager
def matrix_norm(x, ord="fro", keepdims: bool = False):
    """The norm of each matrix in the last two dimensions."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@eager
def vector_norm(x, ord=2, axis=None, keepdims: bool = False):
    """The vector norm over `axis`, one or several dimensions taken as one
    vector (all of x by default)."""
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else axis
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    axes = tuple(sorted(ops.normalize_axis(a, x.ndim, "vector_norm") for a in axes))
    rest = [d for d in range(x.ndim) if d not in axes]
    flat = manipulation.reshape(
        manipulation.transpose(x, (*rest, *axes)), (*[x.shape[d] for d in rest], -1)
    )
    out = norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = manipulation.reshape(
            out, tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
        )
    return out
