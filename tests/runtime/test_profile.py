"""compiled.profile: every thunk timed, per-op rows against the roofline,
and the run as Chrome trace events."""

from __future__ import annotations

import json

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
