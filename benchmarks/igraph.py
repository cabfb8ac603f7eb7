"""The Unified IR: what lowers, and how much memory each kernel moves.

1. For every function of the benchmark suite (suite.py, quick sizes): its
   Kernel Graph's node kinds, and the dram bytes its iGraph kernels read and
   write (from their move iOps) beside the bytes the function must touch
   at least (its inputs once, its output once).
2. Over every `core` corpus module after the default pipeline: Kernel Graph
   nodes by kind, and the fallback nodes (which run on the evaluator) by
   reason.
3. Lowering time (buffer assignment included) on the largest corpus modules.

    .venv/bin/python benchmarks/igraph.py
"""

from __future__ import annotations

import collections
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import numpy as np
import suite
from corpus import CORPUS, XLA_REJECTS, manifest_rows

import uir
import uir.igraph as ig
import uir.numpy as unp


def suite_traffic() -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for case in suite._cases():
        if not case.quick:
            continue
        args = case.make(rng)
        compiled = uir.jit(lambda *a, c=case: c.fn(unp, *a)).lower(*args).compile()
        kg = compiled.kernel_graph
        read = written = 0
        for node in kg.nodes:
            for g in node.igraphs:
                read += g.dram_bytes_read()
                written += g.dram_bytes_written()
        out = compiled(*args)
        least = sum(a.nbytes for a in args) + np.asarray(out).nbytes
        kinds = collections.Counter(n.kind for n in kg.nodes)
        rows.append(
            {
                "case": case.name,
                "nodes": ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())),
                "iGraph read": read,
                "iGraph written": written,
                "inputs+output": least,
            }
        )
    return rows


def corpus_fallbacks() -> tuple[collections.Counter, collections.Counter, list]:
    core = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")
    kinds, reasons, timings = collections.Counter(), collections.Counter(), []
    for name in core:
        if name in XLA_REJECTS:
            continue
        out = uir.passes.default_pipeline().run(uir.hlo.parse_module((CORPUS / name).read_text()))
        t = time.perf_counter()
        kg = ig.lower(out)
        timings.append((time.perf_counter() - t, name, len(out.to_text().splitlines())))
        for node in kg.nodes:
            kinds[node.kind] += 1
            if node.kind == "fallback":
                reasons[re.sub(r"\s*\(?%\S+\)?", "", node.reason)] += 1
    timings.sort(reverse=True)
    return kinds, reasons, timings[:5]


def main() -> None:
    print("Benchmark suite: Kernel Graph nodes and iGraph dram traffic (bytes)")
    rows = suite_traffic()
    print(f"{'case':28} {'nodes':34} {'read':>10} {'written':>10} {'in+out':>10}")
    for r in rows:
        print(
            f"{r['case']:28} {r['nodes']:34} {r['iGraph read']:>10} "
            f"{r['iGraph written']:>10} {r['inputs+output']:>10}"
        )
    kinds, reasons, timings = corpus_fallbacks()
    print("\nCore corpus: nodes by kind")
    for k, v in kinds.most_common():
        print(f"  {k:14} {v}")
    print(f"Fallbacks by reason ({sum(reasons.values())}):")
    for k, v in reasons.most_common():
        print(f"  {v:4}  {k}")
    print("\nLowering time (buffer assignment included), slowest core modules:")
    for seconds, name, lines in timings:
        print(f"  {seconds * 1e3:8.2f} ms  {lines:6} lines  {name}")


if __name__ == "__main__":
    main()
