"""uir.scipy.special: jax.scipy.special (see uir._src.scipy.special)."""

from uir._src.scipy.special import *  # noqa: F403
from uir._src.scipy.special import __all__  # noqa: F401
