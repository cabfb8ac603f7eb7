"""uir.lax.linalg: jax.lax.linalg's factorizations and solves, as the LAPACK
custom calls JAX's CPU lowering emits (see uir._src.linalg_impl)."""

import enum as _enum

from uir._src.linalg_impl import (
    cholesky,
    eig,
    eigh,
    householder_product,
    lu,
    lu_pivots_to_permutation,
    ormqr,
    qr,
    svd,
    triangular_solve,
    tridiagonal_solve,
)


class SvdAlgorithm(_enum.Enum):
    """The SVD's algorithm, as jax.lax.linalg.SvdAlgorithm: DEFAULT and
    DIVIDE_AND_CONQUER are LAPACK's gesdd, QR its gesvd."""

    DEFAULT = "default"
    QR = "qr"
    JACOBI = "jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


__all__ = [
    "SvdAlgorithm",
    "cholesky",
    "eig",
    "eigh",
    "householder_product",
    "lu",
    "lu_pivots_to_permutation",
    "ormqr",
    "qr",
    "svd",
    "triangular_solve",
    "tridiagonal_solve",
]
