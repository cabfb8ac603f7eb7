"""uir.lax.linalg: jax.lax.linalg's factorizations and solves, as the LAPACK
custom calls JAX's CPU lowering emits (see uir._src.lax.linalg)."""

import enum as _enum

from uir._src.lax.linalg import (
    cholesky,
    cholesky_update,
    eig,
    eigh,
    hessenberg,
    householder_product,
    lu,
    lu_pivots_to_permutation,
    ormqr,
    qdwh,
    qr,
    schur,
    svd,
    symmetric_product,
    triangular_solve,
    tridiagonal,
    tridiagonal_solve,
)


class EigImplementation(_enum.Enum):
    """eig's implementation, as jax.lax.linalg.EigImplementation: on CPU,
    LAPACK's geev."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(_enum.Enum):
    """eigh's implementation, as jax.lax.linalg.EighImplementation: on CPU,
    LAPACK's syevd/heevd."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(_enum.Enum):
    """The SVD's algorithm, as jax.lax.linalg.SvdAlgorithm: DEFAULT and
    DIVIDE_AND_CONQUER are LAPACK's gesdd, QR its gesvd."""

    DEFAULT = "default"
    QR = "qr"
    JACOBI = "jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "cholesky",
    "cholesky_update",
    "eig",
    "eigh",
    "hessenberg",
    "householder_product",
    "lu",
    "lu_pivots_to_permutation",
    "ormqr",
    "qdwh",
    "qr",
    "schur",
    "svd",
    "symmetric_product",
    "triangular_solve",
    "tridiagonal",
    "tridiagonal_solve",
]
