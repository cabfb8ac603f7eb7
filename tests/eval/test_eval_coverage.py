"""The evaluator's reach: every opcode uir knows is exercised by some
evaluator test, or is listed here with the reason it is not evaluated. A
module using a listed op fails with UnimplementedError naming it."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import uir

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPCODES = re.findall(r'UIR_OPCODE\(k\w+, "([^"]+)"', (ROOT / "csrc/hlo/opcode.def").read_text())

NOT_EVALUATED = {
    "infeed": "host transfer queues: no host on the other side",
    "outfeed": "host transfer queues: no host on the other side",
    "send": "point-to-point channels between devices",
    "send-done": "point-to-point channels between devices",
    "recv": "point-to-point channels between devices",
    "recv-done": "point-to-point channels between devices",
    "ragged-all-to-all": "not yet",
    "ragged-dot": "not yet",
    "scaled-dot": "not yet",
}

EXAMPLES = {
    "ragged-dot": "ENTRY e {\n  a = f32[4,2] parameter(0)\n  b = f32[2,2,3] parameter(1)\n  g = s64[2] parameter(2)\n"
    "  ROOT r = f32[4,3] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
    "lhs_ragged_dims={0}, rhs_group_dims={0}\n}",
}


def evaluator_test_texts() -> str:
    return "\n".join(
        p.read_text()
        for p in (ROOT / "tests").glob("**/test_*.py")
        if p.name.startswith(("test_eval", "test_custom_call"))
    )


def test_every_opcode_is_evaluated_by_a_test_or_listed_with_a_reason():
    texts = evaluator_test_texts()
    untested = [
        op
        for op in OPCODES
        if op not in NOT_EVALUATED and not re.search(r'["\s(]' + re.escape(op) + r'[("]', texts)
    ]
    assert untested == []
    assert set(NOT_EVALUATED) <= set(OPCODES)


@pytest.mark.parametrize("op", sorted(EXAMPLES))
def test_an_op_not_evaluated_is_named_in_the_error(op):
    module = uir.hlo.parse_module(EXAMPLES[op])
    args = [
        np.zeros(p.shape.dims, uir._src.core.dtypes.numpy_dtype(p.shape.element_type))
        for p in module.entry.parameters
    ]
    with pytest.raises(uir.UnimplementedError, match=f"does not support {op} yet"):
        uir.evaluate(module, *args)
