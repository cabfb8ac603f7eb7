"""uir.passes: the HLO optimization passes, one by one or as a pipeline."""

from uir._src.passes import (
    PassCheckError,
    PassRecord,
    Pipeline,
    available,
    default_pipeline,
    flags,
    format_trace,
    make_pipeline,
    register,
    run,
    unregister,
)

__all__ = [
    "PassCheckError",
    "PassRecord",
    "Pipeline",
    "available",
    "default_pipeline",
    "flags",
    "format_trace",
    "make_pipeline",
    "register",
    "run",
    "unregister",
]
