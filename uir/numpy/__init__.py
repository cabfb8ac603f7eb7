"""uir.numpy: jax.numpy's names and semantics for what it covers.

    import uir.numpy as jnp

Inside uir.jit the functions trace to HLO; outside they run at once (each
call traced and evaluated). Types promote as in JAX, with 64-bit types off
unless uir.config.update("enable_x64", True).
"""

import numpy as _np

from uir._src.core.tracing import Tracer as _Tracer
from uir._src.numpy.util import array, asarray, set_printoptions  # noqa: F401

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
import ml_dtypes as _ml_dtypes  # noqa: E402

bfloat16 = _ml_dtypes.bfloat16
dtype = _np.dtype
ndarray = _Tracer

from uir._src.numpy.creation import *  # noqa: E402, F403
from uir._src.numpy.einsum import *  # noqa: E402, F403
from uir._src.numpy.histograms import *  # noqa: E402, F403
from uir._src.numpy.indexing import *  # noqa: E402, F403
from uir._src.numpy.manipulation import *  # noqa: E402, F403
from uir._src.numpy.padding import *  # noqa: E402, F403
from uir._src.numpy.polynomials import *  # noqa: E402, F403
from uir._src.numpy.products import *  # noqa: E402, F403
from uir._src.numpy.reductions import *  # noqa: E402, F403
from uir._src.numpy.searching import *  # noqa: E402, F403
from uir._src.numpy.sets import *  # noqa: E402, F403
from uir._src.numpy.signal import *  # noqa: E402, F403
from uir._src.numpy.sorting import *  # noqa: E402, F403
from uir._src.numpy.statistics import *  # noqa: E402, F403
from uir._src.numpy.types import *  # noqa: E402, F403
from uir._src.numpy.ufuncs import *  # noqa: E402, F403
from uir._src.numpy.unique import *  # noqa: E402, F403

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
# names, from the one table of element types (uir._src.core.dtypes).
from uir._src.core.dtypes import NUMPY_DTYPES as _TYPES  # noqa: E402
from uir._src.numpy import searching as _searching  # noqa: E402

where = _searching.where  # the ufunc's where, with the one-argument (nonzero) form
# jax.numpy's ufunc objects (with reduce, accumulate, at, outer) in place of
# the plain functions of the same names.
from uir._src.numpy.ufunc_api import (  # noqa: E402, F401
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    subtract,
    ufunc,
)

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


from uir.numpy import fft as fft  # noqa: E402  (jnp.fft.fft, ...)
from uir.numpy import linalg as linalg  # noqa: E402  (jnp.linalg.solve, ...)
