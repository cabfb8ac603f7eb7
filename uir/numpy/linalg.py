"""uir.numpy.linalg: jax.numpy.linalg. The factorizations run as JAX's CPU
lowering runs them, through LAPACK custom calls (see uir._src.numpy.linalg and uir._src.lax.linalg)."""

import uir.numpy as _jnp
from uir._src.core.eager import eager as _eager
from uir._src.core.ops import asarray as _asarray
from uir._src.core.ops import fail as _fail
from uir._src.numpy.linalg import (
    cond,
    det,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    slogdet,
    solve,
    svdvals,
    tensorinv,
    tensorsolve,
    vector_norm,
)
from uir._src.numpy.linalg import np_cholesky as cholesky
from uir._src.numpy.linalg import np_eig as eig
from uir._src.numpy.linalg import np_eigh as eigh
from uir._src.numpy.linalg import np_qr as qr
from uir._src.numpy.linalg import np_svd as svd


@_eager
def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-vectors along `axis`."""
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        _fail("linalg.cross", f"needs 3-vectors along axis {axis}, got {x1.shape} and {x2.shape}")
    return _jnp.cross(x1, x2, axis=axis)


@_eager
def diagonal(x, /, *, offset: int = 0):
    """The diagonals of the matrices in the last two dimensions."""
    return _jnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@_eager
def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    return _jnp.matmul(x1, x2, preferred_element_type=preferred_element_type)


@_eager
def matrix_transpose(x, /):
    """The matrices in the last two dimensions, transposed."""
    return _jnp.matrix_transpose(x)


@_eager
def outer(x1, x2, /):
    """The outer product of two vectors."""
    x1, x2 = _asarray(x1), _asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        _fail("linalg.outer", f"needs vectors, got {x1.shape} and {x2.shape}")
    return _jnp.outer(x1, x2)


@_eager
def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    return _jnp.tensordot(x1, x2, axes=axes, preferred_element_type=preferred_element_type)


@_eager
def trace(x, /, *, offset: int = 0, dtype=None):
    """The traces of the matrices in the last two dimensions."""
    return _jnp.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@_eager
def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along `axis`."""
    return _jnp.vecdot(x1, x2, axis=axis, preferred_element_type=preferred_element_type)


__all__ = [
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]
