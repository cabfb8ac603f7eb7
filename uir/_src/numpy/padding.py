"""jax.numpy.pad in all of NumPy's modes: constant (a value per axis and
side), edge, wrap, reflect and symmetric (even or odd), linear_ramp,
maximum, minimum, mean and median (over stat_length elements), and empty.
Widths are static; each axis is padded in turn, with indices NumPy
computes at trace time (np.pad of an arange) where the mode only moves
elements."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.numpy import indexing, manipulation, reductions, statistics, ufuncs
from uir._src.numpy.manipulation import pad_constant

_MODES = (
    "constant",
    "edge",
    "wrap",
    "reflect",
    "symmetric",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
    "empty",
)
_KEYWORDS = {
    "constant": {"constant_values"},
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


def _pairs(name: str, value, ndim: int, kind: str):
    """NumPy's per-axis (before, after) broadcasting of pad_width and the
    mode's values."""
    try:
        return np.broadcast_to(np.asarray(value, dtype=object), (ndim, 2)).tolist()
    except ValueError:
        fail("pad", f"{kind} {value!r} does not broadcast to ({ndim}, 2)")


def _widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, Tracer) or ops.holds_tracers(pad_width):
        fail("pad", "pad_width must be static (a traced width would give a traced shape)")
    arr = np.asarray(pad_width)
    if arr.dtype.kind not in "iu" and not (arr.dtype == object or arr.size == 0):
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            fail("pad", f"pad_width must hold integers, got {pad_width!r}")
    widths = [(int(lo), int(hi)) for lo, hi in _pairs("pad", arr, ndim, "pad_width")]
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        fail("pad", f"pad widths must be non-negative, got {pad_width!r}")
    return widths


def _along(x, axis: int, index):
    return indexing.take(x, np.asarray(index, dtype=np.int32), axis=axis)


def _slice(x, axis: int, start: int, stop: int):
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _reflect(x, axis: int, lo: int, hi: int, mode: str, odd: bool, n0: int):
    """NumPy's reflection: chunks of at most n0 - 1 ('reflect') or n0
    ('symmetric') elements, each mirrored from the array padded so far
    (odd: 2·edge - mirror)."""
    span = n0 - 1 if mode == "reflect" else n0
    if span == 0:  # reflect of one element: edge
        return _along(x, axis, np.pad(np.arange(n0), (lo, hi), mode="edge"))
    while lo or hi:
        n = x.shape[axis]
        left, right = builtins.min(lo, span), builtins.min(hi, span)
        index = np.pad(np.arange(n), (left, right), mode=mode)
        out = _along(x, axis, index)
        if odd:
            edges = np.pad(np.arange(n), (left, right), mode="edge")
            mirrored = ufuncs.subtract(ufuncs.multiply(_along(x, axis, edges), 2), out)
            inside = np.zeros(n + left + right, dtype=bool)
            inside[left : left + n] = True
            shape = [1] * x.ndim
            shape[axis] = inside.size
            out = ufuncs.where(inside.reshape(shape), out, mirrored).astype(x.dtype)
        x, lo, hi = out, lo - left, hi - right
    return x


def _statistic(x, axis: int, lo: int, hi: int, mode: str, lengths):
    n = x.shape[axis]
    pieces = []
    for side, width, length in (("lo", lo, lengths[0]), ("hi", hi, lengths[1])):
        if width == 0:
            pieces.append(None)
            continue
        length = n if length is None else builtins.min(int(length), n)
        if length <= 0:
            fail("pad", f"stat_length must be positive, got {length}")
        part = _slice(x, axis, 0, length) if side == "lo" else _slice(x, axis, n - length, n)
        reduce = {
            "maximum": reductions.max,
            "minimum": reductions.min,
            "mean": reductions.mean,
            "median": statistics.median,
        }[mode]
        value = reduce(part, axis=axis, keepdims=True)
        if dtypes.is_int(x.dtype) and mode in ("mean", "median"):
            value = ufuncs.round(value)
        value = value.astype(x.dtype)
        shape = list(x.shape)
        shape[axis] = width
        pieces.append(manipulation.broadcast_to(value, tuple(shape)))
    parts = [p for p in (pieces[0], x, pieces[1]) if p is not None]
    return manipulation.concatenate(parts, axis=axis)


def _ramp(x, axis: int, lo: int, hi: int, ends):
    n = x.shape[axis]
    parts = []
    work = (
        x.dtype
        if dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)
        else dtypes.default_float()
    )
    for side, width, end in (("lo", lo, ends[0]), ("hi", hi, ends[1])):
        if width == 0:
            continue
        edge = _slice(x, axis, 0, 1) if side == "lo" else _slice(x, axis, n - 1, n)
        edge = edge.astype(work)
        end = ops.convert(asarray(end), work)
        # NumPy's linspace(end, edge, width, endpoint=False): the step
        # first, then whole multiples of it, so a ramp that divides evenly
        # stays exact before the floor of integer types (reversed after).
        k = np.arange(width) if side == "lo" else width - 1 - np.arange(width)
        shape = [1] * x.ndim
        shape[axis] = width
        count = k.reshape(shape).astype(work)
        step = ufuncs.true_divide(ufuncs.subtract(edge, end), ops.convert(asarray(width), work))
        ramp = ufuncs.add(end, ufuncs.multiply(count, step))
        if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype):
            ramp = ufuncs.floor(ramp)
        parts.append((side, ramp.astype(x.dtype)))
    before = [p for s, p in parts if s == "lo"]
    after = [p for s, p in parts if s == "hi"]
    return manipulation.concatenate([*before, x, *after], axis=axis)


@eager(static=("pad_width", "mode", "stat_length", "reflect_type", "constant_values", "end_values"))
def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width ((before, after) per axis, broadcast as
    NumPy's) in `mode`, with the mode's keywords: constant_values,
    end_values, stat_length, reflect_type ('even' or 'odd'). A callable
    mode is refused (it would need vmap)."""
    x = asarray(array)
    if callable(mode):
        fail("pad", "a callable mode is not supported")
    if mode not in _MODES:
        fail("pad", f"mode must be one of {_MODES}, got {mode!r}")
    unknown = set(kwargs) - _KEYWORDS.get(mode, set())
    if unknown:
        fail("pad", f"unsupported keyword arguments for mode {mode!r}: {sorted(unknown)}")
    widths = _widths(pad_width, x.ndim)
    if mode == "empty":
        return pad_constant(x, widths, 0)
    if mode == "constant":
        values = kwargs.get("constant_values", 0)
        if isinstance(values, Tracer) or ops.holds_tracers(values):
            values = asarray(values)
            if values.ndim == 0:
                return pad_constant(x, widths, values)
            table = manipulation.broadcast_to(values, (x.ndim, 2))
            pairs = [(table[i, 0], table[i, 1]) for i in range(x.ndim)]
        elif np.ndim(values) == 0:
            return pad_constant(x, widths, values)
        else:
            pairs = _pairs("pad", values, x.ndim, "constant_values")
        for axis, ((lo, hi), (before, after)) in enumerate(zip(widths, pairs, strict=True)):
            one = [(0, 0)] * x.ndim
            one[axis] = (lo, 0)
            x = pad_constant(x, one, before) if lo else x
            one[axis] = (0, hi)
            x = pad_constant(x, one, after) if hi else x
        return x
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        fail("pad", f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    lengths = _pairs("pad", kwargs.get("stat_length"), x.ndim, "stat_length")
    ends = _pairs("pad", kwargs.get("end_values", 0), x.ndim, "end_values")
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = x.shape[axis]
        if n == 0:
            fail("pad", f"can't extend the empty axis {axis} with mode {mode!r}")
        if mode in ("edge", "wrap"):
            x = _along(x, axis, np.pad(np.arange(n), (lo, hi), mode=mode))
        elif mode in ("reflect", "symmetric"):
            x = _reflect(x, axis, lo, hi, mode, reflect_type == "odd", n)
        elif mode == "linear_ramp":
            x = _ramp(x, axis, lo, hi, ends[axis])
        else:
            x = _statistic(x, axis, lo, hi, mode, lengths[axis])
    return x


__all__ = ["pad"]
