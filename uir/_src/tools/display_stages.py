"""Rich displays of the stages after HLO: buffer assignment (allocations and
the values' live ranges over the schedule, peak marked), the Kernel Graph
(nodes told apart by kind, with the bytes each moves), iGraphs (summary,
iPointers and the dataflow of iOps over iSlices coloured by memory level),
the thunk sequence, a Profile (per-op rows, a timeline per worker thread,
a roofline chart per kernel), and Lowered and Compiled (a summary with
links into each stage). Drawings the code writes itself are SVG; graphs
go through Graphviz's dot."""

from __future__ import annotations

import math
import re

from uir._src.tools.display_hlo import module_body
from uir._src.tools.html import (
    NO_DOT,
    Raw,
    bytes_text,
    dot_available,
    dot_quote,
    drawing,
    esc,
    links,
    new_id,
    page,
    pre,
    section,
    table,
)

_KIND_FILL = {
    "kernel": "#d1f0d6",
    "library": "#ffd8b5",
    "copy": "#ddf4ff",
    "control": "#fbefff",
    "collective": "#fff8c5",
    "fallback": "#ffebe9",
    "host": "#ffebe9",
}
_LEVEL_FILL = {"dram": "#ddf4ff", "sram": "#d1f0d6", "reg": "#fff8c5"}

# --- buffer assignment ----------------------------------------------------------


def live_ranges_svg(ba, width: int = 720, height: int = 260) -> str:
    """Each temporary value a bar over the schedule (x: time, y: offset in
    the arena), the time of the peak marked."""
    temps = [a for a in ba.allocations if a["kind"] == "temporary"]
    spans = [s for a in temps for s in a["slices"]]
    end = max([ba.end_time, 1] + [s["end"] for s in spans])
    top = max([1] + [s["offset"] + s["size"] for s in spans])
    # The peak: the time with the most bytes live.
    live = [0] * (end + 2)
    for s in spans:
        for t in range(max(0, s["start"]), min(end, s["end"]) + 1):
            live[t] += s["size"]
    peak_t = max(range(len(live)), key=live.__getitem__) if spans else 0
    left, right, up, down = 60, 10, 10, 30
    w, h = width - left - right, height - up - down

    def x(t: float) -> float:
        return left + w * t / end

    def y(offset: float) -> float:
        return up + h - h * offset / top

    shapes = [
        f'<rect x="{left}" y="{up}" width="{w}" height="{h}" fill="#ffffff" stroke="#d0d7de"/>',
    ]
    palette = ["#54aeff", "#4ac26b", "#d4a72c", "#c297ff", "#ff8182", "#6cb6ff", "#2da44e"]
    for k, s in enumerate(spans):
        x0, x1 = x(s["start"]), x(s["end"] + 1)
        y0, y1 = y(s["offset"] + s["size"]), y(s["offset"])
        names = ", ".join(v["instruction"] for v in s["values"])
        shapes.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(x1 - x0, 1):.1f}" '
            f'height="{max(y1 - y0, 1):.1f}" fill="{palette[k % len(palette)]}" '
            f'fill-opacity="0.75" stroke="#ffffff" stroke-width="0.5">'
            f"<title>{esc(names)}: {s['size']} B at {s['offset']}, times {s['start']}-{s['end']}"
            "</title></rect>"
        )
    px = x(peak_t + 0.5)
    shapes.append(
        f'<line x1="{px:.1f}" y1="{up}" x2="{px:.1f}" y2="{up + h}" stroke="#cf222e" '
        'stroke-dasharray="4,3"/>'
    )
    shapes.append(
        f'<text x="{px + 4:.1f}" y="{up + 12}" font-size="11" fill="#cf222e">peak '
        f"{esc(bytes_text(live[peak_t]))} at time {peak_t}</text>"
    )
    shapes.append(
        f'<text x="{left}" y="{height - 8}" font-size="11" fill="#57606a">schedule time 0-{end}</text>'
    )
    shapes.append(
        f'<text x="4" y="{up + 10}" font-size="11" fill="#57606a">{esc(bytes_text(top))}</text>'
    )
    shapes.append(f'<text x="4" y="{up + h}" font-size="11" fill="#57606a">0</text>')
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="buffer live ranges">'
        + "".join(shapes)
        + "</svg>"
    )


def buffer_assignment_body(ba) -> str:
    allocations = ba.allocations
    summary = (
        f'<p class="uir-sum">{len(allocations)} allocations; arena {esc(bytes_text(ba.arena_bytes))}, '
        f"peak of live temporaries {esc(bytes_text(ba.peak_bytes))}</p>"
    )
    rows = []
    for a in allocations:
        values = sorted({v["instruction"] for s in a["slices"] for v in s["values"]})
        rows.append(
            [
                a["index"],
                a["kind"] + (" (live out)" if a.get("live_out") else ""),
                a["size"],
                len(a["slices"]),
                ", ".join(values[:8]) + (f" ... ({len(values)})" if len(values) > 8 else ""),
            ]
        )
    body = summary + "<h4>live ranges of the temporaries</h4>" + live_ranges_svg(ba)
    body += "<h4>allocations</h4>" + table(
        ["#", "kind", "bytes", "slices", "values"], rows, numeric={0, 2, 3}
    )
    body += section("as XLA writes it (buffer-assignment.txt)", pre(ba.to_text()))
    return body


def buffer_assignment_html(ba) -> str:
    return page(f"BufferAssignment {ba.module.name}", buffer_assignment_body(ba))


# --- Kernel Graph ---------------------------------------------------------------


def _moved(values: list[dict]) -> int:
    return sum(v.get("bytes", 0) for v in values)


def kernel_graph_dot(kg, limit: int = 300) -> str | None:
    nodes = list(kg.nodes)
    if len(nodes) > limit:
        return None
    lines = [
        "digraph kg {",
        "rankdir=TB; nodesep=0.3; ranksep=0.35;",
        'node [style="rounded,filled", fontname="Helvetica", fontsize=10, color="#8c959f"];',
        'edge [fontname="Helvetica", fontsize=8, color="#57606a", fontcolor="#57606a"];',
    ]
    writer: dict[str, str] = {}
    for k, n in enumerate(nodes):
        ident = f"n{k}"
        shape = {
            "kernel": "box",
            "library": "box3d",
            "copy": "cds",
            "control": "diamond",
            "collective": "hexagon",
        }.get(n.kind, "octagon")
        moved = bytes_text(_moved(n.inputs) + _moved(n.outputs))
        label = f"{n.kind}: {n.name}\n{n.op}\n{moved} moved"
        lines.append(
            f"{ident} [label={dot_quote(label)}, shape={shape}, "
            f'fillcolor="{_KIND_FILL.get(n.kind, "#ffffff")}"];'
        )
        for v in n.outputs:
            writer[v["value"]] = ident
    params = 0
    for k, n in enumerate(nodes):
        for v in n.inputs:
            src = writer.get(v["value"])
            if src is None:
                src = f"in{params}"
                params += 1
                writer[v["value"]] = src
                lines.append(
                    f'{src} [label={dot_quote(v["value"])}, shape=ellipse, fillcolor="#f6f8fa"];'
                )
            lines.append(f"{src} -> n{k} [label={dot_quote(bytes_text(v.get('bytes', 0)))}];")
    lines.append("}")
    return "\n".join(lines)


def kernel_graph_body(kg) -> str:
    nodes = list(kg.nodes)
    kinds: dict[str, int] = {}
    for n in nodes:
        kinds[n.kind] = kinds.get(n.kind, 0) + 1
    counts = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    summary = f'<p class="uir-sum">{len(nodes)} nodes ({esc(counts)})</p>'
    if not dot_available():
        summary += NO_DOT
    source = kernel_graph_dot(kg)
    picture = drawing(
        source, too_big=None if source is not None else f"{len(nodes)} nodes: too many to draw."
    )
    rows = []
    for n in nodes:
        badge = (
            f'<span class="uir-badge" style="background:{_KIND_FILL.get(n.kind, "#ffffff")}">'
            f"{esc(n.kind)}</span>"
        )
        rows.append(
            [
                Raw(badge),
                n.name,
                n.op,
                _moved(n.inputs),
                _moved(n.outputs),
                n.subgraph_count,
                n.reason,
            ]
        )
    body = summary + picture
    body += table(
        ["kind", "node", "op", "bytes in", "bytes out", "iGraphs", "note"], rows, numeric={3, 4, 5}
    )
    igraphs = [(n, g) for n in nodes for g in (n.igraphs if n.kind == "kernel" else [])]
    if igraphs:
        inner = "".join(
            section(f"{esc(n.name)}: igraph {esc(g.name)}", igraph_body(g)) for n, g in igraphs
        )
        body += section(f"iGraphs ({len(igraphs)})", inner)
    body += section("text", pre(kg.to_text()))
    return body


def kernel_graph_html(kg) -> str:
    return page(f"KernelGraph {kg.name}", kernel_graph_body(kg))


# --- iGraphs --------------------------------------------------------------------

_SLICE = re.compile(r"^\s*([\w.]+)\s*=\s*iSlice\(([\w.]+),")
_OP = re.compile(r"^\s*([a-z][\w.]*)\s+([\w.]+)((?:,\s*[\w.\[\]]+)*)\s*(\{.*\})?\s*$")


def igraph_dataflow_dot(g, limit: int = 80) -> str | None:
    """iOps (boxes) over iSlices (ellipses coloured by their iPointer's
    memory level), from the iGraph's text."""
    levels = {p["name"]: p["level"] for p in g.pointers}
    pointer_of: dict[str, str] = {}
    ops: list[tuple[str, str, list[str]]] = []
    section_name = ""
    for line in g.to_text().splitlines():
        m = _SLICE.match(line)
        if m:
            pointer_of[m.group(1)] = m.group(2)
            continue
        stripped = line.strip()
        if stripped.endswith(":") and " " not in stripped:
            section_name = stripped[:-1]
            continue
        if not section_name or stripped == "}":
            continue
        m = _OP.match(line)
        if m:
            ins = [s.strip() for s in m.group(3).split(",") if s.strip()]
            ops.append((m.group(1), m.group(2), ins))
    if len(ops) > limit:
        return None
    lines = [
        "digraph ig {",
        "rankdir=TB; nodesep=0.25; ranksep=0.3;",
        'node [fontname="Helvetica", fontsize=10, style=filled, color="#8c959f"];',
        'edge [color="#57606a"];',
    ]
    slices = set()
    for k, (kind, out, ins) in enumerate(ops):
        lines.append(f'op{k} [label={dot_quote(kind)}, shape=box, fillcolor="#ffffff"];')
        for s in ins:
            if s.startswith("["):
                continue
            slices.add(s)
            lines.append(f"{dot_quote('s:' + s)} -> op{k};")
        slices.add(out)
        lines.append(f"op{k} -> {dot_quote('s:' + out)};")
    for s in sorted(slices):
        level = levels.get(pointer_of.get(s, ""), "")
        label = f"{s}\n{level}" if level else s
        lines.append(
            f"{dot_quote('s:' + s)} [label={dot_quote(label)}, shape=ellipse, "
            f'fillcolor="{_LEVEL_FILL.get(level, "#f6f8fa")}"];'
        )
    lines.append("}")
    return "\n".join(lines)


def igraph_body(g) -> str:
    plan = g.plan
    form = plan.get("form", "") if isinstance(plan, dict) else ""
    summary = (
        f'<p class="uir-sum">{g.num_parallel} parallel ids x {g.num_loop} loop ids, '
        f"{g.op_count} iOps{', plan ' + esc(form) if form else ''}; dram read "
        f"{esc(bytes_text(g.dram_bytes_read()))}, written {esc(bytes_text(g.dram_bytes_written()))}; "
        f"sram {esc(bytes_text(g.sram_bytes()))}, reg {esc(bytes_text(g.reg_bytes()))}</p>"
    )
    source = igraph_dataflow_dot(g)
    picture = drawing(
        source, too_big=None if source is not None else f"{g.op_count} iOps: too many to draw."
    )
    rows = [
        [
            Raw(
                f'<span class="uir-badge" style="background:{_LEVEL_FILL.get(p["level"], "#fff")}">'
                f"{esc(p['level'])}</span>"
            ),
            p["name"],
            p["dtype"],
            p["size"],
        ]
        for p in g.pointers
    ]
    return (
        summary
        + picture
        + "<h4>iPointers</h4>"
        + table(["level", "iPointer", "type", "elements"], rows, numeric={3})
        + section("text", pre(g.to_text()), open=True)
    )


def igraph_html(g) -> str:
    return page(f"iGraph {g.name}", igraph_body(g))


# --- the thunk sequence ---------------------------------------------------------


def thunks_body(exe) -> str:
    if getattr(exe, "_exe", None) is None:
        return f'<p class="uir-no">the {esc(exe.backend)} backend runs no thunks</p>'
    kinds = exe.thunk_kinds
    rows = [[k, v] for k, v in sorted(kinds.items())]
    fallbacks = exe.fallbacks
    body = (
        f'<p class="uir-sum">{sum(kinds.values())} thunks; '
        f"{'concurrent (a dependency DAG on the workers)' if exe.concurrent else 'in order on the calling thread'}"
        f"; {len(fallbacks)} fallbacks</p>"
    )
    body += table(["kind", "thunks"], rows, numeric={1})
    if fallbacks:
        body += "<h4>fallbacks</h4>" + table(["what and why"], [[f] for f in fallbacks])
    body += "<h4>sequence</h4>" + pre(exe.thunk_text)
    return body


def executable_html(exe) -> str:
    body = thunks_body(exe)
    body += section("Kernel Graph", kernel_graph_body(exe.kernel_graph))
    body += section("optimized HLO", module_body(exe.module))
    return page(f"Executable {exe.module.name} ({exe.backend})", body)


# --- Profile --------------------------------------------------------------------


def timeline_svg(profile, width: int = 760) -> str:
    """Every timed execution a bar on its thread's track over the call."""
    events = profile.events
    if not events:
        return '<p class="uir-no">no events</p>'
    t0 = min(e["start_ns"] for e in events)
    t1 = max(e["end_ns"] for e in events)
    span = max(t1 - t0, 1)
    threads = sorted({e["thread"] for e in events})
    lane, left, right, up = 18, 80, 10, 16
    height = up + lane * len(threads) + 24
    w = width - left - right
    kinds = sorted({e["kind"] for e in events})
    palette = ["#54aeff", "#4ac26b", "#d4a72c", "#c297ff", "#ff8182", "#6cb6ff", "#bf8700"]
    colour = {k: palette[i % len(palette)] for i, k in enumerate(kinds)}
    shapes = []
    for i, t in enumerate(threads):
        y = up + i * lane
        name = "caller" if t == 0 else ("async" if t < 0 else f"worker {t}")
        shapes.append(f'<text x="4" y="{y + 12}" font-size="11" fill="#57606a">{esc(name)}</text>')
        shapes.append(f'<rect x="{left}" y="{y}" width="{w}" height="{lane - 4}" fill="#f6f8fa"/>')
    for e in events:
        y = up + threads.index(e["thread"]) * lane + (2 if e.get("chunk") else 0)
        x0 = left + w * (e["start_ns"] - t0) / span
        x1 = left + w * (e["end_ns"] - t0) / span
        shapes.append(
            f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 0.5):.1f}" height="{lane - 6}" '
            f'fill="{colour[e["kind"]]}"><title>{esc(e["name"])} ({esc(e["kind"])}): '
            f"{(e['end_ns'] - e['start_ns']) / 1e3:.1f} us</title></rect>"
        )
    legend_y = up + lane * len(threads) + 14
    x = left
    for k in kinds:
        shapes.append(
            f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" fill="{colour[k]}"/>'
        )
        shapes.append(f'<text x="{x + 13}" y="{legend_y}" font-size="11">{esc(k)}</text>')
        x += 20 + 7 * len(k)
    shapes.append(
        f'<text x="{width - 120}" y="{legend_y}" font-size="11" fill="#57606a">'
        f"{span / 1e3:.1f} us</text>"
    )
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="timeline">'
        + "".join(shapes)
        + "</svg>"
    )


def roofline_svg(profile, width: int = 420, height: int = 300) -> str:
    """Each kernel at its arithmetic intensity (flops per byte) and
    achieved GFLOP/s, under the roof: min(peak, bandwidth x intensity)."""
    points = [r for r in profile.rows if r.bytes > 0 and r.flops > 0 and r.time_ms > 0]
    if not points:
        return '<p class="uir-no">no op counted flops: no roofline to draw</p>'
    peak, bw = profile.peak_gflops, profile.dram_gbs
    lo_i = min([0.01] + [r.flops / r.bytes for r in points])
    hi_i = max([100.0] + [r.flops / r.bytes for r in points])
    lo_g = min([0.1] + [r.gflops for r in points if r.gflops > 0])
    hi_g = max(peak * 2, max(r.gflops for r in points) * 2)
    left, right, up, down = 50, 10, 10, 34
    w, h = width - left - right, height - up - down

    def x(i: float) -> float:
        return left + w * (math.log10(i) - math.log10(lo_i)) / (math.log10(hi_i) - math.log10(lo_i))

    def y(g: float) -> float:
        g = max(g, lo_g)
        return (
            up + h - h * (math.log10(g) - math.log10(lo_g)) / (math.log10(hi_g) - math.log10(lo_g))
        )

    ridge = peak / bw
    roof = [(lo_i, bw * lo_i), (ridge, peak), (hi_i, peak)]
    path = " ".join(f"{x(i):.1f},{y(g):.1f}" for i, g in roof)
    shapes = [
        f'<rect x="{left}" y="{up}" width="{w}" height="{h}" fill="#ffffff" stroke="#d0d7de"/>',
        f'<polyline points="{path}" fill="none" stroke="#cf222e" stroke-width="1.5"/>',
    ]
    for r in points:
        shapes.append(
            f'<circle cx="{x(r.flops / r.bytes):.1f}" cy="{y(r.gflops):.1f}" r="4" '
            f'fill="#0969da" fill-opacity="0.8"><title>{esc(r.op)}: {r.gflops:.1f} GFLOP/s at '
            f"{r.flops / r.bytes:.2f} flop/B</title></circle>"
        )
    shapes.append(
        f'<text x="{left}" y="{height - 18}" font-size="11" fill="#57606a">flops per byte '
        f"(log), roof: {bw:.0f} GB/s, {peak:.0f} GFLOP/s</text>"
    )
    shapes.append(f'<text x="4" y="{up + 10}" font-size="11" fill="#57606a">GFLOP/s</text>')
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="roofline">'
        + "".join(shapes)
        + "</svg>"
    )


def profile_body(profile) -> str:
    total = profile.thunks_ms or 1.0
    rows = []
    for r in profile.rows:
        share = r.time_ms / total if r.depth == 0 else 0.0
        bar = (
            f'<span style="display:inline-block;width:{share * 120:.0f}px;height:8px;'
            f'background:#54aeff"></span> {share * 100:.0f}%'
        )
        rows.append(
            [
                ("  " * r.depth) + r.op,
                r.kind,
                r.calls,
                r.time_ms,
                Raw(bar),
                r.bytes,
                r.gbs,
                r.gflops,
                f"{r.roofline * 100:.0f}%" if r.roofline is not None else "",
            ]
        )
    summary = (
        f'<p class="uir-sum">{profile.call_ms:.3f} ms in the runtime, {profile.thunks_ms:.3f} ms '
        f"in its thunks; roofline {profile.dram_gbs:.1f} GB/s, {profile.peak_gflops:.0f} GFLOP/s"
        f"{'; fallbacks ' + format(profile.fallback_share * 100, '.0f') + '%' if profile.fallback_ms else ''}</p>"
    )
    return (
        summary
        + table(
            ["op", "kind", "calls", "ms", "share", "bytes", "GB/s", "GFLOP/s", "roofline"],
            rows,
            numeric={2, 3, 5, 6, 7},
        )
        + "<h4>timeline per thread</h4>"
        + timeline_svg(profile)
        + "<h4>roofline per kernel</h4>"
        + roofline_svg(profile)
    )


def profile_html(profile) -> str:
    return page(f"Profile {profile.name}", profile_body(profile))


# --- Lowered and Compiled -------------------------------------------------------


def lowered_html(lowered) -> str:
    m = lowered.module
    avals = ", ".join(f"{a.dtype}{list(a.shape)}" for a in lowered.in_avals)
    body = (
        f'<p class="uir-sum">traced: {esc(avals)} in; {m.entry.instruction_count} instructions '
        f"in its entry</p>"
    )
    body += section(
        "traced HLO with source lines", pre(lowered.as_text(debug_info=True)), open=True
    )
    body += section("HloModule", module_body(m))
    return page(f"Lowered {lowered._fn_name}", body)


def compiled_html(compiled) -> str:
    exe = compiled.executable
    anchors = {k: new_id(k) for k in ("hlo", "buffers", "kg", "thunks", "traced")}
    labels = [("traced", "traced HLO"), ("hlo", "optimized HLO")]
    labels += [("buffers", "buffer assignment"), ("kg", "Kernel Graph"), ("thunks", "thunks")]
    fallbacks = compiled.fallbacks
    body = (
        f'<p class="uir-sum">{esc(compiled.backend)} backend; optimized module '
        f"{compiled.module.entry.instruction_count} instructions in its entry; "
        f"{len(fallbacks)} fallbacks</p>{links(anchors, labels)}"
    )
    body += section(
        "traced HLO", pre(compiled.lowered.as_text(debug_info=True)), anchor=anchors["traced"]
    )
    body += section("optimized HLO", module_body(compiled.module), anchor=anchors["hlo"])
    try:
        ba = compiled.buffer_assignment
        body += section("buffer assignment", buffer_assignment_body(ba), anchor=anchors["buffers"])
    except Exception as e:  # a display must not raise
        body += f'<p class="uir-note">buffer assignment unavailable: {esc(e)}</p>'
    body += section("Kernel Graph", kernel_graph_body(compiled.kernel_graph), anchor=anchors["kg"])
    body += section("thunks", thunks_body(exe), anchor=anchors["thunks"])
    return page(f"Compiled {compiled.lowered._fn_name}", body)


# --- scheduling, latency hiding and rematerialization reports ----------------


def schedule_report_html(report) -> str:
    rows = [
        [Raw(f"<b>{esc(a)}</b>") if a == report.algorithm else a, peak]
        for a, peak in sorted(report.peaks.items(), key=lambda kv: (kv[1], kv[0]))
    ]
    body = (
        f'<p class="uir-sum">kept {esc(report.algorithm)}: the lowest simulated peak of live '
        f"temporary bytes; {report.seconds * 1e3:.2f} ms</p>"
        + table(["algorithm", "peak bytes"], rows, numeric={1})
        + section("text", pre(report.text))
    )
    return page("Schedule", body)


def remat_report_html(report) -> str:
    keys: list[str] = []
    for r in report.remats:
        keys.extend(k for k in r if k not in keys)
    rows = [[r.get(k, "") for k in keys] for r in report.remats]
    body = (
        f'<p class="uir-sum">peak {esc(bytes_text(report.peak_before))} -> '
        f"{esc(bytes_text(report.peak_after))} under a limit of "
        f"{esc(bytes_text(report.memory_limit))}; {len(report.remats)} values recomputed</p>"
    )
    if rows:
        body += table(keys, rows)
    body += section("text", pre(report.text), open=not rows)
    return page("Rematerialization", body)


def latency_report_html(report) -> str:
    rows = [
        [
            p.start,
            p.done,
            p.latency_s * 1e6,
            p.overlap_before_s * 1e6,
            p.overlap_after_s * 1e6,
            p.between_before,
            p.between_after,
        ]
        for p in report.pairs
    ]
    limit = bytes_text(report.memory_limit) if report.memory_limit is not None else "none"
    body = (
        f'<p class="uir-sum">{len(report.pairs)} async pairs; overlap '
        f"{report.overlap_before_s * 1e6:.1f} -> {report.overlap_after_s * 1e6:.1f} us; peak "
        f"{esc(bytes_text(report.peak_before))} -> {esc(bytes_text(report.peak_after))} "
        f"(memory limit {esc(limit)})</p>"
        + table(
            [
                "start",
                "done",
                "latency us",
                "overlap before us",
                "after us",
                "ops between before",
                "after",
            ],
            rows,
            numeric={2, 3, 4, 5, 6},
        )
        + section("text", pre(report.text))
    )
    return page("Latency hiding", body)
