"""jax.lax's windowed reductions: reduce_window and its shape helper."""

from __future__ import annotations

import builtins

from uir._src.core import ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The output shape of a reduce-window."""
    n = len(operand_shape)
    base = base_dilation or (1,) * n
    wdil = window_dilation or (1,) * n
    out = []
    for size, k, s, (lo, hi), bd, wd in zip(
        operand_shape, window_dimensions, window_strides, padding, base, wdil, strict=True
    ):
        padded = (size - 1) * bd + 1 + lo + hi if size else lo + hi
        out.append(builtins.max(0, (padded - ((k - 1) * wd + 1)) // s + 1))
    return tuple(out)


def _padding_pairs(padding, in_sizes, window, strides, dilation=None):
    """'SAME' / 'VALID' / explicit (lo, hi) pairs, as JAX resolves them."""
    dilation = dilation or [1] * len(window)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(window)
        if padding.upper() == "SAME":
            out = []
            for n, k, s, d in zip(in_sizes, window, strides, dilation, strict=True):
                k = (k - 1) * d + 1
                total = builtins.max((-(-n // s) - 1) * s + k - n, 0)
                out.append((total // 2, total - total // 2))
            return out
        fail("padding", f"unknown padding {padding!r} (use 'SAME', 'VALID' or (low, high) pairs)")
    return [tuple(int(v) for v in p) for p in padding]


def _window_text(sizes, strides, pads, base_dil=None, win_dil=None):
    n = len(sizes)
    parts = [
        "size=" + "x".join(builtins.map(str, sizes)),
        "stride=" + "x".join(builtins.map(str, strides)),
        "pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads),
    ]
    if base_dil and any(d != 1 for d in base_dil):
        parts.append("lhs_dilate=" + "x".join(builtins.map(str, base_dil)))
    if win_dil and any(d != 1 for d in win_dil):
        parts.append("rhs_dilate=" + "x".join(builtins.map(str, win_dil)))
    return "{" + " ".join(parts) + "}" if n else "{}"


@eager
def reduce_window(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """XLA's reduce-window with a binary `computation` (e.g. lax.add)."""
    x = asarray(operand)
    init = ops.convert(asarray(init_value), x.dtype)
    pads = _padding_pairs(padding, x.shape, window_dimensions, window_strides, window_dilation)
    reducer = ops.scalar_computation("reduce_window", x.dtype, computation)
    base = base_dilation or [1] * x.ndim
    win = window_dilation or [1] * x.ndim
    shape = []
    for n, k, s, (lo, hi), bd, wd in zip(
        x.shape, window_dimensions, window_strides, pads, base, win, strict=True
    ):
        padded = (n - 1) * bd + 1 + lo + hi if n else lo + hi
        shape.append(builtins.max(0, (padded - ((k - 1) * wd + 1)) // s + 1))
    out = ops._comp().emit(
        "reduce-window",
        x,
        init,
        window=_window_text(window_dimensions, window_strides, pads, base, win),
        to_apply=reducer,
        shape=(shape, x.dtype),
        op_name="reduce_window",
    )
    out.weak_type = x.weak_type
    return out


__all__ = [
    "reduce_window",
    "reduce_window_shape_tuple",
]
