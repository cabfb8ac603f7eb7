"""uir.lax.linalg, lowered as JAX lowers it on CPU.

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
permutations, the polar iteration) is ordinary HLO around the calls.
uir.numpy.linalg's functions build on these (uir._src.numpy.linalg).
"""

from __future__ import annotations

import re

import numpy as np

from uir._src.core import calls, dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax import control_flow
from uir._src.lax import elementwise as ew
from uir._src.lax.elementwise import _conjugate
from uir._src.lax.lax import _filled, reduce_max, reduce_sum

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
_INT = np.dtype(np.int32)


# The array helpers the decompositions below need, on the core's emitters
# and lax's reductions (lax calls none of NumPy's functions).
def _iota(n: int, dtype=_INT):
    return ops.iota(np.dtype(dtype), (n,), 0)


def _sum(x, axis=None, keepdims: bool = False):
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axis is None else (ops.normalize_axis(axis, x.ndim, "sum"),)
    out = reduce_sum(x, axes)
    if keepdims:
        out = ops.reshape(out, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
    return out


def _triangle(x, k: int, lower: bool):
    """x with the entries above (lower) or below the k-th diagonal of its
    last two dimensions set to zero, as numpy.tril and numpy.triu."""
    x = asarray(x)
    m, n = x.shape[-2], x.shape[-1]
    rows = ops.iota(np.dtype(np.int64), (m, n), 0)
    cols = ops.iota(np.dtype(np.int64), (m, n), 1)
    offset = ops.binary("subtract", cols, rows)
    keep = ops.compare(offset, asarray(np.int64(k)), "LE" if lower else "GE", "tri")
    return ops.select(keep, x, asarray(np.zeros((), x.dtype)), "tri")


def _tril(x, k: int = 0):
    return _triangle(x, k, True)


def _triu(x, k: int = 0):
    return _triangle(x, k, False)


def _eye(n: int, m: int | None = None, dtype=np.float32):
    m = n if m is None else m
    on = ops.compare(
        ops.iota(np.dtype(np.int32), (n, m), 0),
        ops.iota(np.dtype(np.int32), (n, m), 1),
        "EQ",
        "eye",
    )
    return ops.convert(on, np.dtype(dtype))


def _max(x):
    x = asarray(x)
    return reduce_max(x, tuple(range(x.ndim)))


def _matmul(a, b):
    """a @ b over the last two dimensions, the leading ones batched."""
    a, b = asarray(a), asarray(b)
    batch = tuple(range(a.ndim - 2))
    return ops.dot(a, b, ((a.ndim - 1,), (b.ndim - 2,)), (batch, batch), "matmul")


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
    flag = ops.reshape(ok, ok.shape + (1,) * extra)
    return ops.select(flag, x, asarray(np.array(np.nan, x.dtype)))


def _swap_last(x):
    return ops.moveaxis(x, -1, -2)


def _h(x):
    return _conjugate(_swap_last(x)) if dtypes.is_complex(x.dtype) else _swap_last(x)


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
        a = _conjugate(a)
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

    pivots = asarray(pivots).astype(_INT)
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    m = int(permutation_size)
    perm = ops.iota(_INT, (*batch, m), len(batch))
    if m == 0 or k == 0:
        return perm
    index = _iota(m)
    swaps_index = _iota(k)

    def swap(i, perm):
        j = _sum(ops.select(swaps_index == i, pivots, 0), axis=-1, keepdims=True)
        x = _sum(ops.select(index == i, perm, 0), axis=-1, keepdims=True)
        y = _sum(ops.select(index == j, perm, 0), axis=-1, keepdims=True)
        return ops.select(index == i, y, ops.select(index == j, x, perm))

    return control_flow.fori_loop(0, k, swap, perm)


@eager
def lu(x):
    """(lu, pivots, permutation) of x = P L U with partial pivoting (LAPACK's
    getrf): L below the diagonal with its unit diagonal implied, U on and
    above; pivots are the 0-based row swaps, permutation the rows of x that
    P applies."""
    a = _matrix(x, "lu")
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
    return _tril(_nan_unless(info == 0, factor))


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


# A traced qr is one call (calls.traced_call) tagged with this: its
# derivative needs q and r together, which neither custom call holds, so the
# transformations find the rule by the tag.
def qr_tag(full_matrices: bool, pivoting: bool, r_only: bool = False) -> str:
    tail = ", r_only=1" if r_only else ""
    return f"linalg.qr(full_matrices={int(full_matrices)}, pivoting={int(pivoting)}{tail})"


def parse_qr_tag(tag: str):
    """(full_matrices, pivoting, r_only) of a qr_tag, or None."""
    m = re.fullmatch(r"linalg\.qr\(full_matrices=(\d), pivoting=(\d)(, r_only=1)?\)", tag)
    if m is None:
        return None
    return bool(int(m.group(1))), bool(int(m.group(2))), m.group(3) is not None


@eager
def qr_r(x):
    """r of the reduced qr of x alone (geqrf, no q formed), in a call tagged
    like qr's so that it differentiates."""
    a = _matrix(x, "qr")

    def body(v):
        m, n = v.shape[-2:]
        r, _ = _geqrf(v)
        return _triu(r if m < n else r[..., :n, :n])

    out, *_ = calls.traced_call(
        body,
        (a,),
        kind="linalg",
        name="qr",
        tag=qr_tag(False, False, r_only=True),
    )
    return out


@eager
def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """(q, r) with x = q r (x P = q r with pivoting, then (q, r, p)), by
    Householder reflections: LAPACK's geqrf (geqp3) and orgqr, traced into
    a `call` tagged `uir_rule="linalg.qr(...)"` so that it differentiates as
    one function."""
    del use_magma
    a = _matrix(x, "qr")

    def body(v):
        return _qr(v, pivoting=pivoting, full_matrices=full_matrices)

    out, *_ = calls.traced_call(
        body,
        (a,),
        kind="linalg",
        name="qr",
        tag=qr_tag(full_matrices, pivoting),
    )
    return tuple(out)


def _qr(a, *, pivoting: bool, full_matrices: bool):
    *batch, m, n = a.shape
    p = None
    if pivoting:
        jpvt = _filled((*batch, n), 0, _INT)
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
        zero = _filled((*batch, m, m - n), 0, a.dtype)
        q = householder_product(ops.concatenate([r, zero], axis=-1), taus)
    else:
        q = householder_product(r, taus)
        r = r[..., :n, :n]
    r = _triu(r)
    return (q, r, p) if pivoting else (q, r)


@eager
def eigh(
    x,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index=None,
    implementation=None,
):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of the
    Hermitian x, reading its lower (or upper) triangle; LAPACK's syevd/heevd
    (whichever implementation is named). NaNs where LAPACK does not
    converge. With subset_by_index (start, end), the eigenvalues of those
    ranks and their vectors alone."""
    del sort_eigenvalues, implementation  # LAPACK's are ascending
    part = _subset("eigh", subset_by_index, asarray(x).shape[-1])
    v, w = _eigh(x, lower=lower, symmetrize_input=symmetrize_input)
    if part is None:
        return v, w
    return v[..., part[0] : part[1]], w[..., part[0] : part[1]]


@eager
def _eigh(x, *, lower: bool = True, symmetrize_input: bool = True):
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
    s = _filled((*batch, 0), 0, _real_dtype(a.dtype))
    if not compute_uv:
        return (s,)

    def eye(k, cols):
        return ops.broadcast_to(_eye(k, cols, dtype=a.dtype), (*batch, k, cols))

    u = eye(m, m if full_matrices else 0)
    vh = eye(n if full_matrices else 0, n)
    return s, u, vh


def _subset(name: str, subset_by_index, k: int):
    if subset_by_index is None:
        return None
    start, end = (int(v) for v in subset_by_index)
    if not 0 <= start <= end <= k:
        fail(f"lax.linalg.{name}", f"subset_by_index {subset_by_index} is not within [0, {k}]")
    return start, end


@eager(static=("full_matrices", "compute_uv", "subset_by_index", "algorithm"))
def svd(
    x,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index=None,
    algorithm=None,
):
    """(u, s, vh) with x = u diag(s) vh, s descending (s alone without
    compute_uv); with subset_by_index (start, end), the singular values of
    those ranks and their vectors alone."""
    a = _matrix(x, "svd")
    part = _subset("svd", subset_by_index, min(a.shape[-2:]))
    if part is not None and full_matrices:
        fail("lax.linalg.svd", "subset_by_index needs full_matrices=False")
    out = _svd(a, full_matrices=full_matrices, compute_uv=compute_uv, algorithm=algorithm)
    if part is None:
        return out
    lo, hi = part
    if not compute_uv:
        return out[..., lo:hi]
    u, s, vh = out
    return u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]


@eager
def _svd(x, *, full_matrices: bool = True, compute_uv: bool = True, algorithm=None):
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
def eig(
    x,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation=None,
    use_magma=None,
):
    """[w, vl, vr]: the (complex) eigenvalues of the square x and its left
    and right eigenvectors as asked; LAPACK's geev (whichever implementation
    is named; enable_eigvec_derivs and use_magma concern derivatives and
    GPUs). NaNs where LAPACK does
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
    out = alpha * _matmul(a, _swap_last(a)) + beta * c
    if symmetrize_output:
        out = _tril(out) + _swap_last(_tril(out, -1))
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
    index = _iota(n)
    for k in range(n):
        x, y = r[k, k], w[k]
        big = ops.binary("maximum", ops.unary("abs", x), ops.unary("abs", y))
        safe = ops.select(y == 0, 1, big)
        xs, ys = x / safe, y / safe
        rh = 1 / ew.sqrt(xs * xs + ys * ys)
        c = ops.select(y == 0, 1, xs * rh).astype(r.dtype)
        s = ops.select(y == 0, 0, -ys * rh).astype(r.dtype)
        row = r[k, :]
        new_row = c * row - s * w
        w = c * w + s * row
        r = ops.select(ops.reshape(index == k, (*(index == k).shape, 1)), new_row, r)
    return r


def _qdwh_qr_step(u, params):
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    m, n = u.shape
    y = ops.concatenate([sqrt_c * u, _eye(n, dtype=u.dtype)], axis=0)
    q, _ = qr(y, full_matrices=False)
    return e * u + a_minus_e_by_sqrt_c * (q[:m] @ _h(q[m:]))


def _qdwh_cholesky_step(u, params):
    a_minus_e, c, e = params
    n = u.shape[1]
    x = c * (_h(u) @ u) + _eye(n, dtype=u.dtype)
    y = cholesky(x, symmetrize_input=False)
    z = _conjugate(triangular_solve(y, _swap_last(u), left_side=True, lower=True, conjugate_a=True))
    z = _h(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True))
    return e * u + a_minus_e * z


def _frobenius(x):
    """sqrt of the sum of |x|^2: the Frobenius norm of a matrix."""
    magnitude = ew.abs(x)
    return ew.sqrt(_sum(magnitude * magnitude))


@eager
def qdwh(x, *, is_hermitian: bool = False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, num_iters, is_converged): the polar decomposition x = u h
    (u with orthonormal columns, h Hermitian positive semi-definite) of a
    full-rank x[m, n], m >= n, by the QR-based dynamically weighted Halley
    iteration (Nakatsukasa, Bai and Gygi), as JAX: its weights computed
    ahead, QR steps while c > 100, Cholesky steps after, Halley's method
    until the iterate settles, then a Newton-Schulz refinement."""
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
    magnitude = ew.abs(x)
    one_norm = _max(_sum(magnitude, axis=0))  # the largest column sum
    inf_norm = _max(_sum(magnitude, axis=1))  # the largest row sum
    alpha_inverse = ops.select(one_norm == 0, 1, 1 / ew.sqrt(one_norm * inf_norm))
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
    converged = asarray(False)
    for params in chol_coefs:
        previous = u
        u = _qdwh_cholesky_step(u, params)
        converged = ~(_frobenius(u - previous) > tol_norm)

    # Halley's method (a, b, c = 3, 1, 3) until the iterate settles.
    def cond(state):
        i, _, done = state
        return ~done & (i < max_iterations)

    def body(state):
        i, u, _ = state
        new = _qdwh_cholesky_step(u, (3 - 1 / 3, 3, 1 / 3))
        return i + 1, new, ~(_frobenius(new - u) > tol_norm)

    start = (asarray(np.int32(len(qr_coefs) + len(chol_coefs))), u, converged)
    num_iters, u, converged = control_flow.while_loop(cond, body, start)
    u = 1.5 * u - 0.5 * u @ (_h(u) @ u)
    h = _h(u) @ x
    h = (h + _h(h)) / 2
    return u, h, num_iters, converged
