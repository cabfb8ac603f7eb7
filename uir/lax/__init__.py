"""uir.lax: XLA's operations, and structured control flow, as jax.lax."""

from uir._src.lax import control_flow as _control_flow
from uir._src.lax import convolution as _convolution
from uir._src.lax import cumulative as _cumulative
from uir._src.lax import elementwise as _elementwise
from uir._src.lax import lax as _lax
from uir._src.lax import parallel as _parallel
from uir._src.lax import ragged as _ragged
from uir._src.lax import random_bits as _random_bits
from uir._src.lax import slicing as _slicing
from uir._src.lax import special as _special
from uir._src.lax import windowed as _windowed
from uir._src.lax.control_flow import *  # noqa: F403
from uir._src.lax.convolution import *  # noqa: F403
from uir._src.lax.cumulative import *  # noqa: F403
from uir._src.lax.elementwise import *  # noqa: F403
from uir._src.lax.lax import *  # noqa: F403
from uir._src.lax.parallel import *  # noqa: F403
from uir._src.lax.ragged import *  # noqa: F403
from uir._src.lax.random_bits import *  # noqa: F403
from uir._src.lax.slicing import *  # noqa: F403
from uir._src.lax.special import *  # noqa: F403
from uir._src.lax.windowed import *  # noqa: F403

__all__ = [
    *_control_flow.__all__,
    *_convolution.__all__,
    *_cumulative.__all__,
    *_elementwise.__all__,
    *_lax.__all__,
    *_parallel.__all__,
    *_ragged.__all__,
    *_random_bits.__all__,
    *_slicing.__all__,
    *_special.__all__,
    *_windowed.__all__,
]
