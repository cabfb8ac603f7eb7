"""uir.nn: the activation and normalization functions of jax.nn."""

from uir._src.nn import functions as _functions
from uir._src.nn.functions import *  # noqa: F403

__all__ = [
    *_functions.__all__,
]
