"""Collectives compiled for the CPU: every participant of a replicated
executable in a thread of its own, meeting through the runtime's in-process
communicator; each participant's results against the evaluator's run of as
many participants."""

from __future__ import annotations

import numpy as np
import pytest
from collective_cases import reducer
from golden_util import filecheck_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir
from uir._src.core.evaluate import random_arguments, required_replicas


def _module(body: str, *, replicas: int = 4, partitions: int = 1, reducers=()) -> uir.hlo.HloModule:
    header = f"HloModule m, replica_count={replicas}"
    if partitions > 1:
        header += f", num_partitions={partitions}"
    # Reducers named as the bodies below call them: `add` for ("add", "f32").
    text = (
        header
        + "\n"
        + "".join(reducer(r, t).replace(f"{r}_{t} ", f"{r} ", 1) for r, t in reducers)
        + body
    )
    return uir.hlo.parse_module(text)


def _same(got, want, exact: bool = True) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w, exact)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _check(m, *args, per_replica: bool = False, exact: bool = True):
    exe = uir.compile(m, backend="cpu")
    assert exe.fallbacks == []
    n = required_replicas(exe.module)
    assert exe.participants == n
    args = args or tuple(random_arguments(exe.module, 0))
    got = exe(*args, replicas=n, per_replica=per_replica)
    want = uir.evaluate(exe.module, *args, replicas=n, per_replica=per_replica)
    assert len(got) == len(want) == n
    for g, w in zip(got, want, strict=True):
        _same(g, w, exact)
    return exe, got


# Each participant's own values: x plus its replica id, so that every
# collective sees different operands.
_OWN = """  r = u32[] replica-id()
  c = {t}[] convert(r)
  b = {t}{dims} broadcast(c), dimensions={{}}
  y = {t}{dims} add(x, b)
"""


@pytest.mark.parametrize(
    ("reducer", "dtype"),
    [
        (r, t)
        for r in ("add", "mul", "max", "min")
        for t in ("f32", "f64", "f16", "bf16", "s32", "u8", "s64", "c64")
        if not (t == "c64" and r in ("max", "min"))  # complex numbers have no order
    ],
)
def test_all_reduce_of_every_kind_and_type_family(reducer, dtype):
    body = (
        f"ENTRY e {{\n  x = {dtype}[5,7] parameter(0)\n"
        + _OWN.format(t=dtype, dims="[5,7]")
        + f"  ROOT s = {dtype}[5,7] all-reduce(y), replica_groups={{{{0,1,2,3}}}}, "
        f"to_apply={reducer}\n}}\n"
    )
    _check(_module(body, reducers=[(reducer, dtype)]))


@pytest.mark.parametrize("reducer", ["and", "or"])
@pytest.mark.parametrize("dtype", ["pred", "s32", "u16"])
def test_all_reduce_logical_folds(reducer, dtype):
    body = (
        f"ENTRY e {{\n  x = {dtype}[33] parameter(0)\n"
        f"  ROOT s = {dtype}[33] all-reduce(x), replica_groups={{}}, to_apply={reducer}\n}}\n"
    )
    m = _module(body, reducers=[(reducer, dtype)])
    rng = np.random.default_rng(1)
    np_dtype = {"pred": np.bool_, "s32": np.int32, "u16": np.uint16}[dtype]
    xs = rng.integers(0, 2 if dtype == "pred" else 1 << 12, size=(4, 33)).astype(np_dtype)
    _check(m, xs, per_replica=True)


def test_all_reduce_propagates_nan_through_maximum_as_the_evaluator_does():
    body = (
        "ENTRY e {\n  x = f32[4] parameter(0)\n"
        "  ROOT s = f32[4] all-reduce(x), replica_groups={}, to_apply=max\n}\n"
    )
    xs = np.array([[1, np.nan, 3, 4], [5, 6, np.nan, 0], [0, 0, 0, 9], [2, 2, 2, 2]], np.float32)
    _, got = _check(_module(body, reducers=[("max", "f32")]), xs, per_replica=True)
    np.testing.assert_array_equal(got[0], [5, np.nan, np.nan, 9])


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_all_gather_reduce_scatter_and_all_to_all_along_each_dimension(dim):
    grown = [4, 6, 8]
    grown[dim] *= 2
    shrunk = [4, 6, 8]
    shrunk[dim] //= 2
    g = "[" + ",".join(map(str, grown)) + "]"
    s = "[" + ",".join(map(str, shrunk)) + "]"
    body = (
        "ENTRY e {\n  x = f32[4,6,8] parameter(0)\n"
        + _OWN.format(t="f32", dims="[4,6,8]")
        + f"  ag = f32{g} all-gather(y), dimensions={{{dim}}}, replica_groups={{{{0,2}},{{1,3}}}}\n"
        f"  rs = f32{s} reduce-scatter(y), dimensions={{{dim}}}, replica_groups={{{{3,1}},{{2,0}}}}, "
        "to_apply=add\n"
        f"  aa = f32[4,6,8] all-to-all(y), dimensions={{{dim}}}, replica_groups={{{{0,1}},{{2,3}}}}\n"
        f"  ROOT t = (f32{g}, f32{s}, f32[4,6,8]) tuple(ag, rs, aa)\n}}\n"
    )
    _check(_module(body, reducers=[("add", "f32")]))


def test_all_gather_of_a_layout_that_is_not_row_major():
    body = (
        "ENTRY e {\n  x = f32[4,6]{0,1} parameter(0)\n"
        "  ROOT ag = f32[8,6]{0,1} all-gather(x), dimensions={0}, replica_groups={}\n}\n"
    )
    xs = np.arange(2 * 24, dtype=np.float32).reshape(2, 4, 6)
    _check(_module(body, replicas=2), xs, per_replica=True)


def test_collective_permute_leaves_zeros_where_nobody_sends_and_broadcast_takes_the_first():
    body = (
        "ENTRY e {\n  x = s32[3,5] parameter(0)\n"
        + _OWN.format(t="s32", dims="[3,5]")
        + "  p = s32[3,5] collective-permute(y), source_target_pairs={{0,2},{2,3},{3,0}}\n"
        "  bc = s32[3,5] collective-broadcast(y), replica_groups={{2,0},{3,1}}\n"
        "  ROOT t = (s32[3,5], s32[3,5]) tuple(p, bc)\n}\n"
    )
    _, got = _check(_module(body))
    np.testing.assert_array_equal(got[1][0], 0)  # participant 1 receives nothing


def test_groups_by_partition_with_channel_ids_and_global_device_ids():
    body = (
        "ENTRY e {\n  x = f32[6] parameter(0)\n"
        "  r = u32[] replica-id()\n  p = u32[] partition-id()\n"
        "  ten = u32[] constant(10)\n  r10 = u32[] multiply(r, ten)\n  rp = u32[] add(r10, p)\n"
        "  c = f32[] convert(rp)\n  b = f32[6] broadcast(c), dimensions={}\n"
        "  y = f32[6] add(x, b)\n"
        "  replicas = f32[6] all-reduce(y), replica_groups={{0,1}}, to_apply=add\n"
        "  parts = f32[6] all-reduce(y), channel_id=1, replica_groups={{0,1}}, to_apply=add\n"
        "  global = f32[6] all-reduce(y), channel_id=2, replica_groups={{0,3},{1,2}}, "
        "use_global_device_ids=true, to_apply=add\n"
        "  g = f32[12] all-gather(y), channel_id=3, dimensions={0}, replica_groups={{1,0}}\n"
        "  ROOT t = (f32[6], f32[6], f32[6], f32[12], u32[], u32[]) "
        "tuple(replicas, parts, global, g, r, p)\n}\n"
    )
    _, got = _check(_module(body, replicas=2, partitions=2, reducers=[("add", "f32")]))
    assert [(int(g[4]), int(g[5])) for g in got] == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_async_starts_run_their_collectives_on_threads_of_their_own():
    body = (
        "ENTRY e {\n  x = f32[64] parameter(0)\n"
        + _OWN.format(t="f32", dims="[64]")
        + "  ars = f32[64] all-reduce-start(y), replica_groups={}, to_apply=add\n"
        "  ags = (f32[64], f32[256]) all-gather-start(y), dimensions={0}, replica_groups={}\n"
        "  cps = (f32[64], f32[64], u32[], u32[]) collective-permute-start(y), "
        "source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n"
        "  t = f32[64] tanh(y)\n"
        "  ard = f32[64] all-reduce-done(ars)\n"
        "  agd = f32[256] all-gather-done(ags)\n"
        "  cpd = f32[64] collective-permute-done(cps)\n"
        "  ROOT out = (f32[64], f32[256], f32[64], f32[64]) tuple(ard, agd, cpd, t)\n}\n"
    )
    exe, _ = _check(_module(body, reducers=[("add", "f32")]), exact=False)
    assert exe.thunk_kinds.get("async-start") == 3
    assert "launches collective" in exe.thunk_text


def test_an_async_start_wrapping_a_collective():
    text = """HloModule m, replica_count=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
wrapped {
  p = f32[4,6] parameter(0)
  ROOT a = f32[4,3] reduce-scatter(p), dimensions={1}, replica_groups={}, to_apply=add
}
ENTRY e {
  x = f32[4,6] parameter(0)
  s = ((f32[4,6]), f32[4,3], s32[]) async-start(x), calls=wrapped
  ROOT d = f32[4,3] async-done(s)
}
"""
    _check(uir.hlo.parse_module(text))


def test_collectives_inside_a_while_loop_meet_once_per_iteration():
    text = """HloModule m, replica_count=3
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  third = f32[] constant(0.25)
  t = f32[8] broadcast(third), dimensions={}
  w = f32[8] multiply(v, t)
  r = f32[8] all-reduce(w), replica_groups={}, to_apply=add
  ROOT out = (s32[], f32[8]) tuple(j, r)
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  ROOT w = (s32[], f32[8]) while(init), condition=cond, body=body
}
"""
    xs = np.arange(24, dtype=np.float32).reshape(3, 8)
    _check(uir.hlo.parse_module(text), xs, per_replica=True)


def test_thunk_text_shows_each_collective_plan(tmp_path):
    body = (
        "ENTRY e {\n  x = f32[4,6] parameter(0)\n"
        "  s = f32[4,6] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add\n"
        "  g = f32[4,12] all-gather(x), dimensions={1}, replica_groups={{0,2},{1,3}}\n"
        "  p = f32[4,6] collective-permute(x), source_target_pairs={{0,1},{1,0}}\n"
        "  ROOT t = (f32[4,6], f32[4,12], f32[4,6]) tuple(s, g, p)\n}\n"
    )
    exe = uir.compile(_module(body, reducers=[("add", "f32")]), backend="cpu")
    checks = (
        "CHECK: {{.*}} thunks, sequential\n"
        "CHECK-DAG: collective s all-reduce add f32 [1,24,1] groups {{[{][{]}}0,1},{2,3{{[}][}]}}\n"
        "CHECK-DAG: collective g all-gather f32 [4,6,1] groups {{[{][{]}}0,2},{1,3{{[}][}]}}\n"
        "CHECK-DAG: collective p collective-permute f32 [1,24,1] pairs "
        "{{[{][{]}}0,1},{1,0{{[}][}]}}\n"
    )
    result = filecheck_text(checks, exe.thunk_text, tmp_path / "checks.txt")
    assert result.returncode == 0, result.stderr
    graph = exe.kernel_graph.to_text()
    assert " 0 fallbacks" in graph and "collective %g = all-gather(" in graph
    assert exe.kernel_graph.count("collective") == 3


def test_a_single_participant_runs_its_collectives_alone():
    body = (
        "ENTRY e {\n  x = f32[4,6] parameter(0)\n"
        "  s = f32[4,6] all-reduce(x), replica_groups={}, to_apply=add\n"
        "  r = u32[] replica-id()\n"
        "  ROOT t = (f32[4,6], u32[]) tuple(s, r)\n}\n"
    )
    m = _module(body, replicas=1, reducers=[("add", "f32")])
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = uir.compile(m, backend="cpu")(x)
    np.testing.assert_array_equal(got[0], x)
    assert int(got[1]) == 0


def test_a_run_without_its_participants_says_how_to_run_it():
    body = (
        "ENTRY e {\n  x = f32[4] parameter(0)\n"
        "  ROOT s = f32[4] all-reduce(x), replica_groups={}, to_apply=add\n}\n"
    )
    exe = uir.compile(_module(body, reducers=[("add", "f32")]), backend="cpu")
    x = np.ones(4, np.float32)
    with pytest.raises(uir.DistributedError, match=r"runs as 4 participants.*replicas=4"):
        exe(x)
    with pytest.raises(uir.DistributedError, match=r"runs as 4 participants, not replicas=3"):
        exe(x, replicas=3)


def test_a_participant_that_fails_makes_the_others_fail_with_its_error():
    calls = []

    def picky(v):
        calls.append(int(v))
        if int(v) == 2:
            raise ValueError("participant two refuses")
        return v

    uir.custom_call.register("test_collectives_picky", picky)
    text = """HloModule m, replica_count=4
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[] add(a, b) }
ENTRY e {
  x = f32[16] parameter(0)
  r = u32[] replica-id()
  c = u32[] custom-call(r), custom_call_target="test_collectives_picky"
  f = f32[] convert(c)
  b = f32[16] broadcast(f), dimensions={}
  y = f32[16] add(x, b)
  ROOT s = f32[16] all-reduce(y), replica_groups={}, to_apply=add
}
"""
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    with pytest.raises(uir.CustomCallError, match="participant two refuses"):
        exe(np.zeros(16, np.float32), replicas=4)
    assert sorted(calls) == [0, 1, 2, 3]
    # The executable runs again afterwards: nothing of the failed run is left waiting.
    uir.custom_call.register("test_collectives_picky", lambda v: v)
    got = exe(np.zeros(16, np.float32), replicas=4)
    np.testing.assert_array_equal(got[3], np.full(16, 6, np.float32))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
    groups=st.sampled_from(["{}", "{{0,1,2,3}}", "{{0,1},{2,3}}", "{{3,0},{2,1}}"]),
    op=st.sampled_from(["all-gather", "reduce-scatter", "all-to-all", "all-reduce"]),
    dtype=st.sampled_from(["f32", "s32", "bf16"]),
)
def test_random_collectives_match_the_evaluator(dims, data, groups, op, dtype):
    g = 4 if groups in ("{}", "{{0,1,2,3}}") else 2
    dim = data.draw(st.integers(0, len(dims) - 1))
    operand = list(dims)
    result = list(dims)
    if op in ("reduce-scatter", "all-to-all"):
        operand[dim] *= g
        result[dim] = operand[dim] // g if op == "reduce-scatter" else operand[dim]
    elif op == "all-gather":
        result[dim] *= g

    def text(d):
        return "[" + ",".join(map(str, d)) + "]"

    attrs = f"replica_groups={groups}"
    if op != "all-reduce":
        attrs = f"dimensions={{{dim}}}, " + attrs
    if op in ("reduce-scatter", "all-reduce"):
        attrs += ", to_apply=add"
    body = (
        f"ENTRY e {{\n  x = {dtype}{text(operand)} parameter(0)\n"
        + _OWN.format(t=dtype, dims=text(operand))
        + f"  ROOT out = {dtype}{text(result)} {op}(y), {attrs}\n}}\n"
    )
    _check(_module(body, reducers=[("add", dtype)]))


def test_replicas_on_the_evaluator_backend_and_outside_a_run():
    body = (
        "ENTRY e {\n  x = f32[4] parameter(0)\n"
        + _OWN.format(t="f32", dims="[4]")
        + "  ROOT s = f32[4] all-reduce(y), replica_groups={}, to_apply=add\n}\n"
    )
    m = _module(body, reducers=[("add", "f32")])
    x = np.arange(4, dtype=np.float32)
    on_eval = uir.compile(m, backend="eval")
    assert on_eval.participants == 4
    got = on_eval(x, replicas=4)
    assert len(got) == 4
    np.testing.assert_array_equal(got[2], 4 * x + 6)
    np.testing.assert_array_equal(uir.compile(m, backend="cpu")(x, replicas=4)[2], 4 * x + 6)
    # One process, no run across processes: one CPU device, process 0 of 1.
    assert uir.process_index() == 0 and uir.process_count() == 1
    assert [d.process_index for d in uir.devices("cpu")] == [0]
