"""Kernels in the loops form (a loop over loop ids with a prologue and an
epilogue, as a column reduction's accumulator needs): elementwise iOps over
slices whose rows follow each other in memory walk all their elements in
one loop, an iota still reading its own row and column; consecutive
elementwise iOps of one shape run as one loop, values passing in registers
and local values no other iOp reads never stored; a run feeding a column
reduction is folded into it row by row. Results against NumPy and the
evaluator over random shapes and types."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp


def _one_hot_counts(a, cols):
    # One-hot rows (an iota along the columns), weighted by the row index
    # (an iota along the rows), summed down the columns: a column
    # reduction beside a multi-output write of the one-hot matrix.
    onehot = (a[:, None] == unp.arange(cols)[None, :]).astype(np.float32)
    weighted = onehot * unp.arange(a.shape[0], dtype=np.float32)[:, None]
    return weighted.sum(0), onehot


def _trip_counts(compiled):
    ir = compiled.executable.llvm_ir_unoptimized
    return re.findall(r"icmp ult i64 %[\w.]+, (\d+)$", ir, re.M)


def _plan_lines(compiled):
    return [
        line
        for line in compiled.kernel_graph.to_text().splitlines()
        if line.strip().startswith("plan ")
    ]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 19), st.integers(0, 2**32 - 1))
def test_short_rows_in_the_loops_form_match_numpy_and_the_evaluator(rows, cols, seed):
    a = np.random.default_rng(seed).integers(0, cols + 1, rows).astype(np.int32)
    f = uir.jit(lambda a: _one_hot_counts(a, cols))
    compiled = f.lower(a).compile()
    assert compiled.fallbacks == []
    sums, onehot = compiled(a)
    want_onehot = (a[:, None] == np.arange(cols)[None, :]).astype(np.float32)
    np.testing.assert_array_equal(onehot, want_onehot)
    want_sums = (want_onehot * np.arange(rows, dtype=np.float32)[:, None]).sum(0)
    np.testing.assert_allclose(sums, want_sums, rtol=1e-6)
    ref_sums, ref_onehot = uir.evaluate(f.lower(a).module, a)
    np.testing.assert_array_equal(onehot, ref_onehot)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-6)


def test_a_short_row_is_no_inner_loop_of_its_own():
    a = np.random.default_rng(0).integers(0, 8, 4096).astype(np.int32)
    compiled = uir.jit(lambda a: _one_hot_counts(a, 8)).lower(a).compile()
    assert any("plan loops" in line for line in _plan_lines(compiled.executable)), (
        compiled.executable.kernel_graph
    )
    # The body's slices are 512 x 8 (a loop id each): its iotas, compare,
    # convert and product count to 4096 in one loop, and so does the store
    # of the one-hot rows after the column sum; only the dram read (a
    # broadcast along the row) counts rows to 512 around a row.
    trips = _trip_counts(compiled)
    assert trips.count("4096") == 2, trips
    assert trips.count("512") <= 1, trips
    sums, onehot = compiled(a)
    np.testing.assert_array_equal(onehot.sum(0), np.bincount(a, minlength=8))
    np.testing.assert_allclose(sums, np.bincount(a, np.arange(4096.0), minlength=8), rtol=1e-6)


def _loss_and_gradient(x, y):
    # A sum of squares beside an elementwise output: one kernel in the loops
    # form (the scalar's accumulator), its body two runs of elementwise
    # iOps around the row sum.
    d = x - y
    return unp.sum(d * d), d * 2 + y


def test_consecutive_elementwise_iops_run_as_one_loop():
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((256, 1024)).astype(np.float32) for _ in range(2))
    compiled = uir.jit(_loss_and_gradient).lower(x, y).compile()
    assert any("plan loops" in line for line in _plan_lines(compiled.executable))
    # A loop id is 4096 elements: the two reads, the difference and the
    # square in one loop, the row sum in another, the doubling, sum and
    # store in a third (each iOp had been a loop of its own: nine).
    assert _trip_counts(compiled).count("4096") == 3, _trip_counts(compiled)
    ir = compiled.executable.llvm_ir_unoptimized
    # Stores: the accumulator's start, y's copy and the difference (read
    # again by the second run), the square (read by the row sum), the row
    # sum and the accumulator, and the two outputs. x's copy, the fill of
    # 2, the doubling and the sum are values only (all stored before: 13).
    stores = re.findall(r"^\s+store ", ir, re.M)
    assert len(stores) == 8, len(stores)
    total, grad = compiled(x, y)
    d = x.astype(np.float64) - y
    np.testing.assert_allclose(total, (d * d).sum(), rtol=1e-5)
    np.testing.assert_array_equal(grad, (x - y) * np.float32(2) + y)


def _two_inputs(rows, cols, dtype, seed):
    import ml_dtypes

    t = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        x, y = (rng.integers(-1000, 1000, (rows, cols)).astype(t) for _ in range(2))
    else:
        x, y = (rng.standard_normal((rows, cols)).astype(t) for _ in range(2))
    return t, x, y


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 300),
    st.integers(1, 300),
    st.sampled_from(["float32", "bfloat16", "int32"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_runs_of_elementwise_iops_match_numpy_and_the_evaluator(rows, cols, dtype, by_rows, seed):
    # bfloat16 rounds every iOp's result as its buffer would: the values
    # passed in registers must round the same way.
    _, x, y = _two_inputs(rows, cols, dtype, seed)
    axis = 1 if by_rows else 0

    def f(a, b):
        d = a - b
        s = d * (a + b)
        return s.sum(axis), d * 3 - b, s

    jitted = uir.jit(f)
    compiled = jitted.lower(x, y).compile()
    assert compiled.fallbacks == []
    total, lin, prod = compiled(x, y)
    ref_total, ref_lin, ref_prod = uir.evaluate(jitted.lower(x, y).module, x, y)
    np.testing.assert_array_equal(lin, ref_lin)
    np.testing.assert_array_equal(prod, ref_prod)
    if dtype == "int32":
        np.testing.assert_array_equal(total, ref_total)
        np.testing.assert_array_equal(prod, (x - y) * (x + y))
    else:
        wide = prod.astype(np.float64).sum(axis)
        tol = 1e-5 if dtype == "float32" else 2e-2
        scale = np.abs(prod.astype(np.float64)).sum(axis) + 1
        assert np.all(np.abs(total.astype(np.float64) - wide) <= tol * scale)


def test_a_run_feeding_a_column_reduction_is_folded_row_by_row():
    g = np.random.default_rng(1).standard_normal((256, 4096)).astype(np.float32)
    compiled = uir.jit(lambda g: g.sum(0)).lower(g).compile()
    assert any("plan loops" in line for line in _plan_lines(compiled.executable))
    # A loop id reads 8 rows of 1024 columns. The block's rows go from the
    # input straight into the sum: no loop of 8 copies them to a local
    # buffer first (the row loop of the fold counts 7, after row 0).
    trips = _trip_counts(compiled)
    assert "8" not in trips and trips.count("7") == 1, trips
    # Stores: the accumulator's start and its copy, row 0 and the fold
    # into the block's sum, the sum added to the accumulator, the output
    # (with the block's copy: seven).
    stores = re.findall(r"^\s+store ", compiled.executable.llvm_ir_unoptimized, re.M)
    assert len(stores) == 5, len(stores)
    np.testing.assert_allclose(compiled(g), g.astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 300),
    st.integers(1, 700),
    st.sampled_from(["float32", "bfloat16", "int32"]),
    st.sampled_from(["sum", "max", "min"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_runs_feeding_column_reductions_match_the_evaluator(rows, cols, dtype, reducer, keep, seed):
    # The fold reads each row from the run's registers; a run output that
    # is also the kernel's (keep) is still stored.
    t, x, y = _two_inputs(rows, cols, dtype, seed)
    reduce = getattr(unp, reducer)

    def f(a, b):
        s = a * b - b
        return (reduce(s, axis=0), s) if keep else reduce(s, axis=0)

    jitted = uir.jit(f)
    compiled = jitted.lower(x, y).compile()
    assert compiled.fallbacks == []
    got = compiled(x, y)
    ref = uir.evaluate(jitted.lower(x, y).module, x, y)
    got, ref = (list(v) if keep else [v] for v in (got, ref))
    if keep:
        np.testing.assert_array_equal(got[1], ref[1])
    if dtype == "int32" or reducer != "sum":
        np.testing.assert_array_equal(got[0], ref[0])
    else:
        s = (x * y - y).astype(t).astype(np.float64)
        tol = 1e-5 if dtype == "float32" else 2e-2
        assert np.all(np.abs(got[0].astype(np.float64) - s.sum(0)) <= tol * (np.abs(s).sum(0) + 1))
