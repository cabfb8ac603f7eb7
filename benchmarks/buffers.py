"""Memory: uir's schedule and buffer assignment beside XLA:CPU's.

1. For every function of the benchmark suite (suite.py), uir's temporary
   arena beside XLA:CPU's temp allocation
   (`jax.jit(f).lower(*args).compile().memory_analysis().temp_size_in_bytes`,
   where JAX installs), and the schedule's peak of simultaneously live
   temporary bytes.
2. Over every `core` corpus module after the default pipeline: the arena
   over that peak (geometric mean and worst), also against the peak with
   each temporary rounded up to the 64-byte alignment (the least an arena of
   aligned slices can be); every assignment is checked.
3. Scheduling ("auto": three schedulers and three simulations) and buffer
   assignment time on the largest corpus modules.

    .venv/bin/python benchmarks/buffers.py
"""

from __future__ import annotations

import math
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import numpy as np
from corpus import CORPUS, XLA_REJECTS, manifest_rows

import uir
import uir.numpy as unp


def _median(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def beside_xla() -> list[dict]:
    import suite

    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    rng = np.random.default_rng(0)
    rows = []
    for case in suite._cases():
        args = case.make(rng)
        compiled = uir.jit(lambda *a, c=case: c.fn(unp, *a)).lower(*args).compile()
        ba = compiled.buffer_assignment
        ba.check()
        row = {"case": case.name, "uir arena": ba.arena_bytes, "uir peak": ba.peak_bytes}
        if jax is not None:
            xla = jax.jit(lambda *a, c=case: c.fn(jnp, *a)).lower(*args).compile()
            row["XLA temp"] = xla.memory_analysis().temp_size_in_bytes
        rows.append(row)
    return rows


def corpus_ratios() -> dict:
    core = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")
    ratios, aligned, timings = [], [], []
    for name in core:
        if name in XLA_REJECTS:
            continue
        module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
        out = uir.passes.default_pipeline().run(module)
        ba = uir.buffers.assign(out)
        ba.check()
        if ba.peak_bytes > 0:
            ratios.append((ba.arena_bytes / ba.peak_bytes, name))
            aligned.append((ba.arena_bytes / ba.aligned_peak_bytes, name))
        count = out.to_text().count("\n")
        timings.append((count, name, out))
    geo = lambda xs: math.exp(sum(math.log(r) for r, _ in xs) / len(xs))  # noqa: E731
    return {
        "modules": len(ratios),
        "geomean": geo(ratios),
        "worst": max(ratios),
        "geomean_aligned": geo(aligned),
        "worst_aligned": max(aligned),
        "largest": sorted(timings, key=lambda t: -t[0])[:5],
    }


def main() -> None:
    print("## Temporary memory beside XLA:CPU (bytes)\n")
    rows = beside_xla()
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " | uir/XLA |")
    print("|" + "---|" * (len(keys) + 1))
    for r in rows:
        ratio = f"{r['uir arena'] / r['XLA temp']:.2f}" if r.get("XLA temp") else "-"
        print("| " + " | ".join(str(r.get(k, "-")) for k in keys) + f" | {ratio} |")

    print("\n## Arena over peak live temporary bytes, core corpus\n")
    c = corpus_ratios()
    print(f"{c['modules']} modules with temporaries, every assignment checked")
    print(
        f"arena / peak:         geomean {c['geomean']:.3f}, worst {c['worst'][0]:.2f} ({c['worst'][1]})"
    )
    print(
        f"arena / aligned peak: geomean {c['geomean_aligned']:.3f}, "
        f"worst {c['worst_aligned'][0]:.2f} ({c['worst_aligned'][1]})"
    )

    print("\n## Scheduling and buffer assignment time, largest core modules\n")
    print("| module | lines | schedule auto (ms) | assign (ms) | check (ms) |")
    print("|---|---|---|---|---|")
    for count, name, out in c["largest"]:
        t_sched = _median(lambda o=out: uir.schedule.run(o, algorithm="auto"))
        t_assign = _median(lambda o=out: uir.buffers.assign(o))
        ba = uir.buffers.assign(out)
        t_check = _median(ba.problems)
        print(
            f"| {name} | {count} | {t_sched * 1e3:.1f} | {t_assign * 1e3:.1f} | {t_check * 1e3:.1f} |"
        )


if __name__ == "__main__":
    main()
