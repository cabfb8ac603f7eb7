"""uir.random: jax.random's keys and distributions on Threefry-2x32, giving
the bits JAX gives for the same key."""

from uir._src.random import discrete as _discrete
from uir._src.random import distributions as _distributions
from uir._src.random import prng as _prng
from uir._src.random.discrete import *  # noqa: F403
from uir._src.random.distributions import *  # noqa: F403
from uir._src.random.prng import *  # noqa: F403

__all__ = [
    *_discrete.__all__,
    *_distributions.__all__,
    *_prng.__all__,
]
