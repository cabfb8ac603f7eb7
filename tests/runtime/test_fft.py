"""The runtime's FFT (runtime/fft.h) against NumPy's pocketfft and the
reference evaluator (Eigen's FFT in double): FFT, IFFT, RFFT and IRFFT
over one to three innermost dimensions, with batch dimensions, in single
and double precision, on lengths that KISS FFT factors directly and on
prime lengths that run as Bluestein's convolution. The compiled executable
must run each as an "fft" thunk, never on the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

REAL = {"f32": np.float32, "f64": np.float64}
COMPLEX = {"f32": ("c64", np.complex64), "f64": ("c128", np.complex128)}
TOLERANCE = {"f32": 2e-5, "f64": 1e-11}
# Lengths factored by KISS FFT directly, and primes past its direct limit.
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 30, 61]
BLUESTEIN = [67, 127, 251, 1021]


def _module(kind, precision, batch, lengths):
    """An fft over `lengths` innermost, after `batch`, between a negate (so
    the fft is not a parameter's consumer alone) and the result."""
    real = precision
    complex_t, _ = COMPLEX[precision]
    half = [*lengths[:-1], lengths[-1] // 2 + 1]
    full = [*batch, *lengths]
    packed = [*batch, *half]
    if kind in ("FFT", "IFFT"):
        in_t, in_dims, out_t, out_dims = complex_t, full, complex_t, full
    elif kind == "RFFT":
        in_t, in_dims, out_t, out_dims = real, full, complex_t, packed
    else:
        in_t, in_dims, out_t, out_dims = complex_t, packed, real, full
    dims = lambda d: ",".join(map(str, d))  # noqa: E731
    text = f"""HloModule f

ENTRY e {{
  a = {in_t}[{dims(in_dims)}] parameter(0)
  n = {in_t}[{dims(in_dims)}] negate(a)
  ROOT f = {out_t}[{dims(out_dims)}] fft(n), fft_type={kind}, fft_length={{{dims(lengths)}}}
}}
"""
    return uir.hlo.parse_module(text), in_dims


def _numpy(kind, x, rank):
    axes = tuple(range(x.ndim - rank, x.ndim))
    if kind == "FFT":
        return np.fft.fftn(-x, axes=axes)
    if kind == "IFFT":
        return np.fft.ifftn(-x, axes=axes)
    if kind == "RFFT":
        return np.fft.rfftn(-x, axes=axes)
    return None  # IRFFT: the lengths are needed; see _check


def _check(kind, precision, batch, lengths, seed=0):
    module, in_dims = _module(kind, precision, batch, lengths)
    rng = np.random.default_rng(seed)
    _, ctype = COMPLEX[precision]
    if kind == "RFFT":
        x = rng.standard_normal(in_dims).astype(REAL[precision])
    elif kind == "IRFFT":
        # A half spectrum of a real signal, so NumPy and XLA agree on it.
        signal = rng.standard_normal([*batch, *lengths])
        axes = tuple(range(len(batch), len(batch) + len(lengths)))
        x = np.fft.rfftn(signal, axes=axes).astype(ctype)
    else:
        x = (rng.standard_normal(in_dims) + 1j * rng.standard_normal(in_dims)).astype(ctype)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    if np.prod(in_dims) > 0:
        assert exe.thunk_kinds.get("fft", 0) == 1, exe.thunk_text
    got = np.asarray(exe(x))
    if kind == "IRFFT":
        axes = tuple(range(len(batch), len(batch) + len(lengths)))
        want = np.fft.irfftn(-x.astype(np.complex128), s=lengths, axes=axes)
    else:
        want = _numpy(kind, x.astype(np.complex128 if kind != "RFFT" else np.float64), len(lengths))
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    tol = TOLERANCE[precision] * scale * max(1.0, np.log2(max(2, np.prod(lengths))))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    oracle = np.asarray(uir.evaluate(module, x))
    np.testing.assert_allclose(got, oracle, rtol=0, atol=tol)


@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
@pytest.mark.parametrize("n", LENGTHS + BLUESTEIN)
def test_one_dimensional_fft_of_every_kind_and_length(kind, n):
    _check(kind, "f32", [3], [n], seed=n)


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]),
    precision=st.sampled_from(["f32", "f64"]),
    batch=st.lists(st.integers(1, 3), max_size=2),
    lengths=st.lists(st.sampled_from([*LENGTHS, 67]), min_size=1, max_size=3),
    seed=st.integers(0, 9),
)
def test_multi_dimensional_fft_with_batches(kind, precision, batch, lengths, seed):
    if np.prod(lengths) * max(1, np.prod(batch)) > 40000:
        lengths = lengths[-1:]
    _check(kind, precision, batch, lengths, seed)


def test_large_transform_in_both_directions_round_trips():
    # 256 x 1024 lines: the column pass's blocks and the threads' chunks
    # both cut the lines; a round trip gives the input back.
    module_f, _ = _module("RFFT", "f32", [], [256, 1024])
    module_b, _ = _module("IRFFT", "f32", [], [256, 1024])
    x = np.random.default_rng(3).standard_normal((256, 1024)).astype(np.float32)
    spectrum = np.asarray(uir.compile(module_f, backend="cpu")(x))
    np.testing.assert_allclose(spectrum, np.fft.rfft2(-x), rtol=0, atol=2e-3)
    back = np.asarray(uir.compile(module_b, backend="cpu")(spectrum))
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-5)


def test_the_plan_is_shown_in_the_thunk_listing():
    module, _ = _module("RFFT", "f32", [4], [6, 10])
    exe = uir.compile(module, backend="cpu")
    (line,) = [
        t for t in exe.thunk_text.splitlines() if " fft " in t or t.strip().startswith("fft")
    ]
    assert "rfft f32 [6x10] x 4" in line, exe.thunk_text


@pytest.mark.parametrize("lengths", [[61], [4, 61, 67], [14, 22]])
def test_lines_of_generic_radices_run_on_every_worker_at_once(lengths):
    # KISS FFT's butterfly for factors past 5 keeps a scratch buffer in the
    # plan: each worker runs a copy of its own. Many lines, so every thread
    # works at once.
    batch = [max(2, 40000 // int(np.prod(lengths)))]
    for kind in ("FFT", "IRFFT"):
        _check(kind, "f32", batch, lengths, seed=len(lengths))
