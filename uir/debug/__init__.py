"""uir.debug: jax.debug.print and jax.debug.callback, host calls inside
traced programs (see uir._src.core.debug)."""

from uir._src.core.debug import *  # noqa: F403
from uir._src.core.debug import __all__  # noqa: F401
