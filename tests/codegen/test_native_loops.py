"""While loops compiled as one function over their kernels: the condition's
kernels, the test, the body's kernels, again, with no runtime dispatch per
iteration. Results against NumPy and the evaluator; loops that cannot run
that way (a parallel kernel, a nested loop) still run node by node."""

from __future__ import annotations

import numpy as np
import pytest
from loop_modules import constant_loop

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
// CHECK: define void @uir_loop_0(ptr %allocations, ptr %scratch, ptr %hooks, ptr %constants)
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


CONSTANT_LOOP_IR_CHECKS = """
// CHECK: define void @uir_loop_0(ptr %allocations, ptr %scratch, ptr %hooks, ptr %constants)
// CHECK: body:
// CHECK: [[AT:%[0-9]+]] = getelementptr inbounds ptr, ptr %constants, i64 0
// CHECK-NEXT: [[C:%[0-9]+]] = load ptr, ptr [[AT]]
// CHECK: store ptr [[C]], ptr
// CHECK: call i32 @uir_kernel_{{[0-9]+}}(ptr %buffers
// CHECK-NOT: inttoptr
// CHECK: ret void
"""


def test_a_loop_reads_the_constants_of_its_kernels_from_the_table_it_is_passed(tmp_path):
    """The compiled loop holds no address of this process (so its machine
    code can be stored and loaded elsewhere): a constant array its body's
    kernel reads comes from the `constants` table."""
    from golden_util import filecheck_text

    text, table = constant_loop(16, 3)
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.native_loops == 1
    ir = exe.llvm_ir_unoptimized
    loop = ir[ir.find("define void @uir_loop_0") :]
    result = filecheck_text(CONSTANT_LOOP_IR_CHECKS, loop, tmp_path / "loop.check")
    assert result.returncode == 0, result.stderr + "\n" + loop
    x = np.ones(16, np.float32)
    np.testing.assert_allclose(exe(x), table**3, rtol=1e-6)


def test_a_scan_runs_natively_with_its_windows_placed_on_each_iteration():
    # The scan's slice of xs and its update of ys are dynamic windows: the
    # loop's code computes their places on every iteration.
    def fn(xs, h):
        def step(carry, x):
            carry = carry * 0.9 + x
            return carry, carry * 2.0

        return lax.scan(step, h, xs)

    xs = np.random.default_rng(0).standard_normal((300, 5)).astype(np.float32)
    h = np.zeros(5, np.float32)
    c = _compiled(fn, xs, h)
    assert c.executable.native_loops == 1
    # Every offset is computed by the loop's own code: no hook is called.
    assert "while while" in c.executable.thunk_text and " native, predicate" in (
        c.executable.thunk_text
    )
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
    from corpus import CORPUS, MISSING, PRESENT

    if not PRESENT:
        pytest.skip(MISSING)
    from uir._src.core.evaluate import random_arguments

    path = CORPUS / "xla_backends_cpu_benchmarks_hlo__bench_scan_N2000_M3__0.hlo"
    module = uir.hlo.parse_module(path.read_text())
    exe = uir.compile(module, backend="cpu")
    assert exe.native_loops == 1
    args = random_arguments(exe.module, 0)
    for g, w in zip(exe(*args), uir.evaluate(exe.module, *args), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


INDEX_EXPRESSIONS = {
    # JAX's wrap of negative indices, then arithmetic XLA defines at the edges.
    "wrap": "lt = pred[] compare(i, z), direction=LT\n  w = T[] add(i, n)\n  e = T[] select(lt, w, i)",
    "divide": "e = T[] divide(i, three)",
    "remainder": "e = T[] remainder(i, three)",
    "by_zero": "e = T[] divide(i, z)",
    "clamp": "e = T[] clamp(three, i, n)",
    "minmax": "m = T[] maximum(i, z)\n  e = T[] minimum(m, three)",
    "negate": "e = T[] negate(i)",
    "abs_mul": "a = T[] abs(i)\n  e = T[] multiply(a, three)",
}


@pytest.mark.parametrize(
    ("index_type", "expression"),
    [
        (t, e)
        for t in ["s32", "u32", "s8", "u8", "s64"]
        for e in sorted(INDEX_EXPRESSIONS)
        if not (e == "abs_mul" and t.startswith("u"))  # abs takes signed types
    ],
)
def test_index_programs_compiled_into_a_loop_compute_what_the_evaluator_does(
    index_type, expression
):
    # The loop reads row e(i) of x through a window and writes its running
    # sum into row e(i) of y (a lone dynamic-update-slice): both offsets are
    # computed by the loop's own code on every iteration.
    t = index_type
    expr = INDEX_EXPRESSIONS[expression].replace("T[]", f"{t}[]")
    state = f"({t}[], f32[4], f32[9,4], f32[9,4])"
    text = f"""HloModule m
cond {{
  p = {state} parameter(0)
  i = {t}[] get-tuple-element(p), index=0
  end = {t}[] constant(12)
  ROOT lt = pred[] compare(i, end), direction=LT
}}
body {{
  p = {state} parameter(0)
  i = {t}[] get-tuple-element(p), index=0
  acc = f32[4] get-tuple-element(p), index=1
  x = f32[9,4] get-tuple-element(p), index=2
  y = f32[9,4] get-tuple-element(p), index=3
  z = {t}[] constant(0)
  n = {t}[] constant(9)
  three = {t}[] constant(3)
  {expr}
  zero = {t}[] constant(0)
  row = f32[1,4] dynamic-slice(x, e, zero), dynamic_slice_sizes={{1,4}}
  r = f32[4] reshape(row)
  acc1 = f32[4] add(acc, r)
  upd = f32[1,4] reshape(acc1)
  y1 = f32[9,4] dynamic-update-slice(y, upd, e, zero)
  one = {t}[] constant(1)
  i1 = {t}[] add(i, one)
  ROOT t = {state} tuple(i1, acc1, x, y1)
}}
ENTRY e {{
  i0 = {t}[] parameter(0)
  x = f32[9,4] parameter(1)
  a = f32[4] constant({{0, 0, 0, 0}})
  zf = f32[] constant(0)
  y = f32[9,4] broadcast(zf), dimensions={{}}
  s = {state} tuple(i0, a, x, y)
  w = {state} while(s), condition=cond, body=body
  acc = f32[4] get-tuple-element(w), index=1
  out = f32[9,4] get-tuple-element(w), index=3
  ROOT r = (f32[4], f32[9,4]) tuple(acc, out)
}}
"""
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.native_loops == 1, exe.thunk_text
    dtype = np.dtype(
        {"s32": np.int32, "u32": np.uint32, "s8": np.int8, "u8": np.uint8, "s64": np.int64}[t]
    )
    info = np.iinfo(dtype)
    x = np.arange(36, dtype=np.float32).reshape(9, 4)
    # (The loop counts up to 12: starts far below would run for ever.)
    for start in (0, 5, -3, -20, 11, max(info.min, -40), info.max - 1):
        i0 = np.array(start).astype(dtype)
        got = exe(i0, x)
        want = uir.evaluate(exe.module, i0, x)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_a_column_written_in_a_loop_is_copied_by_a_hook():
    # A column is not contiguous in a row-major array: the loop calls back
    # into the runtime for that block copy, and stays one function.
    def fn(x):
        def body(i, y):
            row = lax.dynamic_slice(x, (i, 0), (1, 8))
            col = unp.reshape(row * 3.0, (8, 1))
            return lax.dynamic_update_slice(y, col, (0, i))

        return lax.fori_loop(0, 6, body, unp.zeros((8, 6), np.float32))

    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    c = _compiled(fn, x)
    assert c.executable.native_loops == 1, c.executable.thunk_text
    assert "hooks, predicate" in c.executable.thunk_text
    np.testing.assert_array_equal(c(x), x.T * 3)
    np.testing.assert_array_equal(c(x), uir.jit(fn, backend="eval")(x))
