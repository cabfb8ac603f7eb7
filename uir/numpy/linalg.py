"""uir.numpy.linalg: jax.numpy.linalg's solve, inv, det, slogdet, cholesky,
qr, eigh, eigvalsh, svd and norm (see uir._src.linalg_impl)."""

from uir._src.linalg_impl import (
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    norm,
    qr,
    slogdet,
    solve,
    svd,
)

__all__ = ["cholesky", "det", "eigh", "eigvalsh", "inv", "norm", "qr", "slogdet", "solve", "svd"]
