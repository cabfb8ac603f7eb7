"""jax.scipy.linalg's solvers and decompositions: SciPy's spellings
(upper Cholesky by default, (c, lower) and (lu, piv) pairs, trans codes,
p l u triples) over uir.lax.linalg's LAPACK calls, and expm by scaling and
squaring of a degree-13 Padé approximant."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import fail
from uir._src.lax import control_flow
from uir._src.lax import linalg as lax_linalg
from uir._src.lax.linalg import _h, _matrix
from uir._src.numpy import creation, manipulation, products, reductions, sorting, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy import linalg as np_linalg
from uir._src.numpy.util import public_asarray


def _inexact(a, name: str):
    a = public_asarray(a)
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        a = ops.convert(a, dtypes.default_float())
    return _matrix(a, name)


def _trans(trans, name: str) -> int:
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if trans not in codes:
        fail(name, f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return codes[trans]


@eager(static=("lower",))
def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of Hermitian positive definite a: upper U with
    a = U^H U by default, lower L with a = L L^H when lower."""
    low = lax_linalg.cholesky(_inexact(a, "cholesky"))
    return low if lower else _h(low)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower): cholesky(a, lower) and which triangle it is, for cho_solve."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    return _cho_solve(c, b, lower=bool(lower))


@eager(static=("lower",))
def _cho_solve(c, b, lower: bool):
    c = _inexact(c, "cho_solve")
    b = public_asarray(b)
    c, b = ops.promote("cho_solve", c, b)
    vector = b.ndim == 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    if b.shape[-2] != c.shape[-1]:
        fail("cho_solve", f"{ops.describe(c)} and {ops.describe(b)} do not fit")
    low = c if lower else _h(c)
    y = lax_linalg.triangular_solve(low, b, left_side=True, lower=True)
    x = lax_linalg.triangular_solve(
        low, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )
    return x[..., 0] if vector else x


@eager(static=("trans", "lower", "unit_diagonal"))
def solve_triangular(
    a,
    b,
    trans=0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug=None,
    check_finite: bool = True,
):
    """x with op(a) x = b for triangular a (its other triangle ignored);
    op per trans: 0 or 'N' a, 1 or 'T' aᵀ, 2 or 'C' aᴴ; b a vector or matrices."""
    code = _trans(trans, "solve_triangular")
    a = _inexact(a, "solve_triangular")
    b = public_asarray(b)
    a, b = ops.promote("solve_triangular", a, b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    if b.shape[-2] != a.shape[-1]:
        fail("solve_triangular", f"{ops.describe(a)} and {ops.describe(b)} do not fit")
    x = lax_linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=code > 0,
        conjugate_a=code == 2,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vector else x


@eager(static=("permute_l",))
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p l u (l unit lower trapezoidal, u upper); with
    permute_l, (p l, u)."""
    a = _inexact(a, "lu")
    *_, m, n = a.shape
    k = min(m, n)
    packed, _, permutation = lax_linalg.lu(a)
    l_ = ufuncs.add(creation.tril(packed[..., :, :k], -1), creation.eye(m, k, dtype=a.dtype))
    u = creation.triu(packed[..., :k, :])
    # p[permutation[i], i] = 1: row i of l u is row permutation[i] of a.
    p = ufuncs.equal(
        manipulation.expand_dims(np_indexing.take(np.arange(m), permutation), -2),
        np.arange(m)[:, None],
    ).astype(a.dtype)
    if permute_l:
        return products.matmul(p, l_), u
    return p, l_, u


@eager
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): l and u packed in one matrix (l's unit diagonal implied),
    and the row swaps (row i was swapped with row piv[i]), as LAPACK's getrf."""
    packed, pivots, _ = lax_linalg.lu(_inexact(a, "lu_factor"))
    return packed, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """x with op(a) x = b from lu_factor's (lu, piv); op per trans as in
    solve_triangular."""
    packed, pivots = lu_and_piv
    return _lu_solve(packed, pivots, b, trans=_trans(trans, "lu_solve"))


@eager(static=("trans",))
def _lu_solve(packed, pivots, b, trans: int):
    packed = _inexact(packed, "lu_solve")
    b = public_asarray(b)
    packed, b = ops.promote("lu_solve", packed, b)
    n = packed.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = manipulation.expand_dims(b, -1)
    if b.shape[-2] != n:
        fail("lu_solve", f"{ops.describe(packed)} and {ops.describe(b)} do not fit")
    permutation = lax_linalg.lu_pivots_to_permutation(pivots, n)
    if trans == 0:
        rows = manipulation.broadcast_to(manipulation.expand_dims(permutation, -1), b.shape)
        x = np_indexing.take_along_axis(b, rows, axis=-2)
        x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax_linalg.triangular_solve(packed, x, left_side=True, lower=False)
    else:
        # aᵀ = uᵀ lᵀ pᵀ: solve with uᵀ, then lᵀ, then undo the permutation.
        conj = trans == 2
        x = lax_linalg.triangular_solve(
            packed, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
        )
        x = lax_linalg.triangular_solve(
            packed,
            x,
            left_side=True,
            lower=True,
            transpose_a=True,
            conjugate_a=conj,
            unit_diagonal=True,
        )
        inverse = sorting.argsort(permutation, axis=-1)  # where each row went
        rows = manipulation.broadcast_to(manipulation.expand_dims(inverse, -1), x.shape)
        x = np_indexing.take_along_axis(x, rows, axis=-2)
    return x[..., 0] if vector else x


_ASSUME = (
    "gen",
    "sym",
    "her",
    "pos",
    "diagonal",
    "tridiagonal",
    "banded",
    "upper triangular",
    "lower triangular",
)


@eager(static=("lower", "assume_a"))
def solve(
    a,
    b,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
):
    """x with a x = b; assume_a 'pos' solves by Cholesky (of the triangle
    `lower` names), 'sym'/'her' read that triangle, the triangular kinds
    solve with it; 'gen' and the rest by LU."""
    if assume_a not in _ASSUME:
        fail("solve", f"assume_a must be one of {_ASSUME}, got {assume_a!r}")
    a = _inexact(a, "solve")
    if assume_a in ("upper triangular", "lower triangular"):
        return solve_triangular(a, b, lower=assume_a.startswith("lower"))
    if assume_a in ("sym", "her", "pos"):
        triangle = creation.tril(a) if lower else creation.triu(a)
        strict = creation.tril(a, -1) if lower else creation.triu(a, 1)
        other = manipulation.swapaxes(strict, -1, -2)
        a = ufuncs.add(triangle, ufuncs.conj(other) if assume_a != "sym" else other)
    if assume_a == "pos":
        return _cho_solve(lax_linalg.cholesky(a, symmetrize_input=False), b, lower=True)
    b = public_asarray(b)
    if b.ndim == a.ndim - 1 and b.ndim > 1:
        return np_linalg.solve(a, manipulation.expand_dims(b, -1))[..., 0]
    return np_linalg.solve(a, b)


@eager
def det(a, overwrite_a: bool = False, check_finite: bool = True):
    return np_linalg.det(a)


@eager
def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    return np_linalg.inv(a)


@eager(static=("full_matrices", "compute_uv", "lapack_driver"))
def svd(
    a,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
):
    """(u, s, vh) with a = u diag(s) vh; s alone without compute_uv."""
    if lapack_driver not in ("gesdd", "gesvd"):
        fail("svd", f"lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    return np_linalg.svd(_inexact(a, "svd"), full_matrices=full_matrices, compute_uv=compute_uv)


@eager(static=("mode", "pivoting"))
def qr(
    a,
    overwrite_a: bool = False,
    lwork=None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
):
    """(q, r) with a = q r: mode 'full' (q mxm), 'economic' (q mxk), 'r'
    (r alone, in a tuple), 'raw' refused; with pivoting, the column
    permutation p (a[:, p] = q r) last."""
    if mode not in ("full", "economic", "r"):
        fail("qr", f"mode must be 'full', 'economic' or 'r', got {mode!r}")
    a = _inexact(a, "qr")
    *_, m, n = a.shape
    k = min(m, n)
    if pivoting:
        q, r, p = lax_linalg.qr(a, pivoting=True, full_matrices=mode != "economic")
    else:
        q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    if mode == "economic":
        r = r[..., :k, :]
    if mode == "r":
        return (r, p) if pivoting else (r,)
    return (q, r, p) if pivoting else (q, r)


@eager(static=("lower", "eigvals_only", "type"))
def eigh(
    a,
    b=None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals=None,
    type: int = 1,
    check_finite: bool = True,
):
    """(w, v) of Hermitian a (the triangle `lower` names), eigenvalues
    ascending; w alone with eigvals_only. The generalized problem (b) and
    subsets (eigvals) are refused, as JAX refuses them."""
    if b is not None:
        fail("eigh", "the generalized eigenproblem (b) is not supported")
    if eigvals is not None:
        fail("eigh", "eigvals (a subset of the eigenvalues) is not supported")
    v, w = lax_linalg.eigh(_inexact(a, "eigh"), lower=lower, symmetrize_input=False)
    return w if eigvals_only else (w, v)


@eager(static=("output",))
def schur(a, output: str = "real"):
    """(t, z) with a = z t zᴴ: t quasi-upper-triangular ('real') or upper
    triangular ('complex')."""
    if output not in ("real", "complex", "r", "c"):
        fail("schur", f"output must be 'real' or 'complex', got {output!r}")
    a = _inexact(a, "schur")
    if output in ("complex", "c") and not dtypes.is_complex(a.dtype):
        a = ops.convert(a, np.complex64 if np.dtype(a.dtype) == np.float32 else np.complex128)
    t, z = lax_linalg.schur(a)
    return t, z


@eager(static=("calc_q",))
def hessenberg(a, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """h, upper Hessenberg with a = q h qᴴ; (h, q) with calc_q."""
    a = _inexact(a, "hessenberg")
    packed, taus = lax_linalg.hessenberg(a)
    h = creation.triu(packed, -1)
    if not calc_q:
        return h
    n = a.shape[-1]
    if n == 1:
        return h, creation.ones_like(a)
    reflectors = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    q = manipulation.pad_constant(reflectors, [(0, 0)] * (a.ndim - 2) + [(1, 0), (1, 0)])
    corner = ufuncs.equal(np.arange(n)[:, None] + np.arange(n), 0).astype(a.dtype)
    return h, ufuncs.add(q, corner)


@eager(static=("side", "method"))
def polar(a, side: str = "right", method: str = "svd", eps=None, max_iterations=None):
    """(u, p): a = u p (side 'right') or p u ('left'), u unitary, p
    Hermitian positive semi-definite; from the SVD."""
    if side not in ("right", "left"):
        fail("polar", f"side must be 'right' or 'left', got {side!r}")
    if method != "svd":
        fail("polar", f"method {method!r} is not supported; use 'svd'")
    a = _inexact(a, "polar")
    u_, s, vh = np_linalg.svd(a, full_matrices=False)
    u = products.matmul(u_, vh)
    scaled = ufuncs.multiply(manipulation.expand_dims(s, -1), vh)
    if side == "right":
        p = products.matmul(_h(vh), scaled)
    else:
        p = products.matmul(ufuncs.multiply(u_, manipulation.expand_dims(s, -2)), _h(u_))
    return u, p


# Padé coefficients of degree 13 for exp (Higham, 2005) and the largest
# 1-norm that degree keeps to double precision without scaling.
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


@eager(static=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential: a degree-13 Padé approximant of A / 2^s with
    s from A's 1-norm (at most max_squarings), squared s times; NaN where
    more squarings were needed."""
    A = _inexact(A, "expm")
    n = A.shape[-1]
    if A.shape[-2] != n:
        fail("expm", f"needs square matrices, got {ops.describe(A)}")
    norm = reductions.max(reductions.sum(ufuncs.abs(A), axis=-2), axis=-1)
    s = ufuncs.maximum(ufuncs.ceil(ufuncs.log2(ufuncs.divide(norm, _THETA13))), 0)
    s = ufuncs.where(ufuncs.isfinite(s), s, 0)
    scale = ufuncs.exp2(ufuncs.negative(s))
    a = ufuncs.multiply(A, scale[..., None, None])
    eye = manipulation.broadcast_to(creation.eye(n, dtype=A.dtype), A.shape)
    a2 = products.matmul(a, a)
    a4 = products.matmul(a2, a2)
    a6 = products.matmul(a4, a2)
    b = _PADE13
    inner_u = ufuncs.add(ufuncs.add(b[13] * a6, b[11] * a4), b[9] * a2)
    u = ufuncs.add(
        products.matmul(a6, inner_u),
        ufuncs.add(ufuncs.add(ufuncs.add(b[7] * a6, b[5] * a4), b[3] * a2), b[1] * eye),
    )
    u = products.matmul(a, u)
    inner_v = ufuncs.add(ufuncs.add(b[12] * a6, b[10] * a4), b[8] * a2)
    v = ufuncs.add(
        products.matmul(a6, inner_v),
        ufuncs.add(ufuncs.add(ufuncs.add(b[6] * a6, b[4] * a4), b[2] * a2), b[0] * eye),
    )
    r = np_linalg.solve(ufuncs.subtract(v, u), ufuncs.add(v, u))
    steps = ops.convert(s, np.int32)
    limit = int(max_squarings)

    def square(i, r):
        return ufuncs.where((i < steps)[..., None, None], products.matmul(r, r), r)

    r = control_flow.fori_loop(0, limit, square, r)
    r = ufuncs.where((steps > limit)[..., None, None], np.nan, r)
    return creation.triu(r) if upper_triangular else r


from uir._src.scipy.linalg_matrices import *  # noqa: E402, F403
from uir._src.scipy.linalg_matrices import __all__ as _matrices  # noqa: E402

__all__ = [
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "hessenberg",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "polar",
    "qr",
    "schur",
    "solve",
    "solve_triangular",
    "svd",
    *_matrices,
]
