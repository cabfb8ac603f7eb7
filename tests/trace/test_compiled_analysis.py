"""Compiled.cost_analysis() and memory_analysis(): the cost model's flops
and bytes, and the buffer assignment's sizes, in JAX's names; and
donation that reports what it cannot honour."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import uir
import uir.numpy as jnp


def test_cost_analysis_counts_a_matmul_and_its_bytes():
    a = np.ones((64, 32), np.float32)
    b = np.ones((32, 16), np.float32)
    compiled = uir.jit(lambda x, y: x @ y).lower(a, b).compile()
    cost = compiled.cost_analysis()
    assert cost["flops"] == 2 * 64 * 32 * 16
    assert cost["bytes accessed"] >= (64 * 32 + 32 * 16 + 64 * 16) * 4
    assert cost["thunks"] >= 1


def test_memory_analysis_has_jax_fields():
    x = np.ones((128, 128), np.float32)
    compiled = uir.jit(lambda v: jnp.tanh(v @ v).sum(axis=0)).lower(x).compile()
    m = compiled.memory_analysis()
    assert m.argument_size_in_bytes == x.nbytes
    assert m.output_size_in_bytes == 128 * 4
    assert m.alias_size_in_bytes == 0
    assert m.temp_size_in_bytes >= 128 * 128 * 4  # the product lives between the dot and the sum
    assert m.generated_code_size_in_bytes > 0
    assert m.peak_memory_in_bytes >= m.argument_size_in_bytes + m.output_size_in_bytes
    assert m.host_temp_size_in_bytes == 0


def test_memory_analysis_counts_donated_arguments_as_aliases():
    x = np.ones(1024, np.float32)
    compiled = uir.jit(lambda v: v * 2, donate_argnums=0).lower(x).compile()
    assert compiled.memory_analysis().alias_size_in_bytes == x.nbytes


def test_donation_writes_aligned_arrays_in_place_and_warns_for_others():
    # The executable's own donating call (uir.jit's skips donation under
    # UIR_FLAGS=--check_kernel_graph, which reads the arguments after).
    x = np.ones(1000, np.float32)
    run = uir.jit(lambda v: v * 2, donate_argnums=0).lower(x).compile().executable.call_donating
    aligned = uir.device_put(x)
    assert aligned.ctypes.data % 64 == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = run([aligned], [0])
    assert np.shares_memory(out, aligned) and out[0] == 2
    raw = np.empty(1000 * 4 + 64, np.uint8)
    start = (-raw.ctypes.data % 64) + 16  # 16 past a 64-byte boundary: NumPy's alignment
    unaligned = raw[start : start + 4000].view(np.float32)
    unaligned[:] = 1
    with pytest.warns(UserWarning, match="not 64-byte aligned"):
        out = run([unaligned], [0])
    assert not np.shares_memory(out, unaligned) and out[0] == 2
    read_only = uir.device_put(x)
    read_only.flags.writeable = False
    with pytest.warns(UserWarning, match="read-only"):
        run([read_only], [0])
    with pytest.warns(UserWarning, match="converted"):
        run([np.ones(2000, np.float32)[::2]], [0])
