"""uir.scipy.linalg: jax.scipy.linalg (see uir._src.scipy.linalg)."""

from uir._src.scipy.linalg import *  # noqa: F403
from uir._src.scipy.linalg import __all__  # noqa: F401
