"""uir.numpy: jax.numpy's names and semantics for what it covers.

    import uir.numpy as jnp

Inside uir.jit the functions trace to HLO; outside they run at once (each
call traced and evaluated). Types promote as in JAX, with 64-bit types off
unless uir.config.update("enable_x64", True).
"""

from __future__ import annotations

import numpy as _np

from uir._src import dtypes as _dtypes
from uir._src import indexing as _indexing
from uir._src.numpy_impl import (  # noqa: F401
    abs,
    absolute,
    add,
    all,
    amax,
    amin,
    any,
    arange,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    around,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    cos,
    cosh,
    divide,
    e,
    equal,
    erf,
    exp,
    exp2,
    expm1,
    eye,
    floor,
    floor_divide,
    fmod,
    full,
    full_like,
    greater,
    greater_equal,
    imag,
    inf,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    linspace,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    max,
    maximum,
    mean,
    min,
    minimum,
    mod,
    multiply,
    nan,
    negative,
    newaxis,
    not_equal,
    ones,
    ones_like,
    pi,
    power,
    prod,
    ravel,
    real,
    reciprocal,
    remainder,
    right_shift,
    rint,
    round,
    rsqrt,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    std,
    subtract,
    sum,
    tan,
    tanh,
    true_divide,
    trunc,
    var,
    where,
    zeros,
    zeros_like,
)
from uir._src.numpy_impl import public_asarray as asarray
from uir._src.numpy_shapes import (  # noqa: F401
    argsort,
    broadcast_to,
    concatenate,
    cumprod,
    cumsum,
    dot,
    einsum,
    expand_dims,
    flip,
    matmul,
    moveaxis,
    outer,
    pad,
    repeat,
    reshape,
    sort,
    split,
    squeeze,
    stack,
    swapaxes,
    take,
    take_along_axis,
    tensordot,
    tile,
    transpose,
    vdot,
)
from uir._src.tracing import Tracer as _Tracer

array = asarray

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
import ml_dtypes as _ml_dtypes  # noqa: E402

bfloat16 = _ml_dtypes.bfloat16
dtype = _np.dtype
ndarray = _Tracer


def result_type(*args):
    """The dtype values of `args` combine to (JAX's promotion)."""
    from uir._src import ops

    return _dtypes.promote(
        *[
            ops.weak_dtype_of(a)
            if not isinstance(a, type) and not isinstance(a, _np.dtype)
            else (_dtypes.canonicalize(a), False)
            for a in args
        ]
    )[0]


def promote_types(a, b):
    return _dtypes.promote((_dtypes.canonicalize(a), False), (_dtypes.canonicalize(b), False))[0]


# --- Methods and operators of traced arrays ------------------------------------


def _swap(f):
    return lambda self, other: f(other, self)


def _astype(self, dtype):
    from uir._src import ops

    return ops.convert(self, _dtypes.canonicalize(dtype))


_T = _Tracer
_T.__add__, _T.__radd__ = add, _swap(add)
_T.__sub__, _T.__rsub__ = subtract, _swap(subtract)
_T.__mul__, _T.__rmul__ = multiply, _swap(multiply)
_T.__truediv__, _T.__rtruediv__ = divide, _swap(divide)
_T.__floordiv__, _T.__rfloordiv__ = floor_divide, _swap(floor_divide)
_T.__mod__, _T.__rmod__ = remainder, _swap(remainder)
_T.__pow__, _T.__rpow__ = power, _swap(power)
_T.__matmul__, _T.__rmatmul__ = matmul, _swap(matmul)
_T.__and__, _T.__rand__ = bitwise_and, _swap(bitwise_and)
_T.__or__, _T.__ror__ = bitwise_or, _swap(bitwise_or)
_T.__xor__, _T.__rxor__ = bitwise_xor, _swap(bitwise_xor)
_T.__lshift__, _T.__rlshift__ = left_shift, _swap(left_shift)
_T.__rshift__, _T.__rrshift__ = right_shift, _swap(right_shift)
_T.__neg__ = negative
_T.__pos__ = lambda self: self
_T.__abs__ = abs
_T.__invert__ = invert
_T.__eq__ = equal
_T.__ne__ = not_equal
_T.__lt__ = less
_T.__le__ = less_equal
_T.__gt__ = greater
_T.__ge__ = greater_equal
_T.__getitem__ = _indexing.getitem
_T.at = property(lambda self: _indexing._At(self))
_T.astype = _astype
_T.reshape = lambda self, *shape, **kw: reshape(self, shape[0] if len(shape) == 1 else shape, **kw)
_T.transpose = lambda self, *axes: transpose(self, axes[0] if len(axes) == 1 else (axes or None))
_T.T = property(lambda self: transpose(self))
_T.sum = lambda self, axis=None, keepdims=False, dtype=None: sum(self, axis, keepdims, dtype)
_T.prod = lambda self, axis=None, keepdims=False, dtype=None: prod(self, axis, keepdims, dtype)
_T.mean = lambda self, axis=None, keepdims=False, dtype=None: mean(self, axis, keepdims, dtype)
_T.max = lambda self, axis=None, keepdims=False: max(self, axis, keepdims)
_T.min = lambda self, axis=None, keepdims=False: min(self, axis, keepdims)
_T.all = lambda self, axis=None, keepdims=False: all(self, axis, keepdims)
_T.any = lambda self, axis=None, keepdims=False: any(self, axis, keepdims)
_T.argmax = lambda self, axis=None, keepdims=False: argmax(self, axis, keepdims)
_T.argmin = lambda self, axis=None, keepdims=False: argmin(self, axis, keepdims)
_T.var = lambda self, axis=None, keepdims=False, ddof=0: var(self, axis, keepdims, ddof)
_T.std = lambda self, axis=None, keepdims=False, ddof=0: std(self, axis, keepdims, ddof)
_T.ravel = ravel
_T.flatten = ravel
_T.squeeze = lambda self, axis=None: squeeze(self, axis)
_T.clip = lambda self, min=None, max=None: clip(self, min, max)
_T.dot = dot
_T.conj = conj
_T.real = property(real)
_T.imag = property(imag)
_T.swapaxes = swapaxes
_T.take = lambda self, indices, axis=None: take(self, indices, axis)
