"""jax.lax's elementwise, structural and reduction operations, with lax's
rules: no type promotion (operands of one dtype; Python scalars take it),
no implicit broadcasting of arrays, each op's accepted dtypes checked at
trace time. Every function runs traced and eagerly.

Over 1,000 lines, kept in one file on purpose: a flat catalogue of
independent, short definitions (most one line from a table-driven helper)
that share the operand rules above (_same, _check); splitting it by
letter or theme would only scatter those helpers' callers."""

from __future__ import annotations

import builtins
import enum
import math

import numpy as np

from uir._src import dtypes, elementwise, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer

_FLOAT = elementwise.FLOAT
_INEXACT = elementwise.INEXACT
_INT = elementwise.INT
_INT_BOOL = elementwise.INT_BOOL
_NUMBER = elementwise.NUMBER
_ANY = elementwise.ANY
_accepts = elementwise.accepts


def _check(name: str, x: Tracer, kinds: str) -> Tracer:
    if not _accepts(x.dtype, kinds):
        fail(f"lax.{name}", f"{name} does not accept dtype {x.dtype}; it takes {kinds} types")
    return x


def _is_array(x) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic))


def _same(name: str, *xs) -> list[Tracer]:
    """lax's operands: arrays of one dtype and shape; Python scalars take
    the arrays' dtype."""
    arrays = [asarray(x) for x in xs if _is_array(x)]
    if not arrays:
        arrays = [asarray(xs[0])]
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dtype:
            fail(
                f"lax.{name}",
                f"lax.{name} requires arguments to have the same dtypes, got "
                + ", ".join(str(b.dtype) for b in arrays),
            )
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        fail(
            f"lax.{name}",
            f"{name} got incompatible shapes for broadcasting: "
            + ", ".join(str(a.shape) for a in arrays),
        )
    return [asarray(x) if _is_array(x) else asarray(np.asarray(x, dtype)) for x in xs]


def _unary(name: str):
    opcode, kinds = elementwise.UNARY[name]

    def f(x):
        return ops.unary(opcode, _check(name, _same(name, x)[0], kinds), op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} ({opcode}), as jax.lax.{name}."
    return eager(f)


def _binary(name: str):
    opcode, kinds = elementwise.BINARY[name]

    def f(x, y):
        a, b = _same(name, x, y)
        return ops.binary(opcode, _check(name, a, kinds), b, op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} ({opcode}), as jax.lax.{name}."
    return eager(f)


def _comparison(direction: str, name: str):
    def f(x, y):
        a, b = _same(name, x, y)
        return ops.compare(a, b, direction, name)

    f.__name__ = name
    f.__doc__ = f"Elementwise x {direction} y, as jax.lax.{name}."
    return eager(f)


abs = _unary("abs")
acos = _unary("acos")
acosh = _unary("acosh")
asin = _unary("asin")
asinh = _unary("asinh")
atanh = _unary("atanh")
cbrt = _unary("cbrt")
ceil = _unary("ceil")
clz = _unary("clz")
cos = _unary("cos")
cosh = _unary("cosh")
erf = _unary("erf")
exp = _unary("exp")
expm1 = _unary("expm1")
floor = _unary("floor")
is_finite = _unary("is_finite")
log = _unary("log")
log1p = _unary("log1p")
logistic = _unary("logistic")
neg = _unary("neg")
bitwise_not = _unary("bitwise_not")
population_count = _unary("population_count")
rsqrt = _unary("rsqrt")
sign = _unary("sign")
sin = _unary("sin")
sinh = _unary("sinh")
sqrt = _unary("sqrt")
tan = _unary("tan")
tanh = _unary("tanh")

sub = _binary("sub")
div = _binary("div")
rem = _binary("rem")
pow = _binary("pow")
atan2 = _binary("atan2")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
shift_left = _binary("shift_left")
shift_right_arithmetic = _binary("shift_right_arithmetic")
shift_right_logical = _binary("shift_right_logical")

eq = _comparison("EQ", "eq")
ne = _comparison("NE", "ne")
lt = _comparison("LT", "lt")
le = _comparison("LE", "le")
gt = _comparison("GT", "gt")
ge = _comparison("GE", "ge")


@eager
def atan(x):
    """Elementwise arctangent, as jax.lax.atan (atan2(x, 1))."""
    (a,) = _same("atan", x)
    _check("atan", a, _INEXACT)
    return ops.binary("atan2", a, asarray(np.ones((), a.dtype)), op_name="atan")


@eager
def exp2(x):
    """Elementwise 2**x, as jax.lax.exp2."""
    (a,) = _same("exp2", x)
    _check("exp2", a, _INEXACT)
    return ops.unary(
        "exponential", ops.binary("multiply", a, asarray(np.array(np.log(2), a.dtype)))
    )


@eager
def erfc(x):
    """Elementwise 1 - erf(x), as jax.lax.erfc."""
    (a,) = _same("erfc", x)
    _check("erfc", a, _FLOAT)
    return ops.binary("subtract", asarray(np.ones((), a.dtype)), ops.unary("erf", a))


@eager
def square(x):
    """Elementwise x * x, as jax.lax.square."""
    (a,) = _same("square", x)
    return ops.binary("multiply", a, a, op_name="square")


@eager
def reciprocal(x):
    """Elementwise 1 / x, as jax.lax.reciprocal."""
    (a,) = _same("reciprocal", x)
    _check("reciprocal", a, _INEXACT)
    return ops.binary("divide", asarray(np.ones((), a.dtype)), a, op_name="reciprocal")


@eager
def integer_pow(x, y: int):
    """x to a fixed integer power, by repeated multiplication, as jax.lax.integer_pow."""
    if not isinstance(y, (int, np.integer)):
        fail("lax.integer_pow", f"the exponent must be a Python int, got {y!r}")
    (a,) = _same("integer_pow", x)
    if y == 0:
        return ops.broadcast_to(asarray(np.ones((), a.dtype)), a.shape)
    base, n, acc = a, builtins.abs(int(y)), None
    while n:
        if n & 1:
            acc = base if acc is None else ops.binary("multiply", acc, base)
        n >>= 1
        if n:
            base = ops.binary("multiply", base, base)
    if y < 0:
        acc = ops.binary("divide", asarray(np.ones((), a.dtype)), acc)
    return acc


@eager
def nextafter(x1, x2):
    """The next float after x1 toward x2, as jax.lax.nextafter."""
    from uir._src.numpy_impl import nextafter as np_nextafter

    a, b = _same("nextafter", x1, x2)
    return np_nextafter(_check("nextafter", a, _FLOAT), b)


class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


@eager
def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Rounds to the nearest integer, ties away from zero or to even."""
    (a,) = _same("round", x)
    _check("round", a, _FLOAT)
    opcode = (
        "round-nearest-even"
        if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN
        else "round-nearest-afz"
    )
    return ops.unary(opcode, a, op_name="round")


@eager
def clamp(min, x, max):
    """x clamped to [min, max] elementwise (bounds may be scalars)."""
    x = asarray(x)
    lo = asarray(min) if _is_array(min) else asarray(np.asarray(min, x.dtype))
    hi = asarray(max) if _is_array(max) else asarray(np.asarray(max, x.dtype))
    for bound in (lo, hi):
        if bound.dtype != x.dtype:
            fail("lax.clamp", f"clamp requires one dtype, got {lo.dtype}, {x.dtype}, {hi.dtype}")
        if bound.shape not in ((), x.shape):
            fail(
                "lax.clamp",
                f"clamp's bounds must be scalars or of x's shape {x.shape}, got {bound.shape}",
            )
    return ops._comp().emit("clamp", lo, x, hi, shape=(x.shape, x.dtype), op_name="clamp")


@eager
def complex(x, y):
    """x + 1j * y elementwise, as jax.lax.complex."""
    a, b = _same("complex", x, y)
    _check("complex", a, _FLOAT)
    out = np.complex64 if a.dtype == np.float32 else np.complex128
    return ops._comp().emit("complex", a, b, shape=(a.shape, out), op_name="complex")


@eager
def real(x):
    """The real part, as jax.lax.real."""
    from uir._src.numpy_impl import real as np_real

    return np_real(_check("real", asarray(x), "floating or complex"))


@eager
def imag(x):
    """The imaginary part, as jax.lax.imag."""
    from uir._src.numpy_impl import imag as np_imag

    return np_imag(asarray(x))


@eager
def conj(x):
    """The complex conjugate, as jax.lax.conj."""
    from uir._src.numpy_impl import conj as np_conj

    return np_conj(asarray(x))


def stop_gradient(x):
    """x itself: uir does not differentiate, so there is no gradient to stop."""
    return x


@eager
def optimization_barrier(operand):
    """The operands unchanged, through an opt-barrier no pass moves work across."""
    from uir._src import tree_util

    leaves, tree = tree_util.tree_flatten(operand)
    xs = [asarray(x) for x in leaves]
    if not xs:
        return operand
    comp = ops._comp()
    metadata = comp.metadata("optimization_barrier")
    together = comp.builder.op("tuple", *[comp.resolve(x).inst for x in xs], metadata=metadata)
    out = comp.wrap(comp.builder.op("opt-barrier", together, metadata=metadata))
    return tree_util.tree_unflatten(tree, list(out))


@eager
def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Rounds floats to a narrower format's exponent and mantissa, keeping the type."""
    x = _check("reduce_precision", asarray(operand), _FLOAT)
    return ops._comp().emit(
        "reduce-precision",
        x,
        exponent_bits=int(exponent_bits),
        mantissa_bits=int(mantissa_bits),
        shape=(x.shape, x.dtype),
        op_name="reduce_precision",
    )


# --- shapes ---------------------------------------------------------------------------


def _shape_tuple(shape, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        fail(f"lax.{name}", f"a shape is a sequence of ints, got {shape!r}")
        raise


@eager
def reshape(operand, new_sizes, dimensions=None):
    """operand reshaped to new_sizes (after transposing by `dimensions`)."""
    x = asarray(operand)
    new = _shape_tuple(new_sizes, "reshape")
    if dimensions is not None:
        x = ops.transpose(x, list(dimensions))
    if math.prod(new) != math.prod(x.shape):
        fail("lax.reshape", f"cannot reshape {ops.describe(x)} to {new}")
    return ops.reshape(x, new)


@eager
def transpose(operand, permutation):
    """operand with its dimensions in the order `permutation`."""
    x = asarray(operand)
    perm = [int(p) for p in permutation]
    if sorted(perm) != list(range(x.ndim)):
        fail("lax.transpose", f"permutation {perm} is not one of {x.ndim} dimensions")
    return ops.transpose(x, perm)


@eager
def rev(operand, dimensions):
    """operand reversed along `dimensions`."""
    x = asarray(operand)
    dims = [ops.normalize_axis(d, x.ndim, "rev") for d in dimensions]
    return ops._comp().emit("reverse", x, dimensions=dims, shape=(x.shape, x.dtype), op_name="rev")


@eager
def concatenate(operands, dimension: int):
    """operands (one dtype) joined along `dimension`."""
    from uir._src.numpy_shapes import concatenate as np_concatenate

    xs = _same_dtype("concatenate", operands)
    return np_concatenate(xs, axis=dimension)


def _same_dtype(name: str, operands) -> list[Tracer]:
    xs = [asarray(x) for x in operands]
    if not xs:
        fail(f"lax.{name}", f"{name} needs at least one operand")
    if len({x.dtype for x in xs}) > 1:
        fail(
            f"lax.{name}",
            f"lax.{name} requires arguments to have the same dtypes, got "
            + ", ".join(str(x.dtype) for x in xs),
        )
    return xs


@eager
def pad(operand, padding_value, padding_config):
    """operand padded with `padding_value`: (low, high, interior) per dimension."""
    x = asarray(operand)
    value = (
        asarray(padding_value)
        if _is_array(padding_value)
        else asarray(np.asarray(padding_value, x.dtype))
    )
    if value.dtype != x.dtype or value.shape:
        fail(
            "lax.pad", f"the padding value must be a scalar of {x.dtype}, got {ops.describe(value)}"
        )
    config = [tuple(int(v) for v in c) for c in padding_config]
    if len(config) != x.ndim or any(len(c) != 3 or c[2] < 0 for c in config):
        fail(
            "lax.pad",
            f"padding_config needs (low, high, interior >= 0) for each of {x.ndim} dimensions",
        )
    shape = tuple(
        lo + hi + s + builtins.max(0, s - 1) * interior
        for s, (lo, hi, interior) in zip(x.shape, config, strict=True)
    )
    if builtins.min(shape, default=0) < 0:
        fail("lax.pad", f"padding {config} leaves a negative size")
    return ops._comp().emit("pad", x, value, padding=config, shape=(shape, x.dtype), op_name="pad")


@eager
def broadcast(operand, sizes):
    """operand with new leading dimensions `sizes`."""
    x = asarray(operand)
    return ops.broadcast_to(x, (*_shape_tuple(sizes, "broadcast"), *x.shape))


@eager
def broadcast_to_rank(x, rank: int):
    """x with leading unit dimensions up to `rank`."""
    a = asarray(x)
    if a.ndim >= rank:
        return a
    return ops.reshape(a, (1,) * (rank - a.ndim) + a.shape)


@eager
def expand_dims(array, dimensions):
    """array with unit dimensions inserted at `dimensions`."""
    from uir._src.numpy_shapes import expand_dims as np_expand

    return np_expand(asarray(array), tuple(dimensions))


@eager
def squeeze(array, dimensions):
    """array without the unit dimensions `dimensions`."""
    x = asarray(array)
    dims = {ops.normalize_axis(d, x.ndim, "squeeze") for d in dimensions}
    for d in dims:
        if x.shape[d] != 1:
            fail("lax.squeeze", f"dimension {d} of {ops.describe(x)} is not of size 1")
    return ops.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))


@eager
def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """operand with dimensions [start, stop) merged into one."""
    x = asarray(operand)
    stop = x.ndim if stop_dimension is None else stop_dimension
    shape = (*x.shape[:start_dimension], math.prod(x.shape[start_dimension:stop]), *x.shape[stop:])
    return ops.reshape(x, shape)


@eager
def select_n(which, *cases):
    """cases[which] elementwise: which is a bool (two cases) or an int32 index."""
    if not cases:
        fail("lax.select_n", "select_n needs at least one case")
    xs = _same("select_n", *cases)
    w = asarray(which)
    if w.shape not in ((), xs[0].shape):
        fail(
            "lax.select_n",
            f"which must be a scalar or of the cases' shape {xs[0].shape}, got {w.shape}",
        )
    if w.dtype == np.bool_:
        if len(xs) > 2:
            fail("lax.select_n", "a boolean which selects between two cases")
        return xs[0] if len(xs) == 1 else ops.select(w, xs[1], xs[0])
    if not dtypes.is_int(w.dtype):
        fail("lax.select_n", f"which must be bool or int32, got {w.dtype}")
    out = xs[-1]
    for i in range(len(xs) - 2, -1, -1):
        pick = ops.compare(w, asarray(np.array(i, w.dtype)), "EQ", "eq")
        out = ops.select(pick, xs[i], out)
    return out


@eager
def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with fill_value."""
    from uir._src.numpy_impl import full as np_full

    return np_full(_shape_tuple(shape, "full"), fill_value, dtype)


@eager
def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (or of `shape`) filled with fill_value."""
    a = asarray(x)
    from uir._src.numpy_impl import full as np_full

    return np_full(
        a.shape if shape is None else _shape_tuple(shape, "full_like"), fill_value, dtype or a.dtype
    )


@eager
def broadcasted_iota(dtype, shape, dimension: int):
    """Counts along `dimension` of an array of `shape`."""
    return ops.iota(
        dtypes.canonicalize(dtype), _shape_tuple(shape, "broadcasted_iota"), int(dimension)
    )


def dtype(x, *, canonicalize: bool = False):
    """The dtype of x (canonical for this x64 setting when asked)."""
    d = x.dtype if hasattr(x, "dtype") else ops.weak_dtype_of(x)[0]
    return dtypes.canonicalize(d) if canonicalize else np.dtype(d)


# --- slicing ----------------------------------------------------------------------------


@eager
def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along `axis`."""
    from uir._src.numpy_shapes import slice_static

    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "slice_in_dim")
    n = x.shape[ax]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[ax], limits[ax], strides[ax] = start, limit, int(stride)
    return slice_static(x, starts, limits, strides)


@eager
def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The slice at `index` along `axis` (the axis kept with keepdims)."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "index_in_dim")
    i = int(index) + (x.shape[ax] if int(index) < 0 else 0)
    out = slice_in_dim(x, i, i + 1, 1, ax)
    return out if keepdims else ops.reshape(out, x.shape[:ax] + x.shape[ax + 1 :])


@eager
def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0):
    """A window of slice_size at a traced start along `axis`."""
    from uir._src.lax_slicing import dynamic_slice

    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_slice_in_dim")
    starts = [np.int32(0)] * x.ndim
    starts[ax] = start_index
    sizes = list(x.shape)
    sizes[ax] = int(slice_size)
    return dynamic_slice(x, starts, sizes)


@eager
def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """The slice at a traced index along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(x, index, 1, ax)
    return out if keepdims else ops.reshape(out, x.shape[:ax] + x.shape[ax + 1 :])


@eager
def dynamic_update_slice_in_dim(operand, update, start_index, axis: int):
    """operand with `update` written at a traced start along `axis`."""
    from uir._src.lax_slicing import dynamic_update_slice

    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_update_slice_in_dim")
    starts = [np.int32(0)] * x.ndim
    starts[ax] = start_index
    return dynamic_update_slice(x, update, starts)


@eager
def dynamic_update_index_in_dim(operand, update, index, axis: int):
    """operand with one slice along `axis` replaced at a traced index."""
    x, u = asarray(operand), asarray(update)
    ax = ops.normalize_axis(axis, x.ndim, "dynamic_update_index_in_dim")
    if u.ndim == x.ndim - 1:
        u = ops.reshape(u, (*u.shape[:ax], 1, *u.shape[ax:]))
    return dynamic_update_slice_in_dim(x, u, index, ax)


# --- reductions -----------------------------------------------------------------------


def _reduction(opcode: str, name: str, kinds: str):
    def f(operand, axes):
        x = _check(name, asarray(operand), kinds)
        dims = sorted({ops.normalize_axis(a, x.ndim, name) for a in axes})
        return ops.reduce(x, opcode, dims, name)

    f.__name__ = name
    f.__doc__ = f"Reduces operand over `axes` with {opcode}, as jax.lax.{name}."
    return eager(f)


reduce_sum = _reduction("add", "reduce_sum", _NUMBER)
reduce_prod = _reduction("multiply", "reduce_prod", _NUMBER)
reduce_max = _reduction("maximum", "reduce_max", _ANY)
reduce_min = _reduction("minimum", "reduce_min", _ANY)
reduce_and = _reduction("and", "reduce_and", _INT_BOOL)
reduce_or = _reduction("or", "reduce_or", _INT_BOOL)
reduce_xor = _reduction("xor", "reduce_xor", _INT_BOOL)


@eager
def argmax(operand, axis: int, index_dtype):
    """The index of the largest element along `axis` (the first among equals)."""
    from uir._src.numpy_impl import argmax as np_argmax

    return ops.convert(np_argmax(asarray(operand), axis=axis), dtypes.canonicalize(index_dtype))


@eager
def argmin(operand, axis: int, index_dtype):
    """The index of the smallest element along `axis` (the first among equals)."""
    from uir._src.numpy_impl import argmin as np_argmin

    return ops.convert(np_argmin(asarray(operand), axis=axis), dtypes.canonicalize(index_dtype))


def _cumulative(name: str, opcode: str):
    from uir._src import numpy_shapes

    running = numpy_shapes._cumulative(opcode, name)

    def f(operand, axis: int = 0, reverse: bool = False):
        x = asarray(operand)
        ax = ops.normalize_axis(axis, x.ndim, name)
        if reverse:
            x = rev(x, [ax])
        out = running(x, axis=ax, dtype=x.dtype)  # lax keeps the dtype
        return rev(out, [ax]) if reverse else out

    f.__name__ = name
    f.__doc__ = f"The running {opcode} along `axis` (from the end with reverse), as jax.lax.{name}."
    return eager(f)


cumsum = _cumulative("cumsum", "add")
cumprod = _cumulative("cumprod", "multiply")
cummax = _cumulative("cummax", "maximum")
cummin = _cumulative("cummin", "minimum")


@eager
def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """operand (or a tuple of operands, ordered by the first num_keys)
    sorted along `dimension`."""
    from uir._src.numpy_shapes import _sort

    xs = [asarray(o) for o in operand] if isinstance(operand, (tuple, list)) else [asarray(operand)]
    out = _sort(xs, dimension, num_keys=num_keys)
    return tuple(out) if isinstance(operand, (tuple, list)) else out[0]


@eager
def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """keys sorted along `dimension`, values permuted alike."""
    from uir._src.numpy_shapes import _sort

    k, v = _sort([asarray(keys), asarray(values)], dimension, num_keys=1)
    return k, v


@eager
def top_k(operand, k: int):
    """The k largest entries of the last dimension and their indices, largest first."""
    from uir._src.numpy_impl import negative
    from uir._src.numpy_shapes import _sort, slice_static

    x = asarray(operand)
    n = x.shape[-1]
    if not 0 <= int(k) <= n:
        fail("lax.top_k", f"k={k} must be in [0, {n}]")
    idx = ops.iota(np.dtype(np.int32), x.shape, x.ndim - 1)
    keys = negative(x) if not dtypes.is_int(x.dtype) or x.dtype.kind == "i" else None
    if keys is None:  # unsigned: sort descending through the bitwise complement
        keys = ops.unary("not", x)
    if dtypes.is_float(x.dtype):
        # XLA's TopK ranks floats in their total order (+NaN above +inf,
        # -NaN below -inf): the bits as sign-magnitude integers, flipped to
        # sort largest first.
        from uir._src.lax_impl import bitcast_convert_type

        width = np.dtype(x.dtype).itemsize * 8
        signed = np.dtype(f"int{width}")
        bits = bitcast_convert_type(x, signed)
        sign = ops.binary("shift-right-arithmetic", bits, asarray(np.array(width - 1, signed)))
        magnitude_mask = asarray(np.array(np.iinfo(signed).max, signed))
        ordered = ops.binary("xor", bits, ops.binary("and", sign, magnitude_mask))
        keys = ops.unary("not", ordered)
    _, vals, ids = _sort([keys, x, idx], x.ndim - 1, num_keys=1)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    limits[-1] = int(k)
    return slice_static(vals, starts, limits, strides), slice_static(ids, starts, limits, strides)


# --- products ---------------------------------------------------------------------------


class Precision(enum.Enum):
    """Matrix-product precision (uir computes f32 products in f32 at every setting)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


@eager
def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products of rank-1 and rank-2 operands, as jax.lax.dot."""
    from uir._src.lax_impl import dot_general

    a, b = asarray(lhs), asarray(rhs)
    if a.ndim not in (1, 2) or b.ndim not in (1, 2):
        fail(
            "lax.dot",
            f"dot takes rank-1 or rank-2 operands, got {ops.describe(a)} and {ops.describe(b)}",
        )
    return dot_general(
        a, b, (([a.ndim - 1], [0]), ([], [])), preferred_element_type=preferred_element_type
    )


@eager
def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch dimensions."""
    from uir._src.lax_impl import dot_general

    a, b = asarray(lhs), asarray(rhs)
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        fail(
            "lax.batch_matmul",
            f"needs equal batch dimensions, got {ops.describe(a)} and {ops.describe(b)}",
        )
    batch = list(range(a.ndim - 2))
    return dot_general(a, b, (([a.ndim - 1], [b.ndim - 2]), (batch, batch)))


@eager
def split(operand, sizes, axis: int = 0):
    """operand cut along `axis` into pieces of `sizes`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "split")
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.shape[ax]:
        fail("lax.split", f"sizes {sizes} do not add up to dimension {ax} of {ops.describe(x)}")
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, 1, ax))
        start += s
    return out


# --- types of lax's parameters ----------------------------------------------------------


class FftType(enum.IntEnum):
    """The kind of lax.fft."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


class GatherScatterMode(enum.Enum):
    """How out-of-bounds gather and scatter indices are treated."""

    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2
    ONE_HOT = 3

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s == "clip":
            return GatherScatterMode.CLIP
        if s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f"unknown gather mode {s!r}")


class RandomAlgorithm(enum.IntEnum):
    """rng_bit_generator's algorithm."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms; uir computes every dot in its operands' type
    (f32 products in f32), whichever is named."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()


class DotAlgorithm:
    """A dot algorithm by its operand, accumulation and result types (accepted
    for compatibility; uir computes in the operands' type)."""

    def __init__(
        self,
        lhs_precision_type,
        rhs_precision_type,
        accumulation_type,
        lhs_component_count=1,
        rhs_component_count=1,
        num_primitive_operations=1,
        allow_imprecise_accumulation=False,
    ):
        self.lhs_precision_type = lhs_precision_type
        self.rhs_precision_type = rhs_precision_type
        self.accumulation_type = accumulation_type
        self.lhs_component_count = lhs_component_count
        self.rhs_component_count = rhs_component_count
        self.num_primitive_operations = num_primitive_operations
        self.allow_imprecise_accumulation = allow_imprecise_accumulation


class AccuracyMode(enum.Enum):
    """The accuracy a transcendental op is asked for (uir's are as accurate
    as their kernels, whichever is named)."""

    HIGHEST = 0
    DEFAULT = 1


class Tolerance:
    """An accuracy tolerance (atol, rtol, ulps) for transcendental ops."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


PrecisionLike = Precision | str | tuple | None
DotDimensionNumbers = tuple


class ConvDimensionNumbers(tuple):
    """(lhs_spec, rhs_spec, out_spec): each dimension's position, batch or
    output feature first, then feature, then spatial ones."""

    def __new__(cls, lhs_spec, rhs_spec, out_spec):
        return super().__new__(cls, (tuple(lhs_spec), tuple(rhs_spec), tuple(out_spec)))

    lhs_spec = property(lambda self: self[0])
    rhs_spec = property(lambda self: self[1])
    out_spec = property(lambda self: self[2])


ConvGeneralDilatedDimensionNumbers = tuple


class RaggedDotDimensionNumbers:
    """The dimension numbers of ragged_dot_general: the dot's, the lhs
    dimension that is ragged, and rhs's group dimension (for a
    non-contracting ragged dimension)."""

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        self.dot_dimension_numbers = dot_dimension_numbers
        self.lhs_ragged_dimensions = lhs_ragged_dimensions
        self.rhs_group_dimensions = rhs_group_dimensions


# --- shape helpers -----------------------------------------------------------------------


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (NumPy's rule)."""
    return tuple(np.broadcast_shapes(*shapes))


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
    from uir._src.lax_window import conv_general_dilated

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
    from uir._src.lax_window import conv_general_dilated

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
):
    """The transposed convolution (gradient of a strided convolution): the
    input dilated by `strides`, convolved with the kernel (flipped and with
    its feature dimensions swapped when transpose_kernel)."""
    from uir._src.lax_window import conv_general_dilated

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
    pads = (
        _conv_transpose_padding(effective, strides, padding)
        if isinstance(padding, str)
        else padding
    )
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


@eager
def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and dtype whose contents are unspecified (zeros:
    uir has no uninitialized memory)."""
    return ops.broadcast_to(
        asarray(np.zeros((), dtypes.canonicalize(dtype))), _shape_tuple(shape, "empty")
    )


@eager
def tile(operand, reps):
    """operand repeated reps times along each dimension."""
    from uir._src.numpy_shapes import tile as np_tile

    return np_tile(asarray(operand), tuple(reps))


@eager
def stack(operands, axis: int = 0):
    """operands (one dtype and shape) stacked along a new `axis`."""
    from uir._src.numpy_shapes import stack as np_stack

    return np_stack(_same_dtype("stack", operands), axis=axis)


@eager
def unstack(operand, axis: int = 0):
    """The slices of operand along `axis`."""
    x = asarray(operand)
    ax = ops.normalize_axis(axis, x.ndim, "unstack")
    return [index_in_dim(x, i, ax, keepdims=False) for i in range(x.shape[ax])]


@eager
def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """The running log(sum(exp)) along `axis`, stably."""
    from uir._src import numpy_impl as unp

    x = _check("cumlogsumexp", asarray(operand), _INEXACT)
    ax = ops.normalize_axis(axis, x.ndim, "cumlogsumexp")
    m = reduce_max(x, (ax,))
    m = unp.where(unp.isfinite(m), m, 0)
    m = ops.reshape(m, tuple(1 if i == ax else s for i, s in enumerate(x.shape)))
    return unp.log(cumsum(unp.exp(x - m), ax, reverse)) + m


@eager
def mulhi(x, y):
    """The high half of the double-width product of integers."""
    a, b = _same("mulhi", x, y)
    _check("mulhi", a, _INT)
    return ops.binary("mulhi", a, b, op_name="mulhi")


def _approx_k(name: str, largest: bool):
    def f(
        operand,
        k: int,
        reduction_dimension: int = -1,
        recall_target: float = 0.95,
        reduction_input_size_override: int = -1,
        aggregate_to_topk: bool = True,
    ):
        from uir._src import numpy_impl as unp
        from uir._src.numpy_shapes import moveaxis

        x = asarray(operand)
        if ops.normalize_axis(reduction_dimension, x.ndim, name) != x.ndim - 1:
            x = moveaxis(x, reduction_dimension, -1)
        if largest:
            return top_k(x, k)
        values, idx = top_k(unp.negative(x), k)
        return unp.negative(values), idx

    f.__name__ = name
    f.__doc__ = (
        f"The k {'largest' if largest else 'smallest'} entries and their indices along "
        "reduction_dimension, exactly (recall 1), as jax.lax." + name + "."
    )
    return eager(f)


approx_max_k = _approx_k("approx_max_k", True)
approx_min_k = _approx_k("approx_min_k", False)


@eager
def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The running combination of elems along `axis` by an associative fn,
    in log2(n) rounds of fn over whole arrays (Ladner-Fischer style)."""
    from uir._src import tree_util
    from uir._src.numpy_shapes import concatenate as np_concatenate

    leaves, tree = tree_util.tree_flatten(elems)
    xs = [asarray(x) for x in leaves]
    if not xs:
        return elems
    ax = ops.normalize_axis(axis, xs[0].ndim, "associative_scan")
    if reverse:
        xs = [rev(x, [ax]) for x in xs]
    n = xs[0].shape[ax]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return [asarray(v) for v in tree_util.tree_leaves(out)]

    shift = 1
    while shift < n:
        head = [slice_in_dim(x, 0, shift, 1, ax) for x in xs]
        tail = combine(
            [slice_in_dim(x, 0, n - shift, 1, ax) for x in xs],
            [slice_in_dim(x, shift, n, 1, ax) for x in xs],
        )
        xs = [np_concatenate([h, t], axis=ax) for h, t in zip(head, tail, strict=True)]
        shift *= 2
    if reverse:
        xs = [rev(x, [ax]) for x in xs]
    return tree_util.tree_unflatten(tree, xs)


@eager
def index_take(src, idxs, axes):
    """src at the integer arrays idxs along `axes` (one index per axis)."""
    from uir._src.numpy_shapes import take

    x = asarray(src)
    if len(idxs) != len(axes):
        fail("lax.index_take", "needs one index array per axis")
    flat = None
    strides = 1
    for idx, ax in reversed(list(zip(idxs, axes, strict=True))):
        term = ops.binary(
            "multiply", ops.convert(asarray(idx), np.dtype(np.int32)), asarray(np.int32(strides))
        )
        flat = term if flat is None else ops.binary("add", flat, term)
        strides *= x.shape[ax]
    moved = [ax for ax in axes]
    rest = [d for d in range(x.ndim) if d not in moved]
    y = ops.transpose(x, [*moved, *rest])
    y = ops.reshape(y, (strides, *[x.shape[d] for d in rest]))
    return take(y, flat, axis=0)


@eager
def fft(x, fft_type, fft_lengths):
    """XLA's FFT over the last len(fft_lengths) dimensions: FFT, IFFT
    (complex to complex), RFFT (real to complex) or IRFFT (complex to real)."""
    x = asarray(x)
    kind = FftType[fft_type] if isinstance(fft_type, str) else FftType(int(fft_type))
    lengths = [int(n) for n in fft_lengths]
    if kind == FftType.RFFT:
        out = (*x.shape[: x.ndim - len(lengths)], *lengths[:-1], lengths[-1] // 2 + 1)
        dtype = np.complex64 if x.dtype == np.float32 else np.complex128
    elif kind == FftType.IRFFT:
        out = (*x.shape[: x.ndim - len(lengths)], *lengths)
        dtype = np.float32 if x.dtype == np.complex64 else np.float64
    else:
        out, dtype = x.shape, x.dtype
    return ops._comp().emit(
        "fft",
        x,
        fft_type=kind.name,
        fft_length=lengths,
        shape=(out, np.dtype(dtype)),
        op_name="fft",
    )


@eager
def create_token(*operands):
    """A token (for ordering side effects)."""
    comp = ops._comp()
    return comp.wrap(comp.builder.op("after-all", metadata=comp.metadata("create_token")))


@eager
def after_all(*operands):
    """A token ordered after the given tokens."""
    comp = ops._comp()
    insts = [comp.resolve(o).inst for o in operands]
    return comp.wrap(comp.builder.op("after-all", *insts, metadata=comp.metadata("after_all")))


@eager
def scatter_sub(
    operand,
    scatter_indices,
    updates,
    dimension_numbers,
    *,
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
):
    """operand with updates subtracted at the indices (scatter_add of -updates)."""
    from uir._src.lax_slicing import scatter_add
    from uir._src.numpy_impl import negative

    return scatter_add(operand, scatter_indices, negative(updates), dimension_numbers)


__all__ = [
    name
    for name, value in list(globals().items())
    if not name.startswith("_")
    and (callable(value) or isinstance(value, type))
    and name
    not in (
        "annotations",
        "builtins",
        "enum",
        "math",
        "np",
        "dtypes",
        "ops",
        "eager",
        "asarray",
        "fail",
        "Tracer",
    )
]
