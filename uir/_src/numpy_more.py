"""More of jax.numpy: array creation and manipulation, elementwise
functions, NaN-aware and order statistics, comparisons of whole arrays,
built from uir.numpy's core (numpy_impl, numpy_shapes). Results have shapes
known from the arguments' shapes; functions whose result shape depends on
the data (nonzero, unique, ...) are left out.

Over 1,000 lines, kept in one file on purpose: a flat catalogue of
independent jax.numpy functions, each a short composition of uir.numpy's
core, sharing a few private helpers (_floats, _quantiles, _correlate, the
window and NaN-reduction factories); no function reads another's state, so
a split would only move definitions apart."""

from __future__ import annotations

import builtins
import itertools
import math

import ml_dtypes
import numpy as np

from uir._src import dtypes, lax_control, numpy_impl, numpy_shapes, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail

# --- aliases (NumPy 2 / array-API spellings) -----------------------------------------


def _alias(name: str, target):
    def f(*args, **kwargs):
        return target(*args, **kwargs)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: the same as uir.numpy.{target.__name__}."
    return f


acos = _alias("acos", numpy_impl.arccos)
acosh = _alias("acosh", numpy_impl.arccosh)
asin = _alias("asin", numpy_impl.arcsin)
asinh = _alias("asinh", numpy_impl.arcsinh)
atan = _alias("atan", numpy_impl.arctan)
atanh = _alias("atanh", numpy_impl.arctanh)
atan2 = _alias("atan2", numpy_impl.arctan2)
bitwise_invert = _alias("bitwise_invert", numpy_impl.invert)
bitwise_left_shift = _alias("bitwise_left_shift", numpy_impl.left_shift)
bitwise_right_shift = _alias("bitwise_right_shift", numpy_impl.right_shift)
pow = _alias("pow", numpy_impl.power)
concat = _alias("concat", numpy_shapes.concatenate)
permute_dims = _alias("permute_dims", numpy_shapes.transpose)


@eager
def astype(x, dtype, copy: bool = False):
    """x converted to dtype."""
    return ops.convert(asarray(x), dtypes.canonicalize(dtype))


@eager
def copy(a, order=None):
    """a (arrays are values: a copy is the array itself)."""
    return asarray(a)


@eager
def positive(x):
    """+x."""
    return asarray(x)


@eager
def fabs(x):
    """|x| for real x, in floats."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        fail("fabs", f"fabs does not accept dtype {x.dtype}")
    return numpy_impl.abs(x if dtypes.is_float(x.dtype) else x.astype(dtypes.default_float()))


@eager
def deg2rad(x):
    """Degrees to radians."""
    return numpy_impl.multiply(_floats(x), np.pi / 180)


radians = deg2rad


@eager
def rad2deg(x):
    """Radians to degrees."""
    return numpy_impl.multiply(_floats(x), 180 / np.pi)


degrees = rad2deg


def _floats(x):
    x = asarray(x)
    return (
        x
        if dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)
        else x.astype(dtypes.default_float())
    )


@eager
def signbit(x):
    """Whether the sign bit is set (-0.0 and negative NaNs included)."""
    x = asarray(x)
    if dtypes.is_int(x.dtype):
        return (
            numpy_impl.less(x, 0)
            if x.dtype.kind == "i"
            else numpy_impl.zeros_like(x, dtype=np.bool_)
        )
    if x.dtype == np.bool_:
        return numpy_impl.zeros_like(x, dtype=np.bool_)
    from uir._src.lax_impl import bitcast_convert_type

    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    return numpy_impl.less(bitcast_convert_type(x, signed), 0)


@eager
def copysign(x1, x2):
    """|x1| with the sign of x2."""
    x1, x2 = ops.promote("copysign", _floats(x1), _floats(x2))
    return numpy_impl.where(
        signbit(x2), numpy_impl.negative(numpy_impl.abs(x1)), numpy_impl.abs(x1)
    )


@eager
def fmax(x1, x2):
    """The larger, ignoring NaNs (NaN only when both are)."""
    x1, x2 = ops.promote("fmax", x1, x2)
    return numpy_impl.where(
        numpy_impl.isnan(x2),
        x1,
        numpy_impl.where(numpy_impl.isnan(x1), x2, numpy_impl.maximum(x1, x2)),
    )


@eager
def fmin(x1, x2):
    """The smaller, ignoring NaNs (NaN only when both are)."""
    x1, x2 = ops.promote("fmin", x1, x2)
    return numpy_impl.where(
        numpy_impl.isnan(x2),
        x1,
        numpy_impl.where(numpy_impl.isnan(x1), x2, numpy_impl.minimum(x1, x2)),
    )


@eager
def hypot(x1, x2):
    """sqrt(x1^2 + x2^2) without overflow in the squares."""
    x1, x2 = ops.promote("hypot", _floats(x1), _floats(x2))
    a, b = numpy_impl.abs(x1), numpy_impl.abs(x2)
    big, small = numpy_impl.maximum(a, b), numpy_impl.minimum(a, b)
    safe = numpy_impl.where(big == 0, 1, big)
    ratio = small / safe
    out = big * numpy_impl.sqrt(1 + ratio * ratio)
    return numpy_impl.where(
        numpy_impl.isinf(a) | numpy_impl.isinf(b), np.inf, numpy_impl.where(big == 0, 0, out)
    )


@eager
def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)), stably."""
    x1, x2 = ops.promote("logaddexp", _floats(x1), _floats(x2))
    m = numpy_impl.maximum(x1, x2)
    d = numpy_impl.where(x1 == x2, 0, -numpy_impl.abs(x1 - x2))
    return numpy_impl.where(numpy_impl.isnan(d), x1 + x2, m + numpy_impl.log1p(numpy_impl.exp(d)))


@eager
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2), stably."""
    x1, x2 = ops.promote("logaddexp2", _floats(x1), _floats(x2))
    m = numpy_impl.maximum(x1, x2)
    d = numpy_impl.where(x1 == x2, 0, -numpy_impl.abs(x1 - x2))
    return numpy_impl.where(
        numpy_impl.isnan(d), x1 + x2, m + numpy_impl.log1p(numpy_impl.exp2(d)) / np.log(2)
    )


@eager
def float_power(x1, x2):
    """x1 ** x2 in the widest float type."""
    f = dtypes.canonicalize(np.float64)
    return numpy_impl.power(asarray(x1).astype(f), asarray(x2).astype(f))


@eager
def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1, x2 = ops.promote("heaviside", _floats(x1), x2)
    return numpy_impl.where(x1 < 0, 0, numpy_impl.where(x1 > 0, 1, x2)).astype(x1.dtype)


@eager
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _floats(x)
    safe = numpy_impl.where(x == 0, 1, x)
    return numpy_impl.where(x == 0, 1, numpy_impl.sin(np.pi * safe) / (np.pi * safe)).astype(
        x.dtype
    )


@eager
def ldexp(x1, x2):
    """x1 * 2**x2."""
    x1 = _floats(x1)
    return numpy_impl.multiply(x1, numpy_impl.exp2(asarray(x2).astype(x1.dtype)))


@eager
def modf(x):
    """(fractional part, integral part), each with x's sign."""
    x = _floats(x)
    whole = numpy_impl.trunc(x)
    return x - whole, whole


@eager
def divmod(x1, x2):
    """(floor_divide, remainder)."""
    return numpy_impl.floor_divide(x1, x2), numpy_impl.remainder(x1, x2)


@eager
def isneginf(x):
    """x == -inf."""
    return numpy_impl.equal(asarray(x), -np.inf)


@eager
def isposinf(x):
    """x == +inf."""
    return numpy_impl.equal(asarray(x), np.inf)


@eager
def isreal(x):
    """Whether each element has no imaginary part."""
    x = asarray(x)
    return (
        numpy_impl.equal(numpy_impl.imag(x), 0)
        if dtypes.is_complex(x.dtype)
        else numpy_impl.ones_like(x, dtype=np.bool_)
    )


@eager
def iscomplex(x):
    """Whether each element has an imaginary part."""
    return numpy_impl.logical_not(isreal(x))


def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype."""
    return dtypes.is_complex(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)


def isrealobj(x) -> bool:
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


@eager
def angle(z, deg: bool = False):
    """The argument of complex z (0 or pi for reals)."""
    z = asarray(z)
    out = numpy_impl.arctan2(
        numpy_impl.imag(z).astype(_real_of(z.dtype)), numpy_impl.real(z).astype(_real_of(z.dtype))
    )
    return out * (180 / np.pi) if deg else out


def _real_of(dtype):
    d = np.dtype(dtype)
    if d == np.complex64:
        return np.dtype(np.float32)
    if d == np.complex128:
        return dtypes.canonicalize(np.float64)
    return d if dtypes.is_float(d) else dtypes.default_float()


@eager
def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """|a - b| <= atol + rtol * |b| elementwise (infinities equal only to themselves)."""
    a, b = ops.promote("isclose", a, b)
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        return numpy_impl.equal(a, b)
    close = numpy_impl.less_equal(numpy_impl.abs(a - b), atol + rtol * numpy_impl.abs(b))
    finite = numpy_impl.isfinite(a) & numpy_impl.isfinite(b)
    out = numpy_impl.where(finite, close, numpy_impl.equal(a, b))
    if equal_nan:
        out = out | (numpy_impl.isnan(a) & numpy_impl.isnan(b))
    return out


@eager
def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether every element isclose."""
    return numpy_impl.all(isclose(a, b, rtol, atol, equal_nan))


@eager
def array_equal(a1, a2, equal_nan: bool = False):
    """Whether the arrays have one shape and equal elements."""
    a, b = asarray(a1), asarray(a2)
    if a.shape != b.shape:
        return asarray(np.bool_(False))
    eq = numpy_impl.equal(a, b)
    if equal_nan and (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        eq = eq | (numpy_impl.isnan(a) & numpy_impl.isnan(b))
    return numpy_impl.all(eq)


@eager
def array_equiv(a1, a2):
    """Whether the arrays broadcast to one shape with equal elements."""
    a, b = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return asarray(np.bool_(False))
    return numpy_impl.all(numpy_impl.equal(a, b))


@eager
def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """NaN to `nan`, infinities to the largest finite values (or posinf/neginf)."""
    x = asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        return x
    if dtypes.is_complex(x.dtype):
        re = nan_to_num(numpy_impl.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(numpy_impl.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return re + 1j * im
    info = dtypes.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = numpy_impl.where(numpy_impl.isnan(x), nan, x)
    out = numpy_impl.where(isposinf(x), hi, out)
    return numpy_impl.where(isneginf(x), lo, out).astype(x.dtype)


# --- creation ----------------------------------------------------------------------------


@eager
def empty(shape, dtype=None):
    """An array of `shape` (zeros: uir has no uninitialized memory)."""
    return numpy_impl.zeros(shape, dtype)


@eager
def empty_like(prototype, dtype=None, shape=None):
    """An array like prototype (zeros)."""
    p = asarray(prototype)
    return numpy_impl.zeros(p.shape if shape is None else shape, dtype or p.dtype)


@eager
def identity(n: int, dtype=None):
    """The n x n identity matrix."""
    return numpy_impl.eye(n, dtype=dtype)


@eager
def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    """Ones on and below diagonal k of an N x M matrix."""
    M = N if M is None else M
    rows = ops.iota(np.dtype(np.int32), (N, M), 0)
    cols = ops.iota(np.dtype(np.int32), (N, M), 1)
    return numpy_impl.less_equal(cols, rows + k).astype(dtype or dtypes.default_float())


@eager
def tril(m, k: int = 0):
    """m with the elements above diagonal k zeroed (over the last two axes)."""
    m = asarray(m)
    if m.ndim < 2:
        fail("tril", f"needs at least two dimensions, got {ops.describe(m)}")
    mask = tri(m.shape[-2], m.shape[-1], k, np.bool_)
    return numpy_impl.where(mask, m, numpy_impl.zeros((), m.dtype))


@eager
def triu(m, k: int = 0):
    """m with the elements below diagonal k zeroed (over the last two axes)."""
    m = asarray(m)
    if m.ndim < 2:
        fail("triu", f"needs at least two dimensions, got {ops.describe(m)}")
    mask = tri(m.shape[-2], m.shape[-1], k - 1, np.bool_)
    return numpy_impl.where(mask, numpy_impl.zeros((), m.dtype), m)


@eager
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal `offset` of the plane (axis1, axis2), as the last axis."""
    a = asarray(a)
    ax1, ax2 = (
        ops.normalize_axis(axis1, a.ndim, "diagonal"),
        ops.normalize_axis(axis2, a.ndim, "diagonal"),
    )
    rest = [d for d in range(a.ndim) if d not in (ax1, ax2)]
    a = numpy_shapes.transpose(a, (*rest, ax1, ax2))
    n, m = a.shape[-2], a.shape[-1]
    size = builtins.max(
        0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m)
    )
    if size == 0:
        return numpy_impl.zeros((*a.shape[:-2], 0), a.dtype)
    rows = np.arange(size) + builtins.max(0, -offset)
    cols = np.arange(size) + builtins.max(0, offset)
    flat = numpy_shapes.reshape(a, (*a.shape[:-2], n * m))
    return numpy_shapes.take(flat, asarray((rows * m + cols).astype(np.int32)), axis=-1)


@eager
def diag(v, k: int = 0):
    """The diagonal k of a matrix, or a matrix with vector v on diagonal k."""
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        fail("diag", f"takes a vector or a matrix, got {ops.describe(v)}")
    n = v.shape[0] + builtins.abs(k)
    rows = ops.iota(np.dtype(np.int32), (n, n), 0)
    cols = ops.iota(np.dtype(np.int32), (n, n), 1)
    on = numpy_impl.equal(cols - rows, k)
    index = numpy_impl.clip(numpy_impl.minimum(rows, cols), 0, v.shape[0] - 1)
    return numpy_impl.where(on, numpy_shapes.take(v, index), numpy_impl.zeros((), v.dtype))


@eager
def diagflat(v, k: int = 0):
    """diag of v flattened."""
    return diag(numpy_impl.ravel(asarray(v)), k)


@eager
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """The sum of diagonal `offset`."""
    return numpy_impl.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@eager
def vander(x, N: int | None = None, increasing: bool = False):
    """Columns x**(N-1), ..., x**0 (or increasing)."""
    x = asarray(x)
    n = x.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    return numpy_impl.power(
        numpy_shapes.expand_dims(x, 1),
        asarray(powers.astype(x.dtype if dtypes.is_int(x.dtype) else np.int32)),
    )


@eager
def logspace(
    start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0
):
    """base ** linspace(start, stop, num)."""
    if axis != 0:
        fail("logspace", "axis other than 0 is not supported yet")
    exps = numpy_impl.linspace(start, stop, num, endpoint=endpoint)
    out = numpy_impl.power(asarray(base).astype(exps.dtype), exps)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers spaced evenly on a log scale from start to stop (static ends)."""
    if not isinstance(start, (int, float, np.number)) or not isinstance(
        stop, (int, float, np.number)
    ):
        raise TypeError("geomspace takes Python or NumPy numbers for start and stop")
    if start == 0 or stop == 0 or (start < 0) != (stop < 0):
        raise ValueError("geomspace needs start and stop of one sign, neither 0")
    sign = -1.0 if start < 0 else 1.0
    out = logspace(
        math.log10(builtins.abs(start)),
        math.log10(builtins.abs(stop)),
        num,
        endpoint,
        10.0,
        None,
        axis,
    )
    out = numpy_impl.multiply(out, sign)
    return out if dtype is None else numpy_impl.public_asarray(out).astype(dtype)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [numpy_impl.ravel(numpy_impl.public_asarray(x)) for x in xi]
    n = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * n
        shape[i] = x.shape[0]
        out.append(numpy_shapes.reshape(x, shape))
    if indexing == "xy" and n >= 2:
        out = [numpy_shapes.swapaxes(o, 0, 1) for o in out]
    if not sparse:
        full = np.broadcast_shapes(*[o.shape for o in out])
        out = [numpy_shapes.broadcast_to(o, full) for o in out]
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    """The index arrays of a grid of shape `dimensions`."""
    dims = tuple(int(d) for d in dimensions)
    grids = meshgrid(
        *[numpy_impl.arange(d, dtype=dtype or dtypes.default_int()) for d in dims],
        indexing="ij",
        sparse=sparse,
    )
    return tuple(grids) if sparse else numpy_shapes.stack(grids)


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """The (row, column) indices of tril(ones(n, m), k)."""
    r, c = np.tril_indices(n, k, m)
    return numpy_impl.public_asarray(r.astype(np.int64)), numpy_impl.public_asarray(
        c.astype(np.int64)
    )


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """The (row, column) indices of triu(ones(n, m), k)."""
    r, c = np.triu_indices(n, k, m)
    return numpy_impl.public_asarray(r.astype(np.int64)), numpy_impl.public_asarray(
        c.astype(np.int64)
    )


def tril_indices_from(arr, k: int = 0):
    """tril_indices for arr's last two dimensions."""
    return tril_indices(arr.shape[-2], k, arr.shape[-1])


def triu_indices_from(arr, k: int = 0):
    """triu_indices for arr's last two dimensions."""
    return triu_indices(arr.shape[-2], k, arr.shape[-1])


def diag_indices(n: int, ndim: int = 2):
    """The indices of the main diagonal of an n x ... x n array."""
    i = numpy_impl.arange(n)
    return (i,) * ndim


def diag_indices_from(arr):
    """diag_indices for a square array."""
    return diag_indices(arr.shape[0], arr.ndim)


# --- manipulation ----------------------------------------------------------------------


@eager
def atleast_1d(*arys):
    """Each array with at least one dimension."""
    out = [numpy_shapes.reshape(a, (1,)) if asarray(a).ndim == 0 else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


@eager
def atleast_2d(*arys):
    """Each array with at least two dimensions (new ones in front)."""
    out = []
    for a in arys:
        a = asarray(a)
        out.append(numpy_shapes.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


@eager
def atleast_3d(*arys):
    """Each array with at least three dimensions, as NumPy adds them."""
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = numpy_shapes.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = numpy_shapes.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = numpy_shapes.reshape(a, (*a.shape, 1))
        out.append(a)
    return out[0] if len(out) == 1 else out


@eager
def hstack(tup, dtype=None):
    """Arrays joined along their second axis (the first for 1-D ones)."""
    xs = [atleast_1d(a) for a in tup]
    out = numpy_shapes.concatenate(xs, axis=0 if xs[0].ndim == 1 else 1)
    return out if dtype is None else out.astype(dtype)


@eager
def vstack(tup, dtype=None):
    """Arrays joined along a first axis (1-D ones as rows)."""
    out = numpy_shapes.concatenate([atleast_2d(a) for a in tup], axis=0)
    return out if dtype is None else out.astype(dtype)


row_stack = vstack


@eager
def dstack(tup, dtype=None):
    """Arrays joined along a third axis."""
    out = numpy_shapes.concatenate([atleast_3d(a) for a in tup], axis=2)
    return out if dtype is None else out.astype(dtype)


@eager
def column_stack(tup):
    """1-D arrays as columns, 2-D ones as they are, side by side."""
    xs = [asarray(a) for a in tup]
    return numpy_shapes.concatenate(
        [numpy_shapes.reshape(a, (a.shape[0], 1)) if a.ndim < 2 else a for a in xs], axis=1
    )


@eager
def array_split(ary, indices_or_sections, axis: int = 0):
    """Pieces along `axis`; with a count, the first ones one element larger
    when it does not divide."""
    a = asarray(ary)
    ax = ops.normalize_axis(axis, a.ndim, "array_split")
    n = a.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            fail("array_split", "the number of sections must be positive")
        size, extra = builtins.divmod(n, sections)
        bounds = np.cumsum([0] + [size + 1] * extra + [size] * (sections - extra))
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    from uir._src.numpy_shapes import slice_static

    out = []
    for lo, hi in itertools.pairwise(bounds):
        lo, hi = builtins.min(int(lo), n), builtins.min(builtins.max(int(hi), int(lo)), n)
        starts, limits = [0] * a.ndim, list(a.shape)
        starts[ax], limits[ax] = lo, builtins.max(hi, lo)
        out.append(slice_static(a, starts, limits, [1] * a.ndim))
    return out


def hsplit(ary, indices_or_sections):
    """split along the second axis (the first for 1-D arrays)."""
    a = numpy_impl.public_asarray(ary)
    return numpy_shapes.split(a, indices_or_sections, axis=1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along the first axis."""
    return numpy_shapes.split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """split along the third axis."""
    return numpy_shapes.split(ary, indices_or_sections, axis=2)


@eager
def fliplr(m):
    """m reversed along its second axis."""
    return numpy_shapes.flip(m, axis=1)


@eager
def flipud(m):
    """m reversed along its first axis."""
    return numpy_shapes.flip(m, axis=0)


@eager
def rot90(m, k: int = 1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane `axes`."""
    m = asarray(m)
    a0, a1 = (ops.normalize_axis(a, m.ndim, "rot90") for a in axes)
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return numpy_shapes.flip(numpy_shapes.flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return numpy_shapes.transpose(numpy_shapes.flip(m, a1), perm)
    return numpy_shapes.flip(numpy_shapes.transpose(m, perm), a1)


@eager
def roll(a, shift, axis=None):
    """Elements shifted by `shift` along `axis`, wrapping around."""
    a = asarray(a)
    if axis is None:
        return numpy_shapes.reshape(roll(numpy_impl.ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, (int, np.integer)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes, strict=True):
        ax = ops.normalize_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = numpy_shapes.concatenate(
                [
                    numpy_shapes.take(a, numpy_impl.arange(n - s, n), axis=ax),
                    numpy_shapes.take(a, numpy_impl.arange(0, n - s), axis=ax),
                ],
                axis=ax,
            )
    return a


@eager
def rollaxis(a, axis: int, start: int = 0):
    """`axis` moved to before `start` (NumPy's older moveaxis)."""
    a = asarray(a)
    axis = ops.normalize_axis(axis, a.ndim, "rollaxis")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return numpy_shapes.moveaxis(a, axis, start)


@eager
def matrix_transpose(x):
    """x with its last two axes swapped."""
    x = asarray(x)
    if x.ndim < 2:
        fail("matrix_transpose", f"needs at least two dimensions, got {ops.describe(x)}")
    return numpy_shapes.swapaxes(x, -1, -2)


@eager
def append(arr, values, axis=None):
    """values after arr (both flattened without an axis)."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return numpy_shapes.concatenate([numpy_impl.ravel(arr), numpy_impl.ravel(values)])
    return numpy_shapes.concatenate([arr, values], axis=axis)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_arrays(*args):
    """The arrays broadcast to one shape."""
    xs = [numpy_impl.public_asarray(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs])
    return [numpy_shapes.broadcast_to(x, shape) for x in xs]


@eager
def unstack(x, /, *, axis: int = 0):
    """The slices of x along `axis`."""
    x = asarray(x)
    ax = ops.normalize_axis(axis, x.ndim, "unstack")
    return tuple(numpy_shapes.take(x, i, axis=ax) for i in range(x.shape[ax]))


def ndim(a) -> int:
    """The number of dimensions."""
    return len(np.shape(a)) if not hasattr(a, "ndim") else a.ndim


def shape(a) -> tuple[int, ...]:
    """The shape."""
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def size(a, axis: int | None = None) -> int:
    """The number of elements (along `axis`)."""
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


@eager
def resize(a, new_shape):
    """a repeated or cut to `new_shape`."""
    a = numpy_impl.ravel(asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = math.prod(new_shape)
    reps = -(-total // builtins.max(1, a.shape[0]))
    return numpy_shapes.reshape(numpy_shapes.tile(a, reps)[:total], new_shape)


@eager
def kron(a, b):
    """The Kronecker product."""
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = numpy_shapes.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = numpy_shapes.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    shape_a = [d for s in a.shape for d in (s, 1)]
    shape_b = [d for s in b.shape for d in (1, s)]
    out = numpy_shapes.reshape(a, shape_a) * numpy_shapes.reshape(b, shape_b)
    return numpy_shapes.reshape(out, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


@eager
def inner(a, b):
    """Sums over the last axes of a and b."""
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return numpy_shapes.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


@eager
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """The cross product of 3-vectors (2-vectors get a zero third component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = numpy_shapes.moveaxis(asarray(a), axisa, -1)
    b = numpy_shapes.moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        fail("cross", "vectors must have 2 or 3 components")

    def parts(v):
        comps = [v[..., i] for i in range(v.shape[-1])]
        return comps + [numpy_impl.zeros_like(comps[0])] * (3 - len(comps))

    (a0, a1, a2), (b0, b1, b2) = parts(a), parts(b)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a0 * b1 - a1 * b0
    out = numpy_shapes.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return numpy_shapes.moveaxis(out, -1, axisc)


@eager
def matvec(x1, x2):
    """Matrix-vector products over broadcast batch dimensions."""
    return numpy_shapes.matmul(x1, numpy_shapes.expand_dims(asarray(x2), -1))[..., 0]


@eager
def vecmat(x1, x2):
    """Vector-matrix products (conjugating the vector)."""
    return numpy_shapes.matmul(numpy_shapes.expand_dims(numpy_impl.conj(asarray(x1)), -2), x2)[
        ..., 0, :
    ]


@eager
def vecdot(x1, x2, axis: int = -1):
    """Dot products along `axis` (conjugating x1)."""
    a, b = asarray(x1), asarray(x2)
    return numpy_impl.sum(numpy_impl.conj(a) * b, axis=axis)


# --- statistics ---------------------------------------------------------------------------


@eager
def ptp(a, axis=None, keepdims: bool = False):
    """max - min."""
    return numpy_impl.max(a, axis=axis, keepdims=keepdims) - numpy_impl.min(
        a, axis=axis, keepdims=keepdims
    )


@eager
def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of nonzero elements."""
    return numpy_impl.sum(numpy_impl.not_equal(asarray(a), 0), axis=axis, keepdims=keepdims).astype(
        dtypes.default_int()
    )


@eager
def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The (weighted) mean."""
    a = asarray(a)
    if weights is None:
        avg = numpy_impl.mean(a, axis=axis, keepdims=keepdims)
        count = numpy_impl.full_like(
            avg,
            a.size
            if axis is None
            else size(a, axis)
            if isinstance(axis, int)
            else math.prod(a.shape[i] for i in axis),
        )
        return (avg, count) if returned else avg
    w = asarray(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            fail("average", "weights of another shape need a single axis and one dimension")
        ax = ops.normalize_axis(axis, a.ndim, "average")
        w = numpy_shapes.reshape(w, [a.shape[ax] if i == ax else 1 for i in range(a.ndim)])
    total = numpy_impl.sum(w * numpy_impl.ones_like(a), axis=axis, keepdims=keepdims)
    avg = numpy_impl.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, total) if returned else avg


def _nan_reduce(name, fn, fill):
    def f(a, axis=None, keepdims: bool = False, **kwargs):
        a = asarray(a)
        if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
            return fn(a, axis=axis, keepdims=keepdims, **kwargs)
        return fn(
            numpy_impl.where(numpy_impl.isnan(a), fill(a.dtype), a),
            axis=axis,
            keepdims=keepdims,
            **kwargs,
        )

    f.__name__ = name
    f.__doc__ = f"{fn.__name__}, NaNs ignored."
    return eager(f)


nansum = _nan_reduce("nansum", numpy_impl.sum, lambda d: 0)
nanprod = _nan_reduce("nanprod", numpy_impl.prod, lambda d: 1)


@eager
def nanmax(a, axis=None, keepdims: bool = False):
    """max, NaNs ignored (NaN where all are)."""
    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        return numpy_impl.max(a, axis=axis, keepdims=keepdims)
    out = numpy_impl.max(
        numpy_impl.where(numpy_impl.isnan(a), -np.inf, a), axis=axis, keepdims=keepdims
    )
    all_nan = numpy_impl.all(numpy_impl.isnan(a), axis=axis, keepdims=keepdims)
    return numpy_impl.where(all_nan, np.nan, out).astype(a.dtype)


@eager
def nanmin(a, axis=None, keepdims: bool = False):
    """min, NaNs ignored (NaN where all are)."""
    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        return numpy_impl.min(a, axis=axis, keepdims=keepdims)
    out = numpy_impl.min(
        numpy_impl.where(numpy_impl.isnan(a), np.inf, a), axis=axis, keepdims=keepdims
    )
    all_nan = numpy_impl.all(numpy_impl.isnan(a), axis=axis, keepdims=keepdims)
    return numpy_impl.where(all_nan, np.nan, out).astype(a.dtype)


@eager
def nanmean(a, axis=None, keepdims: bool = False):
    """mean, NaNs ignored."""
    a = asarray(a)
    if not dtypes.is_float(a.dtype):
        return numpy_impl.mean(a, axis=axis, keepdims=keepdims)
    valid = numpy_impl.logical_not(numpy_impl.isnan(a))
    count = numpy_impl.sum(valid, axis=axis, keepdims=keepdims).astype(a.dtype)
    return nansum(a, axis=axis, keepdims=keepdims) / count


@eager
def nanvar(a, axis=None, keepdims: bool = False, ddof: int = 0):
    """var, NaNs ignored."""
    a = asarray(a)
    mean = nanmean(a, axis=axis, keepdims=True)
    valid = numpy_impl.logical_not(numpy_impl.isnan(a))
    count = numpy_impl.sum(valid, axis=axis, keepdims=keepdims).astype(a.dtype)
    sq = numpy_impl.where(valid, numpy_impl.square(a - mean), 0)
    return numpy_impl.sum(sq, axis=axis, keepdims=keepdims) / (count - ddof)


@eager
def nanstd(a, axis=None, keepdims: bool = False, ddof: int = 0):
    """std, NaNs ignored."""
    return numpy_impl.sqrt(nanvar(a, axis=axis, keepdims=keepdims, ddof=ddof))


@eager
def nanargmax(a, axis=None, keepdims: bool = False):
    """argmax, NaNs ignored."""
    a = asarray(a)
    out = numpy_impl.argmax(
        numpy_impl.where(numpy_impl.isnan(a), -np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
    )
    return numpy_shapes.expand_dims(out, axis) if keepdims and axis is not None else out


@eager
def nanargmin(a, axis=None, keepdims: bool = False):
    """argmin, NaNs ignored."""
    a = asarray(a)
    out = numpy_impl.argmin(
        numpy_impl.where(numpy_impl.isnan(a), np.inf, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
    )
    return numpy_shapes.expand_dims(out, axis) if keepdims and axis is not None else out


@eager
def nancumsum(a, axis=None, dtype=None):
    """cumsum with NaNs as 0."""
    a = asarray(a)
    return numpy_shapes.cumsum(
        numpy_impl.where(numpy_impl.isnan(a), 0, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        dtype=dtype,
    )


@eager
def nancumprod(a, axis=None, dtype=None):
    """cumprod with NaNs as 1."""
    a = asarray(a)
    return numpy_shapes.cumprod(
        numpy_impl.where(numpy_impl.isnan(a), 1, a) if dtypes.is_float(a.dtype) else a,
        axis=axis,
        dtype=dtype,
    )


@eager
def cumulative_sum(x, axis=None, dtype=None, include_initial: bool = False):
    """cumsum, with a leading 0 when include_initial."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            fail("cumulative_sum", "an axis is needed for arrays of more than one dimension")
        axis = 0
    out = numpy_shapes.cumsum(x, axis=axis, dtype=dtype)
    if include_initial:
        zero_shape = list(out.shape)
        zero_shape[ops.normalize_axis(axis, out.ndim, "cumulative_sum")] = 1
        out = numpy_shapes.concatenate([numpy_impl.zeros(zero_shape, out.dtype), out], axis=axis)
    return out


@eager
def cumulative_prod(x, axis=None, dtype=None, include_initial: bool = False):
    """cumprod, with a leading 1 when include_initial."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            fail("cumulative_prod", "an axis is needed for arrays of more than one dimension")
        axis = 0
    out = numpy_shapes.cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        one_shape = list(out.shape)
        one_shape[ops.normalize_axis(axis, out.ndim, "cumulative_prod")] = 1
        out = numpy_shapes.concatenate([numpy_impl.ones(one_shape, out.dtype), out], axis=axis)
    return out


@eager
def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The n-th differences along `axis` (after prepending and appending
    values, scalars broadcast across the other axes)."""
    a = asarray(a)
    ax = ops.normalize_axis(axis, a.ndim, "diff")

    def along(extra):
        e = asarray(extra)
        if e.ndim == 0:
            shp = list(a.shape)
            shp[ax] = 1
            e = numpy_shapes.broadcast_to(e, shp)
        return e

    pieces = [a]
    if prepend is not None:
        pieces.insert(0, along(prepend))
    if append is not None:
        pieces.append(along(append))
    if len(pieces) > 1:
        a = numpy_shapes.concatenate(pieces, axis=ax)
    for _ in range(n):
        m = a.shape[ax]
        a = numpy_shapes.take(a, numpy_impl.arange(1, m), axis=ax) - numpy_shapes.take(
            a, numpy_impl.arange(0, m - 1), axis=ax
        )
    return a


@eager
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with values before and after."""
    d = diff(numpy_impl.ravel(asarray(ary)))
    parts = []
    if to_begin is not None:
        parts.append(numpy_impl.ravel(asarray(to_begin)).astype(d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(numpy_impl.ravel(asarray(to_end)).astype(d.dtype))
    return numpy_shapes.concatenate(parts) if len(parts) > 1 else d


@eager
def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """The trapezoidal integral along `axis`."""
    y = _floats(y)
    ax = ops.normalize_axis(axis, y.ndim, "trapezoid")
    n = y.shape[ax]
    mid = (
        numpy_shapes.take(y, numpy_impl.arange(1, n), axis=ax)
        + numpy_shapes.take(y, numpy_impl.arange(0, n - 1), axis=ax)
    ) / 2
    if x is None:
        return numpy_impl.sum(mid, axis=ax) * dx
    d = diff(asarray(x), axis=-1 if asarray(x).ndim == 1 else ax)
    if d.ndim == 1:
        d = numpy_shapes.reshape(d, [d.shape[0] if i == ax else 1 for i in range(y.ndim)])
    return numpy_impl.sum(mid * d, axis=ax)


def _quantiles(a, q, axis, method: str, keepdims: bool, nan: bool):
    a = _floats(a)
    q = asarray(q).astype(a.dtype)
    if axis is None:
        a, axis = numpy_impl.ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "quantile")
    a = numpy_shapes.moveaxis(a, ax, -1)
    n = a.shape[-1]
    if nan:
        valid = numpy_impl.logical_not(numpy_impl.isnan(a))
        count = numpy_impl.sum(valid, axis=-1, keepdims=True).astype(a.dtype)
        s = numpy_shapes.sort(numpy_impl.where(valid, a, np.inf), axis=-1)
    else:
        count = asarray(np.array(n, a.dtype))
        s = numpy_shapes.sort(a, axis=-1)
    qs = numpy_shapes.reshape(q, q.shape + (1,) * (a.ndim - 1) + (1,))  # q dims, batch dims, 1
    pos = qs * (count - 1)
    lo = numpy_impl.floor(pos)
    hi = numpy_impl.ceil(pos)
    if method == "linear":
        pass
    elif method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    elif method == "nearest":
        lo = hi = numpy_impl.round(pos)
    elif method == "midpoint":
        pass
    else:
        fail(
            "quantile",
            f"method {method!r} is not supported (linear, lower, higher, nearest, midpoint)",
        )
    li = numpy_impl.clip(lo, 0, n - 1).astype(np.int32)
    hi_i = numpy_impl.clip(hi, 0, n - 1).astype(np.int32)
    sb = numpy_shapes.broadcast_to(s, q.shape + s.shape)
    vlo = numpy_shapes.take_along_axis(
        sb, numpy_shapes.broadcast_to(li, q.shape + s.shape[:-1] + (1,)), axis=-1
    )[..., 0]
    vhi = numpy_shapes.take_along_axis(
        sb, numpy_shapes.broadcast_to(hi_i, q.shape + s.shape[:-1] + (1,)), axis=-1
    )[..., 0]
    frac = (pos - lo)[..., 0]
    out = (vlo + vhi) / 2 if method == "midpoint" else vlo + (vhi - vlo) * frac
    if nan:
        out = numpy_impl.where(count[..., 0] == 0, np.nan, out)
    if keepdims:
        out = numpy_shapes.expand_dims(out, q.ndim + ax)
    return out


@eager
def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
):
    """The q-th quantiles along `axis` (NumPy's methods linear, lower, higher, nearest, midpoint)."""
    return _quantiles(a, q, axis, method, keepdims, nan=False)


@eager
def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
):
    """quantile, NaNs ignored."""
    return _quantiles(a, q, axis, method, keepdims, nan=True)


@eager
def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
):
    """quantile with q in percent."""
    return _quantiles(a, asarray(q) / 100, axis, method, keepdims, nan=False)


@eager
def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
):
    """nanquantile with q in percent."""
    return _quantiles(a, asarray(q) / 100, axis, method, keepdims, nan=True)


@eager
def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median along `axis`."""
    return _quantiles(a, 0.5, axis, "linear", keepdims, nan=False)


@eager
def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """median, NaNs ignored."""
    return _quantiles(a, 0.5, axis, "linear", keepdims, nan=True)


# --- search and selection -----------------------------------------------------------------


@eager
def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Indices where v's elements would go into sorted a (by counting)."""
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        fail("searchsorted", f"a must be one-dimensional, got {ops.describe(a)}")
    if sorter is not None:
        a = numpy_shapes.take(a, sorter)
    if side not in ("left", "right"):
        fail("searchsorted", f"side must be 'left' or 'right', got {side!r}")
    a, v = ops.promote("searchsorted", a, v)
    cmp = numpy_impl.less if side == "left" else numpy_impl.less_equal
    before = cmp(a, numpy_shapes.expand_dims(v, -1))
    return numpy_impl.sum(before, axis=-1).astype(
        dtypes.default_int() if dtypes.default_int() == np.int64 else np.int32
    )


@eager
def digitize(x, bins, right: bool = False):
    """The bin of each element (bins increasing or decreasing)."""
    bins = asarray(bins)
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side=side)
    decreasing = bins.shape[0] - searchsorted(
        numpy_shapes.flip(bins), x, side="right" if right else "left"
    )
    first, last = bins[0], bins[-1]
    return numpy_impl.where(first <= last, increasing, decreasing)


@eager
def select(condlist, choicelist, default=0):
    """The choice of the first true condition, elementwise."""
    if len(condlist) != len(choicelist):
        fail("select", "condlist and choicelist must have the same length")
    out = asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        out = numpy_impl.where(cond, choice, out)
    return out


@eager
def choose(a, choices, mode: str = "raise"):
    """choices[a] elementwise (indices clipped or wrapped; 'raise' clips, as JAX)."""
    a = asarray(a)
    xs = [asarray(c) for c in choices]
    n = len(xs)
    idx = numpy_impl.remainder(a, n) if mode == "wrap" else numpy_impl.clip(a, 0, n - 1)
    out = xs[-1]
    for i in range(n - 2, -1, -1):
        out = numpy_impl.where(numpy_impl.equal(idx, i), xs[i], out)
    return out


@eager
def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """Counts of each value of non-negative ints x (length must be given
    inside jit, where the largest value is not known)."""
    x = asarray(x)
    if length is None:
        fail(
            "bincount",
            "needs length= (the number of bins): the largest value is not known while tracing",
        )
    n = builtins.max(int(length), int(minlength))
    bins = ops.iota(x.dtype, (n,), 0)
    hits = numpy_impl.equal(
        numpy_shapes.expand_dims(numpy_impl.ravel(x), 0), numpy_shapes.expand_dims(bins, 1)
    )
    if weights is None:
        return numpy_impl.sum(hits, axis=1).astype(dtypes.default_int())
    w = numpy_impl.ravel(asarray(weights))
    return numpy_impl.sum(numpy_impl.where(hits, w, 0), axis=1)


@eager
def interp(x, xp, fp, left=None, right=None, period=None):
    """Linear interpolation of (xp, fp) at x (xp increasing)."""
    if period is not None:
        fail("interp", "period= is not supported yet")
    x, xp, fp = _floats(x), _floats(xp), _floats(fp)
    i = numpy_impl.clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    x0, x1 = numpy_shapes.take(xp, i - 1), numpy_shapes.take(xp, i)
    y0, y1 = numpy_shapes.take(fp, i - 1), numpy_shapes.take(fp, i)
    dx = x1 - x0
    t = numpy_impl.where(dx == 0, 0, (x - x0) / numpy_impl.where(dx == 0, 1, dx))
    out = y0 + t * (y1 - y0)
    out = numpy_impl.where(x < xp[0], fp[0] if left is None else left, out)
    return numpy_impl.where(x > xp[-1], fp[-1] if right is None else right, out)


@eager
def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients p (highest first) at x, by Horner's rule."""
    p, x = asarray(p), asarray(x)
    out = numpy_impl.zeros_like(x * p[0])
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


@eager
def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete 1-D convolution (commutative: the longer input slides)."""
    a, v = asarray(a), asarray(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate(a, numpy_shapes.flip(v), mode, "convolve")


@eager
def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The 1-D cross-correlation."""
    a, v = asarray(a), asarray(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        # correlate(a, v) is the reversed conjugate of correlate(v, a).
        return numpy_impl.conj(
            numpy_shapes.flip(_correlate(v, numpy_impl.conj(a), mode, "correlate"))
        )
    return _correlate(a, numpy_impl.conj(v), mode, "correlate")


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
    padded = numpy_shapes.pad(a, [pad])
    k = padded.shape[0] - m + 1
    windows = numpy_shapes.stack([padded[i : i + k] for i in range(m)])
    return numpy_impl.sum(windows * numpy_shapes.expand_dims(v, 1), axis=0)


# --- windows, polynomials, sets --------------------------------------------------------


def _window(name, fn):
    def f(M: int):
        if M < 1:
            return numpy_impl.zeros((0,), dtypes.default_float())
        if M == 1:
            return numpy_impl.ones((1,), dtypes.default_float())
        n = np.arange(M)
        return numpy_impl.public_asarray(fn(n, M).astype(dtypes.default_float()))

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
def bitwise_count(x):
    """The number of set bits of |x| (integers)."""
    x = asarray(x)
    if not dtypes.is_int(x.dtype):
        fail("bitwise_count", f"takes integers, got {x.dtype}")
    magnitude = numpy_impl.abs(x) if x.dtype.kind == "i" else x
    return ops.convert(ops.unary("popcnt", magnitude), np.dtype(np.uint8))


@eager
def frexp(x):
    """(mantissa in [0.5, 1), exponent) with x = mantissa * 2**exponent."""
    x = _floats(x)
    finite_nonzero = numpy_impl.isfinite(x) & (x != 0)
    safe = numpy_impl.where(finite_nonzero, numpy_impl.abs(x), 1)
    e = numpy_impl.floor(numpy_impl.log2(safe)) + 1
    m = numpy_impl.abs(x) / numpy_impl.exp2(e)
    # log2 may land a hair off at powers of two: correct by one step.
    e = numpy_impl.where(m >= 1, e + 1, numpy_impl.where(m < 0.5, e - 1, e))
    m = numpy_impl.abs(x) / numpy_impl.exp2(e)
    m = numpy_impl.where(finite_nonzero, numpy_impl.where(x < 0, -m, m), x)
    return m, numpy_impl.where(finite_nonzero, e, 0).astype(np.int32)


@eager
def sort_complex(a):
    """a sorted by real part, then imaginary part, as complex numbers."""
    a = asarray(a)
    if not dtypes.is_complex(a.dtype):
        a = a.astype(np.complex64 if a.dtype.itemsize <= 4 else dtypes.canonicalize(np.complex128))
    return numpy_shapes.sort(a)


def _poly_pad(a, b):
    a, b = atleast_1d(asarray(a)), atleast_1d(asarray(b))
    n = builtins.max(a.shape[0], b.shape[0])
    return numpy_shapes.pad(a, [(n - a.shape[0], 0)]), numpy_shapes.pad(b, [(n - b.shape[0], 0)])


@eager
def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest first)."""
    a, b = _poly_pad(a1, a2)
    return a + b


@eager
def polysub(a1, a2):
    """The difference of two polynomials."""
    a, b = _poly_pad(a1, a2)
    return a - b


@eager
def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials."""
    return convolve(atleast_1d(asarray(a1)), atleast_1d(asarray(a2)))


@eager
def polyder(p, m: int = 1):
    """The m-th derivative of polynomial p."""
    p = asarray(p)
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return numpy_impl.zeros((0,), p.dtype)
        p = p[:-1] * numpy_impl.arange(n - 1, 0, -1).astype(p.dtype)
    return p


@eager
def polyint(p, m: int = 1, k=None):
    """The m-th antiderivative of polynomial p (integration constants k, 0 by default)."""
    p = _floats(p)
    ks = [0.0] * m if k is None else list(np.atleast_1d(k))
    for i in range(m):
        n = p.shape[0]
        p = numpy_shapes.concatenate(
            [
                p / numpy_impl.arange(n, 0, -1).astype(p.dtype),
                numpy_impl.public_asarray([ks[i]]).astype(p.dtype),
            ]
        )
    return p


@eager
def isin(element, test_elements, assume_unique: bool = False, invert: bool = False):
    """Whether each element occurs in test_elements."""
    e, t = asarray(element), numpy_impl.ravel(asarray(test_elements))
    hit = numpy_impl.any(numpy_impl.equal(numpy_shapes.expand_dims(e, -1), t), axis=-1)
    return numpy_impl.logical_not(hit) if invert else hit


def ix_(*args):
    """Open-mesh index arrays from 1-D sequences (for indexing a cross product)."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = numpy_impl.public_asarray(a)
        if a.ndim != 1:
            raise ValueError("ix_ takes one-dimensional sequences")
        out.append(numpy_shapes.reshape(a, [a.shape[0] if j == i else 1 for j in range(n)]))
    return tuple(out)


@eager
def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """a with its main diagonal set to val (a new array: pass inplace=False, as JAX asks)."""
    if inplace:
        fail(
            "fill_diagonal", "uir arrays are immutable: pass inplace=False to get the filled array"
        )
    a = asarray(a)
    rows = ops.iota(np.dtype(np.int32), a.shape, 0)
    on = None
    for d in range(1, a.ndim):
        eq = numpy_impl.equal(ops.iota(np.dtype(np.int32), a.shape, d), rows)
        on = eq if on is None else on & eq
    v = (
        numpy_shapes.broadcast_to(asarray(val).astype(a.dtype), a.shape)
        if asarray(val).ndim == 0
        else None
    )
    if v is None:
        flat_index = (
            numpy_impl.minimum(rows, asarray(val).shape[0] - 1) if asarray(val).ndim == 1 else rows
        )
        v = numpy_shapes.take(numpy_impl.ravel(asarray(val)).astype(a.dtype), flat_index)
    return numpy_impl.where(on, v, a)


@eager
def cov(
    m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None, aweights=None
):
    """The covariance matrix of the rows (variables) of m."""
    if fweights is not None or aweights is not None:
        fail("cov", "weights are not supported yet")
    x = _floats(atleast_2d(asarray(m)))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _floats(atleast_2d(asarray(y)))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = numpy_shapes.concatenate([x, yy], axis=0)
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = x - numpy_impl.mean(x, axis=1, keepdims=True)
    out = numpy_shapes.matmul(centered, numpy_impl.conj(centered).T) / (n - ddof)
    return numpy_shapes.squeeze(out) if out.shape == (1, 1) else out


@eager
def corrcoef(x, y=None, rowvar: bool = True):
    """Pearson correlation coefficients of the rows of x."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = numpy_impl.sqrt(diagonal(c))
    return numpy_impl.clip(c / d[:, None] / d[None, :], -1, 1)


@eager
def unwrap(p, discont=None, axis: int = -1, period: float = 2 * np.pi):
    """p with jumps larger than discont (period / 2) unwrapped by periods."""
    p = _floats(p)
    ax = ops.normalize_axis(axis, p.ndim, "unwrap")
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    dd = diff(p, axis=ax)
    ddmod = numpy_impl.remainder(dd + half, period) - half
    ddmod = numpy_impl.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = numpy_impl.where(numpy_impl.abs(dd) < discont, 0, ddmod - dd)
    first = numpy_shapes.take(p, numpy_impl.arange(0, 1), axis=ax)
    rest = numpy_shapes.take(p, numpy_impl.arange(1, p.shape[ax]), axis=ax) + numpy_shapes.cumsum(
        correction, axis=ax
    )
    return numpy_shapes.concatenate([first, rest], axis=ax)


@eager
def gcd(x1, x2):
    """The greatest common divisor, elementwise (Euclid's loop, 64 rounds at most)."""

    a, b = ops.promote("gcd", x1, x2)
    if not dtypes.is_int(a.dtype):
        fail("gcd", f"takes integers, got {a.dtype}")
    a, b = broadcast_arrays(numpy_impl.abs(a), numpy_impl.abs(b))

    def body(_, ab):
        x, y = ab
        safe = numpy_impl.where(y == 0, 1, y)
        return numpy_impl.where(y == 0, x, y), numpy_impl.where(
            y == 0, 0, numpy_impl.remainder(x, safe)
        )

    return lax_control.fori_loop(0, 8 * a.dtype.itemsize * 2, body, (a, b))[0]


@eager
def lcm(x1, x2):
    """The least common multiple, elementwise."""
    a, b = ops.promote("lcm", x1, x2)
    g = gcd(a, b)
    return numpy_impl.where(g == 0, 0, numpy_impl.abs(a // numpy_impl.where(g == 0, 1, g) * b))


# --- more ----------------------------------------------------------------------------


@eager
def spacing(x):
    """The distance from |x| to the next larger float, with x's sign."""
    x = _floats(x)
    ax = numpy_impl.abs(x)
    step = numpy_impl.nextafter(ax, numpy_impl.public_asarray(np.inf).astype(x.dtype)) - ax
    return numpy_impl.where(x < 0, -step, step)


@eager
def i0(x):
    """The modified Bessel function of the first kind, order 0 (its power
    series, summed until the terms vanish: 60 terms reach double precision
    for |x| up to about 30)."""
    x = _floats(x)
    half_sq = (x / 2) ** 2
    term = numpy_impl.ones_like(x)
    total = numpy_impl.ones_like(x)
    for k in range(1, 60):
        term = term * half_sq / (k * k)
        total = total + term
    return total


def kaiser(M: int, beta: float):
    """The Kaiser window of M points."""
    if M < 1:
        return numpy_impl.zeros((0,), dtypes.default_float())
    if M == 1:
        return numpy_impl.ones((1,), dtypes.default_float())
    n = np.arange(M)
    alpha = (M - 1) / 2.0
    w = np.i0(beta * np.sqrt(1 - ((n - alpha) / alpha) ** 2)) / np.i0(float(beta))
    return numpy_impl.public_asarray(w.astype(dtypes.default_float()))


@eager
def lexsort(keys, axis: int = -1):
    """The indices that sort by the last key, then the one before, ..."""
    from uir._src.numpy_shapes import _sort

    ks = [asarray(k) for k in keys]
    if not ks:
        fail("lexsort", "needs at least one key")
    ax = ops.normalize_axis(axis, ks[0].ndim, "lexsort")
    # Stable sorts from the least significant key (the first) to the most
    # (the last), each carrying the order so far.
    order = ops.iota(dtypes.default_int(), ks[0].shape, ax)
    for k in ks:
        _, order = _sort(
            [numpy_shapes.take_along_axis(k, order, axis=ax), order], ax, name="lexsort"
        )
    return order


@eager
def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C"):
    """Flat indices of index tuples into an array of shape dims (clipped)."""
    if order != "C":
        fail("ravel_multi_index", "only order='C' is supported")
    dims = tuple(int(d) for d in dims)
    out = None
    stride = 1
    for idx, d in reversed(list(zip(multi_index, dims, strict=True))):
        i = asarray(idx)
        i = numpy_impl.remainder(i, d) if mode == "wrap" else numpy_impl.clip(i, 0, d - 1)
        term = i * stride
        out = term if out is None else out + term
        stride *= d
    return out


@eager
def unravel_index(indices, shape):
    """The index tuples of flat indices into an array of `shape` (clipped)."""
    shape = tuple(int(d) for d in shape)
    i = numpy_impl.clip(asarray(indices), 0, math.prod(shape) - 1)
    out = []
    for d in reversed(shape):
        out.append(numpy_impl.remainder(i, d))
        i = i // d
    return tuple(reversed(out))


def delete(arr, obj, axis=None, *, assume_unique_indices: bool = False):
    """arr without the entries at the static indices obj along `axis`."""
    a = numpy_impl.public_asarray(arr)
    if axis is None:
        a, axis = numpy_impl.ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "delete")
    n = a.shape[ax]
    if isinstance(obj, slice):
        drop = set(range(n)[obj])
    else:
        drop = {int(i) % n for i in np.atleast_1d(np.asarray(obj))}
    keep = [i for i in range(n) if i not in drop]
    return numpy_shapes.take(a, numpy_impl.public_asarray(np.array(keep, np.int32)), axis=ax)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the static index obj along `axis`."""
    a = numpy_impl.public_asarray(arr)
    if axis is None:
        a, axis = numpy_impl.ravel(a), 0
    ax = ops.normalize_axis(axis, a.ndim, "insert")
    if not isinstance(obj, (int, np.integer)):
        raise TypeError("insert takes one static int index")
    n = a.shape[ax]
    at = int(obj) % (n + 1) if obj < 0 else int(obj)
    v = numpy_impl.public_asarray(values).astype(a.dtype)
    piece_shape = list(a.shape)
    piece_shape[ax] = 1 if v.ndim < a.ndim else v.shape[ax]
    v = numpy_shapes.broadcast_to(
        v
        if v.ndim == a.ndim
        else numpy_shapes.reshape(
            v,
            [
                s if i != ax else 1
                for i, s in enumerate(
                    numpy_shapes.broadcast_to(
                        v, [d for i, d in enumerate(a.shape) if i != ax]
                    ).shape[:ax]
                )
            ]
            + [1]
            + list(
                numpy_shapes.broadcast_to(v, [d for i, d in enumerate(a.shape) if i != ax]).shape[
                    ax:
                ]
            ),
        )
        if v.ndim
        else v,
        piece_shape,
    )
    before = numpy_shapes.take(a, numpy_impl.arange(0, at), axis=ax)
    after = numpy_shapes.take(a, numpy_impl.arange(at, n), axis=ax)
    return numpy_shapes.concatenate([before, v, after], axis=ax)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function called on the index grids of `shape`."""
    grids = indices(shape, dtype=dtypes.canonicalize(dtype))
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


@eager
def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """Central differences inside, one-sided at the edges (unit spacing or
    scalar spacings per axis)."""
    f = _floats(f)
    axes = (
        list(range(f.ndim)) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    )
    spacings = list(varargs) if varargs else [1.0] * len(axes)
    if len(spacings) == 1 and len(axes) > 1:
        spacings = spacings * len(axes)
    if edge_order != 1:
        fail("gradient", "edge_order=1 only")
    out = []
    for ax, h in zip(axes, spacings, strict=True):
        ax = ops.normalize_axis(ax, f.ndim, "gradient")
        n = f.shape[ax]
        if n < 2:
            fail("gradient", "each axis needs at least two points")

        def take(lo, hi, ax=ax):
            return numpy_shapes.take(f, numpy_impl.arange(lo, hi), axis=ax)

        first = (take(1, 2) - take(0, 1)) / h
        last = (take(n - 1, n) - take(n - 2, n - 1)) / h
        inner = (take(2, n) - take(0, n - 2)) / (2 * h)
        out.append(numpy_shapes.concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out


def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists
    joined along the last axis, the outer ones along earlier axes)."""

    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    d = depth(arrays)

    def assemble(x, level):
        if not isinstance(x, list):
            a = numpy_impl.public_asarray(x)
            return numpy_shapes.reshape(a, (1,) * builtins.max(0, d - a.ndim) + a.shape)
        parts = [assemble(item, level + 1) for item in x]
        ndim = builtins.max(p.ndim for p in parts)
        parts = [numpy_shapes.reshape(p, (1,) * (ndim - p.ndim) + p.shape) for p in parts]
        return numpy_shapes.concatenate(parts, axis=ndim - (d - level))

    return assemble(arrays, 0)


@eager
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or a
    square matrix's characteristic polynomial from its eigenvalues: not
    supported)."""
    z = asarray(seq_of_zeros)
    if z.ndim != 1:
        fail("poly", "takes a 1-D sequence of roots")
    out = numpy_impl.ones((1,), _floats(z).dtype if not dtypes.is_complex(z.dtype) else z.dtype)
    for i in range(z.shape[0]):
        out = convolve(
            out, numpy_shapes.stack([numpy_impl.ones((), out.dtype), -z[i].astype(out.dtype)])
        )
    return out


@eager
def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """(quotient, remainder) of polynomial u by v (v's leading coefficient nonzero)."""
    u, v = _floats(u), _floats(v)
    n, m = u.shape[0], v.shape[0]
    if m > n:
        return numpy_impl.zeros((1,), u.dtype), u
    rem = u
    q = []
    for k in range(n - m + 1):
        c = rem[k] / v[0]
        q.append(c)
        rem = rem - numpy_shapes.pad(c * v, [(k, n - m - k)])
    return numpy_shapes.stack(q), rem


# --- types and constants -------------------------------------------------------------------

euler_gamma = np.euler_gamma


def finfo(dtype):
    """Machine limits of a float type."""
    return dtypes.finfo(dtypes.canonicalize(dtype) if not isinstance(dtype, np.dtype) else dtype)


def iinfo(int_type):
    """Machine limits of an integer type (int4 and the other narrow ones too)."""
    return ml_dtypes.iinfo(np.dtype(int_type) if not hasattr(int_type, "dtype") else int_type.dtype)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether NumPy's casting rule allows from_ to become `to`."""
    return bool(np.can_cast(from_.dtype if hasattr(from_, "dtype") else from_, to, casting))


def issubdtype(arg1, arg2) -> bool:
    """NumPy's subtype relation (bfloat16 and the f8 types are floating)."""
    try:
        d = np.dtype(arg1)
    except TypeError:
        return bool(np.issubdtype(arg1, arg2))
    if arg2 in (np.floating, np.inexact, np.number, np.generic) and dtypes.is_float(d):
        return True
    return bool(np.issubdtype(d, arg2))


def isdtype(dtype, kind) -> bool:
    """The array API's dtype kinds ('bool', 'integral', 'real floating', ...)."""
    d = np.dtype(dtype)
    kinds = (kind,) if not isinstance(kind, tuple) else kind
    for k in kinds:
        if not isinstance(k, str):
            if d == np.dtype(k):
                return True
            continue
        if (
            (k == "bool" and d == np.bool_)
            or (k == "signed integer" and d.kind == "i")
            or (k == "unsigned integer" and d.kind == "u")
            or (k == "integral" and d.kind in "iu")
            or (k == "real floating" and dtypes.is_float(d))
            or (k == "complex floating" and d.kind == "c")
            or (k == "numeric" and (d.kind in "iuc" or dtypes.is_float(d)))
        ):
            return True
    return False


def isscalar(element) -> bool:
    """Whether element is a Python or NumPy scalar or a 0-d array."""
    if hasattr(element, "shape"):
        return element.shape == ()
    return isinstance(element, (int, float, complex, bool, np.generic))


def iterable(y) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


__all__ = [
    n
    for n in list(globals())
    if not n.startswith("_")
    and n
    not in (
        "annotations",
        "builtins",
        "itertools",
        "math",
        "np",
        "jnp",
        "dtypes",
        "ops",
        "eager",
        "asarray",
        "fail",
    )
]
