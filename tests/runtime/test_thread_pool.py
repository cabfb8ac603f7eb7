"""ParallelFor: every index once, exceptions from workers reach the caller,
nested loops run on their chunk's thread."""

from __future__ import annotations

import numpy as np
import pytest

import uir
from uir import _core


@pytest.mark.parametrize(
    ("n", "grain"),
    [(0, 1), (1, 1), (10, 3), (1000, 1), (100_003, 64), (1 << 20, 1 << 15), (5, 100)],
)
def test_parallel_for_visits_every_index_once(n, grain):
    assert _core.runtime.parallel_sum_for_testing(n, grain) == n * (n - 1) // 2


def test_parallel_for_negative_count_does_nothing():
    assert _core.runtime.parallel_sum_for_testing(-5, 1) == 0


@pytest.mark.parametrize("throw_at", [0, 4_999, 99_999])
def test_exception_in_a_worker_reaches_the_caller(throw_at):
    with pytest.raises(uir.InternalError, match=f"reached {throw_at}"):
        _core.runtime.parallel_sum_for_testing(100_000, 16, throw_at)
    # The pool still works afterwards.
    assert _core.runtime.parallel_sum_for_testing(1000, 10) == 499_500


def test_bad_grain_is_an_internal_error_not_a_crash():
    with pytest.raises(uir.InternalError, match="grain must be >= 1"):
        _core.runtime.parallel_sum_for_testing(10, 0)


@pytest.mark.parametrize(("outer", "inner"), [(2, 1000), (3, 100), (16, 64), (200, 7)])
def test_a_loop_inside_a_chunk_runs_on_that_chunks_thread(outer, inner):
    # Chunks keep per-thread scratch (dot chains' blocks): a nested loop must
    # neither move to another thread nor let this thread start another chunk
    # of the outer loop while waiting. Stealing is a matter of timing, so
    # each shape runs many times (with stealing allowed, most runs move).
    for _ in range(50):
        visited, moved, reentered = _core.runtime.nested_parallel_for_for_testing(outer, inner)
        assert (visited, moved, reentered) == (outer * inner, 0, 0)


def test_the_result_pool_lets_the_oldest_buffers_go_to_keep_the_newest():
    # A large result must not find the pool full of stale smaller ones: in
    # the suite, 64M-element results were freed and faulted in afresh on
    # every call (105 ms a call instead of 37) because the 16M cases'
    # buffers still filled the 256 MiB the pool keeps.
    from uir import _core

    mib = 1 << 20
    kept, reused = _core.runtime.buffer_pool_for_testing([2 * mib, 3 * mib, 4 * mib], 8 * mib)
    assert kept == 7 * mib  # the 2 MiB buffer, given back first, made room
    assert reused[1] and reused[2]  # the kept ones come back as they were
    kept, _ = _core.runtime.buffer_pool_for_testing([4 * mib, 16 * mib], 8 * mib)
    assert kept == 4 * mib  # one larger than the limit is freed


def test_large_results_start_a_page_so_streaming_kernels_do_not_wait_on_4k_aliasing():
    # NumPy's large arrays start 16 bytes into a page; an output 64 bytes in
    # made every load of tanh(x) match the page offset of the store before
    # it. Pooled results (from 1 MiB) start a page.
    big = np.arange(1 << 20, dtype=np.float32)
    f = uir.jit(lambda x: uir.numpy.tanh(x) + 1)
    out = f(big)
    assert out.ctypes.data % 4096 == 0
    np.testing.assert_allclose(out, np.tanh(big) + 1, rtol=1e-6)
