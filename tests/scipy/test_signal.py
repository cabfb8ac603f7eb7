"""uir.scipy.signal against SciPy: N-dimensional convolution and
correlation (direct and by FFT, real and complex, every mode, either
operand the larger), the 2-D forms with every boundary, and detrend."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as sg

import uir
import uir.scipy.signal as us

RNG = np.random.default_rng(2)
IMAGE = RNG.standard_normal((6, 7)).astype(np.float32)
KERNEL = RNG.standard_normal((3, 2)).astype(np.float32)
MODES = ["full", "same", "valid"]


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_forms_match_scipy(name, mode):
    f, g = getattr(us, name), getattr(sg, name)
    close(f(IMAGE, KERNEL, mode), g(IMAGE, KERNEL, mode))
    close(f(KERNEL, IMAGE, mode), g(KERNEL, IMAGE, mode))
    close(f(IMAGE, KERNEL, mode, method="fft"), g(IMAGE, KERNEL, mode, method="fft"))
    z1 = (IMAGE + 1j * IMAGE[::-1]).astype(np.complex64)
    z2 = (KERNEL - 2j * KERNEL).astype(np.complex64)
    close(f(z1, z2, mode), g(z1, z2, mode))
    v = RNG.standard_normal(9).astype(np.float32)
    close(f(v, v[:4], mode), g(v, v[:4], mode))


@pytest.mark.parametrize("mode", MODES)
def test_fftconvolve_matches_scipy(mode):
    close(us.fftconvolve(IMAGE, KERNEL, mode), sg.fftconvolve(IMAGE, KERNEL, mode))
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    close(us.fftconvolve(x, y, mode, axes=1), sg.fftconvolve(x, y, mode, axes=1))


@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
@pytest.mark.parametrize("mode", MODES)
def test_2d_forms_with_every_boundary(mode, boundary):
    close(
        us.convolve2d(IMAGE, KERNEL, mode, boundary, fillvalue=1.5),
        sg.convolve2d(IMAGE, KERNEL, mode, boundary, fillvalue=1.5),
    )
    close(
        us.correlate2d(IMAGE, KERNEL, mode, boundary), sg.correlate2d(IMAGE, KERNEL, mode, boundary)
    )


@pytest.mark.parametrize("kind", ["linear", "constant"])
@pytest.mark.parametrize("bp", [0, [3], [2, 5]])
def test_detrend(kind, bp):
    close(us.detrend(IMAGE, axis=1, type=kind, bp=bp), sg.detrend(IMAGE, axis=1, type=kind, bp=bp))
    close(us.detrend(IMAGE, axis=0, type=kind), sg.detrend(IMAGE, axis=0, type=kind))


def test_traced_and_refused():
    close(
        uir.jit(lambda a, b: us.convolve(a, b, "same"))(IMAGE, KERNEL),
        sg.convolve(IMAGE, KERNEL, "same"),
    )
    with pytest.raises(uir.TraceError, match="mode"):
        us.convolve(IMAGE, KERNEL, "middle")
    with pytest.raises(uir.TraceError, match="valid"):
        us.convolve(np.ones((2, 5)), np.ones((3, 3)), "valid")
