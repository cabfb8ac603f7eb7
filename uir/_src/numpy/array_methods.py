"""The operators and methods of traced arrays (jax.Array's), installed on
Tracer when `uir` loads (this module needs the array functions, which need
Tracer), so a Tracer behaves as an array whatever public module the caller
imported."""

from __future__ import annotations

from uir._src.core import dtypes
from uir._src.core.tracing import Tracer as _Tracer
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.indexing import take
from uir._src.numpy.manipulation import (
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
)
from uir._src.numpy.products import dot, matmul
from uir._src.numpy.reductions import (
    all,
    any,
    argmax,
    argmin,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from uir._src.numpy.ufuncs import (
    abs,
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    clip,
    conj,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    imag,
    invert,
    left_shift,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    power,
    real,
    remainder,
    right_shift,
    subtract,
)


def _swap(f):
    return lambda self, other: f(other, self)


def _astype(self, dtype):
    from uir._src.core import ops

    return ops.convert(self, dtypes.canonicalize(dtype))


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
_T.__getitem__ = np_indexing.getitem
_T.at = property(lambda self: np_indexing._At(self))
_T.astype = _astype
_T.reshape = lambda self, *shape, **kw: reshape(self, shape[0] if len(shape) == 1 else shape, **kw)
_T.transpose = lambda self, *axes: transpose(self, axes[0] if len(axes) == 1 else (axes or None))
_T.T = property(lambda self: transpose(self))
_T.sum = sum  # jax.Array's methods: the functions' signatures, self first
_T.prod = prod
_T.mean = mean
_T.max = max
_T.min = min
_T.all = all
_T.any = any
_T.argmax = lambda self, axis=None, out=None, keepdims=None: argmax(self, axis, out, keepdims)
_T.argmin = lambda self, axis=None, out=None, keepdims=None: argmin(self, axis, out, keepdims)
_T.var = var
_T.std = std
_T.ravel = ravel
_T.flatten = ravel
_T.squeeze = lambda self, axis=None: squeeze(self, axis)
_T.clip = lambda self, min=None, max=None: clip(self, min, max)
_T.dot = dot
_T.conj = conj
_T.real = property(real)
_T.imag = property(imag)
_T.swapaxes = swapaxes
_T.take = take
