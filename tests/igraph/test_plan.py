"""The plan steps (csrc/igraph/kernel_plan.h): every decision about how a
kernel runs stands in its iGraph text and parses back; the verifier
rejects plans the emitter could not carry out or that would change the
results; the emitter follows the plan it is given.

Golden cases (golden_plan/steps.hlo) lower an HLO module for the reference CPU
model, clear the plan of each iGraph and run the plan steps again, through
the step a `// PLAN-UNTIL: <step>` line names (all of them without one), so
the goldens show each step's intermediate form."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from fusion_strategies import fusion_modules
from golden_util import cases, filecheck_text
from hypothesis import HealthCheck, given, settings

import uir
import uir.igraph as ig
from uir._src.core.evaluate import random_arguments

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden_plan" / "steps.hlo"
CASES = cases(GOLDEN)
STEPS = [name for name, _ in ig.plan_steps()]


def _kernel_igraphs(text: str):
    module = uir.hlo.parse_module(text)
    kg = ig.lower(uir.passes.default_pipeline().run(module), "reference-cpu")
    return [g for n in kg.nodes for g in n.igraphs]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan_golden(case, tmp_path):
    until = re.search(r"^// PLAN-UNTIL:\s*(\S+)", case.text, re.MULTILINE)
    graphs = _kernel_igraphs(case.text)
    assert graphs, "the case lowers to no iGraph"
    texts = []
    for g in graphs:
        assert g.plan["form"] != "none", "lowering plans every iGraph"
        replanned = ig.plan(g.unplanned())
        assert replanned == g, "the plan steps give the plan lowering made"
        partial = ig.plan(g.unplanned(), until.group(1) if until else None)
        text = partial.to_text()
        assert ig.parse(text) == partial, "a plan prints and parses back"
        texts.append(text)
    out = "\n".join(texts)
    result = filecheck_text(case.text, out, tmp_path / f"plan_{case.index}.hlo")
    assert result.returncode == 0, (
        f"{case.id}: {case.title}\n{result.stderr}\n--- output ---\n{out}"
    )


def test_at_least_six_golden_cases():
    assert len(CASES) >= 6
    named = {m for c in CASES for m in re.findall(r"^/// (\w+):", c.text, re.MULTILINE)}
    assert named >= set(STEPS), "every plan step has a golden case"


def test_steps_in_order():
    assert STEPS == ["rows", "coalesce", "prefetch", "interleave", "transpose"]
    assert all(doc for _, doc in ig.plan_steps())


def test_a_gpu_igraph_keeps_the_loops_form_with_nothing_planned():
    module = uir.passes.default_pipeline().run(uir.hlo.parse_module(_ELEMENTWISE))
    [g] = [g for n in ig.lower(module, "gpu").nodes for g in n.igraphs]
    assert g.plan == {
        "form": "loops",
        "why": "the plan steps are the CPU backend's: none for a gpu yet",
        "rows": 0,
        "loops": [],
        "interleave": [],
        "row_scratch": 0,
    }
    assert "{" not in g.to_text().split("body:")[1]
    assert ig.parse(g.to_text()) == g


def test_unknown_step_and_planning_twice_are_errors():
    g = _kernel_igraphs(_ELEMENTWISE)[0]
    with pytest.raises(uir.VerifyError, match=r"no plan step 'tile'.*rows, coalesce"):
        ig.plan(g.unplanned(), "tile")
    with pytest.raises(uir.VerifyError, match="planned already"):
        ig.plan(g)


_ELEMENTWISE = """HloModule m
ENTRY main {
  a = f32[4096] parameter(0)
  ROOT t = f32[4096] tanh(a)
}
"""

# A small row-form kernel written by hand: x's rows are summed, the sum
# broadcast back and subtracted (x - sum(x)). Loop 0 moves x in and sums
# it, loop 1 reads the sum through its row buffer and x again from dram.
ROWS = """igraph centre {
  hardware cpu (numGroup=1, numUnit=1) reg=2048 sram=1048576 vector=64
  parallel (numParallel=4, numLoop=1) [r=4] []
  plan rows (rows=2, loops=[64, 64], scratch=64)
  x = iPointer(0, dram, fp32, 512)
  y = iPointer(1, dram, fp32, 512)
  t = iPointer(2, sram, fp32, 128)
  s = iPointer(3, sram, fp32, 2)
  b = iPointer(4, sram, fp32, 128)
  d = iPointer(5, sram, fp32, 128)
  xs = iSlice(x, 128*r, (2, 64), (64, 1))
  ys = iSlice(y, 128*r, (2, 64), (64, 1))
  ts = iSlice(t, 0, (2, 64), (64, 1))
  ss = iSlice(s, 0, (2, 1), (1, 1))
  bs = iSlice(b, 0, (2, 64), (64, 1))
  ds = iSlice(d, 0, (2, 64), (64, 1))
body:
  move.dram.sram.fp32 ts, xs {loop=0, reread}
  reduce.add.row.unit.fp32 ss, ts {loop=0, buffer=0}
  broadcast.row.unit.fp32 bs, ss {loop=1}
  binary.sub.fp32 ds, ts, bs {loop=1}
  move.sram.dram.fp32 ys, ds {loop=1}
}
"""


def _x_minus_row_sum(x):
    return (x - x.sum(axis=1, keepdims=True)).astype(np.float32)


def test_hand_written_plan_parses_verifies_and_matches_the_plan_steps():
    g = ig.parse(ROWS)
    g.verify()
    assert g.plan == {
        "form": "rows",
        "why": "",
        "rows": 2,
        "loops": [64, 64],
        "interleave": [],
        "row_scratch": 64,
    }
    assert ig.parse(g.to_text()) == g
    assert ig.plan(g.unplanned(), "rows") == g
    # The interpreter ignores the plan: planned or not, the same results.
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    for graph in (g, g.unplanned()):
        out = ig.interpret(graph, {0: x.copy(), 1: np.zeros_like(x)})
        np.testing.assert_allclose(out[1], _x_minus_row_sum(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # The sum crosses loops: without a buffer its reader has nothing.
        ("{loop=0, buffer=0}", "{loop=0}", "no row buffer and is not reread"),
        # A reduction is complete only after its loop.
        ("bs, ss {loop=1}", "bs, ss {loop=0}", "own loop"),
        ("ds, ts, bs {loop=1}", "ds, ts, bs {loop=0}", "loop=0 after loop 1"),
        ("ys, ds {loop=1}", "ys, ds {loop=2}", "the plan has 2 loops"),
        ("ts, xs {loop=0, reread}", "ts, xs {reread}", "runs in no column loop"),
        ("scratch=64", "scratch=32", "row buffer at 0 is not 64-byte aligned inside the 32"),
        ("loops=[64, 64]", "loops=[64, 32]", "64 wide, loop 1 32"),
        ("rows=2,", "rows=3,", "rows=3 but the slices have 2"),
        ("(rows=2, loops=[64, 64], scratch=64)", "(rows=1, loops=[64], scratch=64)", "rows=1"),
        # A reread belongs to a move from dram.
        ("ss, ts {loop=0, buffer=0}", "ss, ts {loop=0, reread}", "reread, but"),
        ("bs, ss {loop=1}", "bs, ss {loop=1, order=cols}", "belong to the loops form"),
        ("bs, ss {loop=1}", "bs, ss {loop=1, prefetch=[ts+64B]}", "not a dram slice"),
        ("loops=[64, 64],", "loops=[64, 64], interleave=[2],", "1 counts for 2 loops"),
        ("plan rows (rows=2, loops=[64, 64], scratch=64)", 'plan loops (why="")', "row forms"),
        (
            "plan rows (rows=2, loops=[64, 64], scratch=64)",
            "plan coalesced (rows=2, loops=[64, 64], scratch=64)",
            "coalesced, but more than one row",
        ),
    ],
)
def test_verifier_rejects_plans_the_emitter_cannot_carry_out(old, new, message):
    assert old in ROWS
    with pytest.raises(uir.VerifyError, match=re.escape(message)):
        ig.parse(ROWS.replace(old, new, 1)).verify()


def test_reread_after_a_store_is_rejected():
    # y is stored in loop 1; a loop 2 reading x's move would read x again
    # after that store, which might have written over it: refused.
    text = ROWS.replace(
        "  move.sram.dram.fp32 ys, ds {loop=1}\n",
        "  move.sram.dram.fp32 ys, ds {loop=1}\n  binary.add.fp32 ds, ts, ts {loop=2}\n",
    )
    text = text.replace("loops=[64, 64]", "loops=[64, 64, 64]")
    with pytest.raises(uir.VerifyError, match="reread, but"):
        ig.parse(text).verify()
    # With the value kept in a row buffer instead, the plan is sound.
    ok = text.replace("{loop=0, reread}", "{loop=0, buffer=64}").replace(
        "scratch=64)", "scratch=320)"
    )
    ig.parse(ok).verify()


@pytest.mark.parametrize(
    ("old", "new", "message", "at"),
    [
        ("{loop=0, reread}", "{loop=0, rerad}", "unknown plan entry 'rerad'", "rerad"),
        ("{loop=0, reread}", "{loop=0, loop=1}", "'loop' given twice", "loop=1"),
        ("{loop=1}\n  binary", "{loop=1, prefetch=[xs+4KB]}\n  binary", "'row' or 'B'", "KB"),
        ("{loop=1}\n  binary", "{loop=1, order=rows}\n  binary", "order must be cols", "rows}"),
        ("plan rows (", "plan tiles (", "form must be loops, rows or coalesced", "tiles"),
        (
            "64], scratch",
            "64], interleav=[2, 2], scratch",
            "expected 'interleave' or",
            "interleav=",
        ),
        ("64], scratch", "64], interleave=[2, 0], scratch", "a positive integer", "0]"),
    ],
)
def test_malformed_plans_are_parse_errors_with_line_and_column(old, new, message, at):
    text = ROWS.replace(old, new, 1)
    with pytest.raises(uir.ParseError, match=re.escape(message)) as info:
        ig.parse(text)
    lines = text.splitlines()
    line = next(i for i, s in enumerate(lines, 1) if new.split("\n")[0] in s)
    assert (info.value.line, info.value.column) == (line, lines[line - 1].index(at) + 1)


def test_op_plan_needs_the_plan_line():
    text = ROWS.replace("  plan rows (rows=2, loops=[64, 64], scratch=64)\n", "")
    with pytest.raises(uir.ParseError, match="needs the iGraph's 'plan' line"):
        ig.parse(text)


def test_a_pointer_named_plan_is_still_a_declaration():
    text = ROWS.replace("  plan rows (rows=2, loops=[64, 64], scratch=64)\n", "").replace(
        " {loop=0, reread}", ""
    )
    text = re.sub(r" \{loop=[^}]*\}", "", text).replace("  s = iPointer", "  plan = iPointer")
    text = text.replace("iSlice(s,", "iSlice(plan,")
    g = ig.parse(text)
    assert g.plan["form"] == "none"
    assert [p["name"] for p in g.pointers][3] == "plan"


# --- The emitter carries out the plan it is given ------------------------------


def _transpose_graph():
    [g] = _kernel_igraphs(
        """HloModule m
ENTRY main {
  x = f32[64,64] parameter(0)
  ROOT t = f32[64,64] transpose(x), dimensions={1,0}
}
"""
    )
    return g


def test_block_transpose_is_emitted_only_where_the_plan_says():
    g = _transpose_graph()
    assert "{order=cols, block=8}" in g.to_text()
    blocked = g.llvm_ir()
    assert "shufflevector" in blocked
    plain = ig.parse(g.to_text().replace(", block=8}", "}")).llvm_ir()
    assert "shufflevector" not in plain
    # A smaller block is the plan's to choose too: 4 x 4 f32 tiles.
    four = ig.parse(g.to_text().replace("block=8", "block=4")).llvm_ir()
    assert "<4 x float>" in four and "<8 x float>" not in four
    with pytest.raises(uir.VerifyError, match="no block transpose"):
        ig.parse(g.to_text().replace("block=8", "block=3")).verify()


def test_prefetches_are_emitted_only_where_the_plan_says():
    [g] = _kernel_igraphs(_ELEMENTWISE)
    text = g.to_text()
    assert g.plan["form"] == "coalesced" and "+4096B]" in text
    assert "@uir.prefetch." in g.llvm_ir()
    without = ig.parse(re.sub(r", prefetch=\[[^]]*\]", "", text))
    without.verify()
    assert "@uir.prefetch." not in without.llvm_ir()
    # Another distance is carried out as written.
    further = ig.parse(text.replace("+4096B]", "+8192B]"))
    assert "@uir.prefetch.4.8192" in further.llvm_ir()


def test_interleave_is_emitted_only_where_the_plan_says():
    # tanh makes the coalesced loop heavy: four vectors side by side, asked
    # of LLVM's loop vectorizer by loop metadata; without the entry, none.
    [g] = _kernel_igraphs(_ELEMENTWISE)
    text = g.to_text()
    assert g.plan["interleave"] == [4], text
    assert '!"llvm.loop.interleave.count", i32 4}' in g.llvm_ir()
    without = ig.parse(text.replace(", interleave=[4]", ""))
    without.verify()
    assert without.plan["interleave"] == []
    assert "llvm.loop.interleave.count" not in without.llvm_ir()


def test_coalesced_and_rows_forms_are_emitted_as_planned():
    [g] = _kernel_igraphs(_ELEMENTWISE)
    assert "coalesced" in g.llvm_ir()
    as_rows = ig.parse(g.to_text().replace("plan coalesced", "plan rows"))
    as_rows.verify()
    assert "coalesced" not in as_rows.llvm_ir()


def test_unplanned_text_is_planned_before_it_is_compiled():
    g = _transpose_graph()
    assert "shufflevector" in g.unplanned().llvm_ir()


# --- Properties ------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=fusion_modules())
def test_random_fusions_plan_again_alike_and_compile_to_the_evaluators_results(text):
    """For random fusions: each iGraph's plan is what the plan steps give its
    unplanned form, prints and parses back, and the compiled kernels that
    carry it out compute what the evaluator does."""
    module = uir.passes.default_pipeline().run(uir.hlo.parse_module(text))
    kg = ig.lower(module, "cpu")
    for node in kg.nodes:
        for g in node.igraphs:
            assert ig.plan(g.unplanned()) == g
            assert ig.parse(g.to_text()) == g
    args = random_arguments(module, 2)
    scale = 1.0 / np.sqrt(max(max(a.shape, default=1) for a in args))
    args = [(a * scale).astype(a.dtype) for a in args]
    got = uir.compile(module, backend="cpu")(*args)
    want = uir.evaluate(module, *args)
    tol = 2e-2 if max(max(a.shape, default=1) for a in args) > 10**5 else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
