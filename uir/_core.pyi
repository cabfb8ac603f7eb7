"""Type stubs for uir's C++ extension (csrc/python/). Private API."""

from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class support:
    @staticmethod
    def throw_for_testing(kind: str, message: str) -> None: ...

class runtime:
    @staticmethod
    def num_threads() -> int: ...
    @staticmethod
    def parallel_sum_for_testing(n: int, grain: int, throw_at: int = -1) -> int: ...

class codegen:
    @staticmethod
    def host_info() -> dict[str, Any]: ...

    class SmokeAddKernel:
        def __init__(self, opt_level: int = 3) -> None: ...
        @property
        def optimized_ir(self) -> str: ...
        def __call__(
            self, a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]
        ) -> npt.NDArray[np.float32]: ...
