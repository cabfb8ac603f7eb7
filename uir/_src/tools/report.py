"""uir.report: one self-contained HTML page for a whole compile.

For a function and its arguments, or an HLO module: the traced (or given)
module, the pipeline pass by pass with each change's diff and decisions,
priority fusion's report, the optimized module, its buffer assignment,
the Kernel Graph with its iGraphs, the thunk sequence, the generated
code's size, and a profile of one run. The page has no script and names
no address, so it opens offline in any browser and can be attached to a
bug report."""

from __future__ import annotations

import os
import time

import numpy as np

from uir._src.tools import display_hlo, display_stages
from uir._src.tools.html import STYLE, esc, links, new_id, section, table


class Report:
    """A compile as one HTML page: `.html` (the page), `.save(path)`, and
    `_repr_html_` for Jupyter; `.seconds` is how long writing it took."""

    def __init__(self, title: str, html: str, seconds: float):
        self.title = title
        self.html = html
        self.seconds = seconds

    def save(self, path: str | os.PathLike) -> str:
        """Writes the page to `path` (UTF-8) and returns the path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        return path

    def _repr_html_(self) -> str:
        body = self.html
        return body[body.index("<body>") + len("<body>") : body.index("</body>")]

    def __repr__(self) -> str:
        return f"<Report {self.title}: {len(self.html) / 1024:.0f} KiB>"


def _part(name: str, render) -> str:
    """One section's HTML; a part that fails says so instead of losing the
    rest of the page."""
    try:
        return render()
    except Exception as e:
        return f'<p class="uir-note">{esc(name)} unavailable: {esc(type(e).__name__)}: {esc(e)}</p>'


def report(f, *args, profile: bool = True, seed: int = 0) -> Report:
    """The report of compiling `f` (a function, traced on `args` as uir.jit
    would, or an HloModule, run on random arguments from `seed`) for the CPU
    backend. profile=False leaves out the run."""
    from uir._src.core import api, hlo
    from uir._src.core.backend import compile
    from uir._src.core.buffers import assign
    from uir._src.core.cost import memory_analysis
    from uir._src.core.evaluate import random_arguments
    from uir._src.core.passes import default_pipeline
    from uir._src.tools.fusion_report import explain_fusion

    start = time.perf_counter()
    if isinstance(f, hlo.HloModule):
        module, lowered, name = f, None, f.name
        compile_start = time.perf_counter()
        exe = compile(module, "cpu")
        compile_s = time.perf_counter() - compile_start
        run_args = random_arguments(module, seed=seed)
    else:
        lowered = api.jit(f).lower(*args)
        module, name = lowered.module, getattr(f, "__name__", "function")
        compile_start = time.perf_counter()
        compiled = lowered.compile("cpu")
        compile_s = time.perf_counter() - compile_start
        exe = compiled.executable
        run_args = None
    ba = assign(exe.module)
    memory = memory_analysis(exe, ba)
    _, trace = default_pipeline().run(module, trace=True)

    anchors = {
        k: new_id(k)
        for k in ("input", "passes", "fusion", "hlo", "buffers", "kg", "thunks", "profile")
    }
    kinds = exe.thunk_kinds
    rows = [
        ["module", module.name],
        ["instructions in", sum(c.instruction_count for c in module.computations)],
        [
            "instructions after the pipeline",
            sum(c.instruction_count for c in exe.module.computations),
        ],
        ["passes run (changed)", f"{len(trace)} ({sum(r.changed for r in trace)})"],
        ["compile seconds", f"{compile_s:.3f}"],
        ["thunks", ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())) or "none"],
        ["fallbacks", len(exe.fallbacks)],
        ["generated code bytes", memory.generated_code_size_in_bytes],
        ["arena bytes", ba.arena_bytes],
        ["peak live temporary bytes", ba.peak_bytes],
    ]
    sections = [
        ("passes", "the pipeline, pass by pass", lambda: display_hlo.trace_body(trace)),
        (
            "fusion",
            "fusion: every producer's decision",
            lambda: display_hlo.fusion_report_body(explain_fusion(module), with_module=False),
        ),
        ("hlo", "the optimized module", lambda: display_hlo.module_body(exe.module)),
        ("buffers", "buffer assignment", lambda: display_stages.buffer_assignment_body(ba)),
        (
            "kg",
            "the Kernel Graph and its iGraphs",
            lambda: display_stages.kernel_graph_body(exe.kernel_graph),
        ),
        ("thunks", "thunks", lambda: display_stages.thunks_body(exe)),
    ]
    labels = [("input", "input"), ("passes", "passes"), ("fusion", "fusion")]
    labels += [("hlo", "optimized HLO"), ("buffers", "buffers"), ("kg", "Kernel Graph")]
    labels += [("thunks", "thunks")] + ([("profile", "profile")] if profile else [])
    parts = ["<h4>summary</h4>", table(["", ""], rows, numeric={1}), links(anchors, labels)]
    module_part = _part("module", lambda: display_hlo.module_body(module))
    if lowered is not None:
        source = "<pre>" + esc(lowered.as_text(debug_info=True)) + "</pre>"
        parts.append(
            section(
                "input: the traced module, with source lines",
                source + section("HloModule", module_part),
                anchor=anchors["input"],
            )
        )
    else:
        parts.append(section("input: the module", module_part, anchor=anchors["input"]))
    for key, title, render in sections:
        # The optimized module opens: its drawing is what a reader looks for first.
        parts.append(section(title, _part(title, render), open=key == "hlo", anchor=anchors[key]))
    if profile:

        def run_profile() -> str:
            if run_args is None:
                leaves = [np.asarray(a) for a in _leaves(args)]
                p = exe.profile(*leaves)
            else:
                p = exe.profile(*run_args)
            return display_stages.profile_body(p)

        parts.append(
            section("a profiled run", _part("profile", run_profile), anchor=anchors["profile"])
        )
    title = f"uir report: {name}"
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title></head><body>"
        f'<div class="uir-x">{STYLE}<h3>{esc(title)}</h3>'
        + "".join(parts)
        + "</div></body></html>\n"
    )
    return Report(title, page, time.perf_counter() - start)


def _leaves(args):
    from uir._src.core import tree_util

    return tree_util.tree_leaves(args)
