"""uir.numpy.linalg: jax.numpy.linalg's solve, inv, det, slogdet, cholesky
and norm (see uir._src.linalg_impl)."""

from uir._src.linalg_impl import cholesky, det, inv, norm, slogdet, solve

__all__ = ["cholesky", "det", "inv", "norm", "slogdet", "solve"]
