"""jax.numpy's signal functions: the window functions (bartlett, hanning,
hamming, blackman, kaiser), convolve, correlate and unwrap."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy import creation, manipulation, reductions, ufuncs
from uir._src.numpy import indexing as np_indexing
from uir._src.numpy.statistics import diff
from uir._src.numpy.ufuncs import _floats
from uir._src.numpy.util import public_asarray


@eager
def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete 1-D convolution (commutative: the longer input slides)."""
    a, v = asarray(a), asarray(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate(a, manipulation.flip(v), mode, "convolve")


@eager
def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The 1-D cross-correlation."""
    a, v = asarray(a), asarray(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        # correlate(a, v) is the reversed conjugate of correlate(v, a).
        return ufuncs.conj(manipulation.flip(_correlate(v, ufuncs.conj(a), mode, "correlate")))
    return _correlate(a, ufuncs.conj(v), mode, "correlate")


def _correlate(a, v, mode: str, name: str):
    if a.ndim != 1 or v.ndim != 1:
        fail(name, "takes one-dimensional arrays")
    m = v.shape[0]
    if mode == "full":
        pad = (m - 1, m - 1)
    elif mode == "same":
        # NumPy's centering: the middle of the full result, starting at
        # (m - 1) // 2 for a convolution and at m - 1 - m // 2 for a correlation.
        pad = (
            (m - 1 - (m - 1) // 2, (m - 1) // 2) if name == "convolve" else (m // 2, m - 1 - m // 2)
        )
    elif mode == "valid":
        pad = (0, 0)
    else:
        fail(name, f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    padded = manipulation.pad_constant(a, [pad])
    k = padded.shape[0] - m + 1
    windows = manipulation.stack([padded[i : i + k] for i in range(m)])
    return reductions.sum(windows * manipulation.expand_dims(v, 1), axis=0)


# --- windows, polynomials, sets --------------------------------------------------------


def _window(name, fn):
    def f(M: int):
        if M < 1:
            return creation.zeros((0,), dtypes.default_float())
        if M == 1:
            return creation.ones((1,), dtypes.default_float())
        n = np.arange(M)
        return public_asarray(fn(n, M).astype(dtypes.default_float()))

    f.__name__ = name
    f.__doc__ = f"The {name} window of M points (as NumPy's)."
    return f


bartlett = _window("bartlett", lambda n, M: 1 - np.abs(2 * n / (M - 1) - 1))
hanning = _window("hanning", lambda n, M: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))
hamming = _window("hamming", lambda n, M: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))
blackman = _window(
    "blackman",
    lambda n, M: (
        0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1)) + 0.08 * np.cos(4 * np.pi * n / (M - 1))
    ),
)


@eager
def unwrap(p, discont=None, axis: int = -1, period: float = 2 * np.pi):
    """p with jumps larger than discont (period / 2) unwrapped by periods."""
    p = _floats(p)
    ax = ops.normalize_axis(axis, p.ndim, "unwrap")
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    dd = diff(p, axis=ax)
    ddmod = ufuncs.remainder(dd + half, period) - half
    ddmod = ufuncs.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = ufuncs.where(ufuncs.abs(dd) < discont, 0, ddmod - dd)
    first = np_indexing._take(p, creation.arange(0, 1), axis=ax)
    rest = np_indexing._take(p, creation.arange(1, p.shape[ax]), axis=ax) + reductions.cumsum(
        correction, axis=ax
    )
    return manipulation.concatenate([first, rest], axis=ax)


def kaiser(M: int, beta: float):
    """The Kaiser window of M points."""
    if M < 1:
        return creation.zeros((0,), dtypes.default_float())
    if M == 1:
        return creation.ones((1,), dtypes.default_float())
    n = np.arange(M)
    alpha = (M - 1) / 2.0
    w = np.i0(beta * np.sqrt(1 - ((n - alpha) / alpha) ** 2)) / np.i0(float(beta))
    return public_asarray(w.astype(dtypes.default_float()))


__all__ = [
    "bartlett",
    "blackman",
    "convolve",
    "correlate",
    "hamming",
    "hanning",
    "kaiser",
    "unwrap",
]
