"""The pieces every rich display is made of: one scoped style sheet, tables
that page, collapsible sections, preformatted text, and drawings through
Graphviz's `dot` (an SVG, or None where `dot` is missing).

Everything is plain HTML and CSS with no script and no address on the
network, so a display reads the same in a live notebook, a saved one, on
GitHub's viewer and in a report file opened offline."""

from __future__ import annotations

import html
import itertools
import re
import shutil
import subprocess

# Rows a table shows before the rest fold into pages of the same size.
PAGE_ROWS = 100
# Lines of text (an HLO module, a diff) shown before the rest fold away.
PAGE_LINES = 400

_IDS = itertools.count()

STYLE = """<style>
.uir-x{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.4;color:#1f2328}
.uir-x h3{font-size:15px;margin:4px 0 6px 0}
.uir-x h4{font-size:13px;margin:8px 0 4px 0}
.uir-x .uir-sum{color:#57606a;margin:2px 0 6px 0}
.uir-x table{border-collapse:collapse;margin:4px 0}
.uir-x th,.uir-x td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
.uir-x th{background:#f6f8fa}
.uir-x td.num{text-align:right;font-variant-numeric:tabular-nums}
.uir-x pre{background:#f6f8fa;padding:6px;margin:4px 0;overflow-x:auto;font-size:12px}
.uir-x code,.uir-x pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.uir-x details{margin:3px 0}
.uir-x summary{cursor:pointer}
.uir-x .uir-add{background:#dafbe1;display:block}
.uir-x .uir-del{background:#ffebe9;display:block}
.uir-x .uir-hunk{color:#8250df;display:block}
.uir-x .uir-yes{color:#1a7f37;font-weight:600}
.uir-x .uir-no{color:#57606a}
.uir-x .uir-note{color:#9a6700}
.uir-x .uir-badge{border-radius:3px;padding:0 4px;font-size:11px}
.uir-x svg{max-width:100%;height:auto}
</style>"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def new_id(prefix: str) -> str:
    """An element id unique in this process (several displays share a page)."""
    return f"uir-{prefix}-{next(_IDS)}"


def page(title: str, body: str) -> str:
    """A whole display: the style sheet, a title and the body."""
    return f'<div class="uir-x">{STYLE}<h3>{esc(title)}</h3>{body}</div>'


def links(anchors: dict[str, str], labels: list[tuple[str, str]]) -> str:
    """A line of links to the page's sections: (anchor key, label) pairs."""
    return (
        "<p>"
        + " | ".join(f'<a href="#{anchors[k]}">{esc(label)}</a>' for k, label in labels)
        + "</p>"
    )


def section(summary: str, body: str, *, open: bool = False, anchor: str | None = None) -> str:
    """A collapsible section; `summary` is HTML."""
    attrs = (" open" if open else "") + (f' id="{anchor}"' if anchor else "")
    return f"<details{attrs}><summary>{summary}</summary>{body}</details>"


def number(value, digits: int = 3) -> str:
    """A table cell's number: whole floats (byte and flop counts) as
    integers, others to `digits` places."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: list[str], rows: list[list], *, numeric: set[int] | None = None) -> str:
    """An HTML table; cells are escaped unless given as `Raw`. Past PAGE_ROWS
    rows, the rest fold into collapsed pages of PAGE_ROWS."""
    numeric = numeric or set()
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>" if any(headers) else ""

    def render(chunk) -> str:
        out = []
        for row in chunk:
            cells = []
            for k, cell in enumerate(row):
                text = cell.html if isinstance(cell, Raw) else esc(number(cell))
                cls = ' class="num"' if k in numeric else ""
                cells.append(f"<td{cls}>{text}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        return "".join(out)

    first = f"<table>{head}{render(rows[:PAGE_ROWS])}</table>"
    pages = []
    for start in range(PAGE_ROWS, len(rows), PAGE_ROWS):
        chunk = rows[start : start + PAGE_ROWS]
        pages.append(
            section(
                f"rows {start + 1}-{start + len(chunk)} of {len(rows)}",
                f"<table>{head}{render(chunk)}</table>",
            )
        )
    return first + "".join(pages)


class Raw:
    """A table cell given as HTML."""

    def __init__(self, text: str):
        self.html = text


def pre(text: str) -> str:
    """Preformatted text; past PAGE_LINES lines the rest folds away."""
    lines = text.splitlines()
    if len(lines) <= PAGE_LINES:
        return f"<pre>{esc(text)}</pre>"
    head = "\n".join(lines[:PAGE_LINES])
    rest = "\n".join(lines[PAGE_LINES:])
    return f"<pre>{esc(head)}</pre>" + section(
        f"{len(lines) - PAGE_LINES} more lines", f"<pre>{esc(rest)}</pre>"
    )


def dot_available() -> bool:
    return shutil.which("dot") is not None


NO_DOT = (
    '<p class="uir-note">No drawing: Graphviz\'s <code>dot</code> is not installed '
    "(Debian: <code>apt install graphviz</code>; other systems: graphviz.org). "
    "The tables below say the same.</p>"
)


# dot's layout with its searches cut short: a dataflow graph of 155 iOps
# took 279 s with dot's defaults (most of it in network simplex ranking and
# positioning) and 1.3 s with these; a 277-instruction computation 0.5 s.
_DOT_ARGS = ["-Tsvg", "-Gmclimit=0.5", "-Gnslimit=4", "-Gnslimit1=4"]


def dot_svg(source: str, timeout: float = 10.0) -> str | None:
    """The SVG `dot` draws from `source`, without its XML prologue, or None
    where dot is missing, fails or takes longer than `timeout` seconds."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, *_DOT_ARGS], input=source, capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    svg = done.stdout
    start = svg.find("<svg")
    if start < 0:
        return None
    # Inline SVG in HTML needs no namespace declarations: without them the
    # page names no address at all.
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg[start:])


def dot_quote(text) -> str:
    """A double-quoted dot string."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def drawing(source: str | None, *, too_big: str | None = None) -> str:
    """The drawing of dot `source` as inline SVG, or a note saying why there
    is none (too big to draw, or no `dot`)."""
    if too_big is not None:
        return f'<p class="uir-note">{esc(too_big)}</p>'
    if source is None:
        return ""
    svg = dot_svg(source)
    return svg if svg is not None else NO_DOT


def diff(before: str, after: str, *, context: int = 3) -> str:
    """A unified diff of two texts, coloured: added lines green, removed red."""
    import difflib

    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "before", "after", n=context, lineterm=""
        )
    )
    if not lines:
        return '<p class="uir-no">no textual change</p>'

    def render(chunk) -> str:
        out = []
        for line in chunk:
            if line.startswith(("+++", "---")):
                out.append(f"<span>{esc(line)}</span>")
            elif line.startswith("@@"):
                out.append(f'<span class="uir-hunk">{esc(line)}</span>')
            elif line.startswith("+"):
                out.append(f'<span class="uir-add">{esc(line)}</span>')
            elif line.startswith("-"):
                out.append(f'<span class="uir-del">{esc(line)}</span>')
            else:
                out.append(f"<span>{esc(line)}</span>")
        # Spans that are blocks already end their line; the others need one.
        return "<pre>" + "".join(s if "uir-" in s else s + "\n" for s in out) + "</pre>"

    if len(lines) <= PAGE_LINES:
        return render(lines)
    return render(lines[:PAGE_LINES]) + section(
        f"{len(lines) - PAGE_LINES} more diff lines", render(lines[PAGE_LINES:])
    )


def bytes_text(n: int | float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
