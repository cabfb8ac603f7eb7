"""Collectives in a replicated evaluation, against NumPy: every participant
runs the module on the same inputs, adds 10 x replica-id so their data
differ, and the collective's result is checked per participant."""

from __future__ import annotations

import numpy as np
import pytest

import uir
from uir._src.core.evaluate import required_replicas

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
MAX = (
    "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
)


def replicated(body: str, result: str, shape: str = "f32[4,2]", comps: str = ADD, header: str = ""):
    """A module whose value `y` is x + 10 * replica-id, then `body`."""
    return uir.hlo.parse_module(
        f"HloModule m{header}\n{comps}ENTRY e {{\n  x = {shape} parameter(0)\n"
        "  id = u32[] replica-id()\n  idf = f32[] convert(id)\n  ten = f32[] constant(10)\n"
        f"  k = f32[] multiply(idf, ten)\n  kb = {shape} broadcast(k), dimensions={{}}\n"
        f"  y = {shape} add(x, kb)\n{body}\n  ROOT r = {result}\n}}"
    )


X = np.arange(8, dtype=np.float32).reshape(4, 2)
Y = [X + 10 * r for r in range(4)]


def test_all_reduce_sums_within_each_group():
    m = replicated(
        "  s = f32[4,2] all-reduce(y), replica_groups={{0,1},{2,3}}, to_apply=add",
        "f32[4,2] copy(s)",
    )
    got = uir.evaluate(m, X, replicas=4)
    for r in range(4):
        g = (0, 1) if r < 2 else (2, 3)
        np.testing.assert_array_equal(got[r], Y[g[0]] + Y[g[1]])


def test_all_reduce_with_empty_groups_reduces_over_everyone_and_keeps_the_order():
    m = replicated(
        "  s = f32[4,2] all-reduce(y), replica_groups={}, to_apply=mx",
        "f32[4,2] copy(s)",
        comps=MAX,
    )
    for got in uir.evaluate(m, X, replicas=3):
        np.testing.assert_array_equal(got, Y[2])


def test_iota_replica_groups_expand_like_xla():
    # [2,2]<=[2,2]T(1,0): groups {0,2} and {1,3}.
    m = replicated(
        "  s = f32[4,2] all-reduce(y), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add",
        "f32[4,2] copy(s)",
    )
    got = uir.evaluate(m, X, replicas=4)
    np.testing.assert_array_equal(got[0], Y[0] + Y[2])
    np.testing.assert_array_equal(got[3], Y[1] + Y[3])


def test_all_gather_concatenates_in_group_order():
    m = replicated(
        "  g = f32[4,4] all-gather(y), replica_groups={{1,0}}, dimensions={1}", "f32[4,4] copy(g)"
    )
    got = uir.evaluate(m, X, replicas=2)
    for r in range(2):
        np.testing.assert_array_equal(got[r], np.concatenate([Y[1], Y[0]], axis=1))


def test_reduce_scatter_gives_each_member_its_piece_of_the_sum():
    m = replicated(
        "  s = f32[2,2] reduce-scatter(y), replica_groups={{0,1}}, dimensions={0}, to_apply=add",
        "f32[2,2] copy(s)",
    )
    got = uir.evaluate(m, X, replicas=2)
    total = Y[0] + Y[1]
    np.testing.assert_array_equal(got[0], total[:2])
    np.testing.assert_array_equal(got[1], total[2:])


def test_all_to_all_exchanges_pieces_along_the_split_dimension():
    m = replicated(
        "  a = f32[4,2] all-to-all(y), replica_groups={{0,1}}, dimensions={0}", "f32[4,2] copy(a)"
    )
    got = uir.evaluate(m, X, replicas=2)
    for r in range(2):
        want = np.concatenate([Y[0][2 * r : 2 * r + 2], Y[1][2 * r : 2 * r + 2]], axis=0)
        np.testing.assert_array_equal(got[r], want)


def test_tuple_all_to_all_sends_operand_i_to_member_i():
    m = replicated(
        "  y2 = f32[4,2] negate(y)\n  a = (f32[4,2], f32[4,2]) all-to-all(y, y2), replica_groups={{0,1}}",
        "(f32[4,2], f32[4,2]) copy(a)",
    )
    got = uir.evaluate(m, X, replicas=2)
    np.testing.assert_array_equal(got[0][0], Y[0])
    np.testing.assert_array_equal(got[0][1], Y[1])
    np.testing.assert_array_equal(got[1][0], -Y[0])
    np.testing.assert_array_equal(got[1][1], -Y[1])


def test_collective_permute_moves_data_and_zero_fills_the_rest():
    m = replicated(
        "  p = f32[4,2] collective-permute(y), source_target_pairs={{0,1},{1,2}}",
        "f32[4,2] copy(p)",
    )
    got = uir.evaluate(m, X, replicas=4)
    np.testing.assert_array_equal(got[0], np.zeros_like(X))
    np.testing.assert_array_equal(got[1], Y[0])
    np.testing.assert_array_equal(got[2], Y[1])
    np.testing.assert_array_equal(got[3], np.zeros_like(X))


def test_collective_broadcast_sends_the_first_members_value():
    m = replicated(
        "  b = f32[4,2] collective-broadcast(y), replica_groups={{2,0,1}}", "f32[4,2] copy(b)"
    )
    for got in uir.evaluate(m, X, replicas=3):
        np.testing.assert_array_equal(got, Y[2])


def test_async_forms_mean_the_same_as_the_sync_ones():
    m = replicated(
        "  s = f32[4,2] all-reduce-start(y), replica_groups={{0,1}}, to_apply=add\n"
        "  sd = f32[4,2] all-reduce-done(s)\n"
        "  g = (f32[4,2], f32[8,2]) all-gather-start(y), replica_groups={{0,1}}, dimensions={0}\n"
        "  gd = f32[8,2] all-gather-done(g)\n"
        "  p = (f32[4,2], f32[4,2], u32[], u32[]) collective-permute-start(y), source_target_pairs={{0,1},{1,0}}\n"
        "  pd = f32[4,2] collective-permute-done(p)\n"
        "  c = (f32[4,2], f32[4,2], u32[]) copy-start(y)\n"
        "  cd = f32[4,2] copy-done(c)",
        "(f32[4,2], f32[8,2], f32[4,2], f32[4,2]) tuple(sd, gd, pd, cd)",
    )
    got = uir.evaluate(m, X, replicas=2)
    for r in range(2):
        sd, gd, pd, cd = got[r]
        np.testing.assert_array_equal(sd, Y[0] + Y[1])
        np.testing.assert_array_equal(gd, np.concatenate([Y[0], Y[1]]))
        np.testing.assert_array_equal(pd, Y[1 - r])
        np.testing.assert_array_equal(cd, Y[r])


def test_partition_and_replica_ids_in_a_partitioned_module():
    m = uir.hlo.parse_module(
        "HloModule m, replica_count=2, num_partitions=2\nENTRY e {\n  r = u32[] replica-id()\n"
        "  p = u32[] partition-id()\n  ROOT t = (u32[], u32[]) tuple(r, p)\n}"
    )
    assert required_replicas(m) == 4
    got = uir.evaluate(m, replicas=4)
    assert [(int(a), int(b)) for a, b in got] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_too_few_replicas_is_an_error_naming_the_instruction():
    m = replicated(
        "  s = f32[4,2] all-reduce(y), replica_groups={{0,1},{2,3}}, to_apply=add",
        "f32[4,2] copy(s)",
    )
    assert required_replicas(m) == 4
    with pytest.raises(
        uir.ShapeError, match=r"%s names participant 1 of 1 \(run it with more replicas\)"
    ):
        uir.evaluate(m, X)


def test_a_participant_that_skips_a_collective_fails_the_others_instead_of_hanging():
    m = uir.hlo.parse_module(
        ADD
        + """
reduce_it {
  v = f32[2] parameter(0)
  ROOT s = f32[2] all-reduce(v), replica_groups={}, to_apply=add
}
keep_it {
  ROOT v = f32[2] parameter(0)
}
ENTRY e {
  x = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT r = f32[2] conditional(first, x, x), true_computation=reduce_it, false_computation=keep_it
}"""
    )
    with pytest.raises(uir.ShapeError, match=r"participant 1 finished before reaching %s"):
        uir.evaluate(m, np.zeros(2, np.float32), replicas=2)


def test_each_participant_can_run_on_its_own_inputs():
    # Participant i gets xs[i]; no replica-id arithmetic makes them differ.
    xs = np.random.default_rng(7).standard_normal((4, 3, 2)).astype(np.float32)
    m = uir.hlo.parse_module(
        f"HloModule m\n{ADD}ENTRY e {{\n  x = f32[3,2] parameter(0)\n"
        "  s = f32[3,2] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add\n"
        "  g = f32[12,2] all-gather(x), dimensions={0}, replica_groups={{0,1,2,3}}\n"
        "  p = f32[3,2] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
        "  ROOT t = (f32[3,2], f32[12,2], f32[3,2]) tuple(s, g, p)\n}"
    )
    got = uir.evaluate(m, xs, replicas=4, per_replica=True)
    for r, (s, g, p) in enumerate(got):
        pair = xs[0] + xs[1] if r < 2 else xs[2] + xs[3]
        np.testing.assert_array_equal(s, pair)
        np.testing.assert_array_equal(g, xs.reshape(12, 2))
        np.testing.assert_array_equal(p, xs[(r - 1) % 4])


def test_per_replica_inputs_need_a_leading_axis_per_participant():
    m = uir.hlo.parse_module("ENTRY e { x = f32[3] parameter(0)  ROOT n = f32[3] negate(x) }")
    with pytest.raises(ValueError, match="leading axis of 4 participants"):
        uir.evaluate(m, np.zeros((3, 3), np.float32), replicas=4, per_replica=True)
    with pytest.raises(ValueError, match=r"takes shape \(3\)"):
        uir.evaluate(m, np.zeros((2, 4), np.float32), replicas=2, per_replica=True)
    got = uir.evaluate(
        m, np.arange(6, dtype=np.float32).reshape(2, 3), replicas=2, per_replica=True
    )
    np.testing.assert_array_equal(got, [[0, -1, -2], [-3, -4, -5]])
