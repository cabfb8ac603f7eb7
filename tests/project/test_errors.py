"""C++ errors reach Python as uir's classes, with their messages and fields."""

from __future__ import annotations

import pytest

import uir
from uir import _core

CASES = [
    ("parse", uir.ParseError, ValueError),
    ("verify", uir.VerifyError, ValueError),
    ("trace", uir.TraceError, TypeError),
    ("shape", uir.ShapeError, ValueError),
    ("custom_call", uir.CustomCallError, RuntimeError),
    ("internal", uir.InternalError, RuntimeError),
    ("unimplemented", uir.UnimplementedError, NotImplementedError),
    ("memory_limit", uir.MemoryLimitError, ValueError),
    ("device", uir.DeviceError, RuntimeError),
    ("distributed", uir.DistributedError, RuntimeError),
]


@pytest.mark.parametrize(("kind", "cls", "builtin"), CASES)
def test_cpp_error_arrives_as_its_python_class(kind, cls, builtin):
    with pytest.raises(cls) as info:
        _core.support.throw_for_testing(kind, f"the {kind} message")
    assert type(info.value) is cls
    assert isinstance(info.value, builtin)
    assert isinstance(info.value, uir.Error)
    assert f"the {kind} message" in str(info.value)


def test_parse_error_carries_line_and_column():
    with pytest.raises(uir.ParseError) as info:
        _core.support.throw_for_testing("parse", "expected ')'")
    e = info.value
    assert (e.file, e.line, e.column) == ("test.hlo", 3, 8)
    lines = str(e).splitlines()
    assert lines[0] == "test.hlo:3:8: error: expected ')'"
    assert lines[1] == "    %x = f32[] bogus()"
    # The caret sits under column 8 of the quoted source line: the 'f' of f32.
    assert lines[2].strip() == "^"
    assert lines[1][lines[2].index("^") :].startswith("f32[]")


def test_verify_error_names_the_instruction():
    with pytest.raises(uir.VerifyError) as info:
        _core.support.throw_for_testing("verify", "shape mismatch")
    assert info.value.instruction == "add.1"
    assert "%add.1" in str(info.value)


def test_custom_call_error_names_the_target():
    with pytest.raises(uir.CustomCallError) as info:
        _core.support.throw_for_testing("custom_call", "status 3")
    assert info.value.target == "test_target"
    assert "'test_target'" in str(info.value)


def test_internal_error_says_it_is_a_bug_and_where():
    with pytest.raises(uir.InternalError) as info:
        _core.support.throw_for_testing("internal", "details")
    message = str(info.value)
    assert "check failed: false" in message
    assert "error.cc:" in message
    assert "bug in uir" in message


def test_unknown_error_kind_is_a_value_error():
    with pytest.raises(ValueError, match="unknown error kind 'nope'"):
        _core.support.throw_for_testing("nope", "x")


def test_errors_are_exported_from_the_package():
    for name in ["ParseError", "VerifyError", "TraceError", "CustomCallError", "InternalError"]:
        assert issubclass(getattr(uir, name), uir.Error)
