"""HLO parse and print throughput on the largest modules of XLA's corpus.

Parse time covers text -> HloModule (lexing, parsing, literals, layouts);
print time covers HloModule -> text. MB/s counts the input text's bytes.
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

import uir

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla-hlo"


def _median_seconds(fn, min_time: float = 0.5) -> float:
    fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < min_time and len(samples) < 500):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def run(count: int = 6) -> list[dict[str, object]]:
    paths = sorted(CORPUS.glob("*.hlo"), key=lambda p: p.stat().st_size, reverse=True)[:count]
    rows = []
    for path in paths:
        text = path.read_text()
        module = uir.hlo.parse_module(text)
        mb = len(text.encode()) / 1e6
        t_parse = _median_seconds(lambda text=text: uir.hlo.parse_module(text))
        t_print = _median_seconds(lambda module=module: module.to_text())
        t_verify = (
            _median_seconds(lambda module=module: module.verify())
            if path.name != "xla_hlo_translate_hlo_to_mhlo_tests__import__0.hlo"
            else float("nan")
        )
        rows.append(
            {
                "module": path.name.removeprefix("xla_")[:48],
                "KB": len(text.encode()) / 1e3,
                "parse_ms": t_parse * 1e3,
                "parse_MBs": mb / t_parse,
                "print_ms": t_print * 1e3,
                "print_MBs": mb / t_print,
                "verify_ms": t_verify * 1e3,
            }
        )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from run import print_table

    print_table(run())
