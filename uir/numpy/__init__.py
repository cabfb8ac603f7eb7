"""uir.numpy: jax.numpy's names and semantics for what it covers.

    import uir.numpy as jnp

Inside uir.jit the functions trace to HLO; outside they run at once (each
call traced and evaluated). Types promote as in JAX, with 64-bit types off
unless uir.config.update("enable_x64", True).
"""

import numpy as _np

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
    nextafter,
    not_equal,
    ones,
    ones_like,
    pi,
    power,
    prod,
    promote_types,
    ravel,
    real,
    reciprocal,
    remainder,
    result_type,
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

from uir._src.numpy_extra import *  # noqa: E402, F403
from uir._src.numpy_more import *  # noqa: E402, F403

# NumPy's scalar types and type hierarchy, ml_dtypes' narrow types, NumPy's
# index helpers and print options: the objects jax.numpy re-exports.
bool = _np.bool_
complex_ = _np.complex128
float_ = _np.float64
int_ = _np.int64
uint = _np.uint64
double = _np.float64
single = _np.float32
cdouble = _np.complex128
csingle = _np.complex64
floating = _np.floating
integer = _np.integer
number = _np.number
inexact = _np.inexact
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
complexfloating = _np.complexfloating
generic = _np.generic
character = _np.character
flexible = _np.flexible
object_ = _np.object_
ComplexWarning = _np.exceptions.ComplexWarning
# ml_dtypes' narrow types (float8_*, float4_e2m1fn, int4, ...) under their
# names, from the one table of element types (uir._src.dtypes).
from uir._src.dtypes import NUMPY_DTYPES as _TYPES  # noqa: E402

for _dtype in _TYPES.values():
    if hasattr(_ml_dtypes, _dtype.name):
        globals().setdefault(_dtype.name, getattr(_ml_dtypes, _dtype.name))
del _dtype, _TYPES
index_exp = _np.index_exp
s_ = _np.s_
c_ = _np.c_
r_ = _np.r_
mgrid = _np.mgrid
ogrid = _np.ogrid
printoptions = _np.printoptions
get_printoptions = _np.get_printoptions
set_printoptions = _np.set_printoptions

from uir.numpy import linalg as linalg  # noqa: E402  (jnp.linalg.solve, ...)
