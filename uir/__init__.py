"""uir: a tensor compiler from array programs and XLA's HLO to machine code.

The public names are re-exported here; the implementation lives in uir._src
and the C++ core in uir._core.
"""

from uir._src.core import blas_core

blas_core.choose()  # before the extension loads OpenBLAS

from uir import (
    _core,
    buffers,
    custom_call,
    debug,
    distributed,
    hlo,
    igraph,
    image,
    lax,
    nn,
    numpy,
    passes,
    random,
    schedule,
    scipy,
    sharding,
    transforms,
    tree_util,
)
from uir._src.core import config
from uir._src.core.api import (
    ShapeDtypeStruct,
    block_until_ready,
    device_put,
    eval_shape,
    jit,
    make_hlo,
)
from uir._src.core.backend import Executable, compile, deserialize
from uir._src.core.distributed import process_count, process_index
from uir._src.core.errors import (
    ArgumentError,
    CustomCallError,
    DeviceError,
    DistributedError,
    Error,
    FallbackError,
    FallbackWarning,
    InternalError,
    MemoryLimitError,
    OutOfMemoryError,
    ParseError,
    SerializationError,
    ShapeError,
    TraceError,
    UnimplementedError,
    VerifyError,
)
from uir._src.core.evaluate import evaluate
from uir._src.core.gpu import Device, devices
from uir._src.lax.shard_map import shard_map
from uir._src.numpy import array_methods  # noqa: F401  (Tracer's operators)
from uir._src.tools import display as _display  # noqa: F401  (rich displays)
from uir._src.tools.info import info
from uir._src.tools.report import Report, report
from uir._src.transforms import policies as checkpoint_policies
from uir._src.transforms.api import grad, jvp, linearize, value_and_grad, vjp
from uir._src.transforms.custom import checkpoint, checkpoint_name, custom_jvp, custom_vjp, remat
from uir._src.transforms.residuals import print_saved_residuals, saved_residuals
from uir._src.transforms.vmap import hessian, jacfwd, jacrev, vmap
from uir.custom_call import get_include

__version__: str = _core.__version__

__all__ = [
    "ArgumentError",
    "CustomCallError",
    "Device",
    "DeviceError",
    "DistributedError",
    "Error",
    "Executable",
    "FallbackError",
    "FallbackWarning",
    "InternalError",
    "MemoryLimitError",
    "OutOfMemoryError",
    "ParseError",
    "Report",
    "SerializationError",
    "ShapeDtypeStruct",
    "ShapeError",
    "TraceError",
    "UnimplementedError",
    "VerifyError",
    "__version__",
    "block_until_ready",
    "buffers",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "compile",
    "config",
    "custom_call",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "deserialize",
    "device_put",
    "devices",
    "distributed",
    "eval_shape",
    "evaluate",
    "get_include",
    "grad",
    "hessian",
    "hlo",
    "igraph",
    "image",
    "info",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linearize",
    "make_hlo",
    "nn",
    "numpy",
    "passes",
    "print_saved_residuals",
    "process_count",
    "process_index",
    "random",
    "remat",
    "report",
    "saved_residuals",
    "schedule",
    "scipy",
    "shard_map",
    "sharding",
    "transforms",
    "tree_util",
    "value_and_grad",
    "vjp",
    "vmap",
]
