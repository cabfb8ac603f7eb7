"""XLA's own modules (../shared/corpus/xla-hlo): every one parses, prints,
reaches a printing fixpoint, parses back structurally equal, and verifies
unless XLA itself would reject it."""

from __future__ import annotations

import re

import pytest
from corpus import CORPUS

import uir

MODULES = sorted(CORPUS.glob("*.hlo"))

# Modules that XLA's own verifier would reject; they come from tests of tools
# that never verify (MLIR import, indexing printers, FileCheck generators).
# Each entry is the reason, and a part of the message our verifier must give.
XLA_REJECTS = {
    "xla_hlo_tools_tests__generate_hlo_test_checks_test_input__4.hlo": (
        "call passes f32[4] operands to a computation whose parameters are f32[]",
        "should have the signature (f32[4], f32[4]) -> f32[]",
    ),
    "xla_hlo_transforms_tests__operand_upcaster__0.hlo": (
        "dot of two rank-1 operands without contracting dims is an outer product, "
        "s32[8,8], but the module declares s32[8]",
        "differs from the inferred s32[8,8]",
    ),
    "xla_hlo_translate_hlo_to_mhlo_tests__import__0.hlo": (
        "convolution.4 has window size 3x3 but its kernel's spatial dimensions are 2x2",
        "window size 3 differs from kernel spatial size 2",
    ),
    "xla_tools__print_indexing_test__0.hlo": (
        "fusion passes s32[1024] to a fused parameter declared s32[]",
        "calls %fused_computation",
    ),
}


def test_corpus_is_present():
    assert len(MODULES) >= 152, (
        f"expected the 152 corpus modules in {CORPUS} (set UIR_CORPUS to elsewhere)"
    )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_corpus_module_round_trips(path):
    module = uir.hlo.parse_module(path.read_text(), file=path.name)
    text = module.to_text()
    again = uir.hlo.parse_module(text, file="printed")
    assert again.to_text() == text, "printing did not reach a fixpoint"
    assert again == module, "parse(print(m)) is not structurally equal to m"
    assert module.clone() == module


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_corpus_module_verifies_unless_xla_rejects_it(path):
    module = uir.hlo.parse_module(path.read_text(), file=path.name)
    if path.name in XLA_REJECTS:
        _, message = XLA_REJECTS[path.name]
        with pytest.raises(uir.VerifyError, match=re.escape(message)):
            module.verify()
    else:
        module.verify()


def test_every_named_exception_is_in_the_corpus():
    names = {p.name for p in MODULES}
    assert set(XLA_REJECTS) <= names
