"""Derivatives of the LAPACK custom calls JAX's linear algebra emits
(`lapack_<s|d|c|z><routine>_ffi`), in both modes, written with uir.lax's
own linear algebra so that they differentiate again.

- potrf (cholesky): L' = L phi(L^-1 A' L^-H), phi the lower triangle with
  half the diagonal; its transpose A_bar = L^-H phi(L^H L_bar) L^-1.
  potrf leaves the input's upper triangle in its result, which
  cholesky's tril discards: the rules treat the result as L.
- trsm (triangular_solve): x = op(a)^-1 b (or b op(a)^-1) gives
  x' = op(a)^-1 (b' - op(a') x), and b_bar = op(a)^-T x_bar,
  a_bar = -op*(b_bar x^T) restricted to a's triangle (no diagonal when
  the diagonal is a unit one): plain transposes, complex conjugation
  staying where the map has it.
- getrf (lu): with P A = L U and M = L^-1 P A' U^-1, LU' = L tril(M, -1)
  + triu(M) U (L and U completed to square by the identity for an m x n
  A); for a real square A its transpose is
  A_bar = P^T L^-T (tril(L^T C, -1) + triu(C U^T)) U^-T, and otherwise
  reverse mode transposes the forward rule.

- syevd (eigh, real symmetric): with V^T A' V = K and F[i, j] =
  1 / (w[j] - w[i]), w' = diag(K) and V' = V (F * K); its transpose
  A_bar = V (diag(w_bar) + F * (V^T V_bar)) V^T. Eigenvectors of repeated
  eigenvalues have no derivative (F is 0 there, as a convention).

- heevd (eigh, complex Hermitian): the same with K = V^H A' V and
  w' = real(diag(K)); reverse mode transposes the forward rule.
- gesdd/gesvd (svd): with A = U diag(s) V^H and dS = U^H A' V,
  s' = real(diag(dS)), U' = U (F * (dS S + S dS^H) + D) and
  V' = V (F * (S dS + dS^H S)), F[i, j] = 1 / (s[j]^2 - s[i]^2), D the
  imaginary part of dS's diagonal over s; a tall A adds
  (I - U U^H) A' V S^-1 to U', a wide one (I - V V^H) A'^H U S^-1 to V'.
  An SVD without vectors computes them for its derivative; the full
  matrices of a non-square A have no derivative (as in JAX). Reverse
  mode transposes the forward rule.
- qr: geqrf and orgqr/ungqr hold q and r in Householder form, whose
  derivative no single custom call can give, so lax.linalg.qr traces them
  into one `call` tagged `linalg.qr(...)` and QR below differentiates it:
  with C = q^H A' r^-1 and W its skew-Hermitian part fixed by C's strictly
  lower triangle (and the imaginary part of its diagonal), q' = A' r^-1 -
  q (C - W) and r' = (C - W) r; a wide A differentiates its leading
  square block so and the rest of r as q^H A; complete q of a tall A adds
  the derivative of the columns the Householder reflectors fix (Roberts
  and Roberts, arXiv:2409.13374, eqs. 32-33).

- geev (eig): eigenvalues only, w' = diag(V^-1 A' V); a call that also
  computes eigenvectors raises, as JAX does without enable_eigvec_derivs.

Other LAPACK routines (geqrf or orgqr on their own, gees, ...) have no
rule: differentiating through them raises, naming the routine."""

from __future__ import annotations

import re

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.lax import linalg
from uir._src.lax.elementwise import _conjugate
from uir._src.transforms.rules import differentiable, instantiate


def routine(inst) -> str | None:
    """'potrf', 'trsm', ... for a LAPACK custom call, else None."""
    if inst.opcode != "custom-call":
        return None
    m = re.fullmatch(r"lapack_[sdcz](\w+?)_ffi", inst.attributes.get("custom_call_target", ""))
    return m.group(1) if m else None


def _config(inst) -> dict:
    text = inst.attributes.get("backend_config") or ""
    return {k: chr(int(v)) for k, v in re.findall(r"(\w+) = (\d+) : ui8", text)}


def _h(x):
    return linalg._h(x)


def _t(x):
    return ops.moveaxis(x, -1, -2)


def _mm(a, b):
    return linalg._matmul(a, b)


def _phi(x):
    """The lower triangle of x with half its diagonal."""
    n = x.shape[-1]
    mask = np.tril(np.ones((n, n))) - 0.5 * np.eye(n)
    return ops.binary("multiply", x, ops.asarray(mask.astype(x.dtype)))


def _lower(raw):
    return linalg._tril(raw)


# --- potrf ----------------------------------------------------------------------------


def _jvp_potrf(inst, primals, tangents, out):
    (t,) = tangents
    if t is None:
        return None
    factor = _lower(out[0])
    inner = linalg.triangular_solve(factor, t, left_side=True, lower=True)
    inner = linalg.triangular_solve(
        factor, inner, left_side=False, lower=True, transpose_a=True, conjugate_a=True
    )
    return (_mm(factor, _phi(inner)), None)


def _vjp_potrf(inst, primals, out, ct):
    if dtypes.is_complex(primals[0].dtype):
        return None  # the forward rule, transposed
    factor = _lower(out[0])
    bar = _lower(ct[0])
    p = _phi(_mm(_h(factor), bar))
    x = linalg.triangular_solve(
        factor, p, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )
    return [linalg.triangular_solve(factor, x, left_side=False, lower=True)]


# --- trsm -----------------------------------------------------------------------------


def _op(a, trans: str):
    if trans == "N":
        return a
    y = ops.moveaxis(a, -1, -2)
    return _conjugate(y) if trans == "C" and dtypes.is_complex(a.dtype) else y


def _solve(a, b, cfg, transposed: bool):
    """op(a)^-1 b (left) or b op(a)^-1 (right); with `transposed`, op(a)^T
    in place of op(a) (the transpose of the map b -> op(a)^-1 b, complex
    conjugation staying where it was)."""
    trans = cfg.get("trans_x", "N")
    if transposed:
        # op(a)^T: N -> T, T -> a, C -> conj(a)
        transpose_a, conjugate_a = {"N": (True, False), "T": (False, False), "C": (False, True)}[
            trans
        ]
    else:
        transpose_a, conjugate_a = {"N": (False, False), "T": (True, False), "C": (True, True)}[
            trans
        ]
    return linalg.triangular_solve(
        a,
        b,
        left_side=cfg.get("side", "L") == "L",
        lower=cfg.get("uplo", "L") == "L",
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=cfg.get("diag", "N") == "U",
    )


def _triangle_of(a, cfg):
    """a restricted to the triangle trsm reads (no diagonal if unit)."""
    lower = cfg.get("uplo", "L") == "L"
    k = -1 if cfg.get("diag", "N") == "U" else 0
    return linalg._tril(a, k) if lower else linalg._triu(a, -k)


def _jvp_trsm(inst, primals, tangents, out):
    a, _ = primals
    ta, tb = tangents
    cfg = _config(inst)
    x = out
    rhs = None if tb is None else tb
    if ta is not None:
        da = _op(_triangle_of(ta, cfg), cfg.get("trans_x", "N"))
        term = _mm(da, x) if cfg.get("side", "L") == "L" else _mm(x, da)
        rhs = ops.unary("negate", term) if rhs is None else ops.binary("subtract", rhs, term)
    return _solve(a, rhs, cfg, transposed=False)


def _vjp_trsm(inst, primals, out, ct):
    a, b = primals
    cfg = _config(inst)
    b_bar = _solve(a, ct, cfg, transposed=True)
    a_bar = None
    if differentiable(a):
        if cfg.get("side", "L") == "L":
            big = ops.unary("negate", _mm(b_bar, _t(out)))
        else:
            big = ops.unary("negate", _mm(_t(out), b_bar))
        # big is the cotangent of op(a): back through op
        trans = cfg.get("trans_x", "N")
        if trans == "T":
            big = ops.moveaxis(big, -1, -2)
        elif trans == "C":
            big = _h(big)
        a_bar = _triangle_of(big, cfg)
    return [a_bar, b_bar if differentiable(b) else None]


# --- getrf ----------------------------------------------------------------------------


def _permutation_matrix(perm, dtype):
    """P with P[i, j] = (perm[i] == j): (P b)[i] = b[perm[i]]."""
    n = perm.shape[-1]
    rows = ops._comp().emit(
        "broadcast",
        perm,
        dimensions=list(range(perm.ndim)),
        shape=((*perm.shape, n), perm.dtype),
        op_name="permutation",
    )
    cols = ops.iota(perm.dtype, rows.shape, rows.ndim - 1)
    return ops.convert(ops.compare(rows, cols, "EQ", "eq"), dtype)


def _lu_parts(out):
    """(L, U, P) with P A = L U from getrf's results for an m x n A: L the
    m x m unit lower factor (its columns past min(m, n) those of the
    identity), U the n x n upper one (its rows past min(m, n) those of the
    identity), P the m x m permutation as a 0/1 matrix."""
    raw, ipiv = out[0], out[1]
    *batch, m, n = raw.shape
    k = min(m, n)
    dtype = raw.dtype

    def zeros(rows, cols):
        return ops.broadcast_to(ops.asarray(np.zeros((), dtype)), (*batch, rows, cols))

    low = linalg._tril(raw[..., :, :k], -1)
    if m > k:
        low = ops.concatenate([low, zeros(m, m - k)], axis=-1)
    low = ops.binary("add", low, ops.asarray(np.eye(m).astype(dtype)))
    up = linalg._triu(raw[..., :k, :])
    if n > k:
        up = ops.concatenate([up, zeros(n - k, n)], axis=-2)
        rest = np.diag((np.arange(n) >= k).astype(dtype))
        up = ops.binary("add", up, ops.asarray(rest))
    one = ops.asarray(np.array(1, ipiv.dtype))
    perm = linalg.lu_pivots_to_permutation(ops.binary("subtract", ipiv, one), m)
    return low, up, _permutation_matrix(perm, dtype)


def _jvp_getrf(inst, primals, tangents, out):
    (t,) = tangents
    if t is None:
        return None
    low, up, p = _lu_parts(out)
    m = linalg.triangular_solve(low, _mm(p, t), left_side=True, lower=True, unit_diagonal=True)
    m = linalg.triangular_solve(up, m, left_side=False, lower=False)
    dot = ops.binary("add", _mm(low, linalg._tril(m, -1)), _mm(linalg._triu(m), up))
    return (dot, None, None)


def _vjp_getrf(inst, primals, out, ct):
    x = primals[0]
    if dtypes.is_complex(x.dtype) or x.shape[-1] != x.shape[-2]:
        return None  # the forward rule, transposed
    low, up, p = _lu_parts(out)
    c = ct[0]
    m_bar = ops.binary("add", linalg._tril(_mm(_h(low), c), -1), linalg._triu(_mm(c, _h(up))))
    y = linalg.triangular_solve(
        low,
        m_bar,
        left_side=True,
        lower=True,
        transpose_a=True,
        conjugate_a=True,
        unit_diagonal=True,
    )
    y = linalg.triangular_solve(
        up, y, left_side=False, lower=False, transpose_a=True, conjugate_a=True
    )
    return [_mm(ops.moveaxis(p, -1, -2), y)]


# --- syevd ----------------------------------------------------------------------------


def _spread(w, shape, along_rows: bool):
    """w [..., k] broadcast onto `shape` [..., m, k] (element [.., i, j]
    = w[j], along_rows) or [..., k, m] (= w[i])."""
    dims = [*range(w.ndim - 1), len(shape) - 1] if along_rows else list(range(w.ndim))
    return ops._comp().emit(
        "broadcast", w, dimensions=dims, shape=(tuple(shape), w.dtype), op_name="spread"
    )


def _safe_inverse(s):
    """1 / s, 0 where s is 0."""
    zero = ops.asarray(np.zeros((), s.dtype))
    one = ops.asarray(np.ones((), s.dtype))
    is_zero = ops.compare(s, zero, "EQ", "eq")
    return ops.select(is_zero, zero, ops.binary("divide", one, ops.select(is_zero, one, s)))


def _gaps(w):
    """F with F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (and
    where two eigenvalues coincide)."""
    square = (*w.shape, w.shape[-1])
    return _safe_inverse(
        ops.binary("subtract", _spread(w, square, True), _spread(w, square, False))
    )


def _diag_embed(w):
    """diag(w) for each w [..., n]."""
    return _diag_mask(_spread(w, (*w.shape, w.shape[-1]), True))


def _diag_mask(x):
    """x with its off-diagonal entries zeroed (square in the last two dims)."""
    n = x.shape[-1]
    return ops.binary("multiply", x, ops.asarray(np.eye(n).astype(x.dtype)))


def _diagonal(x):
    """The diagonal of each matrix of x."""
    return ops.reduce(_diag_mask(x), "add", [x.ndim - 1], "diag")


def _real(x):
    return ops.unary("real", x) if dtypes.is_complex(x.dtype) else x


def _as(x, dtype):
    return x if x.dtype == dtype else ops.convert(x, dtype)


def _jvp_syevd(inst, primals, tangents, out):
    (t,) = tangents
    if t is None:
        return None
    v, w = out[0], out[1]
    inner = _mm(_mm(_h(v), t), v)
    dw = _real(_diagonal(inner))
    dv = _mm(v, ops.binary("multiply", _as(_gaps(w), v.dtype), inner))
    return (dv, dw, None)


def _vjp_syevd(inst, primals, out, ct):
    if dtypes.is_complex(primals[0].dtype):
        return None  # heevd: the forward rule, transposed
    v, w = out[0], out[1]
    v_bar, w_bar = ct[0], ct[1]
    middle = ops.binary(
        "add", _diag_embed(w_bar), ops.binary("multiply", _gaps(w), _mm(_h(v), v_bar))
    )
    return [_mm(_mm(v, middle), _h(v))]


# --- gesdd, gesvd --------------------------------------------------------------------


def _scale_columns(x, s):
    """x diag(s)."""
    return ops.binary("multiply", x, _spread(_as(s, x.dtype), x.shape, True))


def _scale_rows(x, s):
    """diag(s) x."""
    return ops.binary("multiply", x, _spread(_as(s, x.dtype), x.shape, False))


def _jvp_svd(inst, primals, tangents, out):
    t = tangents[0]
    if t is None:
        return None
    a = primals[0]
    m, n = a.shape[-2:]
    mode = _config(inst).get("mode", "A")
    if mode == "A" and m != n:
        from uir._src.transforms.rules import unsupported

        unsupported(inst, "jvp of the SVD's full matrices of a non-square matrix")
    if mode == "N":
        u, s, vh = linalg._svd(a, full_matrices=False)
    else:
        s, u, vh = out[1], out[2], out[3]
    v = _h(vh)
    ds_full = _mm(_mm(_h(u), t), v)
    ds = _real(_diagonal(ds_full))
    if mode == "N":
        return (None, ds, None, None, None)
    sq = ops.binary("multiply", s, s)
    # F[i, j] = 1 / (s[j]^2 - s[i]^2), 0 where they coincide
    f = _as(_gaps(sq), a.dtype)
    right = _scale_columns(ds_full, s)  # dS S
    left = _scale_rows(ds_full, s)  # S dS
    du_inner = ops.binary("multiply", f, ops.binary("add", right, _h(right)))
    inv = _safe_inverse(s)
    if dtypes.is_complex(a.dtype):
        # the phase the gauge leaves: i Im(dS_ii) / s_i on the diagonal
        half = ops.binary("subtract", ds_full, _h(ds_full))
        half = ops.binary("multiply", half, ops.asarray(np.array(0.5, a.dtype)))
        du_inner = ops.binary("add", du_inner, _scale_rows(_diag_mask(half), inv))
    du = _mm(u, du_inner)
    dv = _mm(v, ops.binary("multiply", f, ops.binary("add", left, _h(left))))
    if m > n:
        tv = _mm(t, v)
        du = ops.binary(
            "add", du, _scale_columns(ops.binary("subtract", tv, _mm(u, _mm(_h(u), tv))), inv)
        )
    elif n > m:
        tu = _mm(_h(t), u)
        dv = ops.binary(
            "add", dv, _scale_columns(ops.binary("subtract", tu, _mm(v, _mm(vh, tu))), inv)
        )
    return (None, ds, du, _h(dv), None)


# --- geev -----------------------------------------------------------------------------


def _jvp_geev(inst, primals, tangents, out):
    """Eigenvalues of a general matrix: w' = diag(V^-1 A' V), V the right
    eigenvectors (computed for it). Eigenvectors of a non-symmetric matrix
    have no derivative here, as in JAX without enable_eigvec_derivs."""
    t = tangents[0]
    if t is None:
        return None
    cfg = _config(inst)
    if "V" in (cfg.get("compute_left", "N"), cfg.get("compute_right", "N")):
        from uir._src.transforms.rules import unsupported

        unsupported(
            inst,
            "jvp of the eigenvectors of a non-symmetric matrix (only eigenvalues, "
            "jnp.linalg.eigvals, differentiate)",
        )
    a = primals[0]
    _, vr = linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    ta = _as(t, vr.dtype)
    dw = ops.reduce(
        ops.binary("multiply", _solve_square(vr, ta), _t(vr)), "add", [vr.ndim - 1], "eig"
    )
    if dtypes.is_complex(a.dtype):
        return (dw, None, None, None)
    return (ops.unary("real", dw), ops.unary("imag", dw), None, None, None)


JVP = {
    "geev": _jvp_geev,
    "potrf": _jvp_potrf,
    "trsm": _jvp_trsm,
    "getrf": _jvp_getrf,
    "syevd": _jvp_syevd,
    "heevd": _jvp_syevd,
    "gesdd": _jvp_svd,
    "gesvd": _jvp_svd,
}
# Routines with a forward rule alone (heevd, gesdd, gesvd), or whose VJP
# returns None, reverse by transposing it.
VJP = {"potrf": _vjp_potrf, "trsm": _vjp_trsm, "getrf": _vjp_getrf, "syevd": _vjp_syevd}


# --- qr (a tagged call) ---------------------------------------------------------------


def _thin_qr(q, r, dx):
    """(q', r') of x = q r with x [..., m, n], m >= n, q [..., m, n]."""
    n = r.shape[-1]
    dx_rinv = linalg.triangular_solve(r, dx, left_side=False, lower=False)
    c = _mm(_h(q), dx_rinv)
    low = linalg._tril(c, -1)
    w = ops.binary("subtract", low, _h(low))
    if dtypes.is_complex(c.dtype):
        imag = ops.binary("subtract", c, _as(_real(c), c.dtype))
        w = ops.binary(
            "add", w, ops.binary("multiply", imag, ops.asarray(np.eye(n).astype(c.dtype)))
        )
    c_w = ops.binary("subtract", c, w)
    return ops.binary("subtract", dx_rinv, _mm(q, c_w)), _mm(c_w, r)


def _slice_last(x, lo, hi, axis=-1):
    axis = axis % x.ndim
    index = [slice(None)] * x.ndim
    index[axis] = slice(lo, hi)
    return x[tuple(index)]


def _solve_square(a, b):
    """x with a x = b, by a's LU with partial pivoting."""
    lu_, _, perm = linalg.lu(a)
    p = _permutation_matrix(perm, a.dtype)
    y = linalg.triangular_solve(lu_, _mm(p, b), left_side=True, lower=True, unit_diagonal=True)
    return linalg.triangular_solve(lu_, y, left_side=True, lower=False)


class QrRule:
    """The derivative of a call tagged linalg.qr(full_matrices=, pivoting=)."""

    kind = "custom_jvp"
    builtin = True
    n_args = 1

    def __init__(self, full_matrices: bool, pivoting: bool, r_only: bool = False):
        self.full_matrices, self.pivoting, self.r_only = full_matrices, pivoting, r_only

    def call(self, vals):
        """The call again, on `vals` (which may carry more batch dims)."""
        if self.r_only:
            return (linalg.qr_r(vals[0]),)
        return linalg.qr(vals[0], full_matrices=self.full_matrices, pivoting=self.pivoting)

    def tangents_out(self, vals, tangents):
        out = self.call(vals)
        return list(out), self.tangents(vals, out, tangents)

    def tangents(self, vals, out, tangents):
        x, dx = vals[0], tangents[0]
        if dx is None:
            dx = ops.binary("multiply", x, ops.asarray(np.zeros((), x.dtype)))
        if self.r_only:
            # r alone: its derivative needs q, formed here
            q, r = linalg.qr(x, full_matrices=False)
            return [self._tangents(x, dx, q, r, out)[1]]
        return self._tangents(x, dx, out[0], out[1], out)

    def _tangents(self, x, dx, q, r, out):
        m, n = x.shape[-2:]
        if self.pivoting:
            # x[..., p] = x P^T, P the permutation matrix of p
            pick = _t(_permutation_matrix(out[2], x.dtype))
            dx, x = _mm(dx, pick), _mm(x, pick)
        if m < n:
            dq, dr1 = _thin_qr(q, _slice_last(r, 0, m), _slice_last(dx, 0, m))
            dr2 = ops.binary(
                "add", _mm(_h(dq), _slice_last(x, m, n)), _mm(_h(q), _slice_last(dx, m, n))
            )
            dr = ops.concatenate([dr1, dr2], axis=-1)
        elif not self.full_matrices or m == n:
            dq, dr = _thin_qr(q, r, dx)
        else:
            q_mn = _slice_last(q, 0, n)
            q_mp = _slice_last(q, n, m)
            dq_mn, dr_nn = _thin_qr(q_mn, _slice_last(r, 0, n, axis=-2), dx)
            q_nn, q_pn = _slice_last(q_mn, 0, n, -2), _slice_last(q_mn, n, m, -2)
            dq_nn, dq_pn = _slice_last(dq_mn, 0, n, -2), _slice_last(dq_mn, n, m, -2)
            eye = ops.asarray(np.eye(n).astype(q.dtype))
            # z = q_pn (q_nn - I)^-1, from (q_nn - I)^H z^H = q_pn^H
            z_h = _solve_square(_h(ops.binary("subtract", q_nn, eye)), _h(q_pn))
            z = _h(z_h)
            dq_mp = ops.binary(
                "subtract",
                _mm(dq_mn, z_h),
                _mm(
                    ops.binary("add", q_mn, _mm(q_mp, z)),
                    _h(ops.binary("subtract", dq_pn, _mm(z, dq_nn))),
                ),
            )
            dq = ops.concatenate([dq_mn, dq_mp], axis=-1)
            zeros = ops.broadcast_to(ops.asarray(np.zeros((), r.dtype)), (*r.shape[:-2], m - n, n))
            dr = ops.concatenate([dr_nn, zeros], axis=-2)
        return [dq, dr, None] if self.pivoting else [dq, dr]


def builtin_rule(tag: str):
    """The rule of a call tagged by uir's own linear algebra, or None."""
    parsed = linalg.parse_qr_tag(tag)
    return None if parsed is None else QrRule(*parsed)


__all__ = ["JVP", "VJP", "QrRule", "builtin_rule", "instantiate", "routine"]
