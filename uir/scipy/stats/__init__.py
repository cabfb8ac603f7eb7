"""uir.scipy.stats: jax.scipy.stats's normal distribution."""

from uir.scipy.stats import norm

__all__ = ["norm"]
