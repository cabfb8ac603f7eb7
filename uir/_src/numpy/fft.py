"""jax.numpy.fft: discrete Fourier transforms on XLA's fft op (lax.fft),
which transforms up to three trailing dimensions at once: the axes asked
for are moved last, resized to the lengths asked for (cut or zero-padded),
transformed three at a time (the transform is separable), moved back and
scaled by `norm`."""

from __future__ import annotations

import math
import operator

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.lax import fft as _lax_fft
from uir._src.numpy import indexing, manipulation, ufuncs

_NORMS = (None, "backward", "ortho", "forward")


def _complex_type(dtype) -> np.dtype:
    if dtypes.is_complex(dtype):
        return np.dtype(dtype)
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)


def _real_type(dtype) -> np.dtype:
    if dtypes.is_float(dtype) and np.dtype(dtype).itemsize >= 4:
        return np.dtype(dtype)
    if np.dtype(dtype) == np.complex128:
        return np.dtype(np.float64)
    return dtypes.default_float() if not dtypes.is_float(dtype) else np.dtype(np.float32)


def _resize(name: str, x, axis: int, n: int):
    """`x` cut or zero-padded at the end of `axis` to n elements."""
    if n < 1:
        fail(name, f"invalid number of data points ({n}) along axis {axis}: must be at least 1")
    have = x.shape[axis]
    if have > n:
        return indexing._take(x, np.arange(n), axis=axis)
    if have < n:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - have)
        return manipulation.pad_constant(x, widths)
    return x


def _scale(x, kind: str, norm, count: int):
    """The normalization of `norm` on a transform of `count` points: XLA's
    inverse transforms divide by it already."""
    inverse = kind in ("IFFT", "IRFFT")
    if norm in (None, "backward"):
        return x
    if norm == "ortho":
        factor = math.sqrt(count) if inverse else 1 / math.sqrt(count)
    else:  # forward
        factor = count if inverse else 1 / count
    return ufuncs.multiply(x, ops.convert(ops.asarray(factor), _real_type(x.dtype)))


def _transform(name: str, kind: str, a, s, axes, norm):
    if norm not in _NORMS:
        fail(name, f"invalid norm {norm!r}: one of None, 'backward', 'ortho' or 'forward'")
    x = asarray(a)
    if s is not None:
        s = [operator.index(n) for n in s]
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [ops.normalize_axis(int(ax), x.ndim, name) for ax in axes]
    axes = [ax % x.ndim if x.ndim else ax for ax in axes]
    if len(set(axes)) != len(axes):
        fail(name, f"repeated axes {axes}")
    if not axes:
        return x
    if kind == "RFFT":
        if dtypes.is_complex(x.dtype):
            fail(name, f"needs real input, got {ops.describe(x)}")
        x = ops.convert(x, _real_type(x.dtype))
    else:
        x = ops.convert(x, _complex_type(x.dtype))
    if s is None:
        s = [x.shape[ax] for ax in axes]
        if kind == "IRFFT":
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
    if len(s) != len(axes):
        fail(name, f"{len(s)} lengths for {len(axes)} axes")
    for ax, n in zip(axes[:-1], s[:-1], strict=True):
        x = _resize(name, x, ax, n)
    x = _resize(name, x, axes[-1], s[-1] // 2 + 1 if kind == "IRFFT" else s[-1])
    # The axes last, in order.
    k = len(axes)
    x = manipulation.moveaxis(x, axes, list(range(x.ndim - k, x.ndim)))
    lengths = list(s)
    if kind in ("FFT", "IFFT"):
        for start in range(0, k, 3):
            stop = min(k, start + 3)
            # Bring the group last, transform, put it back.
            group = list(range(x.ndim - k + start, x.ndim - k + stop))
            y = manipulation.moveaxis(x, group, list(range(x.ndim - len(group), x.ndim)))
            y = _lax_fft(y, kind, lengths[start:stop])
            x = manipulation.moveaxis(y, list(range(x.ndim - len(group), x.ndim)), group)
    elif kind == "RFFT":
        tail = lengths[-3:]
        x = _lax_fft(x, "RFFT", tail)
        if k > 3:
            x = _transform(name, "FFT", x, lengths[:-3], list(range(x.ndim - k, x.ndim - 3)), None)
    else:  # IRFFT: the complex axes first, then the real ones
        if k > 3:
            x = _transform(name, "IFFT", x, lengths[:-3], list(range(x.ndim - k, x.ndim - 3)), None)
        x = _lax_fft(x, "IRFFT", lengths[-3:])
    x = manipulation.moveaxis(x, list(range(x.ndim - k, x.ndim)), axes)
    return _scale(x, kind, norm, math.prod(lengths))


def _one(name: str, kind: str):
    def f(a, n=None, axis: int = -1, norm=None):
        return _transform(name, kind, a, None if n is None else [n], [axis], norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{kind} along one axis, as jax.numpy.fft.{name}."
    return eager(f)


def _two(name: str, kind: str):
    def f(a, s=None, axes=(-2, -1), norm=None):
        return _transform(name, kind, a, s, axes, norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{kind} over two axes, as jax.numpy.fft.{name}."
    return eager(f)


def _many(name: str, kind: str):
    def f(a, s=None, axes=None, norm=None):
        return _transform(name, kind, a, s, axes, norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{kind} over any axes, as jax.numpy.fft.{name}."
    return eager(f)


fft, ifft, rfft, irfft = (
    _one(n, k) for n, k in (("fft", "FFT"), ("ifft", "IFFT"), ("rfft", "RFFT"), ("irfft", "IRFFT"))
)
fft2, ifft2, rfft2, irfft2 = (
    _two(n, k)
    for n, k in (("fft2", "FFT"), ("ifft2", "IFFT"), ("rfft2", "RFFT"), ("irfft2", "IRFFT"))
)
fftn, ifftn, rfftn, irfftn = (
    _many(n, k)
    for n, k in (("fftn", "FFT"), ("ifftn", "IFFT"), ("rfftn", "RFFT"), ("irfftn", "IRFFT"))
)

_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


@eager
def hfft(a, n=None, axis: int = -1, norm=None):
    """The FFT of a signal whose spectrum is Hermitian (given by its
    non-negative half): a real result, as jax.numpy.fft.hfft."""
    if norm not in _NORMS:
        fail("hfft", f"invalid norm {norm!r}: one of None, 'backward', 'ortho' or 'forward'")
    x = ufuncs.conj(ops.convert(asarray(a), _complex_type(asarray(a).dtype)))
    return _transform("hfft", "IRFFT", x, None if n is None else [n], [axis], _SWAPPED[norm])


@eager
def ihfft(a, n=None, axis: int = -1, norm=None):
    """The inverse of hfft: the non-negative half of a real signal's
    Hermitian spectrum, as jax.numpy.fft.ihfft."""
    if norm not in _NORMS:
        fail("ihfft", f"invalid norm {norm!r}: one of None, 'backward', 'ortho' or 'forward'")
    out = _transform("ihfft", "RFFT", a, None if n is None else [n], [axis], _SWAPPED[norm])
    return ufuncs.conj(out)


def _frequencies(name: str, values: np.ndarray, n: int, d, dtype):
    n = operator.index(n)
    if n < 1:
        fail(name, f"n must be positive, got {n}")
    dtype = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    k = ops.convert(ops.asarray(values), dtype)
    return ufuncs.divide(
        k, ufuncs.multiply(ops.convert(asarray(d), dtype), ops.convert(ops.asarray(n), dtype))
    )


@eager
def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point fft with spacing d:
    [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n)."""
    n = operator.index(n)
    values = (
        np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
        if n > 0
        else np.zeros(0)
    )
    return _frequencies("fftfreq", values, n, d, dtype)


@eager
def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d n)."""
    n = operator.index(n)
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, dtype)


def _shift(name: str, x, axes, sign: int):
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(ops.normalize_axis(int(ax), x.ndim, name) for ax in axes)
    shifts = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return manipulation.roll(x, shifts, axes) if axes else x


@eager
def fftshift(x, axes=None):
    """The zero frequency moved to the middle of each of `axes`."""
    return _shift("fftshift", x, axes, 1)


@eager
def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)


__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
