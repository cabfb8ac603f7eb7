"""uir.transforms: transformations of whole HLO modules (differentiate or
batch a module uir did not trace), and the function transformations
uir.grad, uir.vmap, ... also found at the top level."""

from uir._src.transforms.api import grad, jvp, linearize, value_and_grad, vjp
from uir._src.transforms.batching import loop_ops
from uir._src.transforms.modules import (
    as_function,
    grad_module,
    jvp_module,
    vjp_module,
    vmap_module,
)
from uir._src.transforms.structured import register_custom_call_derivative
from uir._src.transforms.vmap import hessian, jacfwd, jacrev, vmap

__all__ = [
    "as_function",
    "grad",
    "grad_module",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "jvp_module",
    "linearize",
    "loop_ops",
    "register_custom_call_derivative",
    "value_and_grad",
    "vjp",
    "vjp_module",
    "vmap",
    "vmap_module",
]
