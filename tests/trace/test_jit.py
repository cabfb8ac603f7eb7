"""The JIT smoke kernel: LLVM IR built in memory, optimized for the host,
compiled by ORC inside the installed extension, run on NumPy arrays."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import uir
from uir import _core


def _vector_widths(ir: str) -> set[int]:
    return {int(w) for w in re.findall(r"<(\d+) x float>", ir)}


# Sizes around the vector width, the unrolled loop and the parallel grain
# (2**15), so tails and chunk edges are all exercised.
@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 9, 31, 33, 1000, (1 << 15) + 1, (1 << 20) + 3])
def test_add_matches_numpy_exactly(smoke_kernel, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    out = smoke_kernel(a, b)
    assert out.dtype == np.float32 and out.shape == (n,)
    np.testing.assert_array_equal(out, a + b)


def test_add_keeps_the_shape_of_multidimensional_inputs(smoke_kernel):
    a = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    out = smoke_kernel(a, a)
    assert out.shape == (2, 3, 5)
    np.testing.assert_array_equal(out, 2 * a)


def test_add_reads_strided_inputs_correctly(smoke_kernel):
    base = np.arange(4000, dtype=np.float32).reshape(40, 100)
    a = base[::2, 1::3]  # neither C- nor F-contiguous
    b = base.T[:50:1, ::2].T.copy()[: a.shape[0], : a.shape[1]]
    np.testing.assert_array_equal(smoke_kernel(a, b), a + b)


def test_add_leaves_its_inputs_untouched(smoke_kernel):
    a = np.ones(100_000, dtype=np.float32)
    b = np.full(100_000, 2.0, dtype=np.float32)
    smoke_kernel(a, b)
    assert (a == 1).all() and (b == 2).all()


def test_add_follows_ieee_special_values(smoke_kernel):
    a = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.4e38], dtype=np.float32)
    b = np.array([-np.inf, -np.inf, 1.0, -0.0, -0.0, 3.4e38], dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = a + b  # inf-inf is nan, 3.4e38+3.4e38 overflows to inf
    out = smoke_kernel(a, b)
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out[4])  # -0 + -0 is -0


def test_add_rejects_other_dtypes_naming_them(smoke_kernel):
    with pytest.raises(uir.ShapeError, match=r"float32 arrays, got float64\[4\] and float32\[4\]"):
        smoke_kernel(np.zeros(4), np.zeros(4, np.float32))


def test_add_rejects_mismatched_shapes_naming_them(smoke_kernel):
    with pytest.raises(uir.ShapeError, match=r"got float32\[2,3\] and float32\[3,2\]"):
        smoke_kernel(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))


def test_o3_vectorizes_for_the_host(smoke_kernel):
    assert _vector_widths(smoke_kernel.optimized_ir), smoke_kernel.optimized_ir


def test_o0_does_not_vectorize_and_still_computes():
    kernel = _core.codegen.SmokeAddKernel(0)
    assert not _vector_widths(kernel.optimized_ir)
    a = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(kernel(a, a), a + a)


@pytest.mark.parametrize("level", [-1, 4])
def test_bad_opt_level_is_a_value_error(level):
    with pytest.raises(ValueError, match="opt_level must be"):
        _core.codegen.SmokeAddKernel(level)


def test_kernels_from_separate_jits_coexist():
    kernels = [_core.codegen.SmokeAddKernel(level) for level in (1, 2, 3)]
    a = np.linspace(-1, 1, 5000, dtype=np.float32)
    for kernel in kernels:
        np.testing.assert_array_equal(kernel(a, a), a + a)


def test_add_is_safe_from_many_python_threads(smoke_kernel):
    a = np.arange(1 << 18, dtype=np.float32)
    results: list[bool] = []

    def work() -> None:
        for _ in range(5):
            results.append(bool(np.array_equal(smoke_kernel(a, a), a + a)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 20


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=40),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    )
)
def test_add_matches_numpy_on_random_arrays(smoke_kernel, a):
    b = np.flip(a).copy() if a.ndim else a.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        expected = a + b
    np.testing.assert_array_equal(smoke_kernel(a, b), expected)


def test_uir_coexists_with_another_llvm_in_the_process(run_python):
    # Debian's shared libLLVM exports every LLVM symbol; loading it globally
    # first would break uir if uir's private copy of LLVM were interposed or
    # registered its command-line options twice.
    code = (
        "import ctypes, ctypes.util, glob, sys\n"
        "libs = sorted(glob.glob('/usr/lib/llvm-19/lib/libLLVM.so*'))\n"
        "if not libs: sys.exit(77)\n"
        "ctypes.CDLL(libs[0], mode=ctypes.RTLD_GLOBAL)\n"
        "import numpy as np, uir\n"
        "k = uir._core.codegen.SmokeAddKernel(3)\n"
        "a = np.arange(64, dtype=np.float32)\n"
        "print(bool((k(a, a) == 2 * a).all()))\n"
    )
    result = run_python(code)
    if result.returncode == 77:
        pytest.fail("libLLVM.so from llvm-19-dev is missing; `make test` installs it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
