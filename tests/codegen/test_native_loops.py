"""While loops compiled as one function over their kernels: the condition's
kernels, the test, the body's kernels, again, with no runtime dispatch per
iteration. Results against NumPy and the evaluator; loops that cannot run
that way (a parallel kernel, a nested loop) still run node by node."""

from __future__ import annotations

import numpy as np

import uir
import uir.numpy as unp
from uir import lax


def _compiled(fn, *args):
    return uir.jit(fn).lower(*args).compile()


def test_a_fori_loop_runs_as_one_function():
    x = np.linspace(-1, 1, 37, dtype=np.float32)
    c = _compiled(lambda x: lax.fori_loop(0, 1000, lambda i, v: v * 0.999 + 1.0, x), x)
    assert c.executable.native_loops == 1
    want = x.copy()
    for _ in range(1000):
        want = want * np.float32(0.999) + np.float32(1.0)
    np.testing.assert_allclose(c(x), want, rtol=1e-5)
    assert "define void @uir_loop_0(" in c.executable.llvm_ir


def test_a_data_dependent_condition_with_a_reduction():
    def fn(x):
        return lax.while_loop(lambda v: unp.sum(v) < 1000.0, lambda v: v * 1.5 + 0.25, x)

    x = np.full((8, 5), 0.1, np.float32)
    c = _compiled(fn, x)
    assert c.executable.native_loops == 1
    np.testing.assert_allclose(c(x), uir.jit(fn, backend="eval")(x), rtol=1e-6)
    zero_trips = np.full((8, 5), 100.0, np.float32)
    np.testing.assert_array_equal(c(zero_trips), zero_trips)


def test_loop_state_with_a_counter_and_constants_in_the_body():
    table = np.arange(12, dtype=np.float32).reshape(3, 4) / 10

    def fn(x):
        def body(i, carry):
            v, total = carry
            v = v * 0.5 + table
            return v, total + unp.sum(v) * i.astype(np.float32)

        return lax.fori_loop(0, 7, body, (x, np.float32(0)))

    x = np.ones((3, 4), np.float32)
    c = _compiled(fn, x)
    assert c.executable.native_loops == 1
    got, want = c(x), uir.jit(fn, backend="eval")(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_loop_over_large_arrays_keeps_its_parallel_kernels():
    """A body kernel that moves megabytes is split over the threads, which a
    single compiled loop would not do: that loop stays node by node."""
    x = np.ones(1 << 20, np.float32)
    c = _compiled(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2.0, x), x)
    threads = int(__import__("os").environ.get("UIR_NUM_THREADS", "0") or 0)
    if threads != 1 and (__import__("os").cpu_count() or 1) > 1:
        assert c.executable.native_loops == 0
    np.testing.assert_array_equal(c(x), np.full(1 << 20, 8.0, np.float32))


def test_nested_loops_run_the_inner_one_natively():
    def fn(x):
        inner = lambda v: lax.fori_loop(0, 4, lambda j, w: w + 1.0, v)  # noqa: E731
        return lax.fori_loop(0, 3, lambda i, v: inner(v) * 0.5, x)

    x = np.zeros(16, np.float32)
    c = _compiled(fn, x)
    assert c.executable.native_loops == 1  # the inner one; the outer holds a loop node
    np.testing.assert_allclose(c(x), uir.jit(fn, backend="eval")(x), rtol=1e-6)


LOOP_IR_CHECKS = """
// CHECK: define void @uir_loop_0(ptr %allocations, ptr %scratch, ptr %hooks)
// CHECK: entry:
// CHECK-NEXT: %buffers = alloca ptr, i64 {{[0-9]+}}
// CHECK-NEXT: br label %condition
// CHECK: condition:
// CHECK: call i32 @uir_kernel_{{[0-9]+}}(ptr %buffers, i64 0, i64 {{[0-9]+}}, ptr %scratch)
// CHECK: %predicate = load i8, ptr
// CHECK: br i1 %{{[0-9]+}}, label %body, label %exit
// CHECK: body:
// CHECK: call i32 @uir_kernel_{{[0-9]+}}(ptr %buffers, i64 0, i64 {{[0-9]+}}, ptr %scratch)
// CHECK: br label %condition
// CHECK: exit:
// CHECK-NEXT: ret void
"""


def test_the_loop_function_reads_as_condition_test_body(tmp_path):
    """FileCheck of the unoptimized LLVM IR of a compiled loop."""
    from golden_util import filecheck_text

    x = np.ones(8, np.float32)
    c = _compiled(lambda x: lax.fori_loop(0, 5, lambda i, v: v + 1.0, x), x)
    ir = c.executable.llvm_ir_unoptimized
    result = filecheck_text(LOOP_IR_CHECKS, ir, tmp_path / "loop.check")
    assert result.returncode == 0, result.stderr + "\n" + ir[ir.find("@uir_loop_0") - 20 :]


def test_a_scan_runs_natively_with_its_windows_placed_on_each_iteration():
    # The scan's slice of xs and its update of ys are dynamic windows: the
    # loop's code asks for their places through hooks on every iteration.
    def fn(xs, h):
        def step(carry, x):
            carry = carry * 0.9 + x
            return carry, carry * 2.0

        return lax.scan(step, h, xs)

    xs = np.random.default_rng(0).standard_normal((300, 5)).astype(np.float32)
    h = np.zeros(5, np.float32)
    c = _compiled(fn, xs, h)
    assert c.executable.native_loops == 1
    assert "hooks, predicate" in c.executable.thunk_text
    carry, ys = c(xs, h)
    want_carry, want_ys = h.copy(), np.empty_like(xs)
    for i in range(len(xs)):
        want_carry = want_carry * np.float32(0.9) + xs[i]
        want_ys[i] = want_carry * 2
    np.testing.assert_allclose(carry, want_carry, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ys, want_ys, rtol=1e-5, atol=1e-6)
    for g, w in zip((carry, ys), uir.jit(fn, backend="eval")(xs, h), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_dynamic_slices_and_updates_in_a_loop_clamp_like_xla():
    # Start indices past the end clamp (XLA's rule), in a loop that runs
    # natively: reads of rows i+1 and writes of rows i-1, clamped at both ends.
    def fn(x):
        def body(i, y):
            row = lax.dynamic_slice(x, (i + 1, 0), (1, 4))
            return lax.dynamic_update_slice(y, row * 2.0, (i - 1, 0))

        return lax.fori_loop(0, 9, body, unp.zeros_like(x))

    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    c = _compiled(fn, x)
    assert c.executable.native_loops == 1
    want = np.zeros_like(x)
    for i in range(9):
        src = min(max(i + 1, 0), 7)
        dst = min(max(i - 1, 0), 7)
        want[dst] = x[src] * 2
    np.testing.assert_array_equal(c(x), want)
    np.testing.assert_array_equal(c(x), uir.jit(fn, backend="eval")(x))


def test_xlas_scan_benchmark_runs_as_one_loop():
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from corpus import CORPUS

    from uir._src.evaluate import random_arguments

    path = CORPUS / "xla_backends_cpu_benchmarks_hlo__bench_scan_N2000_M3__0.hlo"
    module = uir.hlo.parse_module(path.read_text())
    exe = uir.compile(module, backend="cpu")
    assert exe.native_loops == 1
    args = random_arguments(exe.module, 0)
    for g, w in zip(exe(*args), uir.evaluate(exe.module, *args), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
