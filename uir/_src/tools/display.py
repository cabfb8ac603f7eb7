"""Rich displays (`_repr_html_`) for every stage object, installed on their
classes when uir is imported: HloModule and HloComputation, the pipeline
trace, the fusion report, BufferAssignment, the schedule, latency-hiding
and rematerialization reports, KernelGraph, IGraph, the
executable's thunk sequence, Profile, Lowered and Compiled. Each returns
self-contained HTML (display_hlo, display_stages); none raises: a failure
shows as a note, so a notebook cell never breaks on its display."""

from __future__ import annotations

from uir import _core
from uir._src.core import api, buffers, executable, passes, profile
from uir._src.tools import display_hlo, display_stages, fusion_report
from uir._src.tools.html import esc, page


def _safe(render, title: str):
    def _repr_html_(self) -> str:
        try:
            return render(self)
        except Exception as e:  # a display must not break the cell
            return page(
                title, f'<p class="uir-note">no display: {esc(type(e).__name__)}: {esc(e)}</p>'
            )

    _repr_html_.__doc__ = f"The {title} as self-contained HTML (for Jupyter)."
    return _repr_html_


_DISPLAYS = [
    (_core.hlo.HloModule, display_hlo.module_html, "HloModule"),
    (_core.hlo.HloComputation, display_hlo.computation_html, "HloComputation"),
    (passes.PipelineTrace, display_hlo.trace_html, "pipeline trace"),
    (fusion_report.FusionReport, display_hlo.fusion_report_html, "fusion report"),
    (buffers.BufferAssignment, display_stages.buffer_assignment_html, "buffer assignment"),
    (buffers.ScheduleReport, display_stages.schedule_report_html, "schedule report"),
    (buffers.RematReport, display_stages.remat_report_html, "rematerialization report"),
    (buffers.LatencyHidingReport, display_stages.latency_report_html, "latency-hiding report"),
    (_core.igraph.KernelGraph, display_stages.kernel_graph_html, "Kernel Graph"),
    (_core.igraph.IGraph, display_stages.igraph_html, "iGraph"),
    (executable.Executable, display_stages.executable_html, "executable"),
    (profile.Profile, display_stages.profile_html, "profile"),
    (api.Lowered, display_stages.lowered_html, "lowered function"),
    (api.Compiled, display_stages.compiled_html, "compiled function"),
]


def install() -> None:
    for cls, render, title in _DISPLAYS:
        cls._repr_html_ = _safe(render, title)


install()
