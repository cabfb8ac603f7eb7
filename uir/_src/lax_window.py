"""uir.lax's windowed operations: reduce_window and conv_general_dilated."""

from __future__ import annotations

import builtins

from uir._src import dtypes, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail


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


def _conv_labels(dimension_numbers, ndim: int) -> str:
    """HLO dim_labels for JAX's dimension_numbers: three layout strings
    (N/C for batch/feature of lhs and output, O/I for the kernel, the same
    spatial letters in each), or None for NCHW, OIHW, NCHW."""
    spatial = "".join(str(i) for i in range(ndim - 2))
    if dimension_numbers is None:
        return f"bf{spatial}_oi{spatial}->bf{spatial}"
    lhs, rhs, out = dimension_numbers
    order = [c for c in lhs if c not in "NC"]

    def labels(spec: str, batch: str, feature: str, b: str, f: str) -> str:
        if len(spec) != ndim:
            fail("conv_general_dilated", f"dimension numbers {spec!r} for rank {ndim}")
        s = []
        for c in spec:
            if c == batch:
                s.append(b)
            elif c == feature:
                s.append(f)
            elif c in order:
                s.append(str(order.index(c)))
            else:
                fail(
                    "conv_general_dilated", f"spatial dimension {c!r} of {spec!r} is not in {lhs!r}"
                )
        return "".join(s)

    return f"{labels(lhs, 'N', 'C', 'b', 'f')}_{labels(rhs, 'O', 'I', 'o', 'i')}->{labels(out, 'N', 'C', 'b', 'f')}"


@eager
def conv_general_dilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    preferred_element_type=None,
):
    """jax.lax.conv_general_dilated: dimension_numbers as three strings
    (e.g. ("NHWC", "HWIO", "NHWC")) with matching spatial letters, or None
    for NCHW / OIHW / NCHW."""
    x, w = ops.promote("conv_general_dilated", lhs, rhs)
    n = x.ndim - 2
    labels = _conv_labels(dimension_numbers, x.ndim)
    lhs_spec, rest = labels.split("_")
    rhs_spec, out_spec = rest.split("->")
    in_spatial = [x.shape[lhs_spec.index(str(i))] for i in range(n)]
    k_spatial = [w.shape[rhs_spec.index(str(i))] for i in range(n)]
    strides = list(window_strides)
    lhs_dil = list(lhs_dilation or [1] * n)
    rhs_dil = list(rhs_dilation or [1] * n)
    pads = _padding_pairs(padding, in_spatial, k_spatial, strides, rhs_dil)
    out_spatial = []
    for size, k, s, (lo, hi), ld, rd in zip(
        in_spatial, k_spatial, strides, pads, lhs_dil, rhs_dil, strict=True
    ):
        padded = (size - 1) * ld + 1 + lo + hi
        out_spatial.append(builtins.max(0, (padded - ((k - 1) * rd + 1)) // s + 1))
    out_shape = [0] * x.ndim
    out_shape[out_spec.index("b")] = x.shape[lhs_spec.index("b")] // batch_group_count
    out_shape[out_spec.index("f")] = w.shape[rhs_spec.index("o")]
    for i in range(n):
        out_shape[out_spec.index(str(i))] = out_spatial[i]
    attrs = {}
    if feature_group_count != 1:
        attrs["feature_group_count"] = feature_group_count
    if batch_group_count != 1:
        attrs["batch_group_count"] = batch_group_count
    out = ops._comp().emit(
        "convolution",
        x,
        w,
        window=_window_text(k_spatial, strides, pads, lhs_dil, rhs_dil),
        dim_labels=labels,
        shape=(out_shape, x.dtype),
        op_name="conv_general_dilated",
        **attrs,
    )
    if preferred_element_type is not None:
        out = ops.convert(out, dtypes.canonicalize(preferred_element_type))
    return out
