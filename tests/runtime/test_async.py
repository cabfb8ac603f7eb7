"""async-start/async-done through the CPU backend: the wrapped work runs on
a thread of its own while independent thunks run, and the done waits."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

import uir

N = 1024
M = 1024  # the independent compute: COMPUTE_STEPS dots of MxM by MxM and a tanh
COMPUTE_STEPS = 12


def _module(with_async: bool, with_compute: bool, sync_sleep: bool = False) -> str:
    lines = [
        "HloModule m",
        "%work {",
        f"  p = f32[{N}] parameter(0)",
        f'  ROOT r = f32[{N}] custom-call(p), custom_call_target="test_slow_double"',
        "}",
        "ENTRY e {",
        f"  x = f32[{N}] parameter(0)",
        f"  a = f32[{M},{M}] parameter(1)",
        f"  b = f32[{M},{M}] parameter(2)",
    ]
    results, shapes = [], []
    if with_async:
        lines.append(f"  s = ((f32[{N}]), f32[{N}], u32[]) async-start(x), calls=%work")
    if with_compute:
        if sync_sleep:
            lines.append(f'  c = f32[{N}] custom-call(x), custom_call_target="test_slow_double"')
            results.append("c")
            shapes.append(f"f32[{N}]")
        else:
            prev = "a"
            for k in range(COMPUTE_STEPS):
                lines.append(
                    f"  d{k} = f32[{M},{M}] dot({prev}, b), lhs_contracting_dims={{1}}, "
                    "rhs_contracting_dims={0}"
                )
                lines.append(f"  t{k} = f32[{M},{M}] tanh(d{k})")
                prev = f"t{k}"
            results.append(prev)
            shapes.append(f"f32[{M},{M}]")
    if with_async:
        lines.append(f"  done = f32[{N}] async-done(s)")
        results.append("done")
        shapes.append(f"f32[{N}]")
    lines.append(f"  ROOT out = ({', '.join(shapes)}) tuple({', '.join(results)})")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def slow_double():
    calls = []

    def target(v):
        calls.append(1)
        time.sleep(0.15)
        return 2 * v

    uir.custom_call.register("test_slow_double", target)
    yield calls
    uir.custom_call.unregister("test_slow_double")


def _args():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal(N).astype(np.float32),
        rng.standard_normal((M, M)).astype(np.float32) / 32,
        rng.standard_normal((M, M)).astype(np.float32) / 32,
    )


def _thunk_edges(exe) -> dict[int, set[int]]:
    """Thunk number -> the thunks it waits for ("after %i, ..."), from the
    executable's thunk text."""
    edges = {}
    for line in exe.thunk_text.splitlines()[1:]:
        number = int(re.match(r"\s*%(\d+) ", line).group(1))
        after = re.search(r" after ((?:%\d+(?:, )?)+)$", line)
        edges[number] = {int(x) for x in re.findall(r"%(\d+)", after.group(1))} if after else set()
    return edges


def _thunk_number(exe, kind: str) -> int:
    return next(
        int(re.match(r"\s*%(\d+) ", line).group(1))
        for line in exe.thunk_text.splitlines()[1:]
        if f" {kind} " in line
    )


def _depends_on(edges: dict[int, set[int]], a: int, b: int) -> bool:
    """Whether thunk `a` waits for thunk `b`, directly or not."""
    work, seen = [a], set()
    while work:
        x = work.pop()
        if x == b:
            return True
        for y in edges[x] - seen:
            seen.add(y)
            work.append(y)
    return False


def test_async_work_overlaps_a_slow_call_on_the_main_path():
    # The two calls meet: each signals the other and waits for it, which
    # succeeds only while both run at once (one after the other, the first
    # would wait in vain and time out).
    async_side, main_side = threading.Event(), threading.Event()
    met = []

    def meet(mine, theirs):
        def target(v):
            mine.set()
            met.append(theirs.wait(timeout=60))
            return 2 * v

        return target

    uir.custom_call.register("test_slow_double", meet(async_side, main_side))
    uir.custom_call.register("test_main_double", meet(main_side, async_side))
    try:
        text = _module(True, True, sync_sleep=True).replace(
            'c = f32[1024] custom-call(x), custom_call_target="test_slow_double"',
            'c = f32[1024] custom-call(x), custom_call_target="test_main_double"',
        )
        exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
        assert "async-start" in exe.thunk_kinds and "async-done" in exe.thunk_kinds
        # The done waits for everything scheduled before it, so blocking on the
        # work takes no worker from that.
        lines = exe.thunk_text.splitlines()[1:]
        done = next(i for i, line in enumerate(lines) if " async-done " in line)
        assert lines[done].endswith("after " + ", ".join(f"%{i}" for i in range(done)))
        x = _args()[0]
        got = exe(x, *_args()[1:])
        assert met == [True, True]
        np.testing.assert_array_equal(got[0], 2 * x)
        np.testing.assert_array_equal(got[1], 2 * x)
    finally:
        uir.custom_call.unregister("test_slow_double")
        uir.custom_call.unregister("test_main_double")


def test_async_work_overlaps_independent_compute(slow_double):
    args = _args()
    both = uir.compile(uir.hlo.parse_module(_module(True, True)), backend="cpu")
    # No thunk of the compute waits for the start, and the done waits for
    # the compute and the start: the two are free to run at once.
    edges = _thunk_edges(both)
    start, done = _thunk_number(both, "async-start"), _thunk_number(both, "async-done")
    compute = [k for k in edges if k not in (start, done)]
    assert compute and not any(_depends_on(edges, k, start) for k in compute)
    assert all(_depends_on(edges, done, k) for k in [start, *compute])
    # And in a profiled run they did: the work's interval (its own track)
    # overlaps the dots'.
    p = both.profile(*args, roofline=(30.0, 400.0))
    work = [e for e in p.events if e["thread"] == -1]
    gemms = [e for e in p.events if e["kind"] == "gemm"]
    assert len(work) == 1 and gemms
    assert any(
        g["start_ns"] < work[0]["end_ns"] and work[0]["start_ns"] < g["end_ns"] for g in gemms
    )
    m = uir.hlo.parse_module(_module(True, True))
    for got, want in zip(both(*args), uir.evaluate(m, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_failure_inside_async_work_is_raised_by_its_done():
    def target(v):
        if (v < 0).any():
            raise ValueError("no negative inputs")
        return 2 * v

    uir.custom_call.register("test_slow_double", target)
    try:
        exe = uir.compile(uir.hlo.parse_module(_module(True, True)), backend="cpu")
        x, a, b = _args()
        with pytest.raises(uir.CustomCallError, match="no negative inputs"):
            exe(-np.abs(x) - 1, a, b)
        got = exe(np.abs(x), a, b)  # usable afterwards
        np.testing.assert_array_equal(got[1], 2 * np.abs(x))
    finally:
        uir.custom_call.unregister("test_slow_double")


def _loop_module(with_update: bool) -> str:
    update = (
        f"  u = ((f32[{N}]), f32[{N}], u32[]) async-update(s), calls=%work\n" if with_update else ""
    )
    waited = "u" if with_update else "s"
    return f"""HloModule m
%work {{
  p = f32[{N}] parameter(0)
  ROOT r = f32[{N}] custom-call(p), custom_call_target="test_slow_double"
}}
%cond {{
  st = (s32[], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}}
%body {{
  st = (s32[], f32[{N}]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  v = f32[{N}] get-tuple-element(st), index=1
  s = ((f32[{N}]), f32[{N}], u32[]) async-start(v), calls=%work
  w = f32[{N}] negate(v)
{update}  d = f32[{N}] async-done({waited})
  r = f32[{N}] subtract(d, w)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT out = (s32[], f32[{N}]) tuple(j, r)
}}
ENTRY e {{
  x = f32[{N}] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[{N}]) tuple(zero, x)
  loop = (s32[], f32[{N}]) while(init), condition=%cond, body=%body
  ROOT y = f32[{N}] get-tuple-element(loop), index=1
}}
"""


@pytest.mark.parametrize("with_update", [False, True])
def test_async_pairs_inside_a_while_loop_run_every_iteration(with_update):
    calls = []

    def target(v):
        calls.append(1)
        time.sleep(0.002)  # still running when the update or done comes
        return 2 * v

    uir.custom_call.register("test_slow_double", target)
    try:
        m = uir.hlo.parse_module(_loop_module(with_update))
        exe = uir.compile(m, backend="cpu")
        x = np.arange(N, dtype=np.float32)
        np.testing.assert_array_equal(exe(x), 3.0**5 * x)  # 2v + v, five times
        assert len(calls) == 5
        np.testing.assert_array_equal(exe(x), uir.evaluate(m, x))
    finally:
        uir.custom_call.unregister("test_slow_double")


def test_profiles_show_async_work_on_a_track_of_its_own(slow_double):
    exe = uir.compile(uir.hlo.parse_module(_module(True, True)), backend="cpu")
    p = exe.profile(*_args(), roofline=(30.0, 400.0))
    work = [e for e in p.events if e["thread"] == -1]
    assert len(work) == 1 and work[0]["end_ns"] - work[0]["start_ns"] >= 140e6
    # The dots ran while the work did: some dot's interval overlaps the
    # work's (one dot may span all of it on a loaded machine, so none need
    # start inside it).
    gemms = [e for e in p.events if e["kind"] == "gemm"]
    start, end = work[0]["start_ns"], work[0]["end_ns"]
    assert any(g["start_ns"] < end and start < g["end_ns"] for g in gemms)
    trace = p.chrome_trace()["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in trace if e["name"] == "thread_name"}
    assert names[-1] == "async work" and names[0] == "caller"


def _copy_module(elements: int, with_compute: bool) -> str:
    """copy-start of `elements` floats beside the dots and tanh of _module
    (when `with_compute`), the copy's result and the compute's returned."""
    lines = [
        "HloModule copies",
        "ENTRY e {",
        f"  x = f32[{elements}] parameter(0)",
        f"  a = f32[{M},{M}] parameter(1)",
        f"  b = f32[{M},{M}] parameter(2)",
        f"  s = (f32[{elements}], f32[{elements}], u32[]) copy-start(x)",
    ]
    prev = "a"
    if with_compute:
        for k in range(COMPUTE_STEPS):
            lines.append(
                f"  d{k} = f32[{M},{M}] dot({prev}, b), lhs_contracting_dims={{1}}, "
                "rhs_contracting_dims={0}"
            )
            lines.append(f"  t{k} = f32[{M},{M}] tanh(d{k})")
            prev = f"t{k}"
    lines.append(f"  c = f32[{elements}] copy-done(s)")
    lines.append(f"  ROOT out = (f32[{elements}], f32[{M},{M}]) tuple(c, {prev})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_copy_start_copies_on_a_thread_of_its_own_while_compute_runs():
    elements = 1 << 25  # 128 MiB: a copy of several milliseconds
    m = uir.hlo.parse_module(_copy_module(elements, True))
    exe = uir.compile(m, backend="cpu")
    assert exe.thunk_kinds.get("async-start") == 1 and exe.thunk_kinds.get("async-done") == 1
    text = exe.thunk_text
    # The work is one memcpy, and the done finds the copy where it belongs.
    assert "async-start s launches copy s" in text and "results in place" in text
    assert exe.fallbacks == []
    rng = np.random.default_rng(1)
    x = rng.standard_normal(elements).astype(np.float32)
    _, a, b = _args()
    p = exe.profile(x, a, b, roofline=(30.0, 400.0))
    work = [e for e in p.events if e["thread"] == -1]
    assert len(work) == 1 and work[0]["kind"] == "copy"
    start, end = work[0]["start_ns"], work[0]["end_ns"]
    gemms = [e for e in p.events if e["kind"] == "gemm"]
    # The dots the schedule put between start and done ran while it copied.
    assert any(g["start_ns"] < end and start < g["end_ns"] for g in gemms), (work, gemms[:3])
    got = exe(x, a, b)
    np.testing.assert_array_equal(got[0], x)
    small = uir.hlo.parse_module(_copy_module(4096, True))
    xs = x[:4096].copy()
    for g, w in zip(
        uir.compile(small, backend="cpu")(xs, a, b), uir.evaluate(small, xs, a, b), strict=True
    ):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


_ALL_REDUCE = """HloModule reduce_one_replica
add {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}
ENTRY e {
  x = f32[4096] parameter(0)
  y = f32[4096] parameter(1)
  s = f32[4096] all-reduce-start(x), replica_groups={}, to_apply=add
  t = f32[4096] tanh(y)
  d = f32[4096] all-reduce-done(s)
  ROOT out = (f32[4096], f32[4096]) tuple(d, t)
}
"""


def test_all_reduce_start_runs_as_async_work_and_done_waits_for_it():
    m = uir.hlo.parse_module(_ALL_REDUCE)
    exe = uir.compile(m, backend="cpu")
    assert exe.thunk_kinds.get("async-start") == 1 and exe.thunk_kinds.get("async-done") == 1
    assert "async-start s launches collective s" in exe.thunk_text
    assert exe.fallbacks == []
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    got = exe(x, y)
    # One participant: the sum over the group is the operand itself.
    np.testing.assert_array_equal(got[0], x)
    for g, w in zip(got, uir.evaluate(m, x, y), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    p = exe.profile(x, y, roofline=(30.0, 400.0))
    assert [e["name"] for e in p.events if e["thread"] == -1] == ["s"]
