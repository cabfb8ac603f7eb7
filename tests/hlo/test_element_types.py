"""One element-type table: primitive_type.def, read by the bindings and by
uir._src.core.dtypes; nothing else spells the HLO <-> dtype mapping out."""

import pathlib

import ml_dtypes
import numpy as np
import pytest

import uir
from uir import _core
from uir._src.core import dtypes

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = _core.hlo.element_types()


def test_table_rows_are_complete_and_parse():
    names = [row[0] for row in TABLE]
    assert len(names) == len(set(names))
    for name, dtype_name, source, bits, nbytes, kind in TABLE:
        assert source in ("numpy", "ml_dtypes", "")
        assert (dtype_name == "") == (source == "")
        assert kind in ("pred", "signed", "unsigned", "float", "complex", "token", "opaque")
        if kind not in ("token", "opaque"):
            assert uir.hlo.Shape(f"{name}[3]").element_type == name
            assert bits >= 1 and nbytes * 8 >= bits


@pytest.mark.parametrize("row", [r for r in TABLE if r[2]], ids=lambda r: r[0])
def test_dtype_round_trip(row):
    name, dtype_name, source, *_ = row
    want = np.dtype(dtype_name) if source == "numpy" else np.dtype(getattr(ml_dtypes, dtype_name))
    assert dtypes.numpy_dtype(name) == want
    assert dtypes.hlo_type(want) == name
    # The bindings agree: a literal of the type comes back with this dtype.
    # (1 is a value nearly every type holds: f8e8m0fnu has no zero; s1
    # holds only -1 and 0.)
    value = -1 if name == "s1" else 1
    one = "(1, 0)" if name.startswith("c") else str(value)
    text = f"HloModule m\nENTRY e {{\n  ROOT c = {name}[2] constant({{{one}, {one}}})\n}}\n"
    out = uir.evaluate(uir.hlo.parse_module(text))
    assert out.dtype == want
    np.testing.assert_array_equal(out.astype(np.complex128), [value, value])
    # Shape.dtype is NumPy's dtype where NumPy has one, else the HLO name.
    shape_dtype = uir.hlo.Shape(f"{name}[2]").dtype
    assert shape_dtype == (want if source == "numpy" else name)


def test_no_other_copy_of_the_table():
    # A second hand-written mapping would spell out the rarest rows.
    holders = []
    for path in [*ROOT.joinpath("uir").rglob("*.py"), *ROOT.joinpath("csrc").rglob("*.cc")]:
        if "float8_e4m3b11fnuz" in path.read_text():
            holders.append(path.relative_to(ROOT).as_posix())
    assert holders == []
    assert "float8_e4m3b11fnuz" in (ROOT / "csrc/support/primitive_type.def").read_text()
