"""Walks XLA's own HLO test files (a checkout of openxla/xla, or any
folder of .hlo files) through uir beside XLA:CPU: every module is parsed,
verified, evaluated, compiled and run on the same random inputs, and, where
jaxlib is installed (make test-xla), run by XLA:CPU too. Files holding
several modules (lit tests split by `// -----`) count each one.

    python tools/xla_walk.py DIR [--skip-corpus CORPUS] [--timeout 60] [--out report.tsv]

prints a line per module whose compiled result differs from the evaluator
or from XLA, and a summary: modules parsed, verified, evaluated, compiled,
run, agreeing with the evaluator, with XLA, and the number whose compiled
result differs from both (the count that must be zero). Each module runs in
a worker process with a time limit, so a crash or a slow module costs only
itself.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import pathlib
import re
import sys
import time

from differential import Worker, agree, elements, leaves, serve

MAX_ELEMENTS = 1 << 24


def modules_in(path: pathlib.Path) -> list[str]:
    """The HLO modules of one test file: split at `// -----` lines, each
    part that declares an HloModule."""
    text = path.read_text(errors="replace")
    parts = re.split(r"^// -----.*$", text, flags=re.M)
    return [p for p in parts if re.search(r"^\s*HloModule\b", p, flags=re.M)]


def _run_case(case: dict) -> dict:

    import uir
    from uir._src.core.evaluate import random_arguments

    out: dict = {"stage": "parse"}
    try:
        m = uir.hlo.parse_module(case["text"])
    except uir.Error as e:
        return {**out, "outcome": "parse-error", "detail": str(e).splitlines()[0]}
    out["stage"] = "verify"
    try:
        m.verify()
    except uir.Error as e:
        return {**out, "outcome": "verify-error", "detail": str(e).splitlines()[0]}
    biggest = max(elements(i.shape) for c in m.computations for i in c.instructions)
    if biggest > MAX_ELEMENTS:
        return {**out, "outcome": "too-big"}
    out["stage"] = "evaluate"
    try:
        args = random_arguments(m, case["seed"])
        want = uir.evaluate(m, *args)
    except (uir.Error, ValueError, TypeError, NotImplementedError) as e:
        return {**out, "outcome": "eval-refuses", "detail": str(e).splitlines()[0][:300]}
    out["stage"] = "compile"
    try:
        exe = uir.compile(m, backend="cpu")
    except uir.Error as e:
        kind = "internal" if isinstance(e, uir.InternalError) else "compile-refuses"
        return {**out, "outcome": kind, "detail": str(e).splitlines()[0][:300]}
    out["stage"] = "run"
    try:
        got = exe(*args)
    except uir.Error as e:
        kind = "internal" if isinstance(e, uir.InternalError) else "run-refuses"
        return {**out, "outcome": kind, "detail": str(e).splitlines()[0][:300]}
    out["fallbacks"] = len(exe.fallbacks)
    out["vs_eval"] = agree(got, want)
    out["outcome"] = "ran"
    _LAST.update(text=case["text"], args=args, got=got, want=want)
    return out


# The last case uir ran: XLA runs it as a request of its own, so a crash
# inside XLA is told apart from one in uir.
_LAST: dict = {}


def _run_xla(case: dict) -> dict:
    import numpy as np

    sys.path.insert(0, os.path.dirname(__file__))
    import xla_reference

    if re.search(r"constant\(\{\.\.\.\}\)", _LAST["text"]):
        # Elided constants: each parser fills them its own way.
        return {"xla": "elided constants"}
    if re.search(r" (rng|rng-get-and-update-state)\(", _LAST["text"]):
        # Random values: HLO leaves them to the implementation.
        return {"xla": "rng values"}
    try:
        flat_args = [np.asarray(a) for a in leaves(tuple(_LAST["args"]))]
        xla = tuple(xla_reference.run_hlo(_LAST["text"], flat_args))
    except Exception as e:  # XLA refusing is a fact about XLA, not uir
        return {"xla": f"refuses: {type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    return {
        "xla": "ran",
        "vs_xla": agree(tuple(leaves(_LAST["got"])), xla),
        "eval_vs_xla": agree(tuple(leaves(_LAST["want"])), xla),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=pathlib.Path)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-corpus", type=pathlib.Path, default=None)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-xla", action="store_true")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="a TSV row per module")
    args = parser.parse_args()
    if args.worker:
        os.environ.setdefault("UIR_FLAGS", "--executable_cache=false")
        serve(lambda case: _run_xla(case) if case.get("kind") == "xla" else _run_case(case))
        return 0
    xla = not args.no_xla
    if xla:
        try:
            import jax  # noqa: F401
        except ImportError:
            xla = False
    skip = set()
    if args.skip_corpus is not None:
        skip = {
            hashlib.sha1(p.read_bytes().strip()).hexdigest() for p in args.skip_corpus.glob("*.hlo")
        }
    files = sorted(args.root.rglob("*.hlo"))
    counts: collections.Counter = collections.Counter()
    rows = []
    w = Worker([__file__, "--worker"])
    start = time.monotonic()
    for f in files:
        for k, text in enumerate(modules_in(f)):
            if hashlib.sha1(text.strip().encode()).hexdigest() in skip:
                counts["in the corpus (skipped)"] += 1
                continue
            name = f"{f.relative_to(args.root)}#{k}"
            r = w.run({"text": text, "seed": args.seed}, args.timeout)
            if r["outcome"] in ("death", "timeout"):
                w = Worker([__file__, "--worker"])
            elif r["outcome"] == "ran" and xla:
                x = w.run({"kind": "xla"}, args.timeout)
                if x.get("outcome") in ("death", "timeout"):
                    w = Worker([__file__, "--worker"])
                    x = {"xla": f"refuses: XLA's run ended in a {x['outcome']}"}
                r.update(x)
            counts["modules"] += 1
            counts[r["outcome"]] += 1
            if r["outcome"] == "ran":
                counts["agree with the evaluator"] += r["vs_eval"] is None
                if r.get("xla") == "ran":
                    counts["XLA ran"] += 1
                    counts["agree with XLA"] += r["vs_xla"] is None
                    counts["evaluator agrees with XLA"] += r["eval_vs_xla"] is None
                    if r["vs_eval"] is not None and r["vs_xla"] is not None:
                        counts["differ from both"] += 1
                        print(f"DIFFERS FROM BOTH {name}: {r['vs_eval']} / {r['vs_xla']}")
                    elif r["vs_eval"] is not None:
                        print(
                            f"differs from the evaluator (agrees with XLA) {name}: {r['vs_eval']}"
                        )
                    elif r["vs_xla"] is not None:
                        print(f"differs from XLA (agrees with the evaluator) {name}: {r['vs_xla']}")
                else:
                    if r.get("xla"):
                        counts[f"XLA not compared ({r['xla'].split(':')[0]})"] += 1
                    if r["vs_eval"] is not None:
                        print(f"differs from the evaluator {name}: {r['vs_eval']}")
            elif r["outcome"] in ("internal", "death", "timeout"):
                print(f"{r['outcome']} {name} ({r.get('stage')}): {r.get('detail', '')}")
            rows.append(
                (
                    name,
                    r["outcome"],
                    r.get("stage", ""),
                    str(r.get("vs_eval")),
                    str(r.get("xla", "")),
                    str(r.get("vs_xla", "")),
                    r.get("detail", "").replace("\t", " "),
                )
            )
    w.close()
    if args.out is not None:
        with open(args.out, "w") as f:
            f.write("module\toutcome\tstage\tvs_eval\txla\tvs_xla\tdetail\n")
            for row in rows:
                f.write("\t".join(row) + "\n")
    print(f"{time.monotonic() - start:.0f} s over {len(files)} files")
    for k in sorted(counts):
        print(f"  {k}: {counts[k]}")
    return 1 if counts["differ from both"] or counts["death"] else 0


if __name__ == "__main__":
    sys.exit(main())
