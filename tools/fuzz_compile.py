"""The differential compile fuzzer (make fuzz-compile).

Mutates modules of XLA's corpus with the fuzzers' structure-aware mutator
(uir.hlo's mutate_text: a dimension, an element type, a layout, an
attribute, an operand), and runs every mutant the evaluator runs through
uir.compile as well, comparing the two results: bit for bit for integers
and booleans, within a tolerance for floats (fusion and vector code may
reassociate), NaN where NaN. Each mutant also goes through the default
pipeline with check=True, which evaluates the module after every pass that
changed it. Cases run in a worker process, so a crash is counted (and its
module kept) instead of ending the run; a case past its time limit is
counted as a timeout and its worker replaced.

    python tools/fuzz_compile.py --seconds 1800 --out build/fuzz-compile

prints a line per finding and a summary of counts; it exits non-zero when a
process died, a compiled result differed from the evaluator's (outside
modules with rng ops, whose values HLO leaves to the implementation), or
the pipeline's check failed. Findings are written to --out as .hlo files.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import pathlib
import random
import sys
import time

from differential import Worker, agree, elements, serve

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parents[1] / "shared" / "corpus" / "xla-hlo"

# Mutants are run only up to these sizes, so each case takes well under a second.
MAX_ELEMENTS = 1 << 16
MAX_INSTRUCTIONS = 400
# Ops whose values HLO leaves to the implementation.
RNG_OPS = {"rng", "rng-bit-generator", "rng-get-and-update-state"}
FAILURES = ("death", "mismatch", "check", "internal")


def _run_case(text: str, seed: int) -> dict:
    import uir
    from uir._src.core.evaluate import random_arguments

    try:
        m = uir.hlo.parse_module(text)
        m.verify()
    except uir.Error:
        return {"outcome": "invalid"}
    instructions = sum(len(c.instructions) for c in m.computations)
    if instructions > MAX_INSTRUCTIONS or any(
        elements(i.shape) > MAX_ELEMENTS for c in m.computations for i in c.instructions
    ):
        return {"outcome": "too-big"}
    has_rng = any(i.opcode in RNG_OPS for c in m.computations for i in c.instructions)
    try:
        args = random_arguments(m, seed)
        want = uir.evaluate(m, *args)
    except (uir.Error, ValueError, TypeError, NotImplementedError):
        return {"outcome": "evaluator-refuses"}
    try:
        uir.passes.default_pipeline().run(m, check=True)
    except uir.Error as e:
        if type(e).__name__ == "PassCheckError":
            return {"outcome": "rng" if has_rng else "check", "detail": str(e)}
        if isinstance(e, uir.InternalError):
            return {"outcome": "internal", "detail": f"pipeline: {e}"}
        return {"outcome": "compile-refuses", "detail": f"pipeline: {e}"}
    try:
        exe = uir.compile(m, backend="cpu")
        got = exe(*args)
    except uir.InternalError as e:
        return {"outcome": "internal", "detail": str(e)}
    except (uir.Error, NotImplementedError) as e:
        return {"outcome": "compile-refuses", "detail": f"{type(e).__name__}: {e}"}
    where = agree(got, want)
    if where is None:
        return {"outcome": "agree", "fallbacks": len(exe.fallbacks)}
    return {"outcome": "rng" if has_rng else "mismatch", "detail": where}


def worker() -> None:
    os.environ.setdefault("UIR_FLAGS", "--executable_cache=false")
    serve(lambda case: _run_case(case["text"], case["seed"]))


def seed_modules(corpus: pathlib.Path) -> list[pathlib.Path]:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from corpus import TOO_HEAVY

    return sorted(p for p in corpus.glob("*.hlo") if p.name not in TOO_HEAVY)


def fuzz(
    seconds: float,
    corpus: pathlib.Path,
    out: pathlib.Path | None,
    seed: int,
    timeout: float,
    max_cases: int | None = None,
) -> collections.Counter:
    import uir

    rng = random.Random(seed)
    modules = seed_modules(corpus)
    texts = {p.name: p.read_text() for p in modules}
    counts: collections.Counter = collections.Counter()
    w = Worker([__file__, "--worker"])
    end = time.monotonic() + seconds
    cases = 0
    try:
        while time.monotonic() < end and (max_cases is None or cases < max_cases):
            name = rng.choice(modules).name
            case_seed = rng.getrandbits(63)
            rounds = rng.choice([0, 1, 1, 2, 3])
            try:
                text = (
                    uir.hlo.mutate_text(texts[name], case_seed, rounds) if rounds else texts[name]
                )
            except uir.Error:
                counts["invalid"] += 1
                continue
            cases += 1
            result = w.run({"text": text, "seed": case_seed % (1 << 32)}, timeout)
            outcome = result["outcome"]
            counts[outcome] += 1
            if outcome in ("death", "timeout") or not w.alive:
                w = Worker([__file__, "--worker"])
            if outcome in (*FAILURES, "rng", "timeout"):
                digest = hashlib.sha1(text.encode()).hexdigest()[:12]
                detail = result.get("detail", "")
                print(f"{outcome}: {name} mutant {digest} (seed {case_seed}): {detail}"[:600])
                if out is not None:
                    (out / outcome).mkdir(parents=True, exist_ok=True)
                    (out / outcome / f"{digest}.hlo").write_text(
                        f"// from {name}, seed {case_seed}, {rounds} mutations: {detail}"[
                            :2000
                        ].replace("\n", " ")
                        + "\n"
                        + text
                    )
    finally:
        w.close()
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--corpus", type=pathlib.Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=pathlib.Path, default=None)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take")
    parser.add_argument("--max-cases", type=int, default=None)
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    start = time.monotonic()
    counts = fuzz(args.seconds, args.corpus, args.out, args.seed, args.timeout, args.max_cases)
    ran = sum(v for k, v in counts.items() if k != "invalid")
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(
        f"fuzz-compile: seed {args.seed}, {time.monotonic() - start:.0f} s, {ran} cases: {summary}"
    )
    failures = sum(counts[k] for k in FAILURES)
    print(f"{failures} failed, {counts['agree']} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
