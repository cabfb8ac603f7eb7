"""Malformed or invalid HLO is rejected with the right class and place, never a crash.

Parse errors carry line and column (checked against the text); verifier
errors name the instruction."""

from __future__ import annotations

import pytest

import uir

GOOD = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
"""


def test_the_valid_module_these_cases_mutate_is_valid():
    uir.hlo.parse_module(GOOD).verify()


# (id, text, line, column, message fragment)
PARSE_ERRORS = [
    (
        "bad_character",
        "ENTRY e {\n  p = f32[] parameter(0) $\n}",
        2,
        26,
        "unexpected character '$'",
    ),
    (
        "unterminated_string",
        'ENTRY e {\n  p = f32[] parameter(0), metadata={op_name="x}\n}',
        2,
        45,
        "unterminated string",
    ),
    (
        "unterminated_comment",
        "ENTRY e {\n  /* never closed\n  p = f32[] parameter(0)\n}",
        2,
        3,
        "unterminated /* comment",
    ),
    (
        "unknown_element_type",
        "ENTRY e {\n  p = f31[2] parameter(0)\n}",
        2,
        7,
        "unknown element type 'f31'",
    ),
    (
        "negative_dimension",
        "ENTRY e {\n  p = f32[-2] parameter(0)\n}",
        2,
        11,
        "dimension size must be non-negative",
    ),
    ("unclosed_dims", "ENTRY e {\n  p = f32[2 parameter(0)\n}", 2, 13, "expected ']'"),
    (
        "layout_wrong_rank",
        "ENTRY e {\n  p = f32[2,3]{0} parameter(0)\n}",
        2,
        15,
        "layout has 1 dimensions but the shape has rank 2",
    ),
    (
        "layout_not_permutation",
        "ENTRY e {\n  p = f32[2,3]{0,0} parameter(0)\n}",
        2,
        15,
        "not a permutation",
    ),
    (
        "layout_physical_shape",
        "ENTRY e {\n  p = f32[2]{0:P(f32[2])} parameter(0)\n}",
        2,
        16,
        "physical shape",
    ),
    (
        "token_with_dims",
        "ENTRY e {\n  p = token[2] parameter(0)\n}",
        2,
        7,
        "token shapes have no dimensions",
    ),
    (
        "unknown_opcode",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] addd(p, p)\n}",
        3,
        18,
        "unknown opcode 'addd'",
    ),
    (
        "wrapping_own_async_op",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = ((f32[]), f32[]) copy-start-start(p)\n}",
        3,
        29,
        "copy-start cannot be wrapped",
    ),
    (
        "sugar_on_copy",
        "ENTRY e {\n  p = f32[] parameter(0)\n  x = ((f32[]), f32[], u32[]) all-reduce-update(p)\n}",
        3,
        31,
        "cannot be wrapped",
    ),
    (
        "unknown_operand",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] add(p, q)\n}",
        3,
        25,
        "unknown instruction 'q'",
    ),
    (
        "use_before_def",
        "ENTRY e {\n  ROOT x = f32[] add(p, p)\n  p = f32[] parameter(0)\n}",
        2,
        22,
        "unknown instruction 'p'",
    ),
    (
        "duplicate_name",
        "ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}",
        3,
        3,
        "defined twice",
    ),
    (
        "duplicate_parameter_number",
        "ENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n}",
        3,
        3,
        "parameter(0) is defined twice",
    ),
    ("parameter_gap", "ENTRY e {\n  p = f32[] parameter(1)\n}", 1, 9, "has no parameter(0)"),
    (
        # Found by the eval fuzzer: the parameter list was sized by the
        # number before any check, and 888888888 ran out of memory.
        "parameter_number_past_the_text",
        "ENTRY e {\n  p = f32[] parameter(888888888)\n}",
        2,
        3,
        "too short to define 888888888 parameters",
    ),
    (
        "two_roots",
        "ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] negate(p)\n}",
        3,
        3,
        "two ROOT instructions",
    ),
    ("empty_computation", "ENTRY e {\n}", 1, 9, "has no instructions"),
    ("unclosed_computation", "ENTRY e {\n  p = f32[] parameter(0)\n", 1, 9, "never closed"),
    ("parameter_without_shape", "ENTRY e {\n  p = parameter(0)\n}", 2, 3, "needs a shape"),
    (
        "constant_too_many_elements",
        "ENTRY e {\n  c = f32[2] constant({1, 2, 3})\n}",
        2,
        23,
        "more than 2 elements",
    ),
    ("constant_too_few_elements", "ENTRY e {\n  c = f32[3] constant({1, 2})\n}", 2, 23, "needs 3"),
    (
        "constant_scalar_for_array",
        "ENTRY e {\n  c = f32[3,3] constant(1)\n}",
        2,
        25,
        "a scalar value for an array shape",
    ),
    (
        "constant_out_of_range_int",
        "ENTRY e {\n  c = s8[] constant(300)\n}",
        2,
        21,
        "out of range for s8",
    ),
    (
        "constant_out_of_range_f16",
        "ENTRY e {\n  c = f16[] constant(1e10)\n}",
        2,
        22,
        "out of range for f16",
    ),
    (
        "constant_bool_for_int",
        "ENTRY e {\n  c = s32[] constant(true)\n}",
        2,
        22,
        "expected an integer",
    ),
    (
        "constant_complex_needs_pair",
        "ENTRY e {\n  c = c64[] constant(1)\n}",
        2,
        22,
        "expected (real, imag)",
    ),
    (
        "unknown_attribute",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), colour=red\n}",
        3,
        29,
        "unknown attribute 'colour'",
    ),
    (
        "duplicate_attribute",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = f32[2] transpose(p), dimensions={0}, dimensions={0}\n}",
        3,
        49,
        "appears twice",
    ),
    (
        "bad_direction",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = pred[] compare(p, p), direction=SIDEWAYS\n}",
        3,
        44,
        "invalid direction 'SIDEWAYS'",
    ),
    (
        "bad_fusion_kind",
        "f {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] fusion(p), kind=kSideways, calls=f\n}",
        7,
        34,
        "invalid kind",
    ),
    (
        "bad_precision",
        "ENTRY e {\n  p = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={fast,default}\n}",
        3,
        103,
        "unknown precision 'fast'",
    ),
    (
        "bad_window_field",
        "ENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[4] reduce-window(p, z), window={size=1 sride=1}, to_apply=x\n}",
        4,
        55,
        "unknown window field 'sride'",
    ),
    (
        "bad_dim_labels",
        "ENTRY e {\n  a = f32[1,2,2,1] parameter(0)\n  ROOT c = f32[1,2,2,1] convolution(a, a), dim_labels=bb01_01io->b01f\n}",
        3,
        55,
        "needs exactly one 'b' and one 'f'",
    ),
    (
        "undefined_computation",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=nowhere\n}",
        3,
        36,
        "computation 'nowhere' is not defined",
    ),
    (
        "duplicate_computation",
        "a {\n  p = f32[] parameter(0)\n}\na {\n  q = f32[] parameter(0)\n}",
        4,
        1,
        "defined twice",
    ),
    (
        "two_entries",
        "ENTRY a {\n  p = f32[] parameter(0)\n}\nENTRY b {\n  q = f32[] parameter(0)\n}",
        4,
        1,
        "at most one ENTRY",
    ),
    (
        "signature_mismatch",
        "ENTRY e (p: f32[]) -> s32[] {\n  ROOT p = f32[] parameter(0)\n}",
        1,
        7,
        "declared to return s32[]",
    ),
    (
        "unknown_module_attribute",
        "HloModule m, colour=red\nENTRY e {\n  p = f32[] parameter(0)\n}",
        1,
        14,
        "unknown module attribute",
    ),
    (
        "declared_operand_shape_mismatch",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(s32[2] p)\n}",
        3,
        26,
        "declared as s32[2]",
    ),
    (
        "cannot_infer_shape",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  ROOT a = add(p, q)\n}",
        4,
        12,
        "cannot infer the shape of add",
    ),
    (
        "compact_gte_on_array",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p#0)\n}",
        3,
        28,
        "needs a tuple",
    ),
    (
        "self_call",
        "f {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=f\n}",
        3,
        36,
        "cannot call itself",
    ),
    ("empty_input", "", 1, 1, "expected a computation"),
    (
        "garbage_after_module",
        "ENTRY e {\n  p = f32[] parameter(0)\n}\n}",
        4,
        1,
        "expected a computation name",
    ),
    (
        "attribute_not_valid_on_opcode",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p), dimensions={0}\n}",
        3,
        30,
        "'dimensions' is not valid on negate",
    ),
    (
        "nan_payload_zero",
        "ENTRY e {\n  c = f32[] constant(nan(0x0))\n}",
        2,
        22,
        "payload must be non-zero",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [c[1:] for c in PARSE_ERRORS],
    ids=[c[0] for c in PARSE_ERRORS],
)
def test_parse_error_has_class_and_location(text, line, column, fragment):
    with pytest.raises(uir.ParseError) as info:
        uir.hlo.parse_module(text, file="bad.hlo")
    e = info.value
    assert fragment in str(e)
    assert (e.line, e.column) == (line, column), str(e)
    assert str(e).startswith(f"bad.hlo:{line}:{column}: error: ")
    # The message quotes the offending line with a caret under the column.
    lines = str(e).splitlines()
    if len(lines) >= 3:
        assert lines[2].index("^") - 2 == column - 1


# (id, text, instruction named in the error, message fragment)
VERIFY_ERRORS = [
    (
        "wrong_declared_shape",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[3] negate(p)\n}",
        "n",
        "differs from the inferred f32[2]",
    ),
    (
        "binary_type_mismatch",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  q = s32[2] parameter(1)\n  ROOT a = f32[2] add(p, q)\n}",
        "a",
        "same element type",
    ),
    (
        "gte_out_of_range",
        "ENTRY e {\n  p = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=2\n}",
        "g",
        "index 2 is out of range",
    ),
    (
        "gte_wrong_shape",
        "ENTRY e {\n  p = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=1\n}",
        "g",
        "differs from the inferred s32[]",
    ),
    (
        "reducer_wrong_signature",
        GOOD.replace(
            "ROOT s = f32[] add(a, b)", "ROOT s = f32[] parameter(2)\n  t = f32[] add(a, b)"
        ),
        "r",
        "should have the signature (f32[], f32[]) -> f32[]",
    ),
    (
        "reduce_dimension_out_of_range",
        GOOD.replace("dimensions={0}", "dimensions={3}"),
        "r",
        "dimension 3 is out of range",
    ),
    (
        "while_condition_not_pred",
        "c {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\nb {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT w = f32[] while(x), condition=c, body=b\n}",
        "w",
        "condition %c",
    ),
    (
        "fusion_without_kind",
        "f {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] fusion(p), calls=f\n}",
        "x",
        "fusion needs kind=",
    ),
    (
        "transpose_not_permutation",
        "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(p), dimensions={0,0}\n}",
        "t",
        "permutation",
    ),
    (
        "slice_out_of_bounds",
        "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[3:5]}\n}",
        "s",
        "slice range [3:5] is invalid",
    ),
    (
        "dot_contracting_mismatch",
        "ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,2] parameter(1)\n  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        "d",
        "contracting dimension sizes differ: 3 vs 4",
    ),
    (
        "select_pred_not_pred",
        "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT s = f32[2] select(p, p, p)\n}",
        "s",
        "the predicate must be pred",
    ),
    (
        "wrong_operand_count",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p, p)\n}",
        "n",
        "negate takes 1 operand(s), has 2",
    ),
    (
        "conditional_branch_count",
        "t {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  i = s32[] parameter(0)\n  p = f32[] parameter(1)\n  ROOT c = f32[] conditional(i, p, p), branch_computations={t}\n}",
        "c",
        "1 branches but 2 branch operands",
    ),
    (
        "async_wraps_copy",
        "w {\n  a = f32[] parameter(0)\n  ROOT c = f32[] copy(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[]) async-start(p), calls=w\n  ROOT d = f32[] async-done(s)\n}",
        "s",
        "cannot wrap copy",
    ),
    (
        "async_start_two_users",
        "w {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[]) async-start(p), calls=w\n  d = f32[] async-done(s)\n  d2 = f32[] async-done(s)\n  ROOT t = (f32[], f32[]) tuple(d, d2)\n}",
        "s",
        "exactly one user",
    ),
    (
        "async_done_wrong_shape",
        "w {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[]) async-start(p), calls=w\n  ROOT d = s32[] async-done(s)\n}",
        "d",
        "must be the wrapped op's result",
    ),
    (
        "async_done_of_non_async",
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT d = f32[] async-done(p)\n}",
        "d",
        "is not an async-start or async-update",
    ),
    (
        "async_start_bad_shape",
        "w {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  s = (f32[], f32[]) async-start(p), calls=w\n  ROOT d = f32[] async-done(s)\n}",
        "s",
        "must be ((operands...), result, state...)",
    ),
    (
        "async_update_wrong_shape",
        "w {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[], s32[]) async-start(p), calls=w\n  u = ((f32[]), f32[]) async-update(s)\n  ROOT d = f32[] async-done(u)\n}",
        "u",
        "differs from the inferred ((f32[]), f32[], s32[])",
    ),
    (
        "entry_layout_mismatch",
        "HloModule m, entry_computation_layout={(s32[])->f32[]}\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}",
        "p",
        "entry_computation_layout gives parameter 0",
    ),
]


@pytest.mark.parametrize(
    ("text", "instruction", "fragment"),
    [c[1:] for c in VERIFY_ERRORS],
    ids=[c[0] for c in VERIFY_ERRORS],
)
def test_verify_error_names_the_instruction(text, instruction, fragment):
    module = uir.hlo.parse_module(text)
    with pytest.raises(uir.VerifyError) as info:
        module.verify()
    assert info.value.instruction == instruction, str(info.value)
    assert f"%{instruction}:" in str(info.value)
    assert fragment in str(info.value)


def test_there_are_at_least_40_distinct_bad_inputs():
    texts = {c[1] for c in PARSE_ERRORS} | {c[1] for c in VERIFY_ERRORS}
    assert len(texts) >= 40


def test_control_dependency_cycle_is_rejected():
    text = (
        "ENTRY e {\n  p = f32[] parameter(0)\n"
        "  a = f32[] negate(p), control-predecessors={b}\n"
        "  ROOT b = f32[] negate(p)\n}"
    )
    # b is defined after a, so naming it as a's predecessor is a parse error.
    with pytest.raises(uir.ParseError, match="unknown control predecessor 'b'"):
        uir.hlo.parse_module(text)


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        uir.hlo.parse_module(b"ENTRY e { p = f32[] parameter(0) }")


def test_load_names_the_file_in_errors(tmp_path):
    path = tmp_path / "broken.hlo"
    path.write_text("ENTRY e {\n  p = f32[ parameter(0)\n}\n")
    with pytest.raises(uir.ParseError) as info:
        uir.hlo.load(path)
    assert str(info.value).startswith(f"{path}:2:")
