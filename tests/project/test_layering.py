"""The floors of the code. In the C++ core (csrc/), every #include from
one room into another, and every dependency between the rooms' CMake
libraries, points down the order below, so the include graph is the CMake
graph and has no cycle; third-party headers stay in the rooms that own
them: LLVM in codegen (in headers no other room includes), oneTBB in the
thread pool, pybind11 in the bindings. In the Python package, no module of
uir/_src imports a public package (uir, uir.numpy, ...) or the tools
(uir/_tools), and the imports among uir/_src's modules, at module level
and inside functions alike, have no cycle."""

from __future__ import annotations

import ast
import itertools
import pathlib
import re
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"

# Each room and the rooms it may include, bottom to top. support is the
# floor; the runtime stands on it alone (no HLO, no LLVM: it builds by
# itself); hlo is the IR; eval, the reference evaluator, stands beside the
# compiler on hlo and support, and the compiler's floors may ask it
# (constant folding, the iGraph interpreter); analysis, passes, schedule
# and the pipeline that assembles them come in that order; buffers, igraph
# and codegen above them; python binds everything.
COMPILER = ["analysis", "passes", "schedule", "pipeline", "buffers", "igraph", "codegen"]
ALLOWED: dict[str, set[str]] = {
    "support": set(),
    "runtime": {"support"},
    "hlo": {"support"},
    "eval": {"hlo", "support"},
}
for i, room in enumerate(COMPILER):
    ALLOWED[room] = {"support", "hlo", "eval", *COMPILER[:i]}
ALLOWED["codegen"] |= {"runtime"}
ALLOWED["python"] = set(ALLOWED) - {"python"}
ALLOWED["python"] |= set(COMPILER)

# Crossings that stand against the order today, each with what removes it.
# The test fails when one disappears (so the list only shrinks) and on any
# crossing not listed.
KNOWN: dict[tuple[str, str], str] = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.M)


def _sources():
    for path in sorted(CSRC.rglob("*")):
        if path.suffix in (".h", ".cc", ".def") and path.is_file():
            yield path


def _room(path: pathlib.Path) -> str:
    return path.relative_to(CSRC).parts[0]


def _include_edges():
    """(from room, to room) -> the files that make the edge."""
    rooms = {p.name for p in CSRC.iterdir() if p.is_dir()}
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _sources():
        for target in INCLUDE.findall(path.read_text()):
            head = target.split("/")[0]
            if head in rooms and head != _room(path):
                edges[(_room(path), head)].append(str(path.relative_to(ROOT)))
    return edges


def test_every_room_is_placed_in_the_order():
    rooms = {p.name for p in CSRC.iterdir() if p.is_dir()}
    assert rooms == set(ALLOWED), (
        f"rooms not in ALLOWED: {sorted(rooms - set(ALLOWED))}; "
        f"listed but absent: {sorted(set(ALLOWED) - rooms)}"
    )


def test_includes_point_down_the_order():
    edges = _include_edges()
    wrong = {
        edge: files
        for edge, files in edges.items()
        if edge[1] not in ALLOWED[edge[0]] and edge not in KNOWN
    }
    assert not wrong, "includes against the order:\n" + "\n".join(
        f"  {a} -> {b}: {', '.join(sorted(set(files))[:4])}" for (a, b), files in wrong.items()
    )
    gone = [edge for edge in KNOWN if edge not in edges]
    assert not gone, f"no longer crossed, remove from KNOWN: {gone}"


def _find_cycle(graph: dict[str, list[str] | set[str]]) -> list[str] | None:
    """A cycle of `graph` (node -> the nodes it points to) as a path that
    ends where it starts, or None."""
    state: dict[str, int] = {}

    def visit(node, path):
        if state.get(node) == 1:
            return [*path[path.index(node) :], node]
        if state.get(node) == 2:
            return None
        state[node] = 1
        for below in sorted(graph.get(node, ())):
            found = visit(below, [*path, node])
            if found:
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return None


def test_the_allowed_order_has_no_cycle():
    graph = {room: set(allowed) for room, allowed in ALLOWED.items()}
    for a, b in KNOWN:
        graph[a].add(b)
    cycle = _find_cycle(graph)
    assert cycle is None, "cycle: " + " -> ".join(cycle)


def _cmake_stages():
    """Library name -> the uir libraries it depends on, from uir_stage()."""
    text = (ROOT / "CMakeLists.txt").read_text()
    stages = {}
    for m in re.finditer(r"uir_stage\((uir_\w+)(.*?)\)", text, re.S):
        body = m.group(2)
        deps = re.search(r"DEPS(.*?)SOURCES", body, re.S)
        names = re.findall(r"\buir_(\w+)", deps.group(1)) if deps else []
        sources = re.findall(r"csrc/(\w+)/", body)
        stages[m.group(1)[4:]] = (set(names), set(sources))
    return stages


def test_the_cmake_libraries_follow_the_same_order():
    stages = _cmake_stages()
    rooms = set(ALLOWED) - {"python"}
    for room in rooms:
        assert room in stages, f"no uir_stage(uir_{room}) in CMakeLists.txt"
        deps, sources = stages[room]
        assert sources == {room}, f"uir_{room} builds sources of {sorted(sources)}"
        rooms_deps = deps & rooms
        extra = {d for d in rooms_deps if d not in ALLOWED[room] and (room, d) not in KNOWN}
        assert not extra, f"uir_{room} links {sorted(extra)} against the order"
    # Each room's includes are reachable through its libraries.
    closure = {}

    def reach(room):
        if room not in closure:
            closure[room] = set()
            for d in stages[room][0] & rooms:
                closure[room] |= {d} | reach(d)
        return closure[room]

    missing = [
        (a, b) for (a, b) in _include_edges() if a in rooms and b in rooms and b not in reach(a)
    ]
    assert not missing, f"includes whose library is not linked: {missing}"


def test_third_party_headers_stay_in_their_rooms():
    llvm_headers = set()
    wrong = []
    for path in _sources():
        rel = str(path.relative_to(CSRC))
        for target in INCLUDE.findall(path.read_text()):
            if target.startswith("llvm/") or target.startswith("llvm-c/"):
                if _room(path) != "codegen":
                    wrong.append((rel, target))
                elif path.suffix == ".h":
                    llvm_headers.add(rel)
            elif target.startswith("tbb/") or target.startswith("oneapi/"):
                if rel != "support/thread_pool.cc":
                    wrong.append((rel, target))
            elif target.startswith("pybind11/") and _room(path) != "python":
                wrong.append((rel, target))
    assert not wrong, wrong
    # Headers of codegen that include LLVM are codegen's own.
    for path in _sources():
        if _room(path) == "codegen":
            continue
        for target in INCLUDE.findall(path.read_text()):
            assert target not in llvm_headers, f"{path.relative_to(ROOT)} includes {target}"


# --- Python ------------------------------------------------------------------

PACKAGE = ROOT / "uir"


def _python_modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _python_imports():
    """module -> {imported uir module: [line, ...]}, every import statement
    (module level and inside functions) resolved to the module it loads."""
    modules = _python_modules()

    def owner(name: str) -> str:
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(parent + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target == "uir._core" or target.startswith("uir._core."):
                    continue  # the extension module
                if target.split(".")[0] != "uir":
                    continue
                resolved = owner(target)
                if resolved != module:
                    edges[module][resolved].append(node.lineno)
    return modules, edges


def test_no_src_module_imports_a_public_package_or_the_tools():
    _, edges = _python_imports()
    wrong = [
        f"{m} imports {d} (line {', '.join(map(str, lines))})"
        for m, targets in edges.items()
        if m.startswith("uir._src")
        for d, lines in targets.items()
        if not d.startswith("uir._src")
    ]
    assert not wrong, "\n".join(wrong)


def test_the_src_modules_import_each_other_without_a_cycle():
    modules, edges = _python_imports()
    graph = {
        m: [d for d in edges[m] if d.startswith("uir._src")]
        for m in modules
        if m.startswith("uir._src")
    }
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle:\n  " + "\n  ".join(
        f"{a} -> {b} (line {edges[a][b][0]})" for a, b in itertools.pairwise(cycle)
    )


# The packages of uir/_src, bottom to top: a module may import its own
# package and the ones below it. jax.numpy is built on jax.lax, so nothing
# in lax imports numpy; jax.image and jax.scipy stand on numpy and nn.
PACKAGE_ORDER = ["core", "lax", "transforms", "numpy", "random", "nn", "image", "scipy", "tools"]


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and parts[:2] == ["uir", "_src"] else None


def test_the_src_packages_import_downward_only():
    modules, edges = _python_imports()
    rank = {p: i for i, p in enumerate(PACKAGE_ORDER)}
    src = {m for m in modules if m.startswith("uir._src.")}
    assert all(_package(m) in rank for m in src), sorted(m for m in src if _package(m) not in rank)
    wrong = [
        f"{m} imports {d} (line {lines[0]})"
        for m in sorted(src)
        for d, lines in edges[m].items()
        if _package(d) is not None and rank[_package(d)] > rank[_package(m)]
    ]
    assert not wrong, "\n".join(wrong)
