"""Scheduling, latency hiding, rematerialization and buffer assignment:
the analyses seen through their text, the checker on XLA's corpus and
against a deliberately broken assignment, the schedulers against each
other, and the Python surface."""

from __future__ import annotations

import re

import numpy as np
import pytest
from buffer_modules import HELD_ACROSS_BROADCAST
from corpus import CORPUS, XLA_REJECTS, manifest_rows

import uir
import uir.numpy as jnp
from uir import _core

CORE = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")


# --- Analyses ------------------------------------------------------------------

LOOP = """HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  u = f32[2] slice(x), slice={[0:2]}
  x2 = f32[8] dynamic-update-slice(x, u, i)
  ROOT t = (s32[], f32[8]) tuple(i2, x2)
}
ENTRY e {
  a = f32[8] parameter(0)
  z = s32[] constant(0)
  e = f32[8] exponential(a)
  t = (s32[], f32[8]) tuple(z, e)
  w = (s32[], f32[8]) while(t), condition=cond, body=body
  r = f32[8] get-tuple-element(w), index=1
  ROOT n = f32[8] negate(r)
}
"""


def test_dataflow_gives_tuple_elements_their_own_values_and_loops_phis():
    text = _core.schedule.dataflow_text(uir.hlo.parse_module(LOOP))
    assert re.search(r"value \d+ %t \(s32\[\], f32\[8\]\{0\}\)", text)  # the tuple's table
    assert "%w{1} (phi) f32[8]{0}" in text  # the loop state element
    # The state element appears at the while, the body parameter and the GTEs.
    line = next(ln for ln in text.splitlines() if "%w{1} (phi)" in ln)
    positions = text.splitlines()[text.splitlines().index(line) + 1]
    assert "%r" in positions and "%x" in positions
    assert "phi inputs" in text


def test_alias_analysis_puts_loop_state_and_in_place_update_in_one_buffer():
    text = _core.schedule.alias_text(uir.hlo.parse_module(LOOP))
    line = next(ln for ln in text.splitlines() if "%w{1} (phi)" in ln)
    # initial value, phi and the in-place update of the body share storage
    assert "%e" in line and "%x2" in line


def test_conditional_result_is_a_phi_of_its_branches():
    m = uir.hlo.parse_module("""HloModule m
a {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b {
  p = f32[4] parameter(0)
  ROOT n = f32[4] exponential(p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[4] parameter(1)
  ROOT r = f32[4] conditional(c, x, x), true_computation=a, false_computation=b
}
""")
    text = _core.schedule.dataflow_text(m)
    assert "%r (phi) f32[4]{0}" in text
    alias = _core.schedule.alias_text(m)
    line = next(ln for ln in alias.splitlines() if "%r (phi)" in ln)
    assert line.count("%n") == 2


# --- The checker -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CORE if n not in XLA_REJECTS])
def test_buffer_assignment_checks_on_core_corpus(name):
    module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
    out = uir.passes.default_pipeline().run(module)
    ba = uir.buffers.assign(out)
    ba.check()
    assert ba.arena_bytes >= ba.peak_bytes


def _mlp(x, w1, b1, w2, b2, w3):
    h1 = jnp.maximum(x @ w1 + b1, 0.0)
    h2 = jnp.maximum(h1 @ w2 + b2, 0.0)
    return jnp.tanh(h2 @ w3 + h1[:, :64])


def _mlp_args():
    rng = np.random.default_rng(0)
    shapes = [(64, 128), (128, 256), (256,), (256, 256), (256,), (256, 64)]
    return tuple(rng.standard_normal(s, np.float32) for s in shapes)


TEMPORARIES = """HloModule m
ENTRY main {
  p = f32[1024] parameter(0)
  a = f32[1024] exponential(p)
  b = f32[1024] negate(p)
  c = f32[1024] add(a, b)
  d = f32[1024] multiply(a, c)
  ROOT r = f32[1024] tanh(d)
}
"""


def test_shifting_a_slice_onto_a_live_neighbour_fails_check():
    ba = uir.buffers.assign(uir.hlo.parse_module(TEMPORARIES))
    ba.check()
    arena = next(a for a in ba.allocations if a["kind"] == "temporary")
    slices = arena["slices"]
    # Two temporaries live at the same time at different offsets.
    pair = next(
        (a, b)
        for a in slices
        for b in slices
        if a["offset"] != b["offset"] and a["start"] <= b["end"] and b["start"] <= a["end"]
    )
    ba._set_offset(pair[1]["buffer"], pair[0]["offset"])
    with pytest.raises(uir.VerifyError, match="share bytes of allocation"):
        ba.check()


def test_misaligned_or_out_of_bounds_slice_fails_check():
    ba = uir.jit(_mlp).lower(*_mlp_args()).compile().buffer_assignment
    arena = next(a for a in ba.allocations if a["kind"] == "temporary")
    ba._set_offset(arena["slices"][0]["buffer"], 8)
    with pytest.raises(uir.VerifyError, match="not a multiple of 64"):
        ba.check()
    ba._set_offset(arena["slices"][0]["buffer"], arena["size"])
    with pytest.raises(uir.VerifyError, match="leaves allocation"):
        ba.check()


def _attention(q, k, v):
    s = (q @ k.T) * (1.0 / np.sqrt(q.shape[-1]))
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    return p @ v


@pytest.mark.parametrize("name", ["mlp", "attention"])
def test_arena_is_within_ten_percent_of_peak_live_bytes(name):
    rng = np.random.default_rng(1)
    if name == "mlp":
        fn, args = _mlp, _mlp_args()
    else:
        fn = _attention
        args = tuple(rng.standard_normal((128, 64), np.float32) for _ in range(3))
    ba = uir.jit(fn).lower(*args).compile().buffer_assignment
    ba.check()
    if name == "attention":
        # One dot-chain node: the scores live in a scratch block per row block
        # and nothing is left for the arena.
        assert ba.peak_bytes == ba.arena_bytes == 0
    else:
        assert ba.peak_bytes > 0
    assert ba.arena_bytes <= 1.1 * ba.peak_bytes, (ba.arena_bytes, ba.peak_bytes)


def test_assignment_without_copies_is_refused():
    # Scheduled but not given copy-insertion: the loop would update the
    # caller's array in place.
    m = uir.hlo.parse_module(LOOP.replace("e = f32[8] exponential(a)", "e = f32[8] bitcast(a)"))
    scheduled = uir.schedule.run(m)
    with pytest.raises(uir.VerifyError, match="run copy-insertion"):
        uir.buffers.assign(scheduled)
    uir.buffers.assign(m).check()  # unscheduled: copied, given copies and scheduled


# --- Schedulers ----------------------------------------------------------------

TWO_REDUCTIONS = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  z = f32[] constant(0)
  b1 = f32[64,256] broadcast(p), dimensions={0}
  b2 = f32[64,256] broadcast(q), dimensions={0}
  r1 = f32[64] reduce(b1, z), dimensions={1}, to_apply=add
  r2 = f32[64] reduce(b2, z), dimensions={1}, to_apply=add
  ROOT out = f32[64] add(r1, r2)
}
"""


def test_list_and_dfs_beat_postorder_and_auto_picks_the_lowest():
    m = uir.hlo.parse_module(TWO_REDUCTIONS)
    peaks = {
        a: uir.schedule.peak_bytes(uir.schedule.run(m, algorithm=a))
        for a in ("list", "dfs", "postorder")
    }
    # post order builds both broadcasts before reducing either
    assert peaks["list"] < peaks["postorder"] and peaks["dfs"] < peaks["postorder"]
    assert peaks["postorder"] >= 2 * 64 * 256 * 4
    auto, report = uir.schedule.run(m, algorithm="auto", report=True)
    assert report.peaks == peaks
    assert uir.schedule.peak_bytes(auto) == min(peaks.values())
    assert report.algorithm in ("list", "dfs")
    assert "is_scheduled=true" in auto.to_text()
    args = [np.arange(64, dtype=np.float32), np.ones(64, np.float32)]
    np.testing.assert_allclose(uir.evaluate(auto, *args), uir.evaluate(m, *args))


def test_dfs_wins_where_the_list_scheduler_is_greedy():
    m = uir.hlo.parse_module("""HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[64,64] parameter(0)
  x = f32[64,64] exponential(p)
  big = f32[64,64,8] broadcast(p), dimensions={0,1}
  z = f32[] constant(0)
  r = f32[64,64] reduce(big, z), dimensions={2}, to_apply=add
  ROOT out = f32[64,64] add(x, r)
}
""")
    _, report = uir.schedule.run(m, report=True)
    assert report.algorithm == "dfs"
    assert report.peaks["dfs"] < report.peaks["postorder"]
    assert report.peaks["dfs"] < report.peaks["list"]


def test_unknown_algorithm_is_a_value_error():
    with pytest.raises(ValueError, match="unknown scheduling algorithm 'fifo'"):
        uir.schedule.run(uir.hlo.parse_module(TWO_REDUCTIONS), algorithm="fifo")


# --- Latency hiding --------------------------------------------------------------

ASYNC = """HloModule m, is_scheduled=true
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  a = f32[4096] parameter(0)
  b = f32[64] parameter(1)
  big = f32[64,4096] broadcast(b), dimensions={0}
  z = f32[] constant(0)
  r = f32[4096] reduce(big, z), dimensions={0}, to_apply=add
  s = (f32[4096], f32[4096], u32[]) copy-start(a)
  d = f32[4096] copy-done(s)
  ROOT out = f32[4096] add(d, r)
}
"""


def _order(module):
    """The entry's instructions in schedule order (a scheduled module prints in it)."""
    entry = module.to_text().split("ENTRY")[1]
    return re.findall(r"^\s+(?:ROOT )?%([\w.-]+) =", entry, re.MULTILINE)


def test_latency_hiding_moves_the_start_ahead_of_independent_work():
    m = uir.hlo.parse_module(ASYNC)
    out, report = uir.schedule.latency_hiding(m)
    order = _order(out)
    assert order.index("s") < order.index("big") < order.index("r") < order.index("d")
    (pair,) = report.pairs
    assert pair.overlap_before_s == 0 and pair.overlap_after_s > 0
    assert report.overlap_after_s > report.overlap_before_s
    args = [np.arange(4096, dtype=np.float32), np.ones(64, np.float32)]
    np.testing.assert_allclose(uir.evaluate(out, *args), uir.evaluate(m, *args))


def test_latency_hiding_keeps_within_its_memory_limit():
    m = uir.hlo.parse_module(ASYNC)
    peak = uir.schedule.peak_bytes(m)
    out, report = uir.schedule.latency_hiding(m, memory_limit=peak)
    # Starting the copy before the big broadcast would keep its result live
    # across it: over the limit, so the start stays after it.
    order = _order(out)
    assert order.index("s") > order.index("big")
    assert report.peak_after <= peak
    unlimited, _ = uir.schedule.latency_hiding(m)
    assert uir.schedule.peak_bytes(unlimited) > peak


# --- Rematerialization -----------------------------------------------------------


def _remat_module():
    return uir.schedule.run(uir.hlo.parse_module(HELD_ACROSS_BROADCAST), algorithm="postorder")


def _assert_checked_and_same_results(out, m):
    """`out`'s assignment checks, and it computes what `m` does."""
    uir.buffers.assign(out).check()
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal((256, 256), np.float32),
        rng.standard_normal(256).astype(np.float32),
    ]
    np.testing.assert_allclose(uir.evaluate(out, *args), uir.evaluate(m, *args), rtol=1e-6)


def test_rematerialization_brings_the_peak_under_the_limit_with_the_same_results():
    m = _remat_module()
    before = uir.schedule.peak_bytes(m)
    limit = before - 200_000
    out, report = uir.schedule.rematerialize(m, limit)
    assert report.peak_before == before
    assert report.peak_after <= limit == report.memory_limit
    assert uir.schedule.peak_bytes(out) == report.peak_after
    assert [r["instruction"] for r in report.remats] == ["x"]
    _assert_checked_and_same_results(out, m)


SPLIT = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
two {
  x = f32[256,256] parameter(0)
  e = f32[256,256] exponential(x)
  n = f32[256,256] negate(x)
  ROOT t = (f32[256,256], f32[256,256]) tuple(e, n)
}
ENTRY main {
  p = f32[256,256] parameter(0)
  q = f32[256] parameter(1)
  z = f32[] constant(0)
  f = (f32[256,256], f32[256,256]) fusion(p), kind=kLoop, calls=two
  a = f32[256,256] get-tuple-element(f), index=0
  b = f32[256,256] get-tuple-element(f), index=1
  sa = f32[256] reduce(a, z), dimensions={1}, to_apply=add
  big = f32[256,256,2] broadcast(q), dimensions={0}
  r = f32[256,256] reduce(big, z), dimensions={2}, to_apply=add
  y = f32[256,256] add(b, r)
  sb = f32[256] reduce(y, z), dimensions={1}, to_apply=add
  ROOT out = f32[256] add(sa, sb)
}
"""


def test_rematerialization_splits_an_output_of_a_multi_output_fusion():
    """Output 1 of %f is live across the peak only to be read at the end:
    a fusion computing it alone (negate, without the exponential) moves
    next to its reader, and %f's output 1 dies at once."""
    m = uir.schedule.run(uir.hlo.parse_module(SPLIT), algorithm="postorder")
    before = uir.schedule.peak_bytes(m)
    out, report = uir.schedule.rematerialize(m, before - 200_000)
    assert [(r["instruction"], r["output"]) for r in report.remats] == [("f", 1)]
    assert report.peak_after <= before - 256 * 256 * 4 + 1024
    assert "output 1 of %f split out as %" in report.text
    text = out.to_text()
    split = report.remats[0]["clone"]
    assert f"%{split} = f32[256,256]{{1,0}} fusion(%p)" in text
    body = text[text.index(f"%{split} = ") :]
    called = body[body.index("calls=%") + 7 :].split(",")[0].split("\n")[0].strip()
    start = text.index(f"%{called} ")
    fused = text[start : text.index("\n}\n", start)]
    assert "negate" in fused and "exponential" not in fused
    order = _order(out)
    assert order.index(split) > order.index("r") and order.index(split) < order.index("y")
    _assert_checked_and_same_results(out, m)


def test_an_impossible_limit_says_what_is_live():
    with pytest.raises(
        uir.MemoryLimitError, match=r"cannot bring the peak .* under 1000 bytes.*%big"
    ):
        uir.schedule.rematerialize(_remat_module(), 1000)


# --- Python surface and dumps --------------------------------------------------------


def test_allocations_are_plain_data_and_the_report_reads_like_xla():
    compiled = uir.jit(_mlp).lower(*_mlp_args()).compile()
    ba = compiled.buffer_assignment
    kinds = [a["kind"] for a in ba.allocations]
    assert (
        kinds.count("parameter") == 6
        and kinds.count("output") == 1
        and kinds.count("temporary") == 1
    )
    for a in ba.allocations:
        assert isinstance(a["size"], int) and isinstance(a["slices"], list)
        for s in a["slices"]:
            assert s["offset"] + s["size"] <= a["size"] and s["start"] <= s["end"]
            assert all(isinstance(v["instruction"], str) for v in s["values"])
    text = ba.to_text()
    for section in (
        "preallocated-temp",
        "maybe-live-out",
        "parameter 0 at ShapeIndex {}",
        "Used values:",
        "HloLiveRange (start, end):",
        "peak live temporary bytes",
    ):
        assert section in text
    assert repr(ba).startswith("BufferAssignment(")


def test_dump_writes_the_buffer_assignment(tmp_path):
    m = uir.jit(_mlp).lower(*_mlp_args()).module
    uir.passes.default_pipeline().run(m, dump_to=tmp_path)
    (path,) = tmp_path.glob("*.buffer-assignment.txt")
    assert "BufferAssignment for module" in path.read_text()


def test_output_aliased_to_a_parameter_its_own_producer_reads_gets_a_copy():
    # The reversed output lands in the parameter's buffer while the
    # multi-output fusion computing it still reads that parameter.
    m = uir.hlo.parse_module("""HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  p = f32[16] parameter(0)
  r = f32[16] reverse(p), dimensions={0}
  n = f32[16] negate(p)
  ROOT t = (f32[16], f32[16]) tuple(r, n)
}
""")
    out = uir.passes.default_pipeline().run(m)
    uir.buffers.assign(out).check()
    x = np.arange(16, dtype=np.float32)
    for want, got in zip(uir.evaluate(m, x), uir.evaluate(out, x), strict=True):
        np.testing.assert_array_equal(got, want)


def test_two_loops_started_from_one_state_tuple_each_get_their_own_copies():
    # CSE merges the two equal initial states, so both loops read one tuple;
    # each updates its state in place, so each needs copies of its own (the
    # random-module property test found the second loop reading what the
    # first had written).
    text = """HloModule two_loops
cond {
  p = (s32[], f32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(2)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body1 {
  p = (s32[], f32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  a = f32[4,3] get-tuple-element(p), index=1
  r = f32[1,3] slice(a), slice={[2:3], [0:3]}
  z = s32[] constant(0)
  a1 = f32[4,3] dynamic-update-slice(a, r, z, z)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4,3]) tuple(i1, a1)
}
body2 {
  p = (s32[], f32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  a = f32[4,3] get-tuple-element(p), index=1
  i1 = s32[] add(i, one)
  a2 = f32[4,3] add(a, a)
  ROOT t = (s32[], f32[4,3]) tuple(i1, a2)
}
ENTRY main {
  p0 = f32[4,3] parameter(0)
  v0 = f32[4,3] negate(p0)
  c0 = s32[] constant(0)
  st1 = (s32[], f32[4,3]) tuple(c0, v0)
  w1 = (s32[], f32[4,3]) while(st1), condition=cond, body=body1
  c1 = s32[] constant(0)
  st2 = (s32[], f32[4,3]) tuple(c1, v0)
  w2 = (s32[], f32[4,3]) while(st2), condition=cond, body=body2
  g1 = f32[4,3] get-tuple-element(w1), index=1
  g2 = f32[4,3] get-tuple-element(w2), index=1
  ROOT out = (f32[4,3], f32[4,3]) tuple(g1, g2)
}
"""
    module = uir.hlo.parse_module(text)
    out = uir.passes.default_pipeline().run(module)
    assert "own = " in out.to_text()  # the second loop's tuple of copies
    uir.buffers.assign(out).check()
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    first, second = uir.evaluate(out, x)
    want_first = -x
    want_first[0] = -x[2]
    np.testing.assert_array_equal(first, want_first)
    np.testing.assert_array_equal(second, -4 * x)
    for got, want in zip(uir.compile(module, backend="cpu")(x), (want_first, -4 * x), strict=True):
        np.testing.assert_array_equal(got, want)


PASS_THROUGH = """HloModule pass_through
cond {
  p = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[4,4], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc = f32[4,4] get-tuple-element(p), index=1
  w = f32[4,4] get-tuple-element(p), index=2
  d = f32[4,4] dot(acc, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,4] tanh(d)
  ROOT r = (s32[], f32[4,4], f32[4,4]) tuple(i1, t, WRITE)
}
ENTRY main {
  x = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  c0 = s32[] constant(0)
  st = (s32[], f32[4,4], f32[4,4]) tuple(c0, x, w)
  l = (s32[], f32[4,4], f32[4,4]) while(st), condition=cond, body=body
  ROOT out = f32[4,4] get-tuple-element(l), index=INDEX
}
"""


@pytest.mark.parametrize(
    "write, index, copied",
    [
        ("w", 1, False),  # w passes through, unread after the loop: read in place
        ("w", 2, True),  # the loop's element 2 is read after it: a copy
        ("t", 1, True),  # the body writes slot 2: a copy
    ],
)
def test_a_loop_reads_a_parameter_it_passes_through_in_place(write, index, copied):
    text = PASS_THROUGH.replace("WRITE", write).replace("INDEX", str(index))
    module = uir.hlo.parse_module(text)
    out = uir.passes.default_pipeline().run(module)
    assert bool(re.search(r"copy\(%w\)", out.to_text())) == copied
    uir.buffers.assign(out).check()
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    w_before = w.copy()
    got = np.asarray(uir.compile(module, backend="cpu")(x, w))
    np.testing.assert_allclose(got, np.asarray(uir.evaluate(module, x, w)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w, w_before)  # the caller's array is untouched
