"""Generic async operations: async-start/update/done wrapping a computation,
and the op-start/op-update/op-done sugar for the same representation."""

from __future__ import annotations

import pytest

import uir

SUGAR = """HloModule m

ENTRY e {
  p0 = f32[64] parameter(0)
  start = ((f32[64]), f32[32], s32[]) custom-call-start(p0), custom_call_target="foo"
  update0 = ((f32[64]), f32[32], s32[]) custom-call-update(start)
  update1 = ((f32[64]), f32[32], s32[]) custom-call-update(update0)
  ROOT done = f32[32] custom-call-done(update1)
}
"""

LONG = """HloModule m

start.async_wrapped {
  param_0 = f32[64] parameter(0)
  ROOT custom-call = f32[32] custom-call(param_0), custom_call_target="foo"
}

ENTRY e {
  p0 = f32[64] parameter(0)
  start = ((f32[64]), f32[32], s32[]) async-start(p0), calls=start.async_wrapped
  update0 = ((f32[64]), f32[32], s32[]) async-update(start)
  update1 = ((f32[64]), f32[32], s32[]) async-update(update0)
  ROOT done = f32[32] async-done(update1)
}
"""


def test_sugar_and_long_form_are_the_same_module():
    sugar = uir.hlo.parse_module(SUGAR)
    long = uir.hlo.parse_module(LONG)
    assert sugar == long
    sugar.verify()


def test_sugar_parses_to_async_start_wrapping_the_op():
    m = uir.hlo.parse_module(SUGAR)
    ops = [i.opcode for i in m.entry.instructions]
    assert ops == ["parameter", "async-start", "async-update", "async-update", "async-done"]
    start = m.entry.instructions[1]
    (wrapped,) = start.called_computations
    assert wrapped.root.opcode == "custom-call"
    assert wrapped.root.attributes["custom_call_target"] == "foo"
    assert [p.shape for p in wrapped.parameters] == [uir.hlo.Shape("f32[64]{0}")]


def test_printing_uses_the_sugar_by_default_and_long_form_on_request():
    m = uir.hlo.parse_module(LONG)
    text = m.to_text()
    assert 'custom-call-start(%p0), custom_call_target="foo"' in text
    assert "custom-call-update(%start)" in text
    assert "custom-call-done(%update1)" in text
    assert "async_wrapped" not in text
    long = m.to_text(async_sugar=False)
    assert "async-start(%p0), calls=%start.async_wrapped" in long
    assert "%start.async_wrapped (param_0: f32[64]{0}) -> f32[32]{0} {" in long
    assert uir.hlo.parse_module(long) == m
    assert uir.hlo.parse_module(text) == m


def test_a_hand_named_wrapped_computation_prints_in_long_form():
    text = LONG.replace("start.async_wrapped", "my_async_op")
    m = uir.hlo.parse_module(text)
    printed = m.to_text()
    assert "calls=%my_async_op" in printed
    assert uir.hlo.parse_module(printed) == m


def test_zero_updates_and_several_operands():
    text = """ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = ((f32[4], f32[4]), f32[4]) add-start(a, b)
  ROOT d = f32[4] add-done(s)
}"""
    m = uir.hlo.parse_module(text)
    m.verify()
    assert m.entry.root.opcode == "async-done"
    assert "add-start(%a, %b)" in m.to_text()


@pytest.mark.parametrize(
    "op", ["copy", "all-reduce", "all-gather", "collective-permute", "send", "recv"]
)
def test_ops_with_their_own_start_done_cannot_use_the_sugar(op):
    with pytest.raises(uir.ParseError, match="cannot be wrapped"):
        uir.hlo.parse_module(
            f"ENTRY e {{\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[]) {op}-update(p)\n}}"
        )


def test_first_class_copy_start_stays_a_real_opcode():
    text = """ENTRY e {
  p = f32[128,32] parameter(0)
  s = (f32[128,32], f32[128,32], u32[]) copy-start(p)
  ROOT d = f32[128,32] copy-done(s)
}"""
    m = uir.hlo.parse_module(text)
    assert [i.opcode for i in m.entry.instructions] == ["parameter", "copy-start", "copy-done"]


def test_update_attributes_must_match_the_start():
    text = SUGAR.replace(
        "custom-call-update(start)", 'custom-call-update(start), custom_call_target="bar"'
    )
    with pytest.raises(uir.ParseError, match="differs from the one on its async start"):
        uir.hlo.parse_module(text)


def test_done_must_follow_an_async_op_of_the_same_kind():
    text = """ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4]) negate-start(p)
  ROOT d = f32[4] abs-done(s)
}"""
    with pytest.raises(uir.ParseError, match="is not an async abs operation"):
        uir.hlo.parse_module(text)
