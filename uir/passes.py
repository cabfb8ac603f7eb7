"""uir.passes: the HLO optimization passes, one by one or as a pipeline."""

from uir._src.core.passes import (
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
from uir._src.tools.fusion_report import (
    FusionDecision,
    FusionReport,
    explain_fusion,
    machine_model,
)

__all__ = [
    "FusionDecision",
    "FusionReport",
    "PassCheckError",
    "PassRecord",
    "Pipeline",
    "available",
    "default_pipeline",
    "explain_fusion",
    "flags",
    "format_trace",
    "machine_model",
    "make_pipeline",
    "register",
    "run",
    "unregister",
]
