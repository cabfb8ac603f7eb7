"""jax.scipy.signal: N-dimensional convolution and correlation (direct, on
lax's convolution, or by FFT), the 2-D forms with SciPy's boundary modes,
and detrend."""

from __future__ import annotations

import itertools

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import fail
from uir._src.lax import convolution
from uir._src.numpy import fft, manipulation, padding, reductions, ufuncs
from uir._src.numpy.ufuncs import _real_of
from uir._src.numpy.util import public_asarray

_MODES = ("full", "same", "valid")


def _inexact_pair(name: str, in1, in2):
    in1, in2 = ops.promote(name, in1, in2)
    if not (dtypes.is_float(in1.dtype) or dtypes.is_complex(in1.dtype)):
        in1 = ops.convert(in1, dtypes.default_float(), in1.weak_type)
        in2 = ops.convert(in2, dtypes.default_float(), in2.weak_type)
    if in1.ndim != in2.ndim:
        fail(
            name,
            f"in1 and in2 should have the same dimensionality, got {in1.shape} and {in2.shape}",
        )
    return in1, in2


def _check_mode(name: str, mode: str, in1, in2):
    if mode not in _MODES:
        fail(name, f"mode must be one of {_MODES}, got {mode!r}")
    if mode == "valid":
        bigger = all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))
        smaller = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
        if not (bigger or smaller):
            fail(
                name,
                "for 'valid' mode, one must be at least as large as the other in every "
                f"dimension, got {in1.shape} and {in2.shape}",
            )


def _real_convolve(in1, kernel, pads, precision):
    """The valid convolution of in1 (padded by `pads`) with `kernel`
    (already flipped): lax's convolution with one batch and one feature."""
    lhs = manipulation.reshape(in1, (1, 1, *in1.shape))
    rhs = manipulation.reshape(kernel, (1, 1, *kernel.shape))
    out = convolution.conv_general_dilated(lhs, rhs, (1,) * in1.ndim, pads, precision=precision)
    return manipulation.reshape(out, out.shape[2:])


def _direct(in1, in2, mode: str, precision):
    """convolve(in1, in2, mode) on lax's convolution (complex operands as
    four real convolutions)."""
    if mode == "valid" and any(a < b for a, b in zip(in1.shape, in2.shape, strict=True)):
        in1, in2 = in2, in1
    if mode == "full":
        pads = [(k - 1, k - 1) for k in in2.shape]
    elif mode == "same":
        pads = [(k // 2, (k - 1) // 2) for k in in2.shape]
    else:
        pads = [(0, 0)] * in1.ndim
    kernel = manipulation.flip(in2)
    if not dtypes.is_complex(in1.dtype):
        return _real_convolve(in1, kernel, pads, precision)
    a, b = ufuncs.real(in1), ufuncs.imag(in1)
    c, d = ufuncs.real(kernel), ufuncs.imag(kernel)
    real = ufuncs.subtract(
        _real_convolve(a, c, pads, precision), _real_convolve(b, d, pads, precision)
    )
    imag = ufuncs.add(_real_convolve(a, d, pads, precision), _real_convolve(b, c, pads, precision))
    return ufuncs.add(real, ufuncs.multiply(imag, 1j)).astype(in1.dtype)


def _crop(full, shape1, shape2, mode: str, axes):
    """The part of a full convolution that `mode` keeps along `axes`."""
    if mode == "full":
        return full
    index = [slice(None)] * full.ndim
    for ax in axes:
        n, k = shape1[ax], shape2[ax]
        if mode == "same":
            start = (k - 1) // 2
            index[ax] = slice(start, start + n)
        else:
            index[ax] = slice(min(n, k) - 1, max(n, k))
    return full[tuple(index)]


@eager(static=("mode", "axes"))
def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """convolve by FFT along `axes` (all by default); the other axes
    broadcast."""
    in1, in2 = _inexact_pair("fftconvolve", in1, in2)
    if mode not in _MODES:
        fail("fftconvolve", f"mode must be one of {_MODES}, got {mode!r}")
    axes = (
        tuple(range(in1.ndim))
        if axes is None
        else tuple(a % in1.ndim for a in ((axes,) if isinstance(axes, int) else axes))
    )
    if in1.size == 0 or in2.size == 0:
        fail("fftconvolve", "in1 and in2 must not be empty")
    for ax in range(in1.ndim):
        if (
            ax not in axes
            and in1.shape[ax] != in2.shape[ax]
            and 1 not in (in1.shape[ax], in2.shape[ax])
        ):
            fail("fftconvolve", f"incompatible shapes along axis {ax}: {in1.shape} and {in2.shape}")
    if mode == "valid":
        bigger = all(in1.shape[a] >= in2.shape[a] for a in axes)
        smaller = all(in1.shape[a] <= in2.shape[a] for a in axes)
        if not (bigger or smaller):
            fail("fftconvolve", "for 'valid' mode, one must be at least as large as the other")
        if smaller and not bigger:
            in1, in2 = in2, in1
    lengths = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if dtypes.is_complex(in1.dtype):
        product = ufuncs.multiply(fft.fftn(in1, lengths, axes), fft.fftn(in2, lengths, axes))
        full = fft.ifftn(product, lengths, axes)
    else:
        product = ufuncs.multiply(fft.rfftn(in1, lengths, axes), fft.rfftn(in2, lengths, axes))
        full = fft.irfftn(product, lengths, axes)
    return _crop(full, in1.shape, in2.shape, mode, axes).astype(in1.dtype)


@eager(static=("mode", "method"))
def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-dimensional convolution of in1 and in2 (same number of
    dimensions); method 'direct' and 'auto' on lax's convolution, 'fft' by
    FFT."""
    in1, in2 = _inexact_pair("convolve", in1, in2)
    _check_mode("convolve", mode, in1, in2)
    if method not in ("auto", "direct", "fft"):
        fail("convolve", f"method must be 'auto', 'direct' or 'fft', got {method!r}")
    if in1.ndim == 0:
        return ufuncs.multiply(in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _direct(in1, in2, mode, precision)


@eager(static=("mode", "method"))
def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-dimensional cross-correlation: convolve with in2 reversed and
    conjugated."""
    in1, in2 = _inexact_pair("correlate", in1, in2)
    _check_mode("correlate", mode, in1, in2)
    if in1.ndim == 0:
        return ufuncs.multiply(in1, ufuncs.conj(in2))
    swapped = mode == "valid" and any(a < b for a, b in zip(in1.shape, in2.shape, strict=True))
    if swapped:
        # SciPy's valid correlation of a smaller in1: the larger slides, the
        # result reversed and conjugated.
        out = convolve(in2, manipulation.flip(ufuncs.conj(in1)), mode, method, precision)
        return manipulation.flip(ufuncs.conj(out))
    return convolve(in1, manipulation.flip(ufuncs.conj(in2)), mode, method, precision)


def _convolve2d(name: str, in1, in2, mode: str, boundary: str, fillvalue, precision):
    in1, in2 = _inexact_pair(name, in1, in2)
    if in1.ndim != 2:
        fail(name, f"takes two-dimensional arrays, got shapes {in1.shape} and {in2.shape}")
    _check_mode(name, mode, in1, in2)
    if boundary not in ("fill", "wrap", "symm"):
        fail(name, f"boundary must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    fill_is_zero = boundary == "fill" and isinstance(fillvalue, (int, float)) and fillvalue == 0
    if mode == "valid" or fill_is_zero:
        return _direct(in1, in2, mode, precision)
    # Pad in1 with the boundary's values as far as the kernel reaches, then
    # keep the mode's part of the valid convolution.
    widths = [(k - 1, k - 1) for k in in2.shape]
    if boundary == "fill":
        padded = padding.pad(in1, widths, constant_values=public_asarray(fillvalue))
    else:
        padded = padding.pad(in1, widths, mode="wrap" if boundary == "wrap" else "symmetric")
    full = _direct(padded, in2, "valid", precision)
    return _crop(full, in1.shape, in2.shape, mode, (0, 1))


@eager(static=("mode", "boundary"))
def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """The 2-D convolution, with SciPy's boundaries: 'fill' (with fillvalue),
    'wrap' (periodic) and 'symm' (mirrored)."""
    return _convolve2d("convolve2d", in1, in2, mode, boundary, fillvalue, precision)


@eager(static=("mode", "boundary"))
def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """The 2-D cross-correlation, with convolve2d's boundaries."""
    in1, in2 = public_asarray(in1), public_asarray(in2)
    swapped = mode == "valid" and any(a < b for a, b in zip(in1.shape, in2.shape, strict=True))
    if swapped:
        out = _convolve2d(
            "correlate2d",
            in2,
            manipulation.flip(ufuncs.conj(in1)),
            mode,
            boundary,
            fillvalue,
            precision,
        )
        return manipulation.flip(ufuncs.conj(out))
    kernel = manipulation.flip(ufuncs.conj(in2))
    if mode != "same":
        return _convolve2d("correlate2d", in1, kernel, mode, boundary, fillvalue, precision)
    # SciPy centres correlate2d's 'same' result k // 2 into the full one
    # (convolve2d's (k - 1) // 2).
    full = _convolve2d("correlate2d", in1, kernel, "full", boundary, fillvalue, precision)
    (m, n), (p, q) = in1.shape, in2.shape
    return full[p // 2 : p // 2 + m, q // 2 : q // 2 + n]


@eager(static=("axis", "type", "bp"))
def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """data less its mean ('constant') or its least-squares line ('linear',
    one per segment between the breakpoints bp) along `axis`."""
    data = public_asarray(data)
    if type not in ("linear", "l", "constant", "c"):
        fail("detrend", f"type must be 'linear' or 'constant', got {type!r}")
    if not (dtypes.is_float(data.dtype) or dtypes.is_complex(data.dtype)):
        data = ops.convert(data, dtypes.default_float())
    if type in ("constant", "c"):
        return ufuncs.subtract(data, reductions.mean(data, axis=axis, keepdims=True))
    axis = axis % data.ndim
    n = data.shape[axis]
    bounds = sorted({0, *(int(b) for b in np.atleast_1d(np.asarray(bp))), n})
    if bounds[0] < 0 or bounds[-1] > n:
        fail("detrend", f"breakpoints must lie in [0, {n}], got {bp}")
    pieces = []
    for lo, hi in itertools.pairwise(bounds):
        if hi == lo:
            continue
        index = [slice(None)] * data.ndim
        index[axis] = slice(lo, hi)
        part = data[tuple(index)]
        t = np.arange(hi - lo, dtype=np.float64)
        t -= t.mean()
        shape = [1] * data.ndim
        shape[axis] = hi - lo
        tt = public_asarray(t.reshape(shape).astype(_real_of(part.dtype)))
        centred = ufuncs.subtract(part, reductions.mean(part, axis=axis, keepdims=True))
        denominator = float((t * t).sum()) or 1.0
        slope = ufuncs.divide(
            reductions.sum(ufuncs.multiply(centred, tt), axis=axis, keepdims=True), denominator
        )
        pieces.append(ufuncs.subtract(centred, ufuncs.multiply(slope, tt)))
    return manipulation.concatenate(pieces, axis=axis)


__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "detrend",
    "fftconvolve",
]
