"""uir.image: jax.image's resize and scale_and_translate (see
uir._src.image.scale)."""

from uir._src.image.scale import *  # noqa: F403
from uir._src.image.scale import __all__  # noqa: F401
