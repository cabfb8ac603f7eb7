"""uir's benchmarks.

python benchmarks/run.py [--quick] [--filter TEXT]   # the suite (suite.py): uir beside
                                                     # NumPy and jax.jit; writes results/
python benchmarks/run.py NAME [NAME ...]             # micro-benchmarks: NAME.py here
"""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import sys

# The same 2 threads for NumPy's BLAS, XLA and uir (set before they load).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "UIR_NUM_THREADS"):
    os.environ.setdefault(_var, "2")
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads=2"
)

HERE = pathlib.Path(__file__).resolve().parent


def _format(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.1f}"
    return str(value)


def print_table(rows: list[dict[str, object]]) -> None:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    cells = [[_format(row.get(c, "-")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for r in cells:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)))


def _update_readme(table: str) -> None:
    readme = HERE / "README.md"
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    text = readme.read_text() if readme.exists() else ""
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end) :]
        readme.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="micro-benchmarks to run instead of the suite")
    parser.add_argument(
        "--quick", action="store_true", help="the small cases only (under 3 minutes)"
    )
    parser.add_argument("--filter", help="only cases whose name contains this text")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    helpers = {"run", "roofline", "suite"}
    available = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in helpers)
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {available}")
    import uir

    info = uir.info()
    print(
        f"uir {info['version']}, LLVM {info['llvm_version']}, {info['cpu']}, "
        f"{info['threads']} threads"
    )
    if not args.names:
        import suite

        rows = suite.run_suite(quick=args.quick, name_filter=args.filter)
        if not args.filter or "compile" in args.filter:
            rows += suite.compile_rows()
        print_table(rows)
        # Only a full run is the latest result (and the README's table); a
        # partial one is written beside it.
        report = "filtered" if args.filter else "quick" if args.quick else "latest"
        paths = suite.write_reports(rows, report)
        print("\nwrote " + ", ".join(str(p.relative_to(HERE.parent)) for p in paths))
        if report == "latest":
            _update_readme((HERE / "results" / "latest.md").read_text())
        return 1 if any(r.get("status", "ok") != "ok" for r in rows) else 0
    for name in args.names:
        module = importlib.import_module(name)
        print(f"\n== {name}: {(module.__doc__ or '').strip().splitlines()[0]}")
        print_table(module.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
