"""uir.scipy.signal: jax.scipy.signal (see uir._src.scipy.signal)."""

from uir._src.scipy.signal import *  # noqa: F403
from uir._src.scipy.signal import __all__  # noqa: F401
