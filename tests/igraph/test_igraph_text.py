"""The iGraph text format, verifier and interpreter on hand-written iGraphs:
the seed's examples parse, print back and run; malformed text and broken
rules are rejected with the line of the offending iOp."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.igraph as ig

# The seed's tensor addition: an (8, 1024) input split over (numParallel,
# numLoop) = (64, 2), each unit moving a (2, 32) slice per iteration. The
# seed writes the offset as 4096 * lid + 128 * pid, which the verifier
# rejects (pid 63 at lid 1 reaches element 12223 of 8192; see
# test_out_of_bounds_offset_is_found_without_sampling): a (2, 32) slice
# holds 64 contiguous elements, so units step by 64.
SEED_ADD = """igraph seed_add {
  hardware gpu (numGroup=16, numUnit=4) reg=65536 sram=232448 vector=128
  parallel (numParallel=64, numLoop=2) [pid=64] [lid=2]
  a = iPointer(0, dram, fp32, 8192)
  c = iPointer(1, dram, fp32, 8192)
  t = iPointer(2, dram, fp32, 8192)
  b = iPointer(3, reg, fp32, 64)
  d = iPointer(4, reg, fp32, 64)
  aSlice = iSlice(a, 64*pid + 4096*lid, (2, 32), (32, 1))
  cSlice = iSlice(c, 64*pid + 4096*lid, (2, 32), (32, 1))
  tSlice = iSlice(t, 64*pid + 4096*lid, (2, 32), (32, 1))
  bSlice = iSlice(b, 0, (2, 32), (32, 1))
  dSlice = iSlice(d, 0, (2, 32), (32, 1))
body:
  move.dram.reg.fp32 bSlice, aSlice
  move.dram.reg.fp32 dSlice, cSlice
  binary.add.fp32 bSlice, bSlice, dSlice
  unary.muls.fp32 bSlice, bSlice, [2]
  move.reg.dram.fp32 tSlice, bSlice
}
"""

# Rows of 512 split over the 4 units of a group: each reduces its quarter,
# the group combines the partial maxima through sram, and the leader's
# result is broadcast back to every unit.
GROUP_MAX = """igraph group_max {
  hardware gpu (numGroup=8, numUnit=4) reg=65536 sram=232448 vector=128
  parallel (numParallel=32, numLoop=1) [row=8, u=4] []
  x = iPointer(0, dram, fp32, 4096)
  y = iPointer(1, dram, fp32, 4096)
  r = iPointer(2, reg, fp32, 128)
  m = iPointer(3, reg, fp32, 1)
  buf = iPointer(4, sram, fp32, 4)
  xs = iSlice(x, 512*row + 128*u, (1, 128), (128, 1))
  ys = iSlice(y, 512*row + 128*u, (1, 128), (128, 1))
  rs = iSlice(r, 0, (1, 128), (128, 1))
  ms = iSlice(m, 0, (1, 1), (1, 1))
  bufs = iSlice(buf, 0, (1, 4), (4, 1))
body:
  move.dram.reg.fp32 rs, xs
  reduce.max.row.group.fp32 ms, rs, [buffer=bufs, groupSize=4]
  broadcast.row.group.fp32 rs, ms, [buffer=bufs, groupSize=4]
  move.reg.dram.fp32 ys, rs
}
"""

# A sum over a loop: the accumulator is set in the prologue, grows in the
# body and is stored in the epilogue.
LOOP_SUM = """igraph loop_sum {
  hardware cpu (numGroup=2, numUnit=1) reg=2048 sram=524288 vector=64
  parallel (numParallel=3, numLoop=5) [pid=3] [lid=5]
  x = iPointer(0, dram, fp32, 60)
  out = iPointer(1, dram, fp32, 3)
  t = iPointer(2, reg, fp32, 4)
  p = iPointer(3, reg, fp32, 1)
  acc = iPointer(4, reg, fp32, 1)
  xs = iSlice(x, 20*pid + 4*lid, (1, 4), (4, 1))
  os = iSlice(out, pid, (1, 1), (1, 1))
  ts = iSlice(t, 0, (1, 4), (4, 1))
  ps = iSlice(p, 0, (1, 1), (1, 1))
  accs = iSlice(acc, 0, (1, 1), (1, 1))
prologue:
  fill.fp32 accs, [0]
body:
  move.dram.reg.fp32 ts, xs
  reduce.add.row.unit.fp32 ps, ts
  binary.add.fp32 accs, accs, ps
epilogue:
  move.reg.dram.fp32 os, accs
}
"""


# The total order of floats, through the bits: -NaN < -inf < -0 < +0 < NaN;
# then the same bits read as s32.
TOTAL_ORDER = """igraph total {
  hardware cpu (numGroup=2, numUnit=1) reg=2048 sram=524288 vector=64
  parallel (numParallel=1, numLoop=1) [] []
  a = iPointer(0, dram, fp32, 6)
  b = iPointer(1, dram, fp32, 6)
  lt = iPointer(2, dram, pred, 6)
  bits = iPointer(3, dram, s32, 6)
  ra = iPointer(4, reg, fp32, 6)
  rb = iPointer(5, reg, fp32, 6)
  rlt = iPointer(6, reg, pred, 6)
  rbits = iPointer(7, reg, s32, 6)
  as = iSlice(a, 0, (1, 6), (6, 1))
  bs = iSlice(b, 0, (1, 6), (6, 1))
  lts = iSlice(lt, 0, (1, 6), (6, 1))
  bitss = iSlice(bits, 0, (1, 6), (6, 1))
  ras = iSlice(ra, 0, (1, 6), (6, 1))
  rbs = iSlice(rb, 0, (1, 6), (6, 1))
  rlts = iSlice(rlt, 0, (1, 6), (6, 1))
  rbitss = iSlice(rbits, 0, (1, 6), (6, 1))
body:
  move.dram.reg.fp32 ras, as
  move.dram.reg.fp32 rbs, bs
  compare.lt_total.fp32 rlts, ras, rbs
  convert.bitcast.fp32.s32 rbitss, ras
  move.reg.dram.pred lts, rlts
  move.reg.dram.s32 bitss, rbitss
}
"""


@pytest.mark.parametrize("text", [SEED_ADD, GROUP_MAX, LOOP_SUM, TOTAL_ORDER])
def test_text_round_trips(text):
    g = ig.parse(text)
    g.verify()
    assert g.to_text() == text
    assert ig.parse(g.to_text()) == g


def test_seed_example_adds_and_scales():
    g = ig.parse(SEED_ADD)
    assert (g.num_parallel, g.num_loop) == (64, 2)
    a = np.random.default_rng(0).standard_normal(8192).astype(np.float32)
    c = np.random.default_rng(1).standard_normal(8192).astype(np.float32)
    t = np.zeros(8192, np.float32)
    ig.interpret(g, {0: a, 1: c, 2: t})
    np.testing.assert_array_equal(t, (a + c) * 2)
    assert g.dram_bytes_read() == 2 * a.nbytes and g.dram_bytes_written() == t.nbytes


def test_group_reduce_and_broadcast_spread_the_row_maximum():
    g = ig.parse(GROUP_MAX)
    x = np.random.default_rng(2).standard_normal(4096).astype(np.float32)
    y = np.zeros_like(x)
    ig.interpret(g, {0: x, 1: y})
    want = np.repeat(x.reshape(8, 512).max(axis=1), 512)
    np.testing.assert_array_equal(y, want)


def test_prologue_body_epilogue_accumulate():
    g = ig.parse(LOOP_SUM)
    x = np.arange(60, dtype=np.float32)
    out = np.zeros(3, np.float32)
    ig.interpret(g, {0: x, 1: out})
    np.testing.assert_array_equal(out, x.reshape(3, 20).sum(axis=1))


def test_total_order_compare_and_bitcast_convert_interpret_like_xla():
    g = ig.parse(TOTAL_ORDER)
    a = np.array([-np.nan, -0.0, np.nan, -np.inf, 1.0, 2.0], np.float32)
    b = np.array([-np.inf, 0.0, np.inf, -np.nan, 1.0, -2.0], np.float32)
    lt = np.zeros(6, np.bool_)
    bits = np.zeros(6, np.int32)
    ig.interpret(g, {0: a, 1: b, 2: lt, 3: bits})
    np.testing.assert_array_equal(lt, [True, True, False, False, False, False])
    np.testing.assert_array_equal(bits, a.view(np.int32))


def test_a_bitcast_convert_between_widths_is_rejected():
    text = TOTAL_ORDER.replace("convert.bitcast.fp32.s32", "convert.bitcast.fp32.s8")
    text = text.replace("reg, s32, 6)", "reg, s8, 6)").replace("dram, s32, 6)", "dram, s8, 6)")
    text = text.replace("move.reg.dram.s32", "move.reg.dram.s8")
    with pytest.raises(uir.Error, match="bitcast converts between types of one width"):
        ig.parse(text).verify()


def test_interpret_checks_its_buffers():
    g = ig.parse(LOOP_SUM)
    with pytest.raises(uir.Error, match="no buffer for dram iPointer 'out'"):
        ig.interpret(g, {0: np.zeros(60, np.float32)})
    with pytest.raises(uir.Error, match="has 8 bytes; it needs 12"):
        ig.interpret(g, {0: np.zeros(60, np.float32), 1: np.zeros(2, np.float32)})


# --- Malformed text ----------------------------------------------------------


@pytest.mark.parametrize(
    "old,new,line,column,message",
    [
        ("move.dram.reg.fp32 bSlice", "mvoe.dram.reg.fp32 bSlice", 15, 3, "unknown iOp 'mvoe'"),
        ("(0, dram, fp32, 8192)", "(0, hbm, fp32, 8192)", 4, 19, "level must be reg, sram or dram"),
        ("binary.add.fp32", "binary.plus.fp32", 17, 3, "unknown binary function 'plus'"),
        (
            "64*pid + 4096*lid, (2, 32)",
            "128*pid + 4096*tid, (2, 32)",
            9,
            32,
            "unknown index variable 'tid'",
        ),
        ("numLoop=2)", "numLoop=3)", 3, 37, "numLoop is 3 but the loop variables give 2"),
        ("dSlice, cSlice", "dSlice, eSlice", 16, 30, "unknown iSlice 'eSlice'"),
        ("[2]", "[two]", 18, 36, "expected a number, got 'two'"),
    ],
)
def test_parse_errors_name_line_and_column(old, new, line, column, message):
    assert old in SEED_ADD
    with pytest.raises(uir.ParseError, match=message) as e:
        ig.parse(SEED_ADD.replace(old, new, 1))
    assert (e.value.line, e.value.column) == (line, column)


# --- The verifier ------------------------------------------------------------


def _fails(text, match):
    g = ig.parse(text)
    with pytest.raises(uir.VerifyError, match=match):
        g.verify()


def test_out_of_bounds_offset_is_found_without_sampling():
    # The seed's own offset: pid reaches 63 and lid 1, 128*63 + 4096 + 63.
    bad = SEED_ADD.replace("aSlice = iSlice(a, 64*pid", "aSlice = iSlice(a, 128*pid")
    _fails(
        bad, r"line 15: `move.dram.reg.fp32 bSlice, aSlice`: 'aSlice' reaches elements \[0, 12223\]"
    )
    # Interpreting it is refused the same way, before any access.
    with pytest.raises(uir.VerifyError, match="12223"):
        ig.interpret(ig.parse(bad), {k: np.zeros(8192, np.float32) for k in range(3)})


def test_negative_offsets_are_out_of_bounds():
    bad = SEED_ADD.replace(
        "cSlice = iSlice(c, 64*pid + 4096*lid", "cSlice = iSlice(c, 128*pid - 4096*lid"
    )
    _fails(bad, r"line 16: .*'cSlice' reaches elements \[-4096,")


def test_wrong_levels_are_rejected():
    # A move whose name disagrees with its slices' levels.
    _fails(
        SEED_ADD.replace("move.dram.reg.fp32 dSlice", "move.sram.reg.fp32 dSlice"),
        r"line 16: .*moves from dram to reg, not as its name says",
    )
    # Compute iOps never touch dram.
    _fails(
        SEED_ADD.replace(
            "binary.add.fp32 bSlice, bSlice, dSlice", "binary.add.fp32 bSlice, bSlice, cSlice"
        ),
        r"line 17: .*'cSlice' is in dram; compute iOps work on reg and sram",
    )


def test_sync_needs_one_pointer_on_both_sides():
    text = GROUP_MAX.replace("body:\n", "body:\n  sync.sram bufs, rs\n")
    _fails(
        text,
        r"line 15: `sync.sram bufs, rs`: sync needs one iPointer on both sides, got 'buf' and 'r'",
    )
    text = GROUP_MAX.replace("body:\n", "body:\n  sync.reg rs, rs\n")
    _fails(text, r"line 15: .*reg is private to a unit")


def test_shape_mismatches_are_rejected():
    _fails(
        LOOP_SUM.replace("ps = iSlice(p, 0, (1, 1)", "ps = iSlice(p, 0, (1, 4)").replace(
            "p = iPointer(3, reg, fp32, 1)", "p = iPointer(3, reg, fp32, 4)"
        ),
        r"line 18: `reduce.add.row.unit.fp32 ps, ts`: reduce.row maps \(1, 4\) to \(1, 1\), but 'ps' is \(1, 4\)",
    )
    _fails(
        SEED_ADD.replace(
            "dSlice = iSlice(d, 0, (2, 32), (32, 1))", "dSlice = iSlice(d, 0, (1, 64), (64, 1))"
        ),
        r"line 16: .*'dSlice' is \(1, 64\) but 'cSlice' is \(2, 32\)",
    )


def test_group_size_must_divide_num_unit():
    _fails(
        GROUP_MAX.replace("groupSize=4]\n  broadcast", "groupSize=3]\n  broadcast"),
        r"line 16: .*groupSize 3 does not divide numUnit 4",
    )


def test_capacity_and_sections_are_checked():
    _fails(
        SEED_ADD.replace("b = iPointer(3, reg, fp32, 64)", "b = iPointer(3, reg, fp32, 65536)"),
        r"reg iPointers take 262400 bytes, more than the hardware model's 65536 per unit",
    )
    epilogue_with_loop_var = LOOP_SUM.replace("os = iSlice(out, pid,", "os = iSlice(x, lid + pid,")
    _fails(epilogue_with_loop_var, r"line 21: .*uses loop variable 'lid' in the epilogue")


def test_written_slices_may_not_repeat_elements():
    _fails(
        SEED_ADD.replace(
            "tSlice = iSlice(t, 64*pid + 4096*lid, (2, 32), (32, 1))",
            "tSlice = iSlice(t, 64*pid + 4096*lid, (2, 32), (0, 1))",
        ),
        r"line 19: .*'tSlice' is written but some of its elements share an address",
    )
    # Rows of 32 every other element: a row spans 62 elements past its
    # start, so rows 63 apart never meet, and rows 62 apart do.
    spread = SEED_ADD.replace(
        "t = iPointer(2, dram, fp32, 8192)", "t = iPointer(2, dram, fp32, 16384)"
    )
    apart = spread.replace(
        "tSlice = iSlice(t, 64*pid + 4096*lid, (2, 32), (32, 1))",
        "tSlice = iSlice(t, 128*pid + 8192*lid, (2, 32), (63, 2))",
    )
    ig.parse(apart).verify()
    _fails(
        apart.replace("(2, 32), (63, 2))", "(2, 32), (62, 2))"),
        r"line 19: .*'tSlice' is written but some of its elements share an address",
    )
