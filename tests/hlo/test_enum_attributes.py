"""Identifier attributes from a fixed list (direction, fusion kind,
api_version, ...) are parsed once into an enum: they print in XLA's
spelling, read back as that string from Python, and a bad one is an error
that lists the choices."""

from __future__ import annotations

import pytest

import uir

COMPARE = """HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = pred[4] compare(a, b), direction=%s%s
}
"""


@pytest.mark.parametrize("direction", ["EQ", "NE", "GE", "GT", "LE", "LT"])
def test_directions_round_trip_and_evaluate(direction):
    m = uir.hlo.parse_module(COMPARE % (direction, ", type=TOTALORDER"))
    assert m.entry.root.attributes["direction"] == direction
    assert m.entry.root.attributes["type"] == "TOTALORDER"
    assert f"direction={direction}, type=TOTALORDER" in m.to_text()
    import numpy as np

    a = np.array([1, 2, 3, np.nan], np.float32)
    b = np.array([2, 2, 2, np.nan], np.float32)
    got = uir.evaluate(m, a, b)
    want = {"EQ": a == b, "NE": a != b, "GE": a >= b, "GT": a > b, "LE": a <= b, "LT": a < b}
    # TOTALORDER: NaN equals itself (and is above every number).
    want = want[direction].copy()
    want[3] = direction in ("EQ", "GE", "LE")
    np.testing.assert_array_equal(got, want)


def test_bad_direction_lists_the_choices():
    with pytest.raises(uir.ParseError, match="expected one of EQ, NE, GE, GT, LE, LT"):
        uir.hlo.parse_module(COMPARE % ("gt", ""))


def test_case_insensitive_fields_print_canonically():
    text = """HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="t", api_version=api_version_status_returning
}
"""
    m = uir.hlo.parse_module(text)
    assert m.entry.root.attributes["api_version"] == "API_VERSION_STATUS_RETURNING"
    assert "api_version=API_VERSION_STATUS_RETURNING" in m.to_text()


def test_fusion_kind_from_passes_and_python():
    m = uir.hlo.parse_module(
        "HloModule m\nENTRY e {\n  a = f32[8] parameter(0)\n  n = f32[8] negate(a)\n"
        "  ROOT x = f32[8] exponential(n)\n}\n"
    )
    out = uir.passes.run(m, ["priority-fusion"])
    fusions = [i for i in out.entry.instructions if i.opcode == "fusion"]
    assert [f.attributes["kind"] for f in fusions] == ["kLoop"]
    assert "kind=kLoop" in out.to_text()


def test_builder_takes_enum_attributes_as_strings():
    mb = uir.hlo.ModuleBuilder("b")
    c = mb.computation("main")
    a = c.parameter(0, "f32[2]")
    b = c.parameter(1, "f32[2]")
    assert c.op("compare", a, b, direction="LT").attributes["direction"] == "LT"
    with pytest.raises(uir.ParseError, match="invalid direction 'SIDEWAYS'"):
        c.op("compare", a, b, direction="SIDEWAYS")
