"""Derivatives of the LAPACK custom calls JAX's linear algebra emits
(`lapack_<s|d|c|z><routine>_ffi`), in both modes, written with uir.lax's
own linear algebra so that they differentiate again.

- potrf (cholesky): L' = L phi(L^-1 A' L^-H), phi the lower triangle with
  half the diagonal; its transpose A_bar = L^-H phi(L^H L_bar) L^-1.
  potrf leaves the input's upper triangle in its result, which
  cholesky's tril discards: the rules treat the result as L.
- trsm (triangular_solve): x = op(a)^-1 b (or b op(a)^-1) gives
  x' = op(a)^-1 (b' - op(a') x), and b_bar = op(a)^-H x_bar,
  a_bar = -op*(b_bar x^H) restricted to a's triangle (no diagonal when
  the diagonal is a unit one).
- getrf (lu, square matrices): with P A = L U and M = L^-1 P A' U^-1,
  LU' = L tril(M, -1) + triu(M) U; its transpose
  A_bar = P^T L^-H (tril(L^H C, -1) + triu(C U^H)) U^-H.

- syevd (eigh, real symmetric): with V^T A' V = K and F[i, j] =
  1 / (w[j] - w[i]), w' = diag(K) and V' = V (F * K); its transpose
  A_bar = V (diag(w_bar) + F * (V^T V_bar)) V^T. Eigenvectors of repeated
  eigenvalues have no derivative (F is 0 there, as a convention).

Other LAPACK routines (geqrf, heevd, gesdd, ...) have no rule yet:
differentiating through them raises, naming the routine."""

from __future__ import annotations

import re

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.lax import linalg
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
    y = ops.moveaxis(x, -1, -2)
    return ops.unary("conjugate", y) if dtypes.is_complex(x.dtype) else y


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
    return ops.unary("conjugate", y) if trans == "C" and dtypes.is_complex(a.dtype) else y


def _solve(a, b, cfg, adjoint: bool):
    """op(a)^-1 b (left) or b op(a)^-1 (right); with `adjoint`, op(a)^H in
    place of op(a)."""
    trans = cfg.get("trans_x", "N")
    if adjoint:
        # op(a)^H: N -> C, T -> conj(a), C -> a
        transpose_a, conjugate_a = {"N": (True, True), "T": (False, True), "C": (False, False)}[
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
    return _solve(a, rhs, cfg, adjoint=False)


def _vjp_trsm(inst, primals, out, ct):
    a, b = primals
    cfg = _config(inst)
    b_bar = _solve(a, ct, cfg, adjoint=True)
    a_bar = None
    if differentiable(a):
        if cfg.get("side", "L") == "L":
            big = ops.unary("negate", _mm(b_bar, _h(out)))
        else:
            big = ops.unary("negate", _mm(_h(out), b_bar))
        # big is the cotangent of op(a): back through op
        trans = cfg.get("trans_x", "N")
        if trans == "T":
            big = ops.moveaxis(big, -1, -2)
        elif trans == "C":
            big = _h(big)
        a_bar = _triangle_of(big, cfg)
    return [a_bar, b_bar if differentiable(b) else None]


# --- getrf ----------------------------------------------------------------------------


def _lu_parts(out):
    """(L unit lower, U upper, P as a 0/1 matrix with P A = L U) from
    getrf's results (square matrices)."""
    raw, ipiv = out[0], out[1]
    n = raw.shape[-1]
    eye = ops.asarray(np.eye(n).astype(raw.dtype))
    low = ops.binary("add", linalg._tril(raw, -1), eye)
    up = linalg._triu(raw)
    one = ops.asarray(np.array(1, ipiv.dtype))
    perm = linalg.lu_pivots_to_permutation(ops.binary("subtract", ipiv, one), n)
    cols = ops.iota(perm.dtype, (*perm.shape, n), perm.ndim)
    rows = ops._comp().emit(
        "broadcast",
        perm,
        dimensions=list(range(perm.ndim)),
        shape=((*perm.shape, n), perm.dtype),
        op_name="permutation",
    )
    p = ops.convert(ops.compare(rows, cols, "EQ", "eq"), raw.dtype)
    return low, up, p


def _square(inst, primals, mode):
    x = primals[0]
    if x.shape[-1] != x.shape[-2]:
        from uir._src.transforms.rules import unsupported

        return unsupported(inst, f"{mode} of LU of a non-square matrix")
    return None


def _jvp_getrf(inst, primals, tangents, out):
    (t,) = tangents
    if t is None:
        return None
    _square(inst, primals, "jvp")
    low, up, p = _lu_parts(out)
    m = linalg.triangular_solve(low, _mm(p, t), left_side=True, lower=True, unit_diagonal=True)
    m = linalg.triangular_solve(up, m, left_side=False, lower=False)
    dot = ops.binary("add", _mm(low, linalg._tril(m, -1)), _mm(linalg._triu(m), up))
    return (dot, None, None)


def _vjp_getrf(inst, primals, out, ct):
    _square(inst, primals, "vjp")
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


def _gaps(w):
    """F with F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (and
    where two eigenvalues coincide)."""
    n = w.shape[-1]
    wj = ops._comp().emit(
        "broadcast",
        w,
        dimensions=[*range(w.ndim - 1), w.ndim],
        shape=((*w.shape, n), w.dtype),
        op_name="eigh_gaps",
    )
    wi = ops._comp().emit(
        "broadcast",
        w,
        dimensions=list(range(w.ndim)),
        shape=((*w.shape, n), w.dtype),
        op_name="eigh_gaps",
    )
    diff = ops.binary("subtract", wj, wi)
    zero = ops.asarray(np.zeros((), w.dtype))
    same = ops.compare(diff, zero, "EQ", "eq")
    safe = ops.select(same, ops.asarray(np.ones((), w.dtype)), diff)
    return ops.select(same, zero, ops.binary("divide", ops.asarray(np.ones((), w.dtype)), safe))


def _diag_embed(w):
    n = w.shape[-1]
    eye = ops.asarray(np.eye(n).astype(w.dtype))
    full = ops._comp().emit(
        "broadcast",
        w,
        dimensions=[*range(w.ndim - 1), w.ndim],
        shape=((*w.shape, n), w.dtype),
        op_name="diag",
    )
    return ops.binary("multiply", full, eye)


def _real_only(inst, primals, mode):
    if dtypes.is_complex(primals[0].dtype):
        from uir._src.transforms.rules import unsupported

        unsupported(inst, f"{mode} of a complex eigendecomposition")


def _jvp_syevd(inst, primals, tangents, out):
    (t,) = tangents
    if t is None:
        return None
    _real_only(inst, primals, "jvp")
    v, w = out[0], out[1]
    inner = _mm(_mm(_h(v), t), v)
    n = w.shape[-1]
    dw = ops.reduce(
        ops.binary("multiply", inner, ops.asarray(np.eye(n).astype(inner.dtype))),
        "add",
        [inner.ndim - 1],
        "diag",
    )
    dv = _mm(v, ops.binary("multiply", _gaps(w), inner))
    return (dv, dw, None)


def _vjp_syevd(inst, primals, out, ct):
    _real_only(inst, primals, "vjp")
    v, w = out[0], out[1]
    v_bar, w_bar = ct[0], ct[1]
    middle = ops.binary(
        "add", _diag_embed(w_bar), ops.binary("multiply", _gaps(w), _mm(_h(v), v_bar))
    )
    return [_mm(_mm(v, middle), _h(v))]


JVP = {"potrf": _jvp_potrf, "trsm": _jvp_trsm, "getrf": _jvp_getrf, "syevd": _jvp_syevd}
VJP = {"potrf": _vjp_potrf, "trsm": _vjp_trsm, "getrf": _vjp_getrf, "syevd": _vjp_syevd}

__all__ = ["JVP", "VJP", "instantiate", "routine"]
