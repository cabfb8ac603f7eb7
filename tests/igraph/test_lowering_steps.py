"""Lowering a fusion to iGraphs as a named sequence of steps
(``uir.igraph.lowering_steps``): tile programs, their collapsed form, the
tiled iGraphs, then each plan step. The golden cases
(golden_plan/lowering_steps.hlo) check one step's text each, the step a
`// STEP:` line names, for the first kernel node (or the instruction a
`// NAME:` line names)."""

from __future__ import annotations

import pathlib
import re

import pytest
from golden_util import cases, filecheck_text

import uir
import uir.igraph as ig

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden_plan" / "lowering_steps.hlo"
CASES = cases(GOLDEN)
STEPS = ["tile-programs", "collapse", "tile"] + [f"plan.{n}" for n, _ in ig.plan_steps()]


def _optimized(text: str):
    return uir.passes.default_pipeline().run(uir.hlo.parse_module(text))


def _first_kernel(module) -> str:
    kg = ig.lower(module, "reference-cpu")
    return next(n.name for n in kg.nodes if n.kind == "kernel")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_lowering_steps_golden(case, tmp_path):
    step = re.search(r"^// STEP:\s*(\S+)", case.text, re.MULTILINE).group(1)
    named = re.search(r"^// NAME:\s*(\S+)", case.text, re.MULTILINE)
    module = _optimized(case.text)
    name = named.group(1) if named else _first_kernel(module)
    stages = dict(ig.lowering_steps(module, name, "reference-cpu"))
    assert step in stages, f"{case.id}: no step {step} in {list(stages)}"
    result = filecheck_text(case.text, stages[step], tmp_path / f"steps_{case.index}.hlo")
    assert result.returncode == 0, (
        f"{case.id}: {case.title}\n{result.stderr}\n--- output ---\n{stages[step]}"
    )


def test_at_least_six_golden_cases():
    assert len(CASES) >= 6


def test_the_steps_are_the_lowering_itself():
    """The steps run in order, and the last one's text is the Kernel Graph's
    iGraphs: lowering_steps shows the lowering, not a copy of it."""
    module = _optimized(
        """HloModule m
ENTRY main {
  a = f32[256,512] parameter(0)
  b = f32[512] parameter(1)
  bb = f32[256,512] broadcast(b), dimensions={1}
  ROOT t = f32[256,512] tanh(add(a, bb))
}
"""
    )
    kg = ig.lower(module, "reference-cpu")
    [node] = [n for n in kg.nodes if n.kind == "kernel"]
    stages = ig.lowering_steps(module, node.name, "reference-cpu")
    assert [s for s, _ in stages] == STEPS
    assert stages[-1][1] == "".join(g.to_text() for g in node.igraphs)
    # Each plan step's text parses back to what plan() gives through that step.
    texts = dict(stages)
    unplanned = ig.parse(texts["tile"])
    for name, _ in ig.plan_steps():
        assert ig.parse(texts[f"plan.{name}"]) == ig.plan(unplanned, name)
    assert unplanned.plan["form"] == "none"
    assert ig.plan(unplanned) == node.igraph


def test_a_library_node_shows_its_epilogues_lowering():
    """A dot with an elementwise epilogue lowers as the Kernel Graph lowers
    it: the epilogue's steps over the dot's result, ending in the node's
    iGraphs."""
    module = _optimized(
        """HloModule m
ENTRY main {
  a = f32[64,32] parameter(0)
  b = f32[32,48] parameter(1)
  d = f32[64,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[64,48] tanh(d)
}
"""
    )
    kg = ig.lower(module, "reference-cpu")
    [node] = [n for n in kg.nodes if n.igraphs]
    assert node.kind == "library"
    stages = ig.lowering_steps(module, node.name, "reference-cpu")
    assert [s for s, _ in stages] == STEPS
    assert stages[-1][1] == "".join(g.to_text() for g in node.igraphs)


def test_unknown_instruction_is_an_error():
    module = _optimized("HloModule m\nENTRY main {\n  ROOT a = f32[4] parameter(0)\n}\n")
    with pytest.raises(uir.VerifyError, match="no instruction %nope"):
        ig.lowering_steps(module, "nope")
