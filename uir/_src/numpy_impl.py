"""uir.numpy: jax.numpy's names and semantics, on traced arrays (and on
NumPy arrays outside uir.jit, run eagerly)."""

from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from uir._src import dtypes, ops
from uir._src.eager import eager
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer

# --- Elementwise ---------------------------------------------------------------


def _float_operand(x, op: str) -> Tracer:
    """Transcendental ops compute in floats: ints and bools are promoted."""
    x = asarray(x)
    if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype):
        return ops.convert(x, dtypes.default_float(), x.weak_type)
    return x


def _unary(opcode: str, name: str, floats: bool = True):
    def f(x):
        return ops.unary(opcode, _float_operand(x, name) if floats else x, op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as jax.numpy.{name}."
    return eager(f)


exp = _unary("exponential", "exp")
log = _unary("log", "log")
log1p = _unary("log-plus-one", "log1p")
expm1 = _unary("exponential-minus-one", "expm1")
sqrt = _unary("sqrt", "sqrt")
cbrt = _unary("cbrt", "cbrt")
sin = _unary("sine", "sin")
cos = _unary("cosine", "cos")
tan = _unary("tan", "tan")
tanh = _unary("tanh", "tanh")
sinh = _unary("sinh", "sinh")
cosh = _unary("cosh", "cosh")
arcsin = _unary("asin", "arcsin")
arccos = _unary("acos", "arccos")
arcsinh = _unary("asinh", "arcsinh")
arccosh = _unary("acosh", "arccosh")
arctanh = _unary("atanh", "arctanh")
floor = _unary("floor", "floor")
ceil = _unary("ceil", "ceil")
rint = _unary("round-nearest-even", "rint")
erf = _unary("erf", "erf")


@eager
def arctan(x):
    x = _float_operand(x, "arctan")
    return ops.binary("atan2", x, ops.asarray(np.ones((), x.dtype)), op_name="arctan")


@eager
def rsqrt(x):
    return ops.unary("rsqrt", _float_operand(x, "rsqrt"), op_name="rsqrt")


@eager
def exp2(x):
    x = _float_operand(x, "exp2")
    return exp(multiply(x, np.log(2.0)))


@eager
def log2(x):
    return divide(log(x), np.log(2.0))


@eager
def log10(x):
    return divide(log(x), np.log(10.0))


@eager
def negative(x):
    return ops.unary("negate", x, op_name="neg")


@eager
def abs(x):
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        real_type = np.float32 if x.dtype == np.complex64 else np.float64
        return ops._comp().emit("abs", x, shape=dtypes.hlo_shape(x.shape, real_type), op_name="abs")
    if dtypes.is_bool(x.dtype) or x.dtype.kind == "u":
        return x
    return ops.unary("abs", x)


absolute = abs


@eager
def sign(x):
    return ops.unary("sign", x)


@eager
def round(x, decimals: int = 0):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return x
    if decimals == 0:
        return ops.unary("round-nearest-even", x, op_name="round")
    scale = 10.0**decimals
    return divide(ops.unary("round-nearest-even", multiply(x, scale)), scale)


around = round


@eager
def trunc(x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return x
    return where(less(x, 0), ceil(x), floor(x))


@eager
def square(x):
    return multiply(x, x)


@eager
def reciprocal(x):
    return divide(1, x)


def _binary(opcode: str, name: str):
    def f(x, y):
        return ops.binary(opcode, x, y, op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting and JAX's type promotion."
    return eager(f)


add = _binary("add", "add")
subtract = _binary("subtract", "sub")
multiply = _binary("multiply", "mul")
maximum = _binary("maximum", "max")
minimum = _binary("minimum", "min")
arctan2 = _binary("atan2", "atan2")
bitwise_and = _binary("and", "and")
bitwise_or = _binary("or", "or")
bitwise_xor = _binary("xor", "xor")
left_shift = _binary("shift-left", "shift_left")


@eager
def right_shift(x, y):
    x, y = ops.promote("right_shift", x, y)
    opcode = "shift-right-logical" if x.dtype.kind == "u" else "shift-right-arithmetic"
    return ops.binary(opcode, x, y, op_name="shift_right")


@eager
def divide(x, y):
    """True division: integers are divided as floats, as in jax.numpy."""
    x, y = ops.promote("div", x, y)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float(), x.weak_type)
        y = ops.convert(y, dtypes.default_float(), y.weak_type)
    return ops.binary("divide", x, y, op_name="div")


true_divide = divide


@eager
def floor_divide(x, y):
    x, y = ops.promote("floor_divide", x, y)
    if dtypes.is_float(x.dtype):
        return floor(ops.binary("divide", x, y, op_name="div"))
    if x.dtype.kind == "u" or dtypes.is_bool(x.dtype):
        return ops.binary("divide", x, y, op_name="div")
    # Round toward negative infinity: adjust C's truncation when signs differ.
    q = ops.binary("divide", x, y, op_name="div")
    r = ops.binary("remainder", x, y, op_name="rem")
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return where(fix, subtract(q, 1), q)


@eager
def remainder(x, y):
    """Python's modulo: the result has the sign of the divisor."""
    x, y = ops.promote("rem", x, y)
    r = ops.binary("remainder", x, y, op_name="rem")
    if x.dtype.kind == "u" or dtypes.is_bool(x.dtype):
        return r
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return where(fix, add(r, y), r)


mod = remainder


@eager
def fmod(x, y):
    return ops.binary("remainder", x, y, op_name="fmod")


@eager
def power(x, y):
    x, y = ops.promote("pow", x, y)
    if dtypes.is_int(x.dtype):
        # Integer powers: repeated squaring would need the exponent's value;
        # compute in float64-free fashion via HLO power on integers.
        return ops.binary("power", x, y, op_name="pow")
    return ops.binary("power", x, y, op_name="pow")


def _compare(direction: str, name: str):
    def f(x, y):
        return ops.compare(x, y, direction, name)

    f.__name__ = name
    return eager(f)


equal = _compare("EQ", "eq")
not_equal = _compare("NE", "ne")
less = _compare("LT", "lt")
less_equal = _compare("LE", "le")
greater = _compare("GT", "gt")
greater_equal = _compare("GE", "ge")


def _as_bool(x):
    x = asarray(x)
    return x if dtypes.is_bool(x.dtype) else not_equal(x, 0)


@eager
def logical_and(x, y):
    return ops.binary("and", _as_bool(x), _as_bool(y), op_name="and")


@eager
def logical_or(x, y):
    return ops.binary("or", _as_bool(x), _as_bool(y), op_name="or")


@eager
def logical_xor(x, y):
    return ops.binary("xor", _as_bool(x), _as_bool(y), op_name="xor")


@eager
def logical_not(x):
    return ops.unary("not", _as_bool(x), op_name="not")


@eager
def invert(x):
    return ops.unary("not", x)


bitwise_not = invert


@eager
def isnan(x):
    x = asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        return full_like(x, False, dtype=np.bool_)
    return not_equal(x, x)


@eager
def isfinite(x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return full_like(x, True, dtype=np.bool_)
    return ops._comp().emit(
        "is-finite", x, shape=dtypes.hlo_shape(x.shape, np.bool_), op_name="is_finite"
    )


@eager
def isinf(x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return full_like(x, False, dtype=np.bool_)
    return equal(abs(x), np.inf)


@eager
def where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(
            "uir.numpy.where needs x and y (the one-argument form has a data-dependent shape)"
        )
    return ops.select(_as_bool(condition), x, y, op_name="select_n")


@eager
def clip(a, a_min=None, a_max=None):
    out = asarray(a)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


# --- Creation ----------------------------------------------------------------


def _dtype_or(dtype, default):
    return dtypes.canonicalize(dtype) if dtype is not None else default


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is None and not isinstance(fill_value, Tracer):
        d, weak = ops.weak_dtype_of(fill_value)
    else:
        d, weak = (
            (dtypes.canonicalize(dtype), False) if dtype is not None else (fill_value.dtype, False)
        )
    if ops.tracing.current() is None:
        return np.full(shape, fill_value, dtype=d)
    v = ops.convert(asarray(fill_value), d, weak)
    return ops.broadcast_to(v, shape)


def zeros(shape, dtype=None):
    return full(shape, 0, _dtype_or(dtype, dtypes.default_float()))


def ones(shape, dtype=None):
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()))


def full_like(a, fill_value, dtype=None, shape=None):
    a_shape = a.shape if hasattr(a, "shape") else np.shape(a)
    a_dtype = a.dtype if hasattr(a, "dtype") else ops.weak_dtype_of(a)[0]
    return full(
        a_shape if shape is None else shape, fill_value, dtype if dtype is not None else a_dtype
    )


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """Static bounds only (the length must be known), as in jax.numpy."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            fail("arange", "bounds must be concrete (static) values, not traced arrays")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = np.arange(start, stop, step)
    d = _dtype_or(dtype, dtypes.canonicalize(values.dtype))
    n = len(values)
    if ops.tracing.current() is None:
        return values.astype(d)
    if builtins.all(isinstance(v, int) for v in (start, stop, step)) or not dtypes.is_float(d):
        i = ops.iota(dtypes.default_int() if not dtypes.is_float(d) else d, (n,), 0)
        out = add(multiply(i, step), start)
        return ops.convert(out, d)
    i = ops.iota(d, (n,), 0)
    return ops.convert(add(multiply(i, step), start), d)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None):
    d = _dtype_or(dtype, dtypes.default_float())
    if ops.tracing.current() is None:
        return np.linspace(start, stop, num, endpoint=endpoint).astype(d)
    div = (num - 1) if endpoint else num
    i = ops.iota(d, (num,), 0)
    step = (np.float64(stop) - np.float64(start)) / div if div > 0 else 0.0
    out = add(multiply(i, step), start)
    if endpoint and num > 1:
        out = where(equal(ops.iota(dtypes.default_int(), (num,), 0), num - 1), stop, out)
    return ops.convert(out, d)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    M = N if M is None else M
    d = _dtype_or(dtype, dtypes.default_float())
    if ops.tracing.current() is None:
        return np.eye(N, M, k, dtype=d)
    r = ops.iota(dtypes.default_int(), (N, M), 0)
    c = ops.iota(dtypes.default_int(), (N, M), 1)
    return ops.convert(equal(add(r, k), c), d)


def public_asarray(a, dtype=None):
    """jax.numpy.asarray: a traced array inside uir.jit, a NumPy array of the
    canonical dtype outside."""
    if isinstance(a, Tracer):
        return a if dtype is None else ops.convert(a, dtypes.canonicalize(dtype))
    if ops.tracing.current() is None:
        arr = np.asarray(a)
        return arr.astype(_dtype_or(dtype, dtypes.canonicalize(arr.dtype)))
    return ops.asarray(a, dtype)


# --- Reductions ----------------------------------------------------------------


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    return ops.reshape(out, shape)


def _reduction(opcode: str, name: str, bool_result=False):
    def f(a, axis=None, keepdims: bool = False, dtype=None):
        x = asarray(a)
        if bool_result:
            x = _as_bool(x)
        elif dtype is not None:
            x = ops.convert(x, dtypes.canonicalize(dtype))
        elif opcode in ("add", "multiply") and (
            dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4)
        ):
            # Sums of small ints and bools accumulate in the default int (as JAX).
            x = ops.convert(x, dtypes.default_int() if x.dtype.kind != "u" else np.dtype(np.uint32))
        axes = ops.normalize_axes(axis, x.ndim, name)
        if opcode in ("maximum", "minimum") and builtins.any(x.shape[a] == 0 for a in axes):
            fail(name, f"zero-size reduction over axis {axis} of {ops.describe(x)} has no identity")
        return _keep(ops.reduce(x, opcode, axes, name), x, axes, keepdims)

    f.__name__ = name
    return eager(f)


sum = _reduction("add", "sum")
prod = _reduction("multiply", "prod")
max = _reduction("maximum", "max")
min = _reduction("minimum", "min")
amax, amin = max, min
all = _reduction("and", "all", bool_result=True)
any = _reduction("or", "any", bool_result=True)


def _count(x, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes], dtype=np.int64))


@eager
def mean(a, axis=None, keepdims: bool = False, dtype=None):
    x = asarray(a)
    if dtype is None and not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        dtype = dtypes.default_float()
    if dtype is not None:
        x = ops.convert(x, dtypes.canonicalize(dtype))
    axes = ops.normalize_axes(axis, x.ndim, "mean")
    s = sum(x, axis=tuple(axes), keepdims=keepdims)
    return divide(s, ops.convert(ops.asarray(_count(x, axes)), s.dtype))


@eager
def var(a, axis=None, keepdims: bool = False, ddof: int = 0, dtype=None):
    x = asarray(a)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float())
    axes = ops.normalize_axes(axis, x.ndim, "var")
    centered = subtract(x, mean(x, axis=tuple(axes), keepdims=True))
    sq = (
        real(multiply(centered, conj(centered))) if dtypes.is_complex(x.dtype) else square(centered)
    )
    s = sum(sq, axis=tuple(axes), keepdims=keepdims)
    return divide(s, ops.convert(ops.asarray(_count(x, axes) - ddof), s.dtype))


@eager
def std(a, axis=None, keepdims: bool = False, ddof: int = 0, dtype=None):
    return sqrt(var(a, axis=axis, keepdims=keepdims, ddof=ddof))


def _arg_reduce(name: str, take_greater: bool):
    def f(a, axis=None, keepdims: bool = False):
        x = asarray(a)
        if axis is None:
            x = ravel(x)
            axis = 0
        ax = ops.normalize_axis(axis, x.ndim, name)
        if x.shape[ax] == 0:
            fail(name, f"attempt to get {name} of an empty sequence")
        index_type = dtypes.default_int()
        idx = ops.iota(index_type, x.shape, ax)

        def pick(av, ai, bv, bi):
            # The first extreme wins; NaN counts as the extreme, as in NumPy.
            if dtypes.is_float(av.dtype):
                a_nan, b_nan = not_equal(av, av), not_equal(bv, bv)
                better = logical_or(
                    a_nan,
                    logical_and(logical_not(b_nan), (greater if take_greater else less)(av, bv)),
                )
            else:
                better = (greater if take_greater else less)(av, bv)
            tie = logical_and(equal(av, bv), less(ai, bi))
            keep = logical_or(better, tie)
            return where(keep, av, bv), where(keep, ai, bi)

        reducer = ops.scalar_computation(
            f"{name}_reducer", [x.dtype, index_type, x.dtype, index_type], pick, arity=4
        )
        init_v = ops.asarray(
            ops.reduction_identity("maximum" if take_greater else "minimum", x.dtype)
        )
        init_i = ops.asarray(np.zeros((), index_type))
        shape = tuple(s for i, s in enumerate(x.shape) if i != ax)
        out = ops._comp().emit(
            "reduce",
            x,
            idx,
            init_v,
            init_i,
            op_name=name,
            dimensions=[ax],
            to_apply=reducer,
            shape=f"({dtypes.hlo_shape(shape, x.dtype)}, {dtypes.hlo_shape(shape, index_type)})",
        )[1]
        return _keep(out, x, [ax], keepdims)

    f.__name__ = name
    return eager(f)


argmax = _arg_reduce("argmax", True)
argmin = _arg_reduce("argmin", False)


# --- Shapes --------------------------------------------------------------------


@eager
def reshape(a, newshape=None, order: str = "C", shape=None):
    x = asarray(a)
    newshape = shape if shape is not None else newshape
    newshape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    if order != "C":
        fail("reshape", "only C order is supported")
    if newshape.count(-1) > 1:
        fail("reshape", f"can only specify one unknown dimension in {newshape}")
    if -1 in newshape:
        known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            fail("reshape", f"cannot reshape {ops.describe(x)} into {newshape}")
        newshape = tuple(x.size // known if s == -1 else s for s in newshape)
    return ops.reshape(x, newshape)


@eager
def ravel(a):
    x = asarray(a)
    return ops.reshape(x, (x.size,))


@eager
def transpose(a, axes=None):
    x = asarray(a)
    perm = (
        list(range(x.ndim))[::-1]
        if axes is None
        else [ops.normalize_axis(p, x.ndim, "transpose") for p in axes]
    )
    return ops.transpose(x, perm)


@eager
def swapaxes(a, axis1: int, axis2: int):
    x = asarray(a)
    perm = list(range(x.ndim))
    i, j = (
        ops.normalize_axis(axis1, x.ndim, "swapaxes"),
        ops.normalize_axis(axis2, x.ndim, "swapaxes"),
    )
    perm[i], perm[j] = perm[j], perm[i]
    return ops.transpose(x, perm)


@eager
def moveaxis(a, source, destination):
    x = asarray(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [ops.normalize_axis(s, x.ndim, "moveaxis") for s in src]
    dst = [ops.normalize_axis(d, x.ndim, "moveaxis") for d in dst]
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return ops.transpose(x, order)


@eager
def expand_dims(a, axis):
    x = asarray(a)
    axes = [axis] if isinstance(axis, int) else list(axis)
    ndim = x.ndim + len(axes)
    axes = sorted(ops.normalize_axis(ax, ndim, "expand_dims") for ax in axes)
    shape = list(x.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return ops.reshape(x, shape)


@eager
def squeeze(a, axis=None):
    x = asarray(a)
    if axis is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = ops.normalize_axes(axis, x.ndim, "squeeze")
        for ax in axes:
            if x.shape[ax] != 1:
                fail(
                    "squeeze",
                    f"cannot select an axis to squeeze out which has size not equal to one ({ops.describe(x)}, axis {ax})",
                )
    return ops.reshape(x, [s for i, s in enumerate(x.shape) if i not in axes])


@eager
def broadcast_to(a, shape):
    return ops.broadcast_to(a, (shape,) if isinstance(shape, int) else shape)


@eager
def concatenate(arrays, axis: int = 0):
    xs = ops.promote("concatenate", *arrays)
    if not xs:
        fail("concatenate", "need at least one array")
    ndim = xs[0].ndim
    if ndim == 0:
        fail("concatenate", "zero-dimensional arrays cannot be concatenated")
    ax = ops.normalize_axis(axis, ndim, "concatenate")
    for x in xs:
        if x.ndim != ndim or builtins.any(
            x.shape[i] != xs[0].shape[i] for i in range(ndim) if i != ax
        ):
            fail(
                "concatenate",
                "shapes " + ", ".join(ops.describe(v) for v in xs) + f" do not match off axis {ax}",
            )
    if len(xs) == 1:
        return xs[0]
    shape = list(xs[0].shape)
    shape[ax] = builtins.sum(x.shape[ax] for x in xs)
    out = ops._comp().emit(
        "concatenate",
        *xs,
        dimensions=[ax],
        shape=dtypes.hlo_shape(shape, xs[0].dtype),
        op_name="concatenate",
    )
    out.weak_type = builtins.all(x.weak_type for x in xs)
    return out


@eager
def stack(arrays, axis: int = 0):
    xs = [asarray(a) for a in arrays]
    if not xs:
        fail("stack", "need at least one array")
    ax = ops.normalize_axis(axis, xs[0].ndim + 1, "stack")
    return concatenate([expand_dims(x, ax) for x in xs], axis=ax)


@eager
def split(a, indices_or_sections, axis: int = 0):
    x = asarray(a)
    ax = ops.normalize_axis(axis, x.ndim, "split")
    n = x.shape[ax]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            fail(
                "split",
                f"array split does not result in an equal division ({n} by {indices_or_sections})",
            )
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step)) if step else [0] * (indices_or_sections + 1)
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        lo, hi = builtins.min(builtins.max(lo, 0), n), builtins.min(builtins.max(hi, 0), n)
        out.append(_slice_axis(x, ax, lo, builtins.max(hi, lo), 1))
    return out


def _slice_axis(x, ax, lo, hi, step):
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[ax], limits[ax], strides[ax] = lo, hi, step
    return slice_static(x, starts, limits, strides)


def slice_static(x, starts, limits, strides):
    shape = [
        builtins.max(0, -(-(hi - lo) // st))
        for lo, hi, st in zip(starts, limits, strides, strict=True)
    ]
    out = ops._comp().emit(
        "slice",
        x,
        slice=[(lo, hi, st) for lo, hi, st in zip(starts, limits, strides, strict=True)],
        shape=dtypes.hlo_shape(shape, x.dtype),
        op_name="slice",
    )
    out.weak_type = x.weak_type
    return out


@eager
def flip(m, axis=None):
    x = asarray(m)
    axes = ops.normalize_axes(axis, x.ndim, "flip")
    if not axes:
        return x
    out = ops._comp().emit(
        "reverse",
        x,
        dimensions=sorted(axes),
        shape=dtypes.hlo_shape(x.shape, x.dtype),
        op_name="rev",
    )
    out.weak_type = x.weak_type
    return out


@eager
def pad(array, pad_width, mode: str = "constant", constant_values=0):
    x = asarray(array)
    if mode != "constant":
        fail("pad", f"mode {mode!r} is not supported (only 'constant')")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2)).tolist()
    if builtins.any(lo < 0 or hi < 0 for lo, hi in widths):
        fail("pad", "pad widths must be non-negative")
    value = ops.convert(asarray(constant_values), x.dtype)
    shape = [s + lo + hi for s, (lo, hi) in zip(x.shape, widths, strict=True)]
    out = ops._comp().emit(
        "pad",
        x,
        value,
        padding="x".join(f"{lo}_{hi}" for lo, hi in widths) if widths else "",
        shape=dtypes.hlo_shape(shape, x.dtype),
        op_name="pad",
    )
    out.weak_type = x.weak_type
    return out


@eager
def tile(A, reps):
    x = asarray(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = builtins.max(x.ndim, len(reps))
    x = ops.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    reps = (1,) * (ndim - len(reps)) + reps
    # Broadcast to [r0, s0, r1, s1, ...] and merge pairs.
    inter = []
    for r, s in zip(reps, x.shape, strict=True):
        inter += [r, s]
    b = ops._comp().builder.broadcast(x.inst, inter, list(range(1, 2 * ndim, 2)))
    bt = Tracer(x.comp, b, tuple(inter), x.dtype, x.weak_type)
    return ops.reshape(bt, [r * s for r, s in zip(reps, x.shape, strict=True)])


@eager
def repeat(a, repeats: int, axis=None):
    x = asarray(a)
    if not isinstance(repeats, int):
        fail("repeat", "repeats must be a static int")
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "repeat")
    shape = list(x.shape)
    inter = [*shape[: ax + 1], repeats, *shape[ax + 1 :]]
    dims = list(range(ax + 1)) + list(range(ax + 2, len(inter)))
    b = ops._comp().builder.broadcast(x.inst, inter, dims)
    bt = Tracer(x.comp, b, tuple(inter), x.dtype, x.weak_type)
    shape[ax] *= repeats
    return ops.reshape(bt, shape)


# --- Products ------------------------------------------------------------------


def _dot_general(x, y, contract, batch, name):
    """dot with (lhs, rhs) contracting and batch dims; result dims are batch,
    lhs free, rhs free."""
    x, y = ops.promote(name, x, y)
    (lc, rc), (lb, rb) = contract, batch
    for a, b in zip(lc, rc, strict=True):
        if x.shape[a] != y.shape[b]:
            fail(
                name,
                f"contracting dimensions of {ops.describe(x)} and {ops.describe(y)} differ ({x.shape[a]} vs {y.shape[b]})",
            )
    lf = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(y.ndim) if i not in rc and i not in rb]
    shape = [x.shape[i] for i in lb] + [x.shape[i] for i in lf] + [y.shape[i] for i in rf]
    attrs = {"lhs_contracting_dims": list(lc), "rhs_contracting_dims": list(rc)}
    if lb:
        attrs.update(lhs_batch_dims=list(lb), rhs_batch_dims=list(rb))
    out = ops._comp().emit(
        "dot", x, y, shape=dtypes.hlo_shape(shape, x.dtype), op_name=name, **attrs
    )
    out.weak_type = x.weak_type and y.weak_type
    return out


@eager
def matmul(a, b):
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        fail("matmul", f"operands must not be scalars ({ops.describe(x)}, {ops.describe(y)})")
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = ops.reshape(x, (1, x.shape[0]))
    if y1:
        y = ops.reshape(y, (y.shape[0], 1))
    if x.shape[-1] != y.shape[-2]:
        fail(
            "matmul",
            f"{ops.describe(a)} @ {ops.describe(b)}: inner dimensions {x.shape[-1]} and {y.shape[-2]} differ",
        )
    batch = ops.broadcast_shapes("matmul", x.shape[:-2], y.shape[:-2])
    x = ops.broadcast_to(x, batch + x.shape[-2:], "matmul")
    y = ops.broadcast_to(y, batch + y.shape[-2:], "matmul")
    nb = len(batch)
    out = _dot_general(x, y, ([nb + 1], [nb]), (list(range(nb)), list(range(nb))), "dot_general")
    if x1:
        out = squeeze(out, nb)
    if y1:
        out = squeeze(out, -1)
    return out


@eager
def dot(a, b):
    x, y = asarray(a), asarray(b)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    if y.ndim == 1 or x.ndim == 1 or (x.ndim <= 2 and y.ndim <= 2):
        return matmul(x, y)
    # N-d: contract x's last axis with y's second-to-last.
    return tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 2]))


@eager
def tensordot(a, b, axes=2):
    x, y = asarray(a), asarray(b)
    if isinstance(axes, int):
        lc = list(range(x.ndim - axes, x.ndim))
        rc = list(range(axes))
    else:
        la, ra = axes
        lc = [la] if isinstance(la, int) else list(la)
        rc = [ra] if isinstance(ra, int) else list(ra)
    lc = [ops.normalize_axis(i, x.ndim, "tensordot") for i in lc]
    rc = [ops.normalize_axis(i, y.ndim, "tensordot") for i in rc]
    return _dot_general(x, y, (lc, rc), ([], []), "dot_general")


@eager
def outer(a, b):
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


@eager
def vdot(a, b):
    return sum(multiply(ravel(a), ravel(b)))


# --- Complex -------------------------------------------------------------------


@eager
def real(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return x
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("real", x, shape=dtypes.hlo_shape(x.shape, rt), op_name="real")


@eager
def imag(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return zeros_like(x)
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("imag", x, shape=dtypes.hlo_shape(x.shape, rt), op_name="imag")


@eager
def conj(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return x
    re, im = real(x), imag(x)
    return ops._comp().emit(
        "complex", re, negative(im), shape=dtypes.hlo_shape(x.shape, x.dtype), op_name="conj"
    )


conjugate = conj

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


# --- Indexing helpers ----------------------------------------------------------


@eager
def take(a, indices, axis=None):
    """x gathered at `indices` along `axis` (the flattened array when None);
    negative indices count from the end, others out of range are clamped."""
    x = asarray(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    ax = ops.normalize_axis(axis, x.ndim, "take")
    idx = asarray(indices)
    if not dtypes.is_int(idx.dtype):
        fail("take", f"indices must be integers, got {ops.describe(idx)}")
    idx = ops.convert(idx, dtypes.default_int())
    n = x.shape[ax]
    idx = where(less(idx, 0), add(idx, n), idx)
    out_shape = x.shape[:ax] + idx.shape + x.shape[ax + 1 :]
    offset_dims = list(range(ax)) + list(range(ax + idx.ndim, len(out_shape)))
    slice_sizes = [1 if i == ax else s for i, s in enumerate(x.shape)]
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=offset_dims,
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        index_vector_dim=idx.ndim,
        slice_sizes=slice_sizes,
        shape=dtypes.hlo_shape(out_shape, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


@eager
def take_along_axis(arr, indices, axis: int):
    x, idx = asarray(arr), asarray(indices)
    ax = ops.normalize_axis(axis, x.ndim, "take_along_axis")
    if idx.ndim != x.ndim:
        fail(
            "take_along_axis",
            f"indices {ops.describe(idx)} must have the rank of {ops.describe(x)}",
        )
    idx = ops.convert(idx, dtypes.default_int())
    idx = where(less(idx, 0), add(idx, x.shape[ax]), idx)
    # Every other axis is a batching dim of the gather.
    batch = [i for i in range(x.ndim) if i != ax]
    shape = ops.broadcast_shapes(
        "take_along_axis",
        tuple(s for i, s in enumerate(x.shape) if i != ax),
        tuple(s for i, s in enumerate(idx.shape) if i != ax),
    )
    full = list(shape)
    full.insert(ax, idx.shape[ax])
    idx = ops.broadcast_to(idx, full)
    x_shape = list(shape)
    x_shape.insert(ax, x.shape[ax])
    x = ops.broadcast_to(x, x_shape)
    idx = ops.reshape(idx, (*idx.shape, 1))
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=[],
        collapsed_slice_dims=[ax],
        start_index_map=[ax],
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
        index_vector_dim=x.ndim,
        slice_sizes=[1] * x.ndim,
        shape=dtypes.hlo_shape(full, x.dtype),
        op_name="gather",
    )
    out.weak_type = x.weak_type
    return out


# --- einsum, cumulative ops, sorting -----------------------------------------------


def _einsum_pair(a, sa: str, b, sb: str, keep: str):
    """Contracts two operands with subscripts sa, sb, keeping the letters in
    `keep` (in any order); returns the result and its subscripts."""

    # Letters only in one operand and not kept are summed first.
    def pre_sum(x, s, other):
        drop = [i for i, c in enumerate(s) if c not in other and c not in keep]
        if drop:
            x = sum(x, axis=tuple(drop))
            s = "".join(c for i, c in enumerate(s) if i not in drop)
        return x, s

    a, sa = pre_sum(a, sa, sb)
    b, sb = pre_sum(b, sb, sa)
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    out = _dot_general(
        a,
        b,
        ([sa.index(c) for c in contract], [sb.index(c) for c in contract]),
        ([sa.index(c) for c in batch], [sb.index(c) for c in batch]),
        "einsum",
    )
    s = (
        "".join(batch)
        + "".join(c for c in sa if c not in sb)
        + "".join(c for c in sb if c not in sa)
    )
    return out, s


@eager
def einsum(subscripts: str, *operands):
    """Einstein summation, lowered to dot_general, reductions and transposes
    (two operands at a time, left to right). Explicit ('ij,jk->ik') and
    implicit ('ij,jk') forms; no repeated letters within one operand."""
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        fail("einsum", "ellipsis subscripts are not supported")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    subs = inputs.split(",")
    if len(subs) != len(operands):
        fail("einsum", f"{len(subs)} subscripts for {len(operands)} operands")
    xs = [asarray(o) for o in operands]
    for s, x in zip(subs, xs, strict=True):
        if len(s) != x.ndim:
            fail("einsum", f"subscripts {s!r} for {ops.describe(x)}")
        if len(set(s)) != len(s):
            fail("einsum", f"repeated subscripts within {s!r} (diagonals) are not supported")
    sizes = {}
    for s, x in zip(subs, xs, strict=True):
        for c, n in zip(s, x.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                fail("einsum", f"letter {c!r} has sizes {sizes[c]} and {n}")
    acc, s_acc = xs[0], subs[0]
    for k in range(1, len(xs)):
        later = "".join(subs[k + 1 :])
        keep = "".join(sorted(set(output + later)))
        acc, s_acc = _einsum_pair(acc, s_acc, xs[k], subs[k], keep)
    drop = [i for i, c in enumerate(s_acc) if c not in output]
    if drop:
        acc = sum(acc, axis=tuple(drop))
        s_acc = "".join(c for i, c in enumerate(s_acc) if i not in drop)
    return ops.transpose(acc, [s_acc.index(c) for c in output])


def _cumulative(opcode: str, name: str):
    def f(a, axis=None, dtype=None):
        x = asarray(a)
        if axis is None:
            x = ravel(x)
            axis = 0
        if dtype is not None:
            x = ops.convert(x, dtypes.canonicalize(dtype))
        elif opcode in ("add", "multiply") and (
            dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4)
        ):
            x = ops.convert(x, dtypes.default_int())
        ax = ops.normalize_axis(axis, x.ndim, name)
        n = x.shape[ax]
        reducer = ops.scalar_computation(
            f"{name}_reducer", x.dtype, lambda p, q: ops.binary(opcode, p, q)
        )
        init = ops.asarray(ops.reduction_identity(opcode, x.dtype))
        window = (
            "{"
            + " ".join(
                [
                    "size=" + "x".join(str(n if i == ax else 1) for i in range(x.ndim)),
                    "pad=" + "x".join(f"{n - 1 if i == ax else 0}_0" for i in range(x.ndim)),
                ]
            )
            + "}"
        )
        out = ops._comp().emit(
            "reduce-window",
            x,
            init,
            window=window,
            to_apply=reducer,
            shape=dtypes.hlo_shape(x.shape, x.dtype),
            op_name=name,
        )
        out.weak_type = x.weak_type
        return out

    f.__name__ = name
    return eager(f)


cumsum = _cumulative("add", "cumsum")
cumprod = _cumulative("multiply", "cumprod")


def _sort_key(v):
    """JAX's sort key: -0.0 as 0.0 and every NaN as one positive NaN, so a
    total order puts NaNs last."""
    if not dtypes.is_float(v.dtype):
        return v
    zero = ops.asarray(np.zeros((), v.dtype))
    nan_ = ops.asarray(np.array(np.nan, v.dtype))
    v = ops.select(ops.compare(v, zero, "EQ", "eq"), zero, v)
    return ops.select(ops.compare(v, v, "NE", "ne"), nan_, v)


def _sort(operands, axis: int, num_keys: int = 1, name: str = "sort"):
    xs = [asarray(o) for o in operands]
    ax = ops.normalize_axis(axis, xs[0].ndim, name)

    def less(*params):
        a, b = _sort_key(params[0]), _sort_key(params[1])
        if dtypes.is_float(a.dtype):
            return ops._comp().emit(
                "compare", a, b, direction="LT", type="TOTALORDER", shape="pred[]", op_name="lt"
            )
        return ops.compare(a, b, "LT", "lt")

    comparator = ops.scalar_computation(
        f"{name}_comparator", [d for x in xs for d in (x.dtype, x.dtype)], less, arity=2 * len(xs)
    )
    shape = (
        "(" + ", ".join(dtypes.hlo_shape(x.shape, x.dtype) for x in xs) + ")"
        if len(xs) > 1
        else dtypes.hlo_shape(xs[0].shape, xs[0].dtype)
    )
    out = ops._comp().emit(
        "sort", *xs, dimensions=[ax], is_stable=True, to_apply=comparator, shape=shape, op_name=name
    )
    return out if isinstance(out, tuple) else (out,)


@eager
def sort(a, axis: int = -1):
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    return _sort([x], axis)[0]


@eager
def argsort(a, axis: int = -1):
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    ax = ops.normalize_axis(axis, x.ndim, "argsort")
    idx = ops.iota(dtypes.default_int(), x.shape, ax)
    return _sort([x, idx], ax, name="argsort")[1]
