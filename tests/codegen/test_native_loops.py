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
// CHECK: define void @uir_loop_0(ptr %allocations, ptr %scratch)
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
