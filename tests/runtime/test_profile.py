"""compiled.profile: every thunk timed, per-op rows against the roofline,
and the run as Chrome trace events."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import uir
import uir.lax as lax
import uir.numpy as unp

ROOFLINE = (30.0, 400.0)  # GB/s, GFLOP/s: fixed, so tests do not measure the machine


def mlp(x, w1, b1, w2):
    return uir.nn.gelu(x @ w1 + b1) @ w2


def mlp_args(rows=64):
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((rows, 256), dtype=np.float32),
        rng.standard_normal((256, 1024), dtype=np.float32) / 16,
        rng.standard_normal(1024).astype(np.float32),
        rng.standard_normal((1024, 256), dtype=np.float32) / 32,
    )


def test_the_profile_of_an_mlp_has_a_row_per_op_summing_to_the_call():
    args = mlp_args(256)
    compiled = uir.jit(mlp).lower(*args).compile()
    # The best of three: a loaded machine may stop the caller between thunks.
    p = max(
        (compiled.profile(*args, roofline=ROOFLINE) for _ in range(3)),
        key=lambda q: q.thunks_ms / q.call_ms,
    )
    np.testing.assert_allclose(p.result, mlp(*args), rtol=2e-4, atol=2e-4)
    kinds = [r.kind for r in p.rows]
    assert kinds.count("gemm") == 2 and "kernel" in kinds
    for r in p.rows:
        assert r.calls == 1 and r.time_ms > 0 and r.bytes > 0 and r.depth == 0
    gemms = [r for r in p.rows if r.kind == "gemm"]
    assert sorted(r.flops for r in gemms) == [2 * 256 * 256 * 1024] * 2
    for r in gemms:
        assert r.gflops == pytest.approx(r.flops / (r.time_ms * 1e6))
        assert r.roofline == pytest.approx(r.flops / 400e9 / (r.time_ms / 1e3))
    # The thunks account for the call within 10% (arguments are read in
    # place, results computed where they are returned).
    assert p.thunks_ms <= p.call_ms
    assert p.thunks_ms >= 0.9 * p.call_ms, str(p)
    text = str(p)
    assert "GFLOP/s" in text and all(r.op in text for r in p.rows)


def test_ops_inside_a_while_loop_are_counted_per_iteration():
    def f(x, w):
        return lax.fori_loop(0, 5, lambda i, h: unp.tanh(h @ w), x)

    x = np.ones((64, 64), np.float32)
    w = np.eye(64, dtype=np.float32) * 0.5
    p = uir.jit(f).lower(x, w).compile().profile(x, w, roofline=ROOFLINE)
    loop = next(r for r in p.rows if r.kind == "while")
    assert loop.depth == 0 and loop.roofline is None
    inner = [r for r in p.rows if r.depth == 1]
    gemm = next(r for r in inner if r.kind == "gemm")
    assert gemm.calls == 5 and gemm.flops == 5 * 2 * 64 * 64 * 64
    assert sum(r.time_ms for r in inner) <= loop.time_ms


def _check_trace_event(e):
    # The trace-event format's complete ("X") and metadata ("M") events.
    assert isinstance(e["name"], str) and e["name"]
    assert e["ph"] in ("X", "M")
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    if e["ph"] == "X":
        assert isinstance(e["ts"], float) and e["ts"] >= 0
        assert isinstance(e["dur"], float) and e["dur"] >= 0
        assert isinstance(e["cat"], str)
        assert isinstance(e["args"], dict)
    else:
        assert e["name"] in ("thread_name", "process_name")
        assert isinstance(e["args"]["name"], str)


def test_the_chrome_trace_is_trace_event_json_with_a_track_per_worker(tmp_path):
    args = mlp_args(512)
    p = uir.jit(mlp).lower(*args).compile().profile(*args, roofline=ROOFLINE)
    path = tmp_path / "trace.json"
    p.save_chrome_trace(path)
    trace = json.loads(path.read_text())
    assert set(trace) == {"traceEvents", "displayTimeUnit"}
    events = trace["traceEvents"]
    for e in events:
        _check_trace_event(e)
    complete = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in complete} >= {r.op for r in p.rows}
    named = {e["tid"] for e in events if e["name"] == "thread_name"}
    assert {e["tid"] for e in complete} <= named
    chunks = [e for e in complete if e["cat"] == "chunk"]
    if uir.info()["threads"] > 1:
        # The gelu epilogue over 512x1024 splits in chunks over the workers
        # (which worker takes which is the scheduler's choice).
        assert len(chunks) >= 2
    # Every chunk lies inside its kernel's event.
    for c in chunks:
        owner = next(e for e in complete if e["name"] == c["name"] and e["cat"] == "kernel")
        assert owner["ts"] <= c["ts"] + 1e-3
        assert c["ts"] + c["dur"] <= owner["ts"] + owner["dur"] + 1e-3


def test_profiles_need_compiled_code():
    m = uir.hlo.parse_module("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p)\n}")
    with pytest.raises(ValueError, match="profiles time compiled code"):
        uir.compile(m, backend="eval").profile(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        uir.compile(m, backend="cpu").profile()


def test_a_profiled_run_matches_an_unprofiled_one():
    args = mlp_args(64)
    compiled = uir.jit(mlp).lower(*args).compile()
    np.testing.assert_array_equal(
        compiled.profile(*args, roofline=ROOFLINE).result, uir.jit(mlp)(*args)
    )


def _softmax(x):
    e = unp.exp(x - unp.max(x, axis=1, keepdims=True))
    return e / unp.sum(e, axis=1, keepdims=True)


def test_loop_body_timers_add_a_row_per_igraph_after_its_kernel():
    x = np.random.default_rng(4).standard_normal((512, 1024)).astype(np.float32)
    compiled = uir.jit(_softmax).lower(x).compile()
    p = compiled.profile(x, roofline=ROOFLINE, loop_bodies=True)
    # The timed run computes what the plain one does.
    assert p.result.tobytes() == compiled(x).tobytes()
    kg = compiled.kernel_graph
    parallel = {
        ig.name: ig.num_parallel for n in kg.nodes if n.kind == "kernel" for ig in n.igraphs
    }
    bodies = [(i, r) for i, r in enumerate(p.rows) if r.kind == "loop body"]
    assert {r.op for _, r in bodies} == set(parallel)
    for i, r in bodies:
        owner = p.rows[i - 1]
        while owner.kind == "loop body":
            owner = p.rows[p.rows.index(owner) - 1]
        # After the kernel that ran it, one level down; every parallel id
        # ran its body once.
        assert owner.kind == "kernel" and r.depth == owner.depth + 1
        assert r.calls == parallel[r.op]
        # Thread time inside the bodies: positive, and no more than every
        # thread busy for the whole kernel.
        assert 0 < r.time_ms <= owner.time_ms * uir._core.runtime.num_threads() * 1.05 + 0.05
    # Body rows are inside their kernels: the thunks still sum as before.
    assert p.thunks_ms == pytest.approx(sum(r.time_ms for r in p.rows if r.depth == 0))
    assert "loop body" in str(p)


def test_loop_body_timers_count_every_iteration_of_a_compiled_loop():
    def f(x):
        return lax.fori_loop(0, 7, lambda i, v: unp.tanh(v) * 0.5 + 1.0, x)

    x = np.linspace(-1, 1, 256, dtype=np.float32)
    compiled = uir.jit(f).lower(x).compile()
    assert compiled.executable.native_loops == 1
    p = compiled.profile(x, roofline=ROOFLINE, loop_bodies=True)
    assert p.result.tobytes() == compiled(x).tobytes()
    calls = {r.op: r.calls for r in p.rows if r.kind == "loop body"}
    # Every iGraph's parallel ids, sub-graphs' included, from the text.
    text = compiled.kernel_graph.to_text()
    parallel = {
        name: int(count)
        for name, count in re.findall(
            r"igraph (\S+) \{\n[^\n]*\n\s*parallel \(numParallel=(\d+)", text
        )
    }
    # The condition's kernel ran 8 times, the body's 7, each time every
    # parallel id once (the compiled loop runs them all on one thread).
    assert calls.pop("compare") == 8
    assert calls and all(c == 7 * parallel[op] for op, c in calls.items())
    assert sorted(calls.values())[-1] >= 14


def test_timed_kernels_read_the_cycle_counter_and_plain_ones_do_not(tmp_path):
    from golden_util import filecheck_text

    x = np.ones((8, 128), np.float32)
    kg = uir.jit(_softmax).lower(x).compile().kernel_graph
    timed = kg.compile(time_loop_bodies=True, keep_text=True).llvm_ir_unoptimized
    checks = """
// CHECK: @uir_kernel_0_body_time = global [2 x i64] zeroinitializer, align 64
// CHECK: define i32 @uir_kernel_0(
// CHECK: %start = call i64 @llvm.readcyclecounter()
// CHECK: %end = call i64 @llvm.readcyclecounter()
// CHECK-NEXT: [[T:%[0-9]+]] = sub i64 %end, %start
// CHECK-NEXT: atomicrmw add ptr @uir_kernel_0_body_time, i64 [[T]] monotonic, align 8
// CHECK-NEXT: atomicrmw add ptr getelementptr inbounds (i64, ptr @uir_kernel_0_body_time, i64 1)
"""
    result = filecheck_text(checks, timed, tmp_path / "timed.check")
    assert result.returncode == 0, result.stderr
    plain = kg.compile(keep_text=True).llvm_ir_unoptimized
    assert "readcyclecounter" not in plain and "body_time" not in plain
    # A timed executable is for profiles: it does not serialize.
    with pytest.raises(uir.InternalError, match="loop-body timers"):
        kg.compile(time_loop_bodies=True).serialize()


def test_a_library_epilogues_loop_body_follows_its_epilogue_kernel():
    args = mlp_args()
    p = uir.jit(mlp).lower(*args).compile().profile(*args, roofline=ROOFLINE, loop_bodies=True)
    np.testing.assert_allclose(p.result, mlp(*args), rtol=2e-4, atol=2e-4)
    rows = p.rows
    bodies = [i for i, r in enumerate(rows) if r.kind == "loop body"]
    assert bodies
    for i in bodies:
        kernel = rows[i - 1]
        assert kernel.kind == "kernel" and rows[i].depth == kernel.depth + 1
        assert kernel.op.removesuffix(".epilogue") == rows[i].op.split(".epilogue")[0]
