"""uir.scipy.stats.norm: jax.scipy.stats.norm (see uir._src.scipy.stats)."""

from uir._src.scipy.stats import *  # noqa: F403
from uir._src.scipy.stats import __all__  # noqa: F401
