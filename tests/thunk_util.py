"""Reading the CPU backend's thunk text back, and checking that its
dependency DAG orders every conflict."""

from __future__ import annotations

import re

_LINE = re.compile(r"^( *)%(\d+) (\S+) (\S+)(.*)$")
_SLICE = re.compile(r"a(\d+)\[(\d+):(\d+)\]")


def parse_thunks(text: str) -> list[dict]:
    """Every sequence in a thunk text, each a list of thunks with their
    index, kind, reads, writes and the thunks they wait for."""
    sequences: list[list[dict]] = []
    stack: list[tuple[int, list[dict]]] = []  # (indent of its thunks, thunks)
    for line in text.splitlines():
        header = re.match(r"^( *)(\d+) thunks, (sequential|concurrent: \d+ sources)$", line)
        if header:
            thunks: list[dict] = []
            sequences.append(thunks)
            stack.append((len(header.group(1)) + 2, thunks))
            continue
        m = _LINE.match(line)
        assert m, f"unparsed thunk line: {line!r}"
        indent = len(m.group(1))
        while stack[-1][0] != indent:
            stack.pop()
        rest = m.group(5)
        after = re.search(r" after (%\d+(?:, %\d+)*)$", rest)
        waits = {int(x[1:]) for x in after.group(1).split(", ")} if after else set()
        reads = rest.split(" reads ")[1].split(" writes ")[0] if " reads " in rest else ""
        writes = rest.split(" writes ")[1].split(" after ")[0] if " writes " in rest else ""
        slices = lambda s: [tuple(map(int, x)) for x in _SLICE.findall(s)]  # noqa: E731
        what = re.match(r" \((.*?)\)( reads| writes| after|$)", rest)
        stack[-1][1].append(
            {
                "what": what.group(1) if what else "",
                "index": int(m.group(2)),
                "kind": m.group(3),
                "name": m.group(4),
                "reads": slices(reads),
                "writes": slices(writes),
                "after": waits,
            }
        )
    return sequences


def _overlap(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def ordered_thunk(t: dict) -> bool:
    """Custom calls and thunks on the evaluator keep their order."""
    return t["kind"] in ("custom-call", "fallback")


def check_dag(thunks: list[dict]) -> int:
    """Asserts that whenever two thunks conflict (one writes bytes the other
    reads or writes) or are both custom calls or host thunks, the later
    one waits for the earlier, directly or through others. Returns the
    number of conflicting pairs checked."""
    reach: list[set[int]] = []
    pairs = 0
    for j, t in enumerate(thunks):
        assert t["index"] == j
        before = set()
        for i in t["after"]:
            assert i < j
            before |= {i} | reach[i]
        reach.append(before)
        for i in range(j):
            s = thunks[i]
            conflict = any(_overlap(w, u) for w in s["writes"] for u in t["reads"] + t["writes"])
            conflict |= any(_overlap(w, u) for w in t["writes"] for u in s["reads"])
            ordered = ordered_thunk(s) and ordered_thunk(t)
            if conflict or ordered:
                pairs += 1
                assert i in before, f"{t['name']} does not wait for {s['name']}"
    return pairs
