"""The mistakes a newcomer makes in the first hour, and what uir says about
them: each error names what went wrong where, is a uir.Error, and is also
the built-in exception Python code expects (ValueError, TypeError,
MemoryError)."""

from __future__ import annotations

import numpy as np
import pytest
from memory_util import skip_impossible_allocations_under_asan

import uir
import uir.numpy as unp

# --- HLO text ----------------------------------------------------------------


def test_a_mistyped_element_type_is_an_unknown_element_type_not_an_opcode():
    text = "HloModule m\nENTRY e {\n  p = f23[16] parameter(0)\n  ROOT n = f32[16] negate(p)\n}\n"
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.parse_module(text)
    assert "unknown element type 'f23'" in str(e.value) and "opcode" not in str(e.value)
    assert (e.value.line, e.value.column) == (3, 7)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("typo", ["s33", "bf61", "u7", "f8e9"])
def test_other_mistyped_types_are_named_as_types(typo):
    text = f"HloModule m\nENTRY e {{\n  ROOT p = {typo}[2,2] parameter(0)\n}}\n"
    with pytest.raises(uir.ParseError, match=f"unknown element type '{typo}'"):
        uir.hlo.parse_module(text)


def test_an_unknown_opcode_is_still_an_unknown_opcode():
    text = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  ROOT n = f32[16] negat(p)\n}\n"
    with pytest.raises(uir.ParseError, match="unknown opcode 'negat'"):
        uir.hlo.parse_module(text)


def test_a_missing_parenthesis_points_at_the_line_of_the_slip():
    text = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0\n  ROOT n = f32[16] negate(p)\n}\n"
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.parse_module(text)
    assert e.value.line == 3  # not 4, where the parser noticed
    assert e.value.column == len("  p = f32[16] parameter(0") + 1
    assert "expected ')' closing the operands at the end of this line, got 'ROOT' on line 4" in str(
        e.value
    )


def test_a_missing_parenthesis_on_the_same_line_points_at_what_came_instead():
    text = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0 x\n  ROOT n = f32[16] negate(p)\n}\n"
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.parse_module(text)
    assert (e.value.line, "got 'x'") == (3, "got 'x'") and "got 'x'" in str(e.value)


def test_a_binary_file_is_named_in_the_error(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.load(path)
    assert e.value.file == str(path) and str(path) in str(e.value)
    assert (e.value.line, e.value.column) == (1, 1)


def test_a_file_that_is_not_utf8_is_named_with_the_bad_byte(tmp_path):
    path = tmp_path / "latin1.hlo"
    path.write_bytes(
        "HloModule m\nENTRY e {\n  ROOT caf\xe9 = f32[] parameter(0)\n}\n".encode("latin-1")
    )
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.load(path)
    assert str(path) in str(e.value) and "byte 0xE9" in str(e.value)
    assert e.value.line == 3


@pytest.mark.parametrize("text", ["some/path.hlo", "module.hlo", "  dumps/x.txt\n"])
def test_parse_module_given_a_file_name_hints_at_load(text):
    with pytest.raises(uir.ParseError, match=r"looks like a file name: uir\.hlo\.load\(path\)"):
        uir.hlo.parse_module(text)


def test_parse_module_given_the_name_of_an_existing_file_hints_at_load(tmp_path, monkeypatch):
    (tmp_path / "m").write_text("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(uir.ParseError, match=r"uir\.hlo\.load"):
        uir.hlo.parse_module("m")
    assert uir.hlo.load("m").name == "m"


def test_bad_hlo_text_gets_no_file_hint():
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.parse_module("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n")
    assert "uir.hlo.load" not in str(e.value)


# --- complex numbers -----------------------------------------------------------


@pytest.fixture
def x64():
    """64-bit types on for the test (complex128 stays complex128)."""
    before = uir.config.read("enable_x64")
    uir.config.update("enable_x64", True)
    yield
    uir.config.update("enable_x64", before)


Z = (np.arange(1, 7) * (0.3 - 0.2j) + np.array([1, -1, 2j, -2j, 0.5, 3])).astype(np.complex64)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("floor", unp.floor),
        ("ceil", unp.ceil),
        ("cbrt", unp.cbrt),
        ("argmax", unp.argmax),
        ("argmin", unp.argmin),
        ("rem", lambda z: unp.remainder(z, z)),
        ("floor_divide", lambda z: unp.floor_divide(z, z)),
        ("fmod", lambda z: unp.fmod(z, z)),
        ("clip", lambda z: unp.clip(z, 0, 1)),
    ],
)
def test_ops_without_meaning_on_complex_numbers_name_the_op_and_dtype(name, fn):
    with pytest.raises(uir.TraceError) as e:
        uir.jit(fn)(Z)
    message = str(e.value)
    assert f"{name} does not accept dtype complex64" in message
    assert isinstance(e.value, TypeError)


@pytest.mark.parametrize(
    "name, fn, reference",
    [
        ("sort", unp.sort, np.sort),  # NumPy and JAX: by real part, then imaginary
        ("maximum", lambda z: unp.maximum(z, z[::-1]), lambda z: np.maximum(z, z[::-1])),
        ("minimum", lambda z: unp.minimum(z, z[::-1]), lambda z: np.minimum(z, z[::-1])),
        ("sinh", unp.sinh, np.sinh),
        ("cosh", unp.cosh, np.cosh),
        ("arcsin", unp.arcsin, np.arcsin),
        ("arccos", unp.arccos, np.arccos),
        ("arcsinh", unp.arcsinh, np.arcsinh),
        ("arccosh", unp.arccosh, np.arccosh),
        ("arctanh", unp.arctanh, np.arctanh),
        ("tanh", unp.tanh, np.tanh),
    ],
)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_functions_jax_computes_are_computed(name, fn, reference, dtype, x64):
    z = Z.astype(dtype)
    got = uir.jit(fn)(z)
    assert got.dtype == dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(got, reference(z), rtol=tol, atol=tol)


def test_complex_arctan2_is_computed_as_jax_computes_it(x64):
    y, x = Z.astype(np.complex128), Z[::-1].astype(np.complex128)
    want = -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))
    np.testing.assert_allclose(uir.jit(unp.arctan2)(y, x), want, rtol=1e-12, atol=1e-12)


def test_complex_sort_puts_ties_in_real_part_in_imaginary_order():
    z = np.array([1 + 2j, 1 - 1j, 0 + 5j, 1 + 0j, -1 + 0j], np.complex64)
    np.testing.assert_array_equal(uir.jit(unp.sort)(z), np.sort(z))


# --- Python lists -----------------------------------------------------------------


def test_a_list_is_traced_as_its_elements_as_in_jax():
    assert uir.jit(lambda xs: xs[0] * 2 + xs[1])([1.0, 2.0]) == 4.0
    np.testing.assert_array_equal(
        uir.jit(lambda xs: unp.asarray(xs) * 2)([1.0, 2.0, 3.0]), [2, 4, 6]
    )
    np.testing.assert_array_equal(
        uir.jit(lambda xs: unp.array([xs[0], 5.0, xs[2]]))([1.0, 2.0, 3.0]), [1, 5, 3]
    )


@pytest.mark.parametrize("fn", [unp.sin, unp.sum, lambda x: unp.where(x, 1, 0), unp.exp])
def test_a_list_where_an_array_is_expected_is_a_clear_type_error(fn):
    with pytest.raises(TypeError) as e:
        uir.jit(fn)([1.0, 2.0, 3.0])
    message = str(e.value)
    assert "list of traced values where an array is expected" in message
    assert "uir.numpy.asarray" in message and "control flow" not in message
    assert isinstance(e.value, uir.Error)


# --- memory ------------------------------------------------------------------------


@skip_impossible_allocations_under_asan
def test_an_impossible_result_is_a_memory_error_naming_op_shape_and_bytes():
    f = uir.jit(lambda x: unp.zeros((1_000_000, 1_000_000, 1000), np.float32) + x)
    with pytest.raises(MemoryError) as e:
        f(np.float32(1))
    message = str(e.value)
    assert isinstance(e.value, uir.OutOfMemoryError) and isinstance(e.value, uir.Error)
    assert "f32[1000000,1000000,1000]" in message and "4000000000000000 bytes" in message
    assert "%" in message  # the op
    # The process is fine afterwards.
    np.testing.assert_array_equal(uir.jit(lambda x: x + 1)(np.ones(3, np.float32)), [2, 2, 2])


_BIG_TEMPORARY = """HloModule big
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[] parameter(0)
  b = f32[1000000,1000000,1000] broadcast(p), dimensions={}
  s = f32[1000000,1000000,1000] sort(b), dimensions={2}, to_apply=lt
  z = f32[] constant(0)
  ROOT r = f32[] reduce(s, z), dimensions={0,1,2}, to_apply=add
}
"""


@skip_impossible_allocations_under_asan
def test_an_impossible_temporary_on_the_compiled_path_names_its_op():
    # The sorted copy and its input are temporaries in the executable's own
    # memory: 8e15 bytes the allocator refuses at once.
    exe = uir.compile(uir.hlo.parse_module(_BIG_TEMPORARY), backend="cpu")
    with pytest.raises(uir.OutOfMemoryError) as e:
        exe(np.float32(1))
    assert str(e.value).startswith(
        "cannot allocate 7.1 PiB (8000000000000000 bytes) for allocation"
    )
    assert "which holds %b (broadcast, f32[1000000,1000000,1000]{2,1,0}) and 1 other value" in str(
        e.value
    )


@skip_impossible_allocations_under_asan
def test_the_evaluator_names_the_op_it_could_not_allocate():
    m = uir.hlo.parse_module(
        "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
        "  ROOT b = f32[1000000,1000000,1000] broadcast(p), dimensions={}\n}\n"
    )
    with pytest.raises(MemoryError) as e:
        uir.evaluate(m, np.float32(1))
    assert str(e.value) == (
        "cannot allocate 3.6 PiB (4000000000000000 bytes) for %b "
        "(broadcast, f32[1000000,1000000,1000]{2,1,0})"
    )


# --- arguments ---------------------------------------------------------------------

NEGATE = "HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n  ROOT n = f32[16] negate(p)\n}\n"


@pytest.mark.parametrize("run", ["evaluate", "cpu", "eval"])
@pytest.mark.parametrize(
    "args, builtin, words",
    [
        ((np.ones(3, np.float32),), ValueError, "takes shape (16), got (3,)"),
        ((np.ones(16, np.int32),), TypeError, "takes float32, got int32"),
        ((), TypeError, "takes 1 arguments, got 0"),
        ((np.ones(16, np.float32), np.ones(16, np.float32)), TypeError, "takes 1 arguments, got 2"),
    ],
)
def test_argument_errors_are_uir_errors_and_the_builtin(run, args, builtin, words):
    m = uir.hlo.parse_module(NEGATE)
    call = (lambda *a: uir.evaluate(m, *a)) if run == "evaluate" else uir.compile(m, backend=run)
    with pytest.raises(uir.Error) as e:
        call(*args)
    assert isinstance(e.value, uir.ArgumentError) and isinstance(e.value, builtin)
    assert words in str(e.value)


def test_a_compiled_function_called_with_other_shapes_is_an_argument_error():
    compiled = uir.jit(lambda x: x * 2).lower(np.ones(4, np.float32)).compile()
    with pytest.raises(uir.ArgumentError, match="does not match the compiled"):
        compiled(np.ones(5, np.float32))
    with pytest.raises(TypeError, match="structure"):
        compiled(np.ones(4, np.float32), np.ones(4, np.float32))
