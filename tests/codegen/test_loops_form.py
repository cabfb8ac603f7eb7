"""Kernels in the loops form (a loop over loop ids with a prologue and an
epilogue, as a column reduction's accumulator needs): elementwise iOps over
slices whose rows follow each other in memory walk all their elements in
one loop, an iota still reading its own row and column. Results against
NumPy and the evaluator over random shapes."""

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
    ir = compiled.executable.llvm_ir_unoptimized
    # The body's slices are 512 x 8 (a loop id each): its iota, compare,
    # convert and store count to 4096 in one loop each; only the dram
    # read (a broadcast along the row) counts rows to 512 around a row.
    trips = re.findall(r"icmp ult i64 %[\w.]+, (\d+)$", ir, re.M)
    assert trips.count("4096") >= 4, trips
    assert trips.count("512") <= 1, trips
    sums, onehot = compiled(a)
    np.testing.assert_array_equal(onehot.sum(0), np.bincount(a, minlength=8))
    np.testing.assert_allclose(sums, np.bincount(a, np.arange(4096.0), minlength=8), rtol=1e-6)
