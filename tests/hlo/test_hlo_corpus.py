"""XLA's own modules (../shared/corpus/xla-hlo): every one parses, prints,
reaches a printing fixpoint, parses back structurally equal, and verifies
unless XLA itself would reject it."""

from __future__ import annotations

import re

import pytest
from corpus import CORPUS, XLA_REJECTS, needs_corpus

import uir

MODULES = sorted(CORPUS.glob("*.hlo"))


@needs_corpus
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


@needs_corpus
def test_every_named_exception_is_in_the_corpus():
    names = {p.name for p in MODULES}
    assert set(XLA_REJECTS) <= names
