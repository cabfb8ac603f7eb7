"""uir.scipy: jax.scipy's most used modules (special, linalg, signal,
stats.norm) with SciPy's names and semantics."""

from uir.scipy import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
