"""uir.numpy: jax.numpy's names and semantics for what it covers.

    import uir.numpy as jnp

Inside uir.jit the functions trace to HLO; outside they run at once (each
call traced and evaluated). Types promote as in JAX, with 64-bit types off
unless uir.config.update("enable_x64", True).
"""

from __future__ import annotations

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
