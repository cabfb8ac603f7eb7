"""uir.numpy.fft: jax.numpy.fft, on XLA's fft op (see uir._src.numpy.fft)."""

from uir._src.numpy.fft import *  # noqa: F403
from uir._src.numpy.fft import __all__  # noqa: F401
