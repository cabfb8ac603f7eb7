"""Rich displays (_repr_html_) of every stage object: the parts each must
show, offline HTML (no script, no address), drawings where Graphviz's dot
is installed and a table with a note where it is not, and a display that
never raises."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from buffer_modules import HELD_ACROSS_BROADCAST

import uir
import uir.nn as unn
import uir.numpy as unp
from uir._src.tools import display_hlo, html

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 128)).astype(np.float32)
W = RNG.standard_normal((128, 256)).astype(np.float32)


def layer(x, w):
    return unn.softmax(unp.tanh(x @ w) * 2.0, axis=-1)


@pytest.fixture(scope="module")
def compiled():
    return uir.jit(layer).lower(X, W).compile()


def _offline(text: str) -> None:
    assert "<script" not in text.lower()
    assert "http" not in text  # no address of any kind: nothing to fetch
    assert "@import" not in text


def _rows(text: str) -> int:
    """Data rows of the first table."""
    first = text[text.index("<table>") : text.index("</table>")]
    return first.count("<tr>") - 1


def test_module_display_lists_every_computation_and_draws_fusions_as_clusters(compiled):
    out = compiled.module._repr_html_()
    _offline(out)
    assert out.startswith('<div class="uir-x"><style>')
    assert "HloModule" in out and "ENTRY" in out
    for comp in compiled.module.computations:
        assert comp.name in out
    assert _rows(out) == compiled.module.entry.instruction_count
    if HAS_DOT:
        svg = out[out.index("<svg") : out.index("</svg>")]
        # Every fusion is a cluster named with its kind (which kinds the
        # pipeline picks depends on the host: a dot with its epilogue is a
        # kOutput fusion on some).
        for fusion in compiled.module.entry.instructions:
            if fusion.opcode == "fusion":
                kind = re.search(r"kind=(k\w+)", fusion.to_text()).group(1)
                assert f"{fusion.name} ({kind})" in svg
        assert "f32[64,256]" in svg  # edges carry their shapes


def test_displays_without_dot_say_so_and_keep_their_tables(compiled, monkeypatch):
    monkeypatch.setattr(html.shutil, "which", lambda name: None)
    out = compiled.module._repr_html_()
    assert "<svg" not in out and "apt install graphviz" in out
    assert _rows(out) == compiled.module.entry.instruction_count
    kg = compiled.kernel_graph._repr_html_()
    assert "apt install graphviz" in kg and "<table>" in kg


def test_pipeline_trace_has_a_row_per_pass_and_the_fusion_decisions(compiled):
    module = uir.jit(layer).lower(X, W).module
    _, trace = uir.passes.default_pipeline().run(module, trace=True)
    assert "changed" in str(trace).splitlines()[0]  # still the text table
    out = trace._repr_html_()
    _offline(out)
    assert _rows(out) == len(trace)
    changed = [r for r in trace if r.changed]
    assert out.count("<details id=") == len(changed)
    fusion = out[out.index("<b>priority-fusion</b>") :]
    fusion = fusion[: fusion.index("</details>")]
    # The softmax's producers: fused with the cost model's figures and rule.
    assert "decisions" in fusion and "uir-yes" in fusion
    assert re.search(r"<td>(exponential|tanh|multiply)[\w.]*</td>", fusion)
    assert "uir-add" in fusion and "uir-del" in fusion  # the coloured diff
    scheduler = out[out.index("<b>memory-scheduler</b>") :]
    assert "lowest simulated peak" in scheduler[: scheduler.index("</details>")]


def test_fusion_report_display(compiled):
    report = uir.passes.explain_fusion(uir.jit(layer).lower(X, W).module)
    out = report._repr_html_()
    _offline(out)
    assert _rows(out) == len(report)
    for d in report:
        assert d.producer in out and (d.rule in out)


def test_buffer_assignment_draws_live_ranges_with_the_peak(compiled):
    ba = compiled.buffer_assignment
    out = ba._repr_html_()
    _offline(out)
    assert 'aria-label="buffer live ranges"' in out and "peak" in out
    temporaries = sum(len(a["slices"]) for a in ba.allocations if a["kind"] == "temporary")
    svg = out[out.index("<svg") : out.index("</svg>")]
    assert svg.count("<rect") == temporaries + 1  # a bar per value, and the frame
    assert _rows(out[out.index("<h4>allocations") :]) == len(ba.allocations)


def test_kernel_graph_and_igraph_displays(compiled):
    kg = compiled.kernel_graph
    out = kg._repr_html_()
    _offline(out)
    nodes = list(kg.nodes)
    assert _rows(out[out.index("</p>") :]) == len(nodes)
    kernel = next(n for n in nodes if n.kind == "kernel")
    ig = kernel.igraph._repr_html_()
    _offline(ig)
    for p in kernel.igraph.pointers:
        assert f"<td>{p['name']}</td>" in ig
    if HAS_DOT:
        assert out.count("<svg") >= 2  # the graph and its kernels' dataflow
        svg = ig[ig.index("<svg") : ig.index("</svg>")]
        assert "move.dram" in svg and "#ddf4ff" in svg  # a dram slice, coloured


def test_executable_profile_lowered_and_compiled_displays(compiled):
    exe = compiled.executable._repr_html_()
    _offline(exe)
    assert "thunks" in exe and "kernel" in exe
    profile = compiled.profile(X, W)
    out = profile._repr_html_()
    _offline(out)
    assert _rows(out) == len(profile.rows)
    timeline = out[out.index('aria-label="timeline"') :]
    assert timeline[: timeline.index("</svg>")].count("<title>") == len(profile.events)
    assert 'aria-label="roofline"' in out or "no roofline" in out
    lowered = compiled.lowered._repr_html_()
    assert "layer" in lowered and "source lines" in lowered
    summary = compiled._repr_html_()
    _offline(summary)
    for anchor in re.findall(r'href="#([\w-]+)"', summary):
        assert f'id="{anchor}"' in summary  # every link leads into the page


def test_a_display_that_fails_shows_a_note_instead_of_raising(compiled, monkeypatch):
    def broken(module, **kwargs):
        raise RuntimeError("no luck")

    monkeypatch.setattr(display_hlo, "module_body", broken)
    out = compiled.module._repr_html_()
    assert "no display: RuntimeError: no luck" in out


def test_long_tables_page_and_long_texts_fold():
    rows = [[k, "x"] for k in range(250)]
    out = html.table(["k", "v"], rows)
    assert out.count("<details>") == 2 and "rows 101-200 of 250" in out
    assert out.count("<tr>") == 250 + 3  # one header per page
    text = "\n".join(f"line {k}" for k in range(1000))
    folded = html.pre(text)
    assert "600 more lines" in folded and "line 999" in folded


GOLDEN = {
    "add.html": """HloModule add
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}
""",
    "fused_softmax.html": """HloModule fused_softmax
max_of {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
fused_exp {
  p = f32[8,16] parameter(0)
  q = f32[8] parameter(1)
  bq = f32[8,16] broadcast(q), dimensions={0}
  d = f32[8,16] subtract(p, bq)
  ROOT e = f32[8,16] exponential(d)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max_of
  ROOT f = f32[8,16] fusion(x, mx), kind=kLoop, calls=fused_exp
}
""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_module_display_html_is_pinned(name, monkeypatch, request):
    """The HTML of two small modules, without drawings (dot's SVG differs
    between Graphviz versions). UIR_UPDATE_GOLDEN=1 rewrites the files."""
    import os
    import pathlib

    monkeypatch.setattr(html.shutil, "which", lambda name: None)
    out = uir.hlo.parse_module(GOLDEN[name])._repr_html_() + "\n"
    path = pathlib.Path(__file__).parent / "golden" / name
    if os.environ.get("UIR_UPDATE_GOLDEN") == "1":
        path.write_text(out)
    assert out == path.read_text()


def test_layout_assignment_row_names_the_copies_it_inserted():
    m = uir.hlo.parse_module(
        """HloModule m, entry_computation_layout={(f32[4,8]{0,1}, f32[4,8]{1,0})->f32[4,8]{0,1}}
ENTRY main {
  a = f32[4,8] parameter(0)
  b = f32[4,8] parameter(1)
  ROOT s = f32[4,8] add(a, b)
}
"""
    )
    _, trace = uir.passes.make_pipeline(["layout-assignment"]).run(m, trace=True)
    assert trace[0].changed
    out = trace._repr_html_()
    decisions = out[out.index("copies inserted") :]
    row = decisions[decisions.index("<td>") : decisions.index("</tr>", decisions.index("<td>"))]
    # The copy of b, from the layout it had to the one its user, s, needs.
    assert "<td>b</td>" in row and "f32[4,8]{1,0}" in row and "f32[4,8]{0,1}" in row
    assert "<td>s</td>" in row


def test_schedule_remat_and_latency_reports_display():
    import uir.examples

    module = uir.hlo.load(uir.examples.path("mlp.hlo"))
    scheduled, report = uir.schedule.run(module, "auto", report=True)
    out = report._repr_html_()
    _offline(out)
    assert _rows(out) == len(report.peaks) and f"<b>{report.algorithm}</b>" in out
    held = uir.hlo.parse_module(HELD_ACROSS_BROADCAST)
    held = uir.schedule.run(held, "postorder")
    peak = uir.schedule.peak_bytes(held)
    _, remat = uir.schedule.rematerialize(held, peak - 200_000)
    out = remat._repr_html_()
    _offline(out)
    assert _rows(out) == len(remat.remats) >= 1 and "<td>x</td>" in out
    _, hiding = uir.schedule.latency_hiding(scheduled)
    out = hiding._repr_html_()
    _offline(out)
    assert "async pairs" in out
