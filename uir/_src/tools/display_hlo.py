"""Rich displays of HLO: modules and computations (drawn with fusions as
clusters and edges labelled with shapes, then listed per computation),
the pipeline's pass-by-pass trace (a row per pass, each change as a
coloured diff with the decisions behind it), and the fusion report."""

from __future__ import annotations

import re

from uir import _core
from uir._src.tools.fusion_report import FusionDecision
from uir._src.tools.html import (
    Raw,
    diff,
    dot_quote,
    drawing,
    esc,
    new_id,
    page,
    pre,
    section,
    table,
)

# Instructions drawn at most (a fusion's own instructions count); bigger
# computations are listed only.
DRAW_LIMIT = 300
# A fusion whose computation has more instructions draws as one node.
CLUSTER_LIMIT = 40

_FILL = {
    "parameter": "#ddf4ff",
    "constant": "#eaeef2",
    "dot": "#ffd8b5",
    "convolution": "#ffd8b5",
    "custom-call": "#ffd8b5",
    "reduce": "#d1f0d6",
    "reduce-window": "#d1f0d6",
    "while": "#fbefff",
    "conditional": "#fbefff",
    "call": "#fbefff",
    "tuple": "#f6f8fa",
    "get-tuple-element": "#f6f8fa",
}


def short_shape(shape) -> str:
    """A shape without its layout: f32[64,1000]."""
    return re.sub(r"\{[^{}]*\}", "", str(shape))


def _node_id(comp, instr) -> str:
    return f"{comp.name}/{instr.name}"


def computation_dot(comp) -> str | None:
    """dot source for `comp`: an instruction a node (name, opcode, shape),
    a fusion a cluster of its own instructions (or one node when large),
    edges labelled with the operand's shape. None past DRAW_LIMIT."""
    count = 0
    for instr in comp.instructions:
        count += 1
        if instr.opcode == "fusion":
            fused = instr.called_computations[0]
            if fused.instruction_count <= CLUSTER_LIMIT:
                count += fused.instruction_count
    if count > DRAW_LIMIT:
        return None
    lines = [
        "digraph hlo {",
        "rankdir=TB; nodesep=0.25; ranksep=0.35;",
        'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
        'fillcolor="#ffffff", color="#8c959f"];',
        'edge [fontname="Helvetica", fontsize=8, color="#57606a", fontcolor="#57606a"];',
    ]
    # Where an operand's value comes from, and where a fusion's k-th
    # operand goes in (its parameter inside the cluster).
    source: dict[str, str] = {}
    inputs: dict[tuple[str, int], str] = {}

    def node(ident: str, instr, extra: str = "") -> str:
        label = f"{instr.name}\n{instr.opcode} {short_shape(instr.shape)}"
        fill = _FILL.get(instr.opcode, "#ffffff")
        return f'{dot_quote(ident)} [label={dot_quote(label)}, fillcolor="{fill}"{extra}];'

    for k, instr in enumerate(comp.instructions):
        ident = _node_id(comp, instr)
        fused = instr.called_computations[0] if instr.opcode == "fusion" else None
        if fused is not None and fused.instruction_count <= CLUSTER_LIMIT:
            kind = instr.attributes.get("kind", "")
            lines.append(f"subgraph cluster_{k} {{")
            lines.append(
                f"label={dot_quote(f'{instr.name} ({kind})')}; style=filled; "
                'fillcolor="#fff8c5"; color="#d4a72c"; fontname="Helvetica"; fontsize=10;'
            )
            inner = {}
            for f in fused.instructions:
                fid = _node_id(fused, f) + f"@{instr.name}"
                inner[f.name] = fid
                lines.append(node(fid, f))
                if f.opcode == "parameter":
                    number = int(f.attributes.get("parameter_number", 0))
                    inputs[(instr.name, number)] = fid
            for f in fused.instructions:
                for o in f.operands:
                    lines.append(
                        f"{dot_quote(inner[o.name])} -> {dot_quote(inner[f.name])} "
                        f"[label={dot_quote(short_shape(o.shape))}];"
                    )
            lines.append("}")
            source[instr.name] = inner[fused.root.name]
        else:
            extra = ', peripheries=2, fillcolor="#fff8c5"' if fused is not None else ""
            lines.append(node(ident, instr, extra))
            source[instr.name] = ident
    for instr in comp.instructions:
        for n, o in enumerate(instr.operands):
            target = inputs.get((instr.name, n), _node_id(comp, instr))
            lines.append(
                f"{dot_quote(source[o.name])} -> {dot_quote(target)} "
                f"[label={dot_quote(short_shape(o.shape))}];"
            )
    lines.append("}")
    return "\n".join(lines)


def _instruction_rows(comp) -> list[list]:
    rows = []
    for instr in comp.instructions:
        called = ", ".join(c.name for c in instr.called_computations)
        rows.append(
            [
                instr.name + (" (root)" if instr.name == comp.root.name else ""),
                instr.opcode,
                short_shape(instr.shape),
                ", ".join(o.name for o in instr.operands),
                called,
            ]
        )
    return rows


def _computation_body(comp, *, draw: bool) -> str:
    parts = []
    if draw:
        source = computation_dot(comp)
        parts.append(
            drawing(
                source,
                too_big=None
                if source is not None
                else f"{comp.instruction_count} instructions: too many to draw (the list follows).",
            )
        )
    parts.append(
        table(["instruction", "opcode", "shape", "operands", "calls"], _instruction_rows(comp))
    )
    parts.append(section("text", pre(comp.to_text())))
    return "".join(parts)


def computation_html(comp) -> str:
    body = f'<p class="uir-sum">{comp.instruction_count} instructions</p>'
    return page(f"HloComputation {comp.name}", body + _computation_body(comp, draw=True))


def module_body(module, *, draw: bool = True) -> str:
    """A module's summary, its entry drawn and listed (open), and every other
    computation collapsed; fused computations (listed inside their fusion's
    drawing) folded into one section."""
    comps = list(module.computations)
    entry = module.entry
    instructions = sum(c.instruction_count for c in comps)
    fused_names = set()
    for c in comps:
        for i in c.instructions:
            if i.opcode == "fusion":
                fused_names.update(cc.name for cc in i.called_computations)
    summary = (
        f'<p class="uir-sum">{len(comps)} computations, {instructions} instructions'
        f"{', scheduled' if module.is_scheduled else ''}; entry {esc(entry.name)}</p>"
    )
    parts = [summary]
    parts.append(
        section(
            f"<b>ENTRY {esc(entry.name)}</b> ({entry.instruction_count} instructions)",
            _computation_body(entry, draw=draw),
            open=True,
        )
    )
    others = [c for c in comps if c.name != entry.name and c.name not in fused_names]
    fused = [c for c in comps if c.name in fused_names]
    for c in others:
        parts.append(
            section(
                f"{esc(c.name)} ({c.instruction_count} instructions)",
                _computation_body(c, draw=draw),
            )
        )
    if fused:
        inner = "".join(
            section(
                f"{esc(c.name)} ({c.instruction_count} instructions)",
                _computation_body(c, draw=False),
            )
            for c in fused
        )
        parts.append(section(f"fused computations ({len(fused)})", inner))
    parts.append(section("module text", pre(module.to_text())))
    return "".join(parts)


def module_html(module) -> str:
    return page(f"HloModule {module.name}", module_body(module))


# --- the pipeline trace ---------------------------------------------------------


def _fusion_decisions(text_before: str) -> str:
    """The fusion pass's decisions, replayed on the module it was given."""
    try:
        module = _core.hlo.parse_module(text_before, "")
        raw = _core.passes.priority_fusion_decisions(module, "host")
    except Exception as e:  # a display must not raise
        return f'<p class="uir-note">decisions unavailable: {esc(e)}</p>'
    return "<h4>decisions (the cost model's numbers; the rule that decided)</h4>" + decision_table(
        [FusionDecision(**_decision_fields(d)) for d in raw], with_computation=False
    )


def _schedule_decisions(text_before: str) -> str:
    """The scheduler's choice: each algorithm's simulated peak."""
    try:
        module = _core.hlo.parse_module(text_before, "")
        r = _core.schedule.schedule_module(module, "auto")
    except Exception as e:
        return f'<p class="uir-note">decisions unavailable: {esc(e)}</p>'
    rows = [
        [Raw(f"<b>{esc(a)}</b>") if a == r["algorithm"] else a, peak]
        for a, peak in sorted(dict(r["peaks"]).items(), key=lambda kv: kv[1])
    ]
    return (
        f"<h4>decisions: kept {esc(r['algorithm'])}, the lowest simulated peak of live "
        "temporary bytes (rule: memory-scheduler's auto)</h4>"
        + table(["algorithm", "peak bytes"], rows, numeric={1})
    )


_DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\S+)\s+([\w\-]+)\((.*?)\)")


def _definitions(text: str) -> dict[str, tuple[str, str, list[str]]]:
    """Every instruction of a module's text: name -> (shape, opcode, operands)."""
    out = {}
    for line in text.splitlines():
        m = _DEF.match(line)
        if m:
            operands = [o.strip().lstrip("%") for o in m.group(4).split(",") if o.strip()]
            out[m.group(1)] = (m.group(2), m.group(3), operands)
    return out


def _layout_decisions(text_before: str, text_after: str) -> str:
    """The copies layout assignment inserted, read from the module before and
    after it: each copy's operand, the layout it had and the one its users
    needed (the pass's rule: a copy where an operand's layout differs from
    the layout its user requires)."""
    before, after = _definitions(text_before), _definitions(text_after)
    rows = []
    for name, (shape, opcode, operands) in after.items():
        if opcode != "copy" or name in before or not operands:
            continue
        source = operands[0]
        was = after.get(source, before.get(source, ("?", "", [])))[0]
        users = [u for u, (_, _, ops) in after.items() if name in ops]
        rows.append([name, source, was, shape, ", ".join(users)])
    if not rows:
        return ""
    return (
        "<h4>decisions: copies inserted where an operand's layout differs from the layout its "
        "user requires (rule: layout-assignment's conflict copies)</h4>"
        + table(["copy", "of", "layout it had", "layout needed", "for"], rows)
    )


_DECISIONS = {"priority-fusion": _fusion_decisions, "memory-scheduler": _schedule_decisions}
# Decisions read from the texts before and after the pass.
_TEXT_DECISIONS = {"layout-assignment": _layout_decisions}


def trace_html(records, title: str = "Pipeline trace") -> str:
    return page(title, trace_body(records))


def trace_body(records) -> str:
    """One row per pass run (changed or not, instructions before and after,
    time); every changing pass opens to its diff and, for fusion and
    scheduling, the decisions with their numbers."""
    if not records:
        return '<p class="uir-no">no passes ran</p>'
    first = _count_instructions(records[0].text_before)
    rows = []
    details = []
    before = first
    for k, r in enumerate(records):
        anchor = new_id("pass")
        name = r.name if not r.iteration else f"{r.name} [{r.pipeline} {r.iteration}]"
        label = Raw(f'<a href="#{anchor}">{esc(name)}</a>') if r.changed else name
        rows.append(
            [
                k + 1,
                label,
                Raw(
                    '<span class="uir-yes">changed</span>'
                    if r.changed
                    else '<span class="uir-no">-</span>'
                ),
                before,
                r.instruction_count,
                r.seconds * 1e3,
            ]
        )
        if r.changed:
            body = diff(r.text_before, r.text_after)
            decide = _DECISIONS.get(r.name)
            if decide is not None and r.text_before:
                body = decide(r.text_before) + body
            read = _TEXT_DECISIONS.get(r.name)
            if read is not None:
                body = read(r.text_before, r.text_after) + body
            details.append(
                section(
                    f"{k + 1}. <b>{esc(name)}</b>: {before} -> {r.instruction_count} instructions",
                    body,
                    anchor=anchor,
                )
            )
        before = r.instruction_count
    changed = sum(1 for r in records if r.changed)
    total_ms = sum(r.seconds for r in records) * 1e3
    summary = (
        f'<p class="uir-sum">{len(records)} passes run, {changed} changed the module, '
        f"{total_ms:.1f} ms; {first} instructions in, {records[-1].instruction_count} out</p>"
    )
    body = summary + table(
        ["#", "pass", "changed", "instructions before", "after", "ms"],
        rows,
        numeric={0, 3, 4, 5},
    )
    body += "<h4>changes</h4>" + "".join(details)
    return body


def _count_instructions(text: str) -> int:
    """Instructions in a module's text: its lines that define a value."""
    return sum(1 for line in text.splitlines() if re.match(r"\s*(ROOT\s+)?[%\w.\-]+\s*=", line))


def _decision_fields(d: dict) -> dict:
    """priority_fusion_decisions' dict as FusionDecision's fields."""
    return {
        "computation": d["computation"],
        "producer": d["producer"],
        "producer_op": d["producer_op"],
        "consumers": tuple(d["consumers"]),
        "fused": d["fused"],
        "into": d["result"],
        "kind": d["kind"],
        "rule": d["rule"],
        "bytes_saved": d["bytes_saved"],
        "flops_duplicated": d["flops_duplicated"],
        "seconds_unfused": d["seconds_unfused"],
        "seconds_fused": d["seconds_fused"],
    }


def decision_table(decisions, *, with_computation: bool = True) -> str:
    """Fusion decisions, a row each: fused or kept, the producer and its
    users, the cost model's numbers, the result and the rule."""
    head = ["", "producer", "op", "users", "bytes saved", "flops duplicated"]
    head += ["us unfused", "us fused", "result", "rule"]
    rows = []
    for d in decisions:
        verdict = 'uir-yes">fused' if d.fused else 'uir-no">kept'
        rows.append(
            [
                Raw(f'<span class="{verdict}</span>'),
                d.producer,
                d.producer_op,
                ", ".join(d.consumers),
                d.bytes_saved,
                d.flops_duplicated,
                d.seconds_unfused * 1e6,
                d.seconds_fused * 1e6,
                f"into {d.into} ({d.kind})" if d.fused else "",
                d.rule,
            ]
        )
    numeric = {4, 5, 6, 7}
    if with_computation:
        head.insert(1, "computation")
        for row, d in zip(rows, decisions, strict=True):
            row.insert(1, d.computation)
        numeric = {k + 1 for k in numeric}
    return table(head, rows, numeric=numeric)


# --- the fusion report ----------------------------------------------------------


def fusion_report_html(report) -> str:
    return page("Fusion report", fusion_report_body(report))


def fusion_report_body(report, *, with_module: bool = True) -> str:
    summary = (
        f'<p class="uir-sum">{len(report.fused)} producers fused, {len(report.rejected)} kept; '
        f"machine: {esc(report.machine.get('text', ''))}</p>"
    )
    body = summary + decision_table(report.decisions)
    if with_module:
        body += section("the fused module", module_body(report.module))
    return body
