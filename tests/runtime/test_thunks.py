"""The CPU backend's thunks: which thunk each Kernel Graph node becomes, the
dependency DAG the executor derives from the slices they declare (checked
against every conflict, over the core corpus too), results against the
evaluator, and failures inside a concurrent run."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from thunk_util import check_dag, parse_thunks

import uir
from uir._src.core.backend import Executable


def scheduled(body: str, params: str) -> uir.hlo.HloModule:
    return uir.hlo.parse_module(f"HloModule m, is_scheduled=true\nENTRY e {{\n{params}\n{body}\n}}")


def test_a_chain_of_kernels_runs_in_order_on_the_calling_thread():
    lines = [f"  n{i} = f32[4] negate({'p' if i == 0 else f'n{i - 1}'})" for i in range(5)]
    exe = Executable(
        scheduled("\n".join(lines), "  p = f32[4] parameter(0)"), "cpu", optimized=True
    )
    text = exe.thunk_text
    assert text.splitlines()[0] == "5 thunks, sequential"
    thunks = parse_thunks(text)[0]
    assert [t["kind"] for t in thunks] == ["kernel"] * 5
    assert all(t["after"] == {t["index"] - 1} for t in thunks[1:])
    check_dag(thunks)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(exe(x), -x)


def test_independent_kernels_run_as_a_dag_and_a_reused_buffer_waits_for_its_readers():
    # a and b are independent; c reads a, and d (scheduled after c) may be
    # placed where a was: d then waits for c, which reads a.
    n = 1 << 15
    body = f"""  a = f32[{n}] exponential(p0)
  b = f32[{n}] negate(p1)
  c = f32[{n}] multiply(a, a)
  d = f32[{n}] sine(p1)
  ROOT r = (f32[{n}], f32[{n}], f32[{n}]) tuple(b, c, d)"""
    params = f"  p0 = f32[{n}] parameter(0)\n  p1 = f32[{n}] parameter(1)"
    exe = Executable(scheduled(body, params), "cpu", optimized=True)
    text = exe.thunk_text
    thunks = parse_thunks(text)[0]
    assert check_dag(thunks) >= 1
    if uir.info()["threads"] > 1:
        assert exe.concurrent, text
        assert text.splitlines()[0].endswith("sources")
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    want = uir.evaluate(exe.module, x, y)
    for _ in range(20):
        for g, w in zip(exe(x, y), want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_each_node_kind_becomes_its_thunk():
    import uir.lax as lax
    import uir.numpy as unp

    def f(x, w, k):
        h = unp.tanh(x @ w)
        looped = lax.fori_loop(0, 3, lambda i, v: v * 0.5 + 1.0, h)
        picked = lax.cond(k > 0, lambda v: v + 1.0, lambda v: v - 1.0, looped)
        return picked, unp.sort(x, axis=1)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)
    compiled = uir.jit(f).lower(x, w, np.int32(1)).compile()
    kinds = compiled.executable.thunk_kinds
    assert kinds.get("gemm") == 1, compiled.executable.thunk_text
    assert kinds.get("while") == 1 and kinds.get("conditional") == 1
    assert kinds.get("kernel", 0) >= 3
    for sequence in parse_thunks(compiled.executable.thunk_text):
        check_dag(sequence)
    for k in (1, -1):
        got = compiled(x, w, np.int32(k))
        want = uir.evaluate(compiled.module, x, w, np.int32(k))
        for g, e in zip(got, want, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_a_plain_copy_is_a_memcpy_thunk():
    body = "  ROOT c = f32[300,7] copy(p)"
    exe = Executable(scheduled(body, "  p = f32[300,7] parameter(0)"), "cpu", optimized=True)
    assert exe.thunk_kinds == {"copy": 1}, exe.thunk_text
    x = np.arange(2100, dtype=np.float32).reshape(300, 7)
    np.testing.assert_array_equal(exe(x), x)


def test_a_call_runs_its_callee_in_place():
    text = """HloModule m, is_scheduled=true
callee {
  a = f32[8] parameter(0)
  ROOT e = f32[8] exponential(a)
}
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] call(p), to_apply=callee
  ROOT n = f32[8] negate(c)
}"""
    exe = Executable(uir.hlo.parse_module(text), "cpu", optimized=True)
    kinds = exe.thunk_kinds
    assert kinds.get("call", 0) + kinds.get("fallback", 0) == 1, exe.thunk_text
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    np.testing.assert_allclose(exe(x), -np.exp(x), rtol=1e-6)


def test_a_failing_custom_call_beside_concurrent_kernels_raises_and_the_next_call_works():
    calls = {"n": 0}

    def flaky(v):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("second call fails")
        return (v * 2).astype(np.float32)

    uir.custom_call.register("thunk_flaky", flaky)
    try:
        n = 1 << 15
        body = f"""  a = f32[{n}] exponential(p0)
  b = f32[{n}] negate(p1)
  c = f32[16] custom-call(p2), custom_call_target="thunk_flaky"
  ROOT r = (f32[{n}], f32[{n}], f32[16]) tuple(a, b, c)"""
        params = (
            f"  p0 = f32[{n}] parameter(0)\n  p1 = f32[{n}] parameter(1)\n"
            "  p2 = f32[16] parameter(2)"
        )
        exe = Executable(scheduled(body, params), "cpu", optimized=True)
        assert exe.thunk_kinds.get("custom-call") == 1
        check_dag(parse_thunks(exe.thunk_text)[0])
        x = np.ones(n, np.float32)
        v = np.arange(16, dtype=np.float32)
        a, b, c = exe(x, x, v)
        np.testing.assert_array_equal(c, 2 * v)
        with pytest.raises(uir.CustomCallError, match="second call fails"):
            exe(x, x, v)
        a, b, c = exe(x, x, v)
        np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
        np.testing.assert_array_equal(b, -x)
        np.testing.assert_array_equal(c, 2 * v)
    finally:
        uir.custom_call.unregister("thunk_flaky")


def test_threads_calling_a_concurrent_executable_get_their_own_results():
    n = 1 << 15
    body = f"""  a = f32[{n}] exponential(p0)
  b = f32[{n}] negate(p1)
  c = f32[{n}] add(a, b)
  ROOT r = (f32[{n}], f32[{n}]) tuple(c, b)"""
    params = f"  p0 = f32[{n}] parameter(0)\n  p1 = f32[{n}] parameter(1)"
    exe = Executable(scheduled(body, params), "cpu", optimized=True)
    rng = np.random.default_rng(2)
    inputs = [[rng.standard_normal(n).astype(np.float32) for _ in range(2)] for _ in range(8)]
    errors = []

    def call(k):
        x, y = inputs[k]
        try:
            for _ in range(30):
                c, b = exe(x, y)
                np.testing.assert_allclose(c, np.exp(x) - y, rtol=1e-6, atol=1e-6)
                np.testing.assert_array_equal(b, -y)
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_an_in_place_scatter_of_one_element_beside_a_small_kernel_stays_sequential():
    # The scatter's slices span 400 KB, but in place it moves a few bytes:
    # running the two independent thunks on workers would cost more than
    # it saves (the executor weighs bytes moved, not slices reached).
    module = uir.hlo.parse_module("""HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }

assign {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}

ENTRY e {
  x = f32[100000] parameter(0)
  i = s32[1] parameter(1)
  u = f32[] parameter(2)
  q = f32[4] parameter(3)
  s = f32[100000] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=assign
  n = f32[4] negate(q)
  ROOT t = (f32[100000], f32[4]) tuple(s, n)
}
""")
    exe = Executable(module, "cpu", optimized=True)
    text = exe.thunk_text
    assert text.splitlines()[0] == "2 thunks, sequential", text
    scatter, kernel = parse_thunks(text)[0]
    assert scatter["kind"] == "scatter" and kernel["kind"] == "kernel" and not kernel["after"]
    x = np.zeros(100000, np.float32)
    q = np.arange(4, dtype=np.float32)
    s, n = exe(x, np.array([7], np.int32), np.float32(3), q)
    assert s[7] == 3 and s.sum() == 3
    np.testing.assert_array_equal(n, -q)
