"""jax.numpy's products: matmul, dot, tensordot, outer, vdot, inner, kron,
cross and the vector-matrix forms."""

from __future__ import annotations

import builtins

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, reductions, ufuncs
from uir._src.numpy.manipulation import ravel, squeeze
from uir._src.numpy.reductions import sum
from uir._src.numpy.ufuncs import (
    multiply,
)
from uir._src.numpy.util import no_out

# --- Products ------------------------------------------------------------------
#
# Every product takes jax.numpy's `precision` (uir computes f32 products in
# f32 at every setting, so it changes nothing) and `preferred_element_type`:
# the result's type. A wider float or complex type than the operands'
# (int8 operands to f32, bf16 to f32) is computed in: the operands are
# converted first, exactly; else the product is computed in the operands'
# type and converted.


def _for_result(a, b, preferred):
    """The operands of a product whose result is of type `preferred` (None:
    the operands' promoted type), and the type to convert its result to
    (None: none)."""
    x, y = asarray(a), asarray(b)
    if preferred is None:
        return x, y, None
    want = dtypes.canonicalize(preferred)
    have, _ = dtypes.promote(ops.weak_dtype_of(x), ops.weak_dtype_of(y))
    if want == have:
        return x, y, None
    kinds = {"b": "i", "i": "i", "u": "i", "f": "f", "c": "c"}
    if kinds.get(want.kind) == kinds.get(have.kind) and want.itemsize < have.itemsize:
        fail(
            "dot_general",
            f"`preferred_element_type` must not be narrower than the original type, got "
            f"preferred_element_type of {want} for result type of {have}",
        )
    exact = (dtypes.is_float(want) or dtypes.is_complex(want)) and (
        dtypes.is_int(have)
        or dtypes.is_bool(have)
        or (
            (dtypes.is_float(have) or dtypes.is_complex(have))
            and want.itemsize > have.itemsize
            and (dtypes.is_complex(want) or not dtypes.is_complex(have))
        )
    )
    if exact:
        return ops.convert(x, want), ops.convert(y, want), None
    return x, y, want


def _finish(out, after):
    return out if after is None else ops.convert(out, after)


@eager
def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    x, y, after = _for_result(a, b, preferred_element_type)
    return _finish(_matmul(x, y), after)


def _matmul(x, y):
    a, b = x, y
    if x.ndim == 0 or y.ndim == 0:
        fail("matmul", f"operands must not be scalars ({ops.describe(x)}, {ops.describe(y)})")
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = ops.reshape(x, (1, x.shape[0]))
    if y1:
        y = ops.reshape(y, (y.shape[0], 1))
    if x.shape[-1] != y.shape[-2]:
        fail(
            "matmul",
            f"{ops.describe(a)} @ {ops.describe(b)}: inner dimensions {x.shape[-1]} and {y.shape[-2]} differ",
        )
    batch = ops.broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    x = ops.broadcast_to(x, batch + x.shape[-2:], "matmul")
    y = ops.broadcast_to(y, batch + y.shape[-2:], "matmul")
    nb = len(batch)
    out = ops.dot(x, y, ([nb + 1], [nb]), (list(range(nb)), list(range(nb))), "dot_general")
    if x1:
        out = squeeze(out, nb)
    if y1:
        out = squeeze(out, -1)
    return out


@eager
def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    x, y, after = _for_result(a, b, preferred_element_type)
    if x.ndim == 0 or y.ndim == 0:
        return _finish(multiply(x, y), after)
    if y.ndim == 1 or x.ndim == 1 or (x.ndim <= 2 and y.ndim <= 2):
        return _finish(_matmul(x, y), after)
    # N-d: contract x's last axis with y's second-to-last.
    return _finish(_tensordot(x, y, ([x.ndim - 1], [y.ndim - 2])), after)


@eager
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    x, y, after = _for_result(a, b, preferred_element_type)
    return _finish(_tensordot(x, y, axes), after)


def _tensordot(x, y, axes):
    if isinstance(axes, int):
        lc = list(range(x.ndim - axes, x.ndim))
        rc = list(range(axes))
    else:
        la, ra = axes
        lc = [la] if isinstance(la, int) else list(la)
        rc = [ra] if isinstance(ra, int) else list(ra)
    lc = [ops.normalize_axis(i, x.ndim, "tensordot") for i in lc]
    rc = [ops.normalize_axis(i, y.ndim, "tensordot") for i in rc]
    return ops.dot(x, y, (lc, rc), ([], []), "dot_general")


@eager
def outer(a, b, out=None):
    no_out("outer", out)
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


@eager
def vdot(a, b, *, precision=None, preferred_element_type=None):
    x, y, after = _for_result(a, b, preferred_element_type)
    if dtypes.is_complex(x.dtype):
        x = ufuncs.conj(x)  # (NumPy's and JAX's vdot conjugate the first)
    return _finish(sum(multiply(ravel(x), ravel(y))), after)


@eager
def kron(a, b):
    """The Kronecker product."""
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = manipulation.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = manipulation.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    shape_a = [d for s in a.shape for d in (s, 1)]
    shape_b = [d for s in b.shape for d in (1, s)]
    out = manipulation.reshape(a, shape_a) * manipulation.reshape(b, shape_b)
    return manipulation.reshape(out, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


@eager
def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sums over the last axes of a and b."""
    a, b, after = _for_result(a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return _finish(a * b, after)
    return _finish(_tensordot(a, b, ([a.ndim - 1], [b.ndim - 1])), after)


@eager
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """The cross product of 3-vectors (2-vectors get a zero third component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = manipulation.moveaxis(asarray(a), axisa, -1)
    b = manipulation.moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        fail("cross", "vectors must have 2 or 3 components")

    def parts(v):
        comps = [v[..., i] for i in range(v.shape[-1])]
        return comps + [creation.zeros_like(comps[0])] * (3 - len(comps))

    (a0, a1, a2), (b0, b1, b2) = parts(a), parts(b)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a0 * b1 - a1 * b0
    out = manipulation.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return manipulation.moveaxis(out, -1, axisc)


@eager
def matvec(x1, x2, /):
    """Matrix-vector products over broadcast batch dimensions."""
    return matmul(x1, manipulation.expand_dims(asarray(x2), -1))[..., 0]


@eager
def vecmat(x1, x2, /):
    """Vector-matrix products (conjugating the vector)."""
    return matmul(manipulation.expand_dims(ufuncs.conj(asarray(x1)), -2), x2)[..., 0, :]


@eager
def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Dot products along `axis` (conjugating x1)."""
    a, b, after = _for_result(x1, x2, preferred_element_type)
    return _finish(reductions.sum(ufuncs.conj(a) * b, axis=axis), after)


__all__ = [
    "cross",
    "dot",
    "inner",
    "kron",
    "matmul",
    "matvec",
    "outer",
    "tensordot",
    "vdot",
    "vecdot",
    "vecmat",
]
