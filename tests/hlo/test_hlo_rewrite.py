"""The IR under rewriting: edits through the Python surface leave modules that
verify, print, clone, round-trip and evaluate to the same values, whatever
order instructions were added in; ids and names stay unique; the fingerprint
sees structure and ignores names."""

from __future__ import annotations

import numpy as np
import pytest

import uir

CHAIN = """HloModule chain

ENTRY main {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  m = f32[4] multiply(p, b)
  ROOT n = f32[4] negate(m)
}
"""


def module(text: str = CHAIN) -> uir.hlo.HloModule:
    return uir.hlo.parse_module(text)


def test_producer_added_after_its_user_still_verifies_prints_and_round_trips():
    m = module()
    entry = m.entry
    b = entry.builder()
    p = entry.parameters[0]
    # A new producer is appended after the instructions that will use it.
    e = b.op("exponential", p)
    entry.find_instruction("m").replace_all_uses_with(e)
    m.verify()
    text = m.to_text()
    # Printed in graph order: the new producer before its user.
    assert text.index("exponential(") < text.index("negate(")
    again = uir.hlo.parse_module(text)
    assert again == m.clone()
    assert again.to_text() == text
    x = np.array([0.0, 1.0, -1.0, 2.0], np.float32)
    np.testing.assert_allclose(uir.evaluate(m, x), -np.exp(x), rtol=1e-6)


def test_builder_on_an_existing_computation_makes_module_unique_names():
    m = module()
    b = m.entry.builder()
    p = m.entry.parameters[0]
    n1 = b.op("negate", p)
    n2 = b.op("negate", p)
    names = {i.name for c in m.computations for i in c.instructions}
    assert (
        n1.name != n2.name
        and n1.name != "n"
        and len(names) == len([i for c in m.computations for i in c.instructions])
    )
    with pytest.raises(ValueError, match="nothing to build"):
        b.build()


def test_unique_ids_are_distinct_across_the_module():
    m = uir.hlo.parse_module(CORPUS_MODULE_WITH_CALLEES)
    ids = [i.unique_id for c in m.computations for i in c.instructions]
    assert len(ids) == len(set(ids)) and min(ids) >= 0


CORPUS_MODULE_WITH_CALLEES = """HloModule callees

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

unused {
  ROOT k = f32[] constant(1)
}

ENTRY main {
  p = f32[4,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
}
"""


def test_find_instruction_by_name():
    m = module()
    assert m.entry.find_instruction("b").opcode == "broadcast"
    assert m.entry.find_instruction("nope") is None


def test_remove_instruction_refuses_users_root_and_parameters():
    m = module()
    entry = m.entry
    with pytest.raises(ValueError, match="has users"):
        entry.remove_instruction(entry.find_instruction("m"))
    with pytest.raises(ValueError, match="is the root"):
        entry.remove_instruction(entry.find_instruction("n"))
    p = entry.parameters[0]
    with pytest.raises(ValueError, match=r"has users|parameter"):
        entry.remove_instruction(p)


def test_remove_instruction_and_unused_operands_removes_the_dead_chain():
    m = module()
    entry = m.entry
    p = entry.parameters[0]
    new_root = entry.builder().op("abs", p)
    old_root = entry.root
    # Make the new instruction the root by replacing the old root's uses.
    old_root.replace_all_uses_with(new_root)
    assert entry.root == new_root
    entry.remove_instruction(old_root, unused_operands=True)
    assert sorted(i.opcode for i in entry.instructions) == ["abs", "parameter"]
    m.verify()
    x = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    np.testing.assert_array_equal(uir.evaluate(m, x), np.abs(x))


def test_replace_instruction_checks_shapes():
    m = module()
    entry = m.entry
    with pytest.raises(ValueError, match="shapes differ"):
        entry.replace_instruction(entry.find_instruction("m"), entry.find_instruction("c"))


def test_replace_instruction_removes_the_old_one_and_its_unused_operands():
    m = module()
    entry = m.entry
    p = entry.parameters[0]
    add = entry.builder().op("add", p, p)
    entry.replace_instruction(entry.find_instruction("m"), add)
    assert {i.opcode for i in entry.instructions} == {"parameter", "add", "negate"}
    m.verify()
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(uir.evaluate(m, x), -(x + x))


def test_remove_unreachable_computations():
    m = uir.hlo.parse_module(CORPUS_MODULE_WITH_CALLEES)
    assert m.remove_unreachable_computations() == 1
    assert [c.name for c in m.computations] == ["add", "main"]
    m.verify()


def test_fingerprint_ignores_names_and_metadata_but_not_structure():
    renamed = (
        CHAIN.replace("m =", "mul =")
        .replace("(m)", "(mul)")
        .replace("negate(mul)", 'negate(mul), metadata={op_name="x"}')
    )
    assert module().fingerprint() == module(renamed).fingerprint()
    changed = CHAIN.replace("multiply(p, b)", "add(p, b)")
    assert module().fingerprint() != module(changed).fingerprint()
    layout = CHAIN.replace("ROOT n = f32[4]", "ROOT n = f32[4]{0}")
    assert module().fingerprint() == module(layout).fingerprint()


def test_identical_compares_structure_not_names():
    m = module(
        """HloModule twins
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] exponential(p), metadata={op_name="other"}
  c = f32[4] log(p)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, b, c)
}
"""
    )
    find = m.entry.find_instruction
    assert find("a").identical(find("b"))
    assert not find("a").identical(find("c"))


SCHEDULED = """HloModule sched, is_scheduled=true

ENTRY main {
  p = f32[4] parameter(0)
  b = f32[4] negate(p)
  a = f32[4] exponential(p)
  ROOT t = (f32[4], f32[4]) tuple(a, b)
}
"""


def test_schedule_order_is_kept_apart_from_the_graph():
    m = module(SCHEDULED)
    text = m.to_text()
    # The schedule runs negate before exponential; post order would not.
    assert text.index("negate(") < text.index("exponential(")
    assert uir.hlo.parse_module(text).to_text() == text


def test_stale_schedule_is_reported_by_the_verifier():
    m = module(SCHEDULED)
    m.entry.builder().op("abs", m.entry.parameters[0])
    with pytest.raises(uir.VerifyError, match="not in the schedule"):
        m.verify()
    m.update_schedule()
    m.verify()
