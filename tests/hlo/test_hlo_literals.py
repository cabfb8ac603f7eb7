"""Literals parse and print back the way XLA writes them; narrow float types
round like ml_dtypes (the reference implementation JAX uses)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir


def constant(shape: str, value: str):
    m = uir.hlo.parse_module(f"ENTRY e {{\n  ROOT c = {shape} constant({value})\n}}")
    return m.entry.root


def printed(shape: str, value: str) -> str:
    line = str(constant(shape, value))
    return line[line.index("constant(") + len("constant(") : -1]


@pytest.mark.parametrize(
    ("shape", "text", "expected"),
    [
        ("f32[]", "inf", "inf"),
        ("f32[]", "-inf", "-inf"),
        ("f32[]", "nan", "nan"),
        ("f32[]", "-nan", "-nan"),
        ("f32[]", "nan(0x7f)", "nan(0x7f)"),
        ("f32[]", "-nan(0x1234)", "-nan(0x1234)"),
        ("f64[]", "nan(0x8000000000001)", "nan(0x8000000000001)"),
        ("f32[]", "1.0", "1"),
        ("f32[]", "1e-06", "1e-06"),
        ("f32[]", "0.200000e+00", "0.2"),
        ("f32[]", "2.22222233", "2.22222233"),
        ("f64[]", "0.1", "0.1"),
        ("f64[]", "3.141592653589793", "3.1415926535897931"),
        ("bf16[]", "nan", "nan"),
        ("pred[]", "true", "true"),
        ("pred[]", "0", "false"),
        ("pred[3]", "{1, 0, 1}", "{1, 0, 1}"),
        ("s32[2,2]", "{{1,2},{3,4}}", "{ { 1, 2 }, { 3, 4 } }"),
        ("c64[]", "(1.0, 2.0)", "(1, 2)"),
        ("c128[2]", "{(1, -0.5), (inf, 0)}", "{(1, -0.5), (inf, 0)}"),
        ("u64[]", "18446744073709551615", "18446744073709551615"),
        ("s64[]", "-9223372036854775808", "-9223372036854775808"),
        ("s4[4]", "{-8, -1, 0, 7}", "{-8, -1, 0, 7}"),
        ("u4[2]", "{0, 15}", "{0, 15}"),
        ("f32[0]", "{}", "{}"),
        ("(f32[], s32[2])", "(1.5, {3, 4})", "(1.5, {3, 4})"),
    ],
)
def test_literal_prints_like_xla(shape, text, expected):
    assert printed(shape, text) == expected


def test_floats_print_shortest_of_digits10_and_max_digits10():
    # %.15g does not read back as pi; XLA then prints 17 significant digits.
    assert float(printed("f64[]", "3.141592653589793")) == 3.141592653589793
    assert printed("f64[]", "0.30000000000000004") == "0.30000000000000004"
    assert printed("f32[]", "0.1") == "0.1"
    assert printed("f32[]", "100000") == "100000"


def test_nan_payload_survives_a_round_trip():
    c = constant("f32[]", "-nan(0x1234)")
    bits = c.attributes["literal"].view(np.uint32)
    assert int(bits) == 0xFF801234


def test_elided_constant_gets_deterministic_values():
    a = constant("f32[100]", "{...}").attributes["literal"]
    b = constant("f32[100]", "{...}").attributes["literal"]
    assert a.shape == (100,)
    np.testing.assert_array_equal(a, b)


def test_array_literal_is_a_numpy_array_in_row_major_order():
    lit = constant("s32[2,3]{0,1}", "{{1,2,3},{4,5,6}}").attributes["literal"]
    assert lit.dtype == np.int32
    np.testing.assert_array_equal(lit, [[1, 2, 3], [4, 5, 6]])


NARROW = [
    ("f16", np.float16),
    ("bf16", ml_dtypes.bfloat16),
    ("f8e5m2", ml_dtypes.float8_e5m2),
    ("f8e4m3", ml_dtypes.float8_e4m3),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn),
    ("f8e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz),
    ("f8e3m4", ml_dtypes.float8_e3m4),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
    ("f6e3m2fn", ml_dtypes.float6_e3m2fn),
    ("f6e2m3fn", ml_dtypes.float6_e2m3fn),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn),
]


@pytest.mark.parametrize(("name", "dtype"), NARROW, ids=[n for n, _ in NARROW])
def test_narrow_float_constants_round_like_ml_dtypes(name, dtype):
    finfo = ml_dtypes.finfo(dtype)
    rng = np.random.default_rng(0)
    top = float(finfo.max)
    values = np.concatenate(
        [
            rng.uniform(-top, top, 200),
            rng.uniform(-4 * float(finfo.smallest_normal), 4 * float(finfo.smallest_normal), 100),
            [0.0, top, -top, float(finfo.smallest_normal), float(finfo.smallest_subnormal)],
            # Ties: halfway between neighbours rounds to even.
            [1.0 + float(finfo.eps) / 2, 1.0 + 1.5 * float(finfo.eps)],
        ]
    ).astype(np.float32)
    text = "{" + ", ".join(repr(float(v)) for v in values) + "}"
    got = constant(f"{name}[{len(values)}]", text).attributes["literal"]
    expected = values.astype(dtype).astype(np.float32)
    np.testing.assert_array_equal(got, expected)
    # And the printed text parses back to the same values.
    again = constant(f"{name}[{len(values)}]", printed(f"{name}[{len(values)}]", text))
    np.testing.assert_array_equal(again.attributes["literal"], expected)


def test_e8m0_holds_powers_of_two():
    got = constant("f8e8m0fnu[4]", "{1, 0.5, 1024, 3e-38}").attributes["literal"]
    expected = np.array([1, 0.5, 1024, 3e-38], np.float32).astype(ml_dtypes.float8_e8m0fnu)
    np.testing.assert_array_equal(got, expected.astype(np.float32))
