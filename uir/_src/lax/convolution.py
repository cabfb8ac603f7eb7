"""jax.lax's convolutions: conv_general_dilated and its shorthands, patches,
local convolutions, and the dimension-number and shape helpers."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.lax.lax import ConvDimensionNumbers, rev
from uir._src.lax.windowed import _padding_pairs, _window_text


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """ConvDimensionNumbers from ("NCHW", "OIHW", "NCHW")-style strings, a
    ConvDimensionNumbers, or None (NCHW / OIHW / NCHW)."""
    n = len(lhs_shape)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if dimension_numbers is None:
        spec = tuple(range(n))
        return ConvDimensionNumbers(spec, spec, spec)
    lhs, rhs, out = dimension_numbers

    def positions(text, first, second):
        spatial = [i for i, c in enumerate(text) if c not in (first, second)]
        spatial.sort(key=lambda i: text[i])
        return (text.index(first), text.index(second), *spatial)

    return ConvDimensionNumbers(
        positions(lhs, "N", "C"), positions(rhs, "O", "I"), positions(out, "N", "C")
    )


def conv_general_permutations(dimension_numbers):
    """The permutations that bring each operand to N C spatial... order."""
    lhs, rhs, out = dimension_numbers
    return tuple(lhs), tuple(rhs), tuple(out)


def padtype_to_pads(in_shape, window_shape, window_strides, padding: str):
    """The (low, high) padding of each spatial dimension for 'SAME',
    'SAME_LOWER' or 'VALID'."""
    p = padding.upper()
    if p == "VALID":
        return [(0, 0)] * len(in_shape)
    if p not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"unknown padding {padding!r}: 'SAME', 'SAME_LOWER' or 'VALID'")
    out = []
    for n, k, s in zip(in_shape, window_shape, window_strides, strict=True):
        total = builtins.max((-(-n // s) - 1) * s + k - n, 0)
        lo, hi = (
            (total // 2, total - total // 2) if p == "SAME" else (total - total // 2, total // 2)
        )
        out.append((lo, hi))
    return out


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count: int = 1):
    """The NCHW output shape of a convolution of NCHW by OIHW."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    spatial = [
        builtins.max(0, (n + lo + hi - k) // s + 1)
        for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True)
    ]
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_general_dilated without dilation."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs = tuple(rhs_shape[i] for i in dn.rhs_spec)
    out_nchw = conv_shape_tuple(lhs, rhs, window_strides, padding)
    out = [0] * len(out_nchw)
    for pos, size in zip(dn.out_spec, out_nchw, strict=True):
        out[pos] = size
    return tuple(out)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_transpose."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(lhs_shape[i] for i in dn.lhs_spec)
    rhs = tuple(rhs_shape[i] for i in dn.rhs_spec)
    if isinstance(padding, str):
        pads = _conv_transpose_padding(rhs[2:], window_strides, padding)
    else:
        pads = padding
    spatial = [
        builtins.max(0, (n - 1) * s + 1 + lo + hi - k + 1)
        for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, pads, strict=True)
    ]
    out_nchw = (lhs[0], rhs[0], *spatial)
    out = [0] * len(out_nchw)
    for pos, size in zip(dn.out_spec, out_nchw, strict=True):
        out[pos] = size
    return tuple(out)


def _conv_transpose_padding(kernel_spatial, strides, padding: str):
    p = padding.upper()
    out = []
    for k, s in zip(kernel_spatial, strides, strict=True):
        if p == "SAME":
            pad_len = k + s - 2
            lo = k - 1 if s > k - 1 else -(-pad_len // 2)
        elif p == "VALID":
            pad_len = k + s - 2 + builtins.max(k - s, 0)
            lo = k - 1
        else:
            raise ValueError(f"unknown padding {padding!r}: 'SAME' or 'VALID'")
        out.append((lo, pad_len - lo))
    return out


# --- more operations ----------------------------------------------------------------------


@eager
def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """An NCHW by OIHW convolution without dilation."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, preferred_element_type=preferred_element_type
    )


@eager
def conv_with_general_padding(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """An NCHW by OIHW convolution with explicit padding and dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        preferred_element_type=preferred_element_type,
    )


@eager
def conv_transpose(
    lhs,
    rhs,
    strides,
    padding,
    rhs_dilation=None,
    dimension_numbers=None,
    transpose_kernel: bool = False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding: bool = False,
):
    """The transposed convolution (gradient of a strided convolution): the
    input dilated by `strides`, convolved with the kernel (flipped and with
    its feature dimensions swapped when transpose_kernel). 'SAME' and
    'VALID' name the forward convolution's padding; explicit pairs are the
    transposed convolution's own, or, with use_consistent_padding (as
    PyTorch), the forward convolution's too."""
    x, w = asarray(lhs), asarray(rhs)
    n = x.ndim - 2
    if dimension_numbers is None:
        dimension_numbers = (
            ("NC" + "HWD"[:n], "IO" + "HWD"[:n], "NC" + "HWD"[:n]) if n <= 3 else None
        )
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    kernel_spatial = [w.shape[i] for i in dn.rhs_spec[2:]]
    dil = list(rhs_dilation or [1] * n)
    effective = [(k - 1) * d + 1 for k, d in zip(kernel_spatial, dil, strict=True)]
    if isinstance(padding, str):
        pads = _conv_transpose_padding(effective, strides, padding)
    elif use_consistent_padding:
        pads = [(k - lo - 1, k - hi - 1) for k, (lo, hi) in zip(effective, padding, strict=True)]
    else:
        pads = padding
    if transpose_kernel:
        w = rev(w, list(dn.rhs_spec[2:]))
        perm = list(range(w.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        w = ops.transpose(w, perm)
    return conv_general_dilated(
        x,
        w,
        [1] * n,
        list(pads),
        list(strides),
        dil,
        dimension_numbers,
        preferred_element_type=preferred_element_type,
    )


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
    precision=None,
    preferred_element_type=None,
):
    """jax.lax.conv_general_dilated (precision changes nothing: f32
    convolutions compute in f32 at every setting): dimension_numbers as three strings
    (e.g. ("NHWC", "HWIO", "NHWC")) with matching spatial letters, or None
    for NCHW / OIHW / NCHW."""
    x, w = ops.promote("conv_general_dilated", lhs, rhs)
    n = x.ndim - 2
    labels = _conv_labels(dimension_numbers, x.ndim)
    lhs_spec, rest = labels.split("_")
    rhs_spec = rest.split("->")[0]
    in_spatial = [x.shape[lhs_spec.index(str(i))] for i in range(n)]
    k_spatial = [w.shape[rhs_spec.index(str(i))] for i in range(n)]
    strides = list(window_strides)
    lhs_dil = list(lhs_dilation or [1] * n)
    rhs_dil = list(rhs_dilation or [1] * n)
    pads = _padding_pairs(padding, in_spatial, k_spatial, strides, rhs_dil)
    out = convolution_with_labels(
        x, w, labels, strides, pads, lhs_dil, rhs_dil, feature_group_count, batch_group_count
    )
    if preferred_element_type is not None:
        out = ops.convert(out, dtypes.canonicalize(preferred_element_type))
    return out


def convolution_with_labels(
    x, w, labels, strides, pads, lhs_dil, rhs_dil, feature_group_count=1, batch_group_count=1
):
    """HLO's convolution of x and w: `labels` its dim_labels (as
    "b01f_01io->b01f"), the window per spatial dimension as lists, the
    result's shape worked out here."""
    n = x.ndim - 2
    lhs_spec, rest = labels.split("_")
    rhs_spec, out_spec = rest.split("->")
    in_spatial = [x.shape[lhs_spec.index(str(i))] for i in range(n)]
    k_spatial = [w.shape[rhs_spec.index(str(i))] for i in range(n)]
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
    return out


def _specs(dimension_numbers, ndim: int):
    """(lhs, rhs, out) specs as JAX's ConvDimensionNumbers: for each, the
    positions of batch (O for rhs), feature (I) and the spatial dimensions."""
    labels = _conv_labels(dimension_numbers, ndim)
    lhs, rest = labels.split("_")
    rhs, out = rest.split("->")
    spatial = [str(i) for i in range(ndim - 2)]

    def spec(s: str, a: str, b: str):
        return (s.index(a), s.index(b), *[s.index(c) for c in spatial])

    return spec(lhs, "b", "f"), spec(rhs, "o", "i"), spec(out, "b", "f")


@eager
def conv_general_dilated_patches(
    lhs,
    filter_shape,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """The patches a convolution with `filter_shape` would see, each
    flattened into the feature dimension (channel-major: C * prod(filter)
    features), by a grouped convolution with a one-hot kernel (as JAX)."""
    del precision
    x = asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    if len(filter_shape) != x.ndim - 2:
        fail(
            "conv_general_dilated_patches",
            f"filter_shape {filter_shape} needs {x.ndim - 2} spatial sizes for {ops.describe(x)}",
        )
    lhs_spec, rhs_spec, _ = _specs(dimension_numbers, x.ndim)
    spatial = math.prod(filter_shape)
    channels = x.shape[lhs_spec[1]]
    kernel = np.broadcast_to(np.eye(spatial), (channels, spatial, spatial))
    kernel = kernel.reshape(channels * spatial, 1, *filter_shape)
    # From (O, I, spatial...) to the layout rhs_spec names.
    order = [rhs_spec.index(d) for d in range(x.ndim)]
    kernel = np.transpose(kernel, order).astype(np.dtype(x.dtype))
    return conv_general_dilated(
        x,
        asarray(kernel),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count=channels,
        preferred_element_type=preferred_element_type,
    )


@eager
def conv_general_dilated_local(
    lhs,
    rhs,
    window_strides,
    padding,
    filter_shape,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
):
    """A locally connected (unshared) convolution: each output position has
    a kernel of its own, rhs's spatial dimensions being the output's; the
    patches contracted with rhs (as JAX)."""
    from uir._src.lax.lax import dot_general

    x = asarray(lhs)
    patches = conv_general_dilated_patches(
        x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers
    )
    _, rhs_spec, out_spec = _specs(dimension_numbers, x.ndim)
    lhs_c, rhs_c = [out_spec[1]], [rhs_spec[1]]
    lhs_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    lhs_b = sorted(lhs_b)
    w = asarray(rhs)
    patches, w = ops.promote("conv_general_dilated_local", patches, w)
    del precision
    out = dot_general(patches, w, ((lhs_c, rhs_c), (lhs_b, rhs_b)))
    return ops.moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


__all__ = [
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_local",
    "conv_general_dilated_patches",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
]
