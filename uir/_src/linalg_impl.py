"""uir.numpy.linalg and uir.lax.linalg, lowered as JAX lowers them on CPU.

The factorizations are the LAPACK custom calls of JAX's CPU lowering
(`lapack_sgetrf_ffi`, `lapack_spotrf_ffi`, `lapack_sgeqrf_ffi` and
`_sorgqr_ffi`, `lapack_ssyevd_ffi`, `lapack_sgesdd_ffi`, `lapack_sgeev_ffi`,
`lapack_strsm_ffi`, `lapack_sgtsv_ffi`, and their d/c/z forms), which uir
runs as built-in targets (csrc/runtime/lapack_targets.h): a traced
jnp.linalg.solve reads like JAX's own dump of it. One difference: JAX asks
for column-major operands (operand_layout_constraints), which LAPACK wants;
uir's targets lay each matrix out for LAPACK themselves, so uir's calls
leave the layouts to layout assignment. As in JAX, a failed factorization
(LAPACK's info) turns its results into NaNs, and everything else (pivots to
permutations, the solves, determinants, norms, pseudo-inverses) is ordinary
HLO around the calls.
"""

from __future__ import annotations

import numpy as np

import uir.numpy as jnp
from uir._src import dtypes, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
_INT = np.dtype(np.int32)


def _real_dtype(dtype) -> np.dtype:
    return np.finfo(np.dtype(dtype)).dtype


def _matrix(a, name: str, square: bool = False):
    """a as a floating or complex array of matrices (integers become the
    default float, as in JAX)."""
    a = asarray(a)
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        what = "square matrices" if square else "matrices"
        fail(f"linalg.{name}", f"needs {what} in the last two dimensions, got {ops.describe(a)}")
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        a = a.astype(dtypes.default_float())
    if np.dtype(a.dtype).name not in _PREFIX:
        # LAPACK has no half precision: JAX computes those in float32.
        a = a.astype(np.float32)
    return a


def _config_text(config: dict) -> str:
    """backend_config as JAX writes it: `{mode = 86 : ui8, uplo = 76 : ui8}`
    (LAPACK characters as ui8 codes, flags as booleans, ints as i32)."""
    parts = []
    for key in sorted(config):
        v = config[key]
        if isinstance(v, bool):
            parts.append(f"{key} = {str(v).lower()}")
        elif isinstance(v, str):
            parts.append(f"{key} = {ord(v)} : ui8")
        else:
            parts.append(f"{key} = {int(v)} : i32")
    return "{" + ", ".join(parts) + "}"


def _lapack(routine: str, operands, results, *, aliases=None, config=None, name: str):
    """Emits `lapack_<s|d|c|z><routine>_ffi` on `operands` (the type of the
    first picks the prefix), results [(shape, dtype)], `aliases` {result:
    operand} written in place as JAX declares them."""
    dtype = np.dtype(operands[0].dtype)
    attrs = {
        "custom_call_target": f"lapack_{_PREFIX[dtype.name]}{routine}_ffi",
        "api_version": "API_VERSION_TYPED_FFI",
        "backend_config": _config_text(config or {}),
        "frontend_attributes": {"num_batch_dims": str(max(operands[0].ndim - 2, 0))},
    }
    if aliases:
        tuple_result = len(results) > 1
        pairs = [
            f"{{{r if tuple_result else ''}}}: ({o}, {{}})" for r, o in sorted(aliases.items())
        ]
        attrs["output_to_operand_aliasing"] = "{" + ", ".join(pairs) + "}"
    shape = [(tuple(s), np.dtype(d)) for s, d in results]
    out = ops._comp().emit(
        "custom-call", *operands, shape=shape if len(shape) > 1 else shape[0], op_name=name, **attrs
    )
    return out if len(shape) > 1 else (out,)


def _nan_unless(ok, x):
    """x where `ok` (one flag per matrix or vector of the batch), NaN
    elsewhere: JAX's answer to a failed factorization."""
    extra = x.ndim - ok.ndim
    flag = jnp.reshape(ok, ok.shape + (1,) * extra)
    return jnp.where(flag, x, jnp.asarray(np.nan, dtype=x.dtype))


def _swap_last(x):
    return jnp.swapaxes(x, -1, -2)


def _h(x):
    return jnp.conj(_swap_last(x)) if dtypes.is_complex(x.dtype) else _swap_last(x)


def _symmetrize(a):
    return (a + _h(a)) / 2


# --- jax.lax.linalg ------------------------------------------------------------------


@eager
def triangular_solve(
    a,
    b,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
):
    """x with op(a) x = b (left_side) or x op(a) = b, a triangular, op
    transposing and/or conjugating as asked; LAPACK's trsm."""
    a = _matrix(a, "triangular_solve", square=True)
    b = asarray(b)
    a, b = ops.promote("triangular_solve", a, b)
    a, b = _matrix(a, "triangular_solve"), _matrix(b, "triangular_solve")
    k = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != k or a.shape[:-2] != b.shape[:-2]:
        fail(
            "lax.linalg.triangular_solve",
            f"a {ops.describe(a)} does not fit b {ops.describe(b)} "
            f"(left_side={left_side}: a is [..., {k}, {k}] with b's batch dimensions)",
        )
    if conjugate_a and not transpose_a and dtypes.is_complex(a.dtype):
        a = jnp.conj(a)
    trans = ("C" if conjugate_a and dtypes.is_complex(a.dtype) else "T") if transpose_a else "N"
    (x,) = _lapack(
        "trsm",
        [a, b],
        [(b.shape, b.dtype)],
        aliases={0: 1},
        config={
            "side": "L" if left_side else "R",
            "uplo": "L" if lower else "U",
            "trans_x": trans,
            "diag": "U" if unit_diagonal else "N",
        },
        name="triangular_solve",
    )
    return x


@eager
def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation of [0, permutation_size) that applying the row swaps
    `pivots` (i <-> pivots[i], in order; 0-based) makes, as a traced loop."""
    from uir import lax

    pivots = asarray(pivots).astype(_INT)
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    m = int(permutation_size)
    perm = ops.iota(_INT, (*batch, m), len(batch))
    if m == 0 or k == 0:
        return perm
    index = jnp.arange(m, dtype=_INT)
    swaps_index = jnp.arange(k, dtype=_INT)

    def swap(i, perm):
        j = jnp.sum(jnp.where(swaps_index == i, pivots, 0), axis=-1, keepdims=True)
        x = jnp.sum(jnp.where(index == i, perm, 0), axis=-1, keepdims=True)
        y = jnp.sum(jnp.where(index == j, perm, 0), axis=-1, keepdims=True)
        return jnp.where(index == i, y, jnp.where(index == j, x, perm))

    return lax.fori_loop(0, k, swap, perm)


@eager
def lu(a):
    """(lu, pivots, permutation) of a = P L U with partial pivoting (LAPACK's
    getrf): L below the diagonal with its unit diagonal implied, U on and
    above; pivots are the 0-based row swaps, permutation the rows of a that
    P applies."""
    a = _matrix(a, "lu")
    *batch, m, n = a.shape
    k = min(m, n)
    out, ipiv, info = _lapack(
        "getrf",
        [a],
        [(a.shape, a.dtype), ((*batch, k), _INT), (tuple(batch), _INT)],
        aliases={0: 0},
        name="lu",
    )
    pivots = ipiv - 1
    out = _nan_unless(info >= 0, out)
    return out, pivots, lu_pivots_to_permutation(pivots, m)


@eager
def cholesky(x, *, symmetrize_input: bool = True):
    """L with x = L L^H (LAPACK's potrf), lower triangular; NaNs where x is
    not positive definite."""
    x = _matrix(x, "cholesky", square=True)
    if symmetrize_input:
        x = _symmetrize(x)
    factor, info = _lapack(
        "potrf",
        [x],
        [(x.shape, x.dtype), (x.shape[:-2], _INT)],
        aliases={0: 0},
        config={"uplo": "L"},
        name="cholesky",
    )
    return jnp.tril(_nan_unless(info == 0, factor))


@eager
def householder_product(a, taus):
    """The first n columns of the product of the Householder reflectors
    below a's diagonal with scales taus (LAPACK's orgqr/ungqr)."""
    a = _matrix(a, "householder_product")
    taus = asarray(taus).astype(a.dtype)
    m, n = a.shape[-2:]
    if not m >= n >= taus.shape[-1] or taus.shape[:-1] != a.shape[:-2]:
        fail(
            "lax.linalg.householder_product",
            f"needs a [..., m, n] and taus [..., k] with m >= n >= k, got {ops.describe(a)} "
            f"and {ops.describe(taus)}",
        )
    routine = "ungqr" if dtypes.is_complex(a.dtype) else "orgqr"
    (q,) = _lapack(
        routine, [a, taus], [(a.shape, a.dtype)], aliases={0: 0}, name="householder_product"
    )
    return q


@eager
def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c, Q^H c (transpose), c Q or c Q^H (left=False) with Q the product
    of the Householder reflectors below a's diagonal, without forming Q;
    LAPACK's ormqr/unmqr."""
    a = _matrix(a, "ormqr")
    taus = asarray(taus).astype(a.dtype)
    c = asarray(c).astype(a.dtype)
    rows = a.shape[-2]
    if c.ndim != a.ndim or (c.shape[-2] if left else c.shape[-1]) != rows:
        side = "rows" if left else "columns"
        fail(
            "lax.linalg.ormqr",
            f"c needs as many {side} as a has rows (left={left}), got a {ops.describe(a)} "
            f"and c {ops.describe(c)}",
        )
    routine = "unmqr" if dtypes.is_complex(a.dtype) else "ormqr"
    (out,) = _lapack(
        routine,
        [a, taus, c],
        [(c.shape, c.dtype)],
        aliases={0: 2},
        config={"left": bool(left), "transpose": bool(transpose)},
        name="ormqr",
    )
    return out


def _geqrf(a):
    *batch, m, n = a.shape
    return _lapack(
        "geqrf",
        [a],
        [(a.shape, a.dtype), ((*batch, min(m, n)), a.dtype)],
        aliases={0: 0},
        name="geqrf",
    )


@eager
def qr(x, *, pivoting: bool = False, full_matrices: bool = True):
    """(q, r) with x = q r (x P = q r with pivoting, then (q, r, p)), by
    Householder reflections: LAPACK's geqrf (geqp3) and orgqr."""
    a = _matrix(x, "qr")
    *batch, m, n = a.shape
    p = None
    if pivoting:
        jpvt = jnp.zeros((*batch, n), _INT)
        r, p, taus = _lapack(
            "geqp3",
            [a, jpvt],
            [(a.shape, a.dtype), ((*batch, n), _INT), ((*batch, min(m, n)), a.dtype)],
            aliases={0: 0, 1: 1},
            name="geqp3",
        )
        p = p - 1
    else:
        r, taus = _geqrf(a)
    if m < n:
        q = householder_product(r[..., :m, :m], taus)
    elif full_matrices:
        zero = jnp.zeros((*batch, m, m - n), a.dtype)
        q = householder_product(jnp.concatenate([r, zero], axis=-1), taus)
    else:
        q = householder_product(r, taus)
        r = r[..., :n, :n]
    r = jnp.triu(r)
    return (q, r, p) if pivoting else (q, r)


@eager
def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of the
    Hermitian x, reading its lower (or upper) triangle; LAPACK's syevd/heevd.
    NaNs where LAPACK does not converge."""
    del sort_eigenvalues  # LAPACK's are ascending
    a = _matrix(x, "eigh", square=True)
    if symmetrize_input:
        a = _symmetrize(a)
    routine = "heevd" if dtypes.is_complex(a.dtype) else "syevd"
    v, w, info = _lapack(
        routine,
        [a],
        [(a.shape, a.dtype), (a.shape[:-1], _real_dtype(a.dtype)), (a.shape[:-2], _INT)],
        aliases={0: 0},
        config={"uplo": "L" if lower else "U", "mode": "V"},
        name="eigh",
    )
    ok = info == 0
    return _nan_unless(ok, v), _nan_unless(ok, w)


def _empty_svd(a, full_matrices: bool, compute_uv: bool):
    *batch, m, n = a.shape
    s = jnp.zeros((*batch, 0), _real_dtype(a.dtype))
    if not compute_uv:
        return (s,)

    def eye(k, cols):
        return jnp.broadcast_to(jnp.eye(k, cols, dtype=a.dtype), (*batch, k, cols))

    u = eye(m, m if full_matrices else 0)
    vh = eye(n if full_matrices else 0, n)
    return s, u, vh


@eager
def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, algorithm=None):
    """(u, s, vh) with x = u diag(s) vh, s descending (s alone without
    compute_uv): LAPACK's gesdd (divide and conquer), or gesvd with
    algorithm='qr'. NaNs where LAPACK does not converge."""
    a = _matrix(x, "svd")
    *batch, m, n = a.shape
    if m == 0 or n == 0:
        out = _empty_svd(a, full_matrices, compute_uv)
        return (out[1], out[0], out[2]) if compute_uv else out[0]
    name = str(getattr(algorithm, "name", algorithm) or "default").lower()
    if name not in ("default", "divide_and_conquer", "qr"):
        fail("lax.linalg.svd", f"algorithm {algorithm!r} is not available on CPU (default or 'qr')")
    k = min(m, n)
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    u_cols = m if full_matrices else k
    vt_rows = n if full_matrices else k
    _, s, u, vh, info = _lapack(
        "gesvd" if name == "qr" else "gesdd",
        [a],
        [
            (a.shape, a.dtype),
            ((*batch, k), _real_dtype(a.dtype)),
            ((*batch, m, u_cols), a.dtype),
            ((*batch, vt_rows, n), a.dtype),
            (tuple(batch), _INT),
        ],
        aliases={0: 0},
        config={"mode": mode},
        name="svd",
    )
    ok = info == 0
    s = _nan_unless(ok, s)
    if not compute_uv:
        return s
    return _nan_unless(ok, u), s, _nan_unless(ok, vh)


@eager
def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True):
    """[w, vl, vr]: the (complex) eigenvalues of the square x and its left
    and right eigenvectors as asked; LAPACK's geev. NaNs where LAPACK does
    not converge (or x holds an infinity or NaN)."""
    a = _matrix(x, "eig", square=True)
    complex_dtype = np.result_type(a.dtype, np.complex64)
    values = (a.shape[:-1], a.dtype)
    vectors = (a.shape, complex_dtype)
    info = (a.shape[:-2], _INT)
    config = {
        "compute_left": "V" if compute_left_eigenvectors else "N",
        "compute_right": "V" if compute_right_eigenvectors else "N",
    }
    if dtypes.is_complex(a.dtype):
        w, vl, vr, status = _lapack(
            "geev", [a], [values, vectors, vectors, info], config=config, name="eig"
        )
    else:
        wr, wi, vl, vr, status = _lapack(
            "geev", [a], [values, values, vectors, vectors, info], config=config, name="eig"
        )
        w = ops._comp().emit("complex", wr, wi, op_name="eig")
    ok = status == 0
    out = [_nan_unless(ok, w)]
    if compute_left_eigenvectors:
        out.append(_nan_unless(ok, vl))
    if compute_right_eigenvectors:
        out.append(_nan_unless(ok, vr))
    return out


@eager
def tridiagonal_solve(dl, d, du, b):
    """x with T x = b for the tridiagonal T with sub-diagonal dl (dl[0]
    unused), diagonal d and super-diagonal du (du[-1] unused); LAPACK's
    gtsv."""
    b = _matrix(b, "tridiagonal_solve")
    diagonals = [asarray(v).astype(b.dtype) for v in (dl, d, du)]
    want = b.shape[:-1]
    for v in diagonals:
        if v.shape != want:
            fail(
                "lax.linalg.tridiagonal_solve",
                f"dl, d and du must be {dtypes.shape_text(want, b.dtype)} for b "
                f"{ops.describe(b)}, got {ops.describe(v)}",
            )
    *_, x, info = _lapack(
        "gtsv",
        [*diagonals, b],
        [(want, b.dtype)] * 3 + [(b.shape, b.dtype), (b.shape[:-2], _INT)],
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
        name="tridiagonal_solve",
    )
    return _nan_unless(info == 0, x)


@eager
def hessenberg(a):
    """(a, taus): square a reduced to upper Hessenberg form (in a's upper
    triangle and first sub-diagonal) by Householder reflectors (below it,
    with scales taus); LAPACK's gehrd. NaNs where LAPACK fails."""
    a = _matrix(a, "hessenberg", square=True)
    n = a.shape[-1]
    if n == 0:
        fail("lax.linalg.hessenberg", f"needs a non-empty matrix, got {ops.describe(a)}")
    out, taus, info = _lapack(
        "gehrd",
        [a],
        [(a.shape, a.dtype), ((*a.shape[:-2], n - 1), a.dtype), (a.shape[:-2], _INT)],
        aliases={0: 0},
        config={"low": 1, "high": n},
        name="hessenberg",
    )
    ok = info == 0
    return _nan_unless(ok, out), _nan_unless(ok, taus)


@eager
def schur(
    x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False, select_callable=None
):
    """[t, vs]: the Schur form t of square x (quasi-triangular for real x)
    and the unitary vs with x = vs t vs^H; LAPACK's gees. Sorting the
    eigenvalues is not available (as in JAX)."""
    del select_callable
    if sort_eig_vals:
        fail("lax.linalg.schur", "sorting the eigenvalues (sort_eig_vals=True) is not implemented")
    a = _matrix(x, "schur", square=True)
    values = (a.shape[:-1], a.dtype)
    info = (a.shape[:-2], _INT)
    results = [(a.shape, a.dtype), (a.shape, a.dtype), values]
    if not dtypes.is_complex(a.dtype):
        results.append(values)
    t, vs, *_, status = _lapack(
        "gees",
        [a],
        [*results, info, info],
        aliases={0: 0},
        config={"mode": "V" if compute_schur_vectors else "N", "sort": "N"},
        name="schur",
    )
    ok = status == 0
    out = [_nan_unless(ok, t)]
    if compute_schur_vectors:
        out.append(_nan_unless(ok, vs))
    return out


@eager
def tridiagonal(a, *, lower: bool = True):
    """(arr, d, e, taus): Hermitian a reduced to tridiagonal form with
    diagonal d and off-diagonal e (real), the Householder reflectors in arr
    with scales taus; reads a's lower (or upper) triangle; LAPACK's
    sytrd/hetrd. NaNs where LAPACK fails."""
    a = _matrix(a, "tridiagonal", square=True)
    n = a.shape[-1]
    if n == 0:
        fail("lax.linalg.tridiagonal", f"needs a non-empty matrix, got {ops.describe(a)}")
    batch = a.shape[:-2]
    real = _real_dtype(a.dtype)
    routine = "hetrd" if dtypes.is_complex(a.dtype) else "sytrd"
    arr, d, e, taus, info = _lapack(
        routine,
        [a],
        [
            (a.shape, a.dtype),
            ((*batch, n), real),
            ((*batch, n - 1), real),
            ((*batch, n - 1), a.dtype),
            (batch, _INT),
        ],
        aliases={0: 0},
        config={"uplo": "L" if lower else "U"},
        name="tridiagonal",
    )
    ok = info == 0
    return tuple(_nan_unless(ok, v) for v in (arr, d, e, taus))


@eager
def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output: bool = False):
    """alpha a a^T + beta c; with symmetrize_output the upper triangle
    mirrors the lower one."""
    a, c = ops.promote("lax.linalg.symmetric_product", asarray(a_matrix), asarray(c_matrix))
    out = alpha * jnp.matmul(a, _swap_last(a)) + beta * c
    if symmetrize_output:
        out = jnp.tril(out) + _swap_last(jnp.tril(out, -1))
    return out


@eager
def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T, given R's: n Givens
    rotations, as JAX's."""
    r, w = ops.promote("lax.linalg.cholesky_update", asarray(r_matrix), asarray(w_vector))
    n = w.shape[0]
    if r.shape != (n, n):
        fail(
            "lax.linalg.cholesky_update",
            f"needs an n x n factor and an n-vector, got {ops.describe(r)} and {ops.describe(w)}",
        )
    index = jnp.arange(n, dtype=_INT)
    for k in range(n):
        x, y = r[k, k], w[k]
        big = jnp.maximum(jnp.abs(x), jnp.abs(y))
        safe = jnp.where(y == 0, 1, big)
        xs, ys = x / safe, y / safe
        rh = 1 / jnp.sqrt(xs * xs + ys * ys)
        c = jnp.where(y == 0, 1, xs * rh).astype(r.dtype)
        s = jnp.where(y == 0, 0, -ys * rh).astype(r.dtype)
        row = r[k, :]
        new_row = c * row - s * w
        w = c * w + s * row
        r = jnp.where(jnp.expand_dims(index == k, -1), new_row, r)
    return r


def _qdwh_qr_step(u, params):
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    m, n = u.shape
    y = jnp.concatenate([sqrt_c * u, jnp.eye(n, dtype=u.dtype)], axis=0)
    q, _ = qr(y, full_matrices=False)
    return e * u + a_minus_e_by_sqrt_c * (q[:m] @ _h(q[m:]))


def _qdwh_cholesky_step(u, params):
    a_minus_e, c, e = params
    n = u.shape[1]
    x = c * (_h(u) @ u) + jnp.eye(n, dtype=u.dtype)
    y = cholesky(x, symmetrize_input=False)
    z = jnp.conj(triangular_solve(y, _swap_last(u), left_side=True, lower=True, conjugate_a=True))
    z = _h(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True))
    return e * u + a_minus_e * z


@eager
def qdwh(x, *, is_hermitian: bool = False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, num_iters, is_converged): the polar decomposition x = u h
    (u with orthonormal columns, h Hermitian positive semi-definite) of a
    full-rank x[m, n], m >= n, by the QR-based dynamically weighted Halley
    iteration (Nakatsukasa, Bai and Gygi), as JAX: its weights computed
    ahead, QR steps while c > 100, Cholesky steps after, Halley's method
    until the iterate settles, then a Newton-Schulz refinement."""
    from uir import lax

    del is_hermitian
    if dynamic_shape is not None:
        fail("lax.linalg.qdwh", "dynamic_shape (a padded input) is not supported")
    x = _matrix(x, "qdwh")
    if x.ndim != 2 or x.shape[0] < x.shape[1]:
        fail(
            "lax.linalg.qdwh", f"needs a matrix of shape (m, n) with m >= n, got {ops.describe(x)}"
        )
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(np.finfo(np.dtype(_real_dtype(x.dtype))).eps) if eps is None else float(eps)
    one_norm = norm(x, ord=1)
    inf_norm = norm(x, ord=np.inf)
    alpha_inverse = jnp.where(one_norm == 0, 1, 1 / jnp.sqrt(one_norm * inf_norm))
    u = x * alpha_inverse.astype(x.dtype)
    tol_l = 10.0 * eps / 2.0
    tol_norm = tol_l ** (1 / 3)
    qr_coefs, chol_coefs = [], []
    lower, k = eps, 0
    while lower + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lower * lower
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower = lower * (a + b * l2) / (1 + c * l2)
        if c > 100:
            qr_coefs.append(((a - b / c) / c ** (1 / 2), c ** (1 / 2), b / c))
        else:
            chol_coefs.append((a - b / c, c, b / c))
    for params in qr_coefs:
        u = _qdwh_qr_step(u, params)
    converged = jnp.asarray(False)
    for params in chol_coefs:
        previous = u
        u = _qdwh_cholesky_step(u, params)
        converged = ~(norm(u - previous) > tol_norm)

    # Halley's method (a, b, c = 3, 1, 3) until the iterate settles.
    def cond(state):
        i, _, done = state
        return ~done & (i < max_iterations)

    def body(state):
        i, u, _ = state
        new = _qdwh_cholesky_step(u, (3 - 1 / 3, 3, 1 / 3))
        return i + 1, new, ~(norm(new - u) > tol_norm)

    start = (jnp.asarray(np.int32(len(qr_coefs) + len(chol_coefs))), u, converged)
    num_iters, u, converged = lax.while_loop(cond, body, start)
    u = 1.5 * u - 0.5 * u @ (_h(u) @ u)
    h = _h(u) @ x
    h = (h + _h(h)) / 2
    return u, h, num_iters, converged


# --- jax.numpy.linalg -----------------------------------------------------------------


def _solve_with_lu(lu_, permutation, b):
    """x with a x = b from a's LU (b: [..., n, k])."""
    rows = jnp.broadcast_to(jnp.expand_dims(permutation, -1), b.shape)
    x = jnp.take_along_axis(b, rows, axis=-2)
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
        b = jnp.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        fail("linalg.solve", f"{ops.describe(a)} and {ops.describe(b)} do not fit")
    if a.shape[-1] == 0:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = jnp.zeros((*batch, *b.shape[-2:]), a.dtype)
        return out[..., 0] if vector else out
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = jnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    lu_, _, permutation = lu(a)
    x = _solve_with_lu(lu_, permutation, b)
    return x[..., 0] if vector else x


@eager
def inv(a):
    """The inverse of each matrix of a."""
    a = _matrix(a, "inv", square=True)
    return solve(a, jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape))


def _parity_sign(pivots, dtype):
    swaps = jnp.sum((pivots != jnp.arange(pivots.shape[-1], dtype=_INT)).astype(_INT), axis=-1)
    return jnp.where(swaps % 2 == 1, -1, 1).astype(dtype)


@eager
def slogdet(a, *, method: str | None = None):
    """(sign, log|det a|) from the LU (method 'lu', the default; sign 0 and
    -inf for a singular matrix) or from a QR (method 'qr', real only)."""
    a = _matrix(a, "slogdet", square=True)
    if method == "qr":
        if dtypes.is_complex(a.dtype):
            fail("linalg.slogdet", "method='qr' is for real matrices (as in JAX)")
        n = a.shape[-1]
        r, taus = _geqrf(a)
        diag = jnp.diagonal(r, axis1=-2, axis2=-1)
        flips = jnp.prod(jnp.where(taus[..., : n - 1] != 0, -1, 1), axis=-1).astype(a.dtype)
        return jnp.prod(jnp.sign(diag), axis=-1) * flips, jnp.sum(jnp.log(jnp.abs(diag)), axis=-1)
    if method not in (None, "lu"):
        fail("linalg.slogdet", f"method must be 'lu' or 'qr', got {method!r}")
    lu_, pivots, _ = lu(a)
    diag = jnp.diagonal(lu_, axis1=-2, axis2=-1)
    magnitude = jnp.abs(diag)
    singular = jnp.any(diag == 0, axis=-1)
    if dtypes.is_complex(a.dtype):
        units = diag / jnp.where(magnitude == 0, 1, magnitude).astype(a.dtype)
    else:
        units = jnp.sign(diag)
    sign = _parity_sign(pivots, a.dtype) * jnp.prod(units, axis=-1)
    logdet = jnp.sum(jnp.log(magnitude), axis=-1)
    zero = jnp.zeros((), a.dtype)
    return (
        jnp.where(singular, zero, sign),
        jnp.where(singular, jnp.asarray(-np.inf, logdet.dtype), logdet),
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
    diag = jnp.diagonal(lu_, axis1=-2, axis2=-1)
    return _parity_sign(pivots, a.dtype) * jnp.prod(diag, axis=-1)


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
        # r alone: no q to form (JAX's lowering drops the unused orgqr).
        a = _matrix(a, "qr")
        m, n = a.shape[-2:]
        r, _ = _geqrf(a)
        return jnp.triu(r if m < n else r[..., :n, :n])
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
def np_svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """(u, s, vh) with a = u diag(s) vh, s descending; s alone without
    compute_uv. hermitian=True takes them from the eigendecomposition, as
    JAX does."""
    a = _matrix(a, "svd")
    if not hermitian:
        return svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    v, w = eigh(a)
    s = jnp.abs(w)
    order = jnp.flip(jnp.argsort(s, axis=-1), axis=-1)
    s = jnp.take_along_axis(s, order, axis=-1)
    if not compute_uv:
        return s
    sign = jnp.take_along_axis(jnp.sign(w), order, axis=-1).astype(a.dtype)
    u = jnp.take_along_axis(v, jnp.broadcast_to(jnp.expand_dims(order, -2), v.shape), axis=-1)
    return u, s, _h(u * jnp.expand_dims(sign, -2))


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


def _default_rtol(a, s):
    return max(a.shape[-2:]) * np.finfo(np.dtype(s.dtype)).eps


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
        return jnp.zeros((*a.shape[:-2], n, m), a.dtype)
    x = jnp.conj(a) if dtypes.is_complex(a.dtype) else a
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(np.finfo(np.dtype(_real_dtype(a.dtype))).eps)
    u, s, vh = np_svd(x, full_matrices=False, hermitian=hermitian)
    rtol = asarray(rtol).astype(s.dtype)
    cutoff = jnp.expand_dims(rtol, -1) * s[..., 0:1]
    s = jnp.where(s > cutoff, s, np.inf).astype(u.dtype)
    return jnp.matmul(_swap_last(vh), _swap_last(u) / jnp.expand_dims(s, -1))


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
        return jnp.any(M != 0).astype(_INT)
    s = np_svd(
        _matrix(M, "matrix_rank"), full_matrices=False, compute_uv=False, hermitian=hermitian
    )
    if rtol is None:
        rtol = jnp.max(s, axis=-1) * max(M.shape[-2:]) * float(np.finfo(np.dtype(s.dtype)).eps)
    threshold = jnp.expand_dims(asarray(rtol).astype(s.dtype), -1)
    return jnp.sum((s > threshold).astype(dtypes.default_int()), axis=-1)


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
    b2 = jnp.expand_dims(b, -1) if vector else b
    m, n = a.shape
    real = _real_dtype(a.dtype)
    if m == 0 or n == 0:
        s = jnp.zeros((0,), real)
        rank = jnp.asarray(0, _INT)
        x = jnp.zeros((n, b2.shape[1]), a.dtype)
    else:
        eps = float(np.finfo(np.dtype(real)).eps)
        rcond = eps * max(m, n) if rcond is None else jnp.where(asarray(rcond) < 0, eps, rcond)
        u, s, vh = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= asarray(rcond).astype(real) * s[0])
        rank = jnp.sum(mask.astype(_INT))
        safe = jnp.where(mask, s, 1).astype(a.dtype)
        s_inv = jnp.expand_dims(jnp.where(mask, 1 / safe, 0), -1)
        x = jnp.matmul(_h(vh), s_inv * jnp.matmul(_h(u), b2))
    r = b2 - jnp.matmul(a, x)
    resid = jnp.sum(jnp.real(r * jnp.conj(r)), axis=0)
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
        return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
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
    has_nan = jnp.any(jnp.isnan(x), axis=(-2, -1))
    return jnp.where(jnp.isnan(r) & ~has_nan, np.inf, r)


@eager
def tensorinv(a, ind: int = 2):
    """The inverse of a seen as a matrix of its first `ind` dimensions by
    the rest."""
    a = asarray(a)
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = int(np.prod(a.shape[:ind]))
    matrix = jnp.reshape(a, (rows, -1))
    if matrix.shape[-1] != rows:
        fail("linalg.tensorinv", f"{ops.describe(a)} with ind={ind} is not square as a matrix")
    return jnp.reshape(inv(matrix), out_shape)


@eager
def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b."""
    a, b = asarray(a), asarray(b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in [ax % a.ndim for ax in axes]]
        a = jnp.transpose(a, order + [ax % a.ndim for ax in axes])
    out_shape = a.shape[b.ndim :]
    rows = int(np.prod(b.shape))
    x = solve(jnp.reshape(a, (rows, -1)), jnp.reshape(b, (rows,)))
    return jnp.reshape(x, out_shape)


@eager
def multi_dot(arrays):
    """The product of the matrices, in an order that keeps the intermediate
    sizes small (the classic dynamic program over the chain)."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        fail("linalg.multi_dot", "needs at least two arrays")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = jnp.expand_dims(arrays[0], 0)
    if last_vector:
        arrays[-1] = jnp.expand_dims(arrays[-1], -1)
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
        return jnp.matmul(product(i, s), product(s + 1, j))

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
    elif ord in (2, -2, "nuc"):
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        sv = svd(jnp.transpose(x, (*rest, r, c)), compute_uv=False)
        reduce = jnp.sum if ord == "nuc" else (jnp.max if ord == 2 else jnp.min)
        out = reduce(sv, axis=-1)
        if keepdims:
            out = jnp.expand_dims(out, tuple(sorted((r, c))))
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
    flat = jnp.reshape(jnp.transpose(x, (*rest, *axes)), (*[x.shape[d] for d in rest], -1))
    out = norm(flat, ord=ord, axis=-1)
    if keepdims:
        out = jnp.reshape(out, tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out
