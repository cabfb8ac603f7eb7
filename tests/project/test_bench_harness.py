"""The benchmark suite's harness runs a case end to end: the NumPy check
first, then the timings and the roofline fraction (no timing is asserted)."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
import suite


def test_a_quick_case_is_checked_then_timed():
    rows = suite.run_suite(quick=True, name_filter="elementwise chain 1024", repeats=2)
    assert [r["case"] for r in rows] == ["elementwise chain 1024"]
    row = rows[0]
    assert row["status"] == "ok", row
    assert row["uir_ms"] > 0 and row["numpy_ms"] > 0 and row["uir_roofline"] > 0


def test_the_loop_case_and_compile_rows():
    rows = suite.run_suite(name_filter="fori_loop", repeats=2)
    assert rows[0]["status"] == "ok", rows
    compile_rows = suite.compile_rows()
    assert [r["case"] for r in compile_rows] == [
        "compile 100 instructions",
        "compile 1000 instructions",
    ]
    assert compile_rows[1]["hlo_instructions"] > compile_rows[0]["hlo_instructions"] >= 100
