"""jax.image's resize and scale_and_translate. Every resampling method but
nearest is separable: along each spatial dimension the output is the input
times a weight matrix [in, out] whose column j holds the kernel evaluated
at the distances from output sample j (its centre mapped back into the
input) to each input pixel, widened by 1/scale when downsampling with
antialias, and normalised to sum to one. The matrices are built with
uir.numpy (scale and translation may be traced) and applied by one
contraction per dimension."""

from __future__ import annotations

import enum

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import fail
from uir._src.numpy import einsum, products, reductions, ufuncs
from uir._src.numpy.util import public_asarray


class ResizeMethod(enum.Enum):
    """Image resampling methods: NEAREST, LINEAR (triangle), LANCZOS3 and
    LANCZOS5 (windowed sinc), CUBIC (Keys, a = -0.5), CUBIC_PYTORCH (a =
    -0.75 with replicated edges when not antialiased, as PyTorch and
    OpenCV), AREA (the overlap of pixel areas)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
            "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "area": ResizeMethod.AREA,
        }
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"; known: {", ".join(names)}')
        return names[s]


def _method(method) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"method must be a ResizeMethod or its name, got {method!r}")


def _triangle(x):
    return ufuncs.maximum(ufuncs.subtract(1, x), 0)


def _lanczos(radius: float):
    def kernel(x):
        # sinc(x) sinc(x / r), 1 near 0 (where the quotient loses accuracy).
        y = ufuncs.multiply(
            ufuncs.sin(ufuncs.multiply(x, np.pi)), ufuncs.sin(ufuncs.multiply(x, np.pi / radius))
        )
        denominator = ufuncs.multiply(ufuncs.square(x), np.pi**2 / radius)
        near = ufuncs.less_equal(x, 1e-3)
        value = ufuncs.where(near, 1.0, ufuncs.divide(y, ufuncs.where(near, 1.0, denominator)))
        return ufuncs.where(ufuncs.greater(x, radius), 0.0, value)

    return kernel


def _cubic(a: float):
    def kernel(x):
        inner = ufuncs.add(
            ufuncs.multiply(
                ufuncs.multiply(ufuncs.subtract(ufuncs.multiply(x, a + 2), a + 3), x), x
            ),
            1,
        )
        outer = ufuncs.subtract(
            ufuncs.multiply(
                ufuncs.add(
                    ufuncs.multiply(ufuncs.subtract(ufuncs.multiply(x, a), 5 * a), x), 8 * a
                ),
                x,
            ),
            4 * a,
        )
        return ufuncs.where(ufuncs.less(x, 1), inner, ufuncs.where(ufuncs.less(x, 2), outer, 0.0))

    return kernel


# method -> (the kernel's radius, the kernel of |distance|); AREA has none.
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, None),
}


def _weights(
    n_in: int, n_out: int, scale, translation, method: ResizeMethod, antialias: bool, dtype
):
    """The [n_in, n_out] weight matrix of one spatial dimension."""
    radius, kernel = _KERNELS[method]
    replicate_edges = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    inv_scale = ufuncs.divide(1.0, scale)
    out_index = np.arange(n_out, dtype=np.float64).astype(dtype)
    # The input coordinate of each output pixel's centre.
    centre = ufuncs.subtract(
        ufuncs.multiply(ufuncs.subtract(ufuncs.add(out_index, 0.5), translation), inv_scale), 0.5
    )
    if kernel is None:
        # AREA: the overlap of output pixel j's interval, mapped back into
        # the input, with input pixel i's interval [i, i + 1].
        left = ufuncs.multiply(ufuncs.subtract(out_index, translation), inv_scale)
        right = ufuncs.add(left, inv_scale)
        pixel = np.arange(n_in, dtype=np.float64).astype(dtype)[:, None]
        overlap = ufuncs.subtract(
            ufuncs.minimum(right[None, :], pixel + 1), ufuncs.maximum(left[None, :], pixel)
        )
        return _inside(_normalised(ufuncs.maximum(overlap, 0.0)), centre, n_in)
    widen = ufuncs.maximum(inv_scale, 1.0) if antialias else 1.0
    reach = radius if replicate_edges else 0
    positions = np.arange(-reach, n_in + reach, dtype=np.float64).astype(dtype)[:, None]
    w = kernel(ufuncs.divide(ufuncs.abs(ufuncs.subtract(centre[None, :], positions)), widen))
    if replicate_edges:
        # Pixels beyond the edges are the edge pixels: fold their weights in.
        fold = np.zeros((n_in + 2 * reach, n_in), dtype=dtype)
        fold[np.arange(n_in + 2 * reach), np.clip(np.arange(-reach, n_in + reach), 0, n_in - 1)] = 1
        return _normalised(products.matmul(fold.T, w))
    return _inside(_normalised(w), centre, n_in)


def _inside(w, centre, n_in: int):
    """w without the output pixels whose centre falls outside the input."""
    inside = ufuncs.logical_and(
        ufuncs.greater_equal(centre, -0.5), ufuncs.less_equal(centre, n_in - 0.5)
    )
    return ufuncs.where(inside[None, :], w, 0.0)


def _normalised(w):
    total = reductions.sum(w, axis=0, keepdims=True)
    tiny = 1000 * float(np.finfo(np.float32).eps)
    safe = ufuncs.where(ufuncs.equal(total, 0), 1.0, total)
    return ufuncs.where(ufuncs.greater(ufuncs.abs(total), tiny), ufuncs.divide(w, safe), 0.0)


def _inexact(x):
    x = public_asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float())
    return x


def _resample(image, shape, spatial_dims, scales, translations, method, antialias, precision):
    x = _inexact(image)
    real = (
        np.dtype(x.dtype)
        if not dtypes.is_complex(x.dtype)
        else np.dtype(np.real(np.zeros((), x.dtype)).dtype)
    )
    subscripts = list(range(x.ndim))
    operands = [x, subscripts]
    out = list(subscripts)
    for i, d in enumerate(spatial_dims):
        w = _weights(x.shape[d], shape[d], scales[i], translations[i], method, antialias, real)
        w = w.astype(x.dtype)
        operands += [w, [d, x.ndim + i]]
        out[d] = x.ndim + i
    if not spatial_dims:
        return x
    return einsum.einsum(*operands, out, precision=precision)


def _nearest(image, shape):
    x = public_asarray(image)
    for d in range(x.ndim):
        n_in, n_out = x.shape[d], shape[d]
        if n_in == n_out:
            continue
        # Each output pixel takes the input pixel under its centre.
        index = np.floor(
            (np.arange(n_out, dtype=np.float32) + 0.5) * np.float32(n_in / n_out)
        ).astype(np.int32)
        index = np.minimum(index, n_in - 1)
        pick = [slice(None)] * x.ndim
        pick[d] = index
        x = x[tuple(pick)]
    return x


def _shape(image, shape, name: str) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        fail(
            name, f"shape must have one entry per dimension of the image: {shape} vs {image.shape}"
        )
    if any(s < 0 for s in shape):
        fail(name, f"shape must be non-negative, got {shape}")
    return shape


@eager(static=("shape", "method", "antialias"))
def resize(image, shape, method, antialias: bool = True, precision=None):
    """image resampled to `shape` (one entry per dimension; the dimensions
    whose size changes are resampled): nearest keeps the dtype, the other
    methods give a float image."""
    image = public_asarray(image)
    shape = _shape(image, shape, "resize")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _nearest(image, shape)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


@eager(static=("shape", "spatial_dims", "method", "antialias"))
def scale_and_translate(
    image, shape, spatial_dims, scale, translation, method, antialias: bool = True, precision=None
):
    """image resampled to `shape` along `spatial_dims`: output pixel centre
    y maps to input coordinate (y - translation) / scale (scale and
    translation one entry per spatial dimension, possibly traced)."""
    image = public_asarray(image)
    shape = _shape(image, shape, "scale_and_translate")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        fail(
            "scale_and_translate", "nearest-neighbour resampling is not supported here (use resize)"
        )
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    dims = tuple(d % image.ndim for d in spatial_dims)
    for d in range(image.ndim):
        if d not in dims and image.shape[d] != shape[d]:
            fail(
                "scale_and_translate", f"dimension {d} changes size but is not a spatial dimension"
            )
    scale, translation = ops.promote("scale_and_translate", scale, translation)
    scale, translation = _inexact(scale), _inexact(translation)
    if scale.shape != (len(dims),) or translation.shape != (len(dims),):
        fail(
            "scale_and_translate",
            f"scale and translation need one entry per spatial dimension ({len(dims)}), "
            f"got {scale.shape} and {translation.shape}",
        )
    scales = [scale[i] for i in range(len(dims))]
    translations = [translation[i] for i in range(len(dims))]
    return _resample(image, shape, dims, scales, translations, method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
