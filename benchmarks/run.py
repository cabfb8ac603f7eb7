"""Runs the benchmarks in this folder and prints one table each.

python benchmarks/run.py [NAME ...]      # NAME: bench_<NAME>.py, default all
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import sys

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    helpers = {"run", "roofline"}
    available = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in helpers)
    names = args.names or available
    unknown = sorted(set(names) - set(available))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {available}")
    import uir

    info = uir.info()
    print(
        f"uir {info['version']}, LLVM {info['llvm_version']}, {info['cpu']}, "
        f"{info['threads']} threads"
    )
    for name in names:
        module = importlib.import_module(name)
        print(f"\n== {name}: {(module.__doc__ or '').strip().splitlines()[0]}")
        print_table(module.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
