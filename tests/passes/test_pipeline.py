"""The pipeline as a user drives it: names, traces, per-pass checking against
the evaluator (a broken pass is named), dumps with XLA's file names, and the
default pipeline over every `core` corpus module."""

from __future__ import annotations

import re

import numpy as np
import pytest
from corpus import CORPUS, TOO_HEAVY, XLA_REJECTS, manifest_rows

import uir

SOFTMAXISH = """HloModule smx
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
f {
  a = f32[4,8] parameter(0)
  ROOT e = f32[4,8] exponential(a)
}
ENTRY main {
  p = f32[4,8] parameter(0)
  one = f32[] constant(1)
  ob = f32[4,8] broadcast(one), dimensions={}
  q = f32[4,8] multiply(p, ob)
  e = f32[4,8] call(q), to_apply=f
  e2 = f32[4,8] call(q), to_apply=f
  z = f32[] constant(0)
  s = f32[4] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[4,8] broadcast(s), dimensions={0}
  d = f32[4,8] divide(e2, sb)
  dead = f32[4,8] log(d)
  ROOT r = f32[4,8] add(d, d)
}
"""


def test_default_pipeline_names_and_unknown_pass():
    names = uir.passes.default_pipeline().names
    assert names[0] == "call-inliner" and {"algsimp", "cse", "dce"} <= set(names)
    with pytest.raises(ValueError, match=r"unknown pass 'nope'; available: .*algsimp"):
        uir.passes.run(uir.hlo.parse_module(SOFTMAXISH), ["nope"])


def test_pipeline_runs_on_a_copy_and_simplifies():
    m = uir.hlo.parse_module(SOFTMAXISH)
    before = m.to_text()
    out = uir.passes.default_pipeline().run(m, check=True)
    assert m.to_text() == before
    text = out.to_text()
    assert "call(" not in text and "log(" not in text and "multiply(" not in text
    assert text.count("exponential(") == 1
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_allclose(uir.evaluate(out, x), uir.evaluate(m, x), rtol=1e-6)


def test_trace_records_each_pass():
    m = uir.hlo.parse_module(SOFTMAXISH)
    out, records = uir.passes.default_pipeline().run(m, trace=True)
    assert [r.name for r in records][:5] == [
        "call-inliner",
        "library-defuser",
        "map-inliner",
        "scatter-expander",
        "batchnorm_expander",
    ]
    first = records[0]
    assert first.changed and first.seconds >= 0 and "call(" in first.text_before
    assert "call(" not in first.text_after
    assert records[-1].instruction_count == sum(len(c.instructions) for c in out.computations)
    unchanged = [r for r in records if not r.changed]
    assert all(r.text_before == r.text_after for r in unchanged)
    assert records[-1].text_after == out.to_text()


def _broken(module) -> bool:
    """Turns the first add of the entry into a subtract."""
    entry = module.entry
    for inst in entry.instructions:
        if inst.opcode == "add":
            x, y = inst.operands
            entry.replace_instruction(inst, entry.builder().op("subtract", x, y))
            return True
    return False


def test_check_names_a_pass_that_changes_results():
    uir.passes.register("broken-for-test", _broken)
    try:
        m = uir.hlo.parse_module(SOFTMAXISH)
        with pytest.raises(
            uir.passes.PassCheckError, match=r"pass 'broken-for-test'.*element"
        ) as e:
            uir.passes.run(m, ["dce", "broken-for-test", "cse"], check=True)
        assert e.value.pass_name == "broken-for-test"
        # Without check the pipeline has no way to know.
        uir.passes.run(m, ["broken-for-test"])
    finally:
        uir.passes.unregister("broken-for-test")


def test_a_pass_that_lies_about_changing_is_an_internal_error():
    def liar(module) -> bool:
        _broken(module)
        return False

    uir.passes.register("liar-for-test", liar)
    try:
        with pytest.raises(uir.InternalError, match="reported no change but changed"):
            uir.passes.run(uir.hlo.parse_module(SOFTMAXISH), ["liar-for-test"])
    finally:
        uir.passes.unregister("liar-for-test")


def test_check_passes_flag_turns_checking_on(monkeypatch):
    uir.passes.register("broken-for-flag", _broken)
    try:
        monkeypatch.setenv("UIR_FLAGS", "--check_passes")
        with pytest.raises(uir.passes.PassCheckError, match="broken-for-flag"):
            uir.passes.run(uir.hlo.parse_module(SOFTMAXISH), ["broken-for-flag"])
    finally:
        uir.passes.unregister("broken-for-flag")


def test_dumps_have_xla_names(tmp_path, monkeypatch):
    monkeypatch.setenv("UIR_FLAGS", f"--dump_to={tmp_path} --dump_pass_re=inliner|cse|dce")
    uir.passes.default_pipeline().run(uir.hlo.parse_module(SOFTMAXISH))
    names = sorted(p.name for p in tmp_path.iterdir())
    prefix = re.escape(names[0].split(".")[0])
    assert any(re.fullmatch(prefix + r"\.smx\.before_optimizations\.txt", n) for n in names)
    assert any(re.fullmatch(prefix + r"\.smx\.after_optimizations\.txt", n) for n in names)
    per_pass = [
        n for n in names if re.fullmatch(prefix + r"\.smx\.\d{4}\.\w+\.after_[\w-]+\.txt", n)
    ]
    assert per_pass, names
    assert any("after_call-inliner" in n for n in per_pass)
    assert not any("after_algsimp" in n for n in per_pass)  # not in the regex
    for n in per_pass:  # each one parses back
        uir.hlo.parse_module((tmp_path / n).read_text())


def test_dump_options_from_python(tmp_path):
    uir.passes.run(uir.hlo.parse_module(SOFTMAXISH), ["dce"], dump_to=tmp_path, dump_pass_re=".*")
    assert any(p.name.endswith(".after_dce.txt") for p in tmp_path.iterdir())


CORE = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")
# The evaluator takes minutes on these (see corpus.TOO_HEAVY); the others
# are XLA_REJECTS, which do not verify.
SKIPPED = {**TOO_HEAVY, **{k: "XLA itself rejects it" for k in XLA_REJECTS}}


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CORE if n not in SKIPPED])
def test_default_pipeline_keeps_results_on_core_corpus(name):
    module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
    out = uir.passes.default_pipeline().run(module, check=True)
    out.verify()
    again = uir.hlo.parse_module(out.to_text())
    assert again.to_text() == out.to_text()


@pytest.mark.parametrize("name", sorted(n for n in CORE if n in TOO_HEAVY))
def test_default_pipeline_verifies_on_core_modules_too_heavy_to_evaluate(name):
    # The evaluator cannot check these in reasonable time; the pipeline still
    # runs on them and leaves a module that verifies and round-trips.
    module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
    out = uir.passes.default_pipeline().run(module)
    out.verify()
    assert uir.hlo.parse_module(out.to_text()).to_text() == out.to_text()


def test_a_module_that_does_not_verify_is_the_callers_error_not_a_pass():
    # Parsing does not verify; the pipeline does, before its first pass, so
    # the message names the instruction and blames no pass.
    text = "HloModule m\nENTRY e {\n  i = u32[] parameter(0)\n  ROOT a = u32[] abs(i)\n}\n"
    module = uir.hlo.parse_module(text)
    for run in (
        lambda: uir.passes.default_pipeline().run(module),
        lambda: uir.compile(module, backend="cpu"),
        lambda: uir.compile(module, backend="eval"),
    ):
        with pytest.raises(uir.VerifyError, match="at %a: abs") as info:
            run()
        assert "after pass" not in str(info.value)
