"""uir.numpy: jax.numpy's names and semantics, on traced arrays (and on
NumPy arrays outside uir.jit, run eagerly)."""

from __future__ import annotations

import builtins
import math

import numpy as np

from uir._src import dtypes, elementwise, ops
from uir._src.eager import eager
from uir._src.lax_impl import bitcast_convert_type
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer

# --- Elementwise ---------------------------------------------------------------


def _float_operand(x, op: str) -> Tracer:
    """Transcendental ops compute in floats: ints and bools are promoted."""
    x = asarray(x)
    if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype):
        return ops.convert(x, dtypes.default_float(), x.weak_type)
    return x


def _no_complex(x, name: str, accepted: str = "subtypes of floating") -> Tracer:
    """`x` as an array; a TypeError naming `name` and the dtype, as JAX's,
    when it is complex (an op with no meaning on complex numbers)."""
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        fail(name, f"{name} does not accept dtype {x.dtype}. Accepted dtypes are {accepted}.")
    return x


def _like_lax(row: tuple[str, str], name: str, *xs) -> list[Tracer]:
    """The operands of NumPy's `name`, whose row of the elementwise table
    (uir._src.elementwise) is `row`: JAX's type promotion (to an inexact
    type where the op takes only those), then the row's element kinds,
    refused as jax.numpy refuses them."""
    _, kinds = row
    xs = ops.promote(name, *xs) if len(xs) > 1 else [asarray(xs[0])]
    if kinds in (elementwise.FLOAT, elementwise.INEXACT):
        xs = [_float_operand(x, name) for x in xs]
    elif kinds == elementwise.INT and dtypes.is_bool(xs[0].dtype):
        xs = [ops.convert(x, dtypes.default_int(), x.weak_type) for x in xs]  # shifts of bools
    dtype = xs[0].dtype
    if not elementwise.accepts(dtype, kinds):
        fail(name, f"{name} does not accept dtype {dtype}. Accepted dtypes are {kinds} types.")
    return xs


def _unary(lax_name: str, name: str):
    row = elementwise.UNARY[lax_name]

    def f(x):
        return ops.unary(row[0], _like_lax(row, name, x)[0], op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as jax.numpy.{name}."
    return eager(f)


exp = _unary("exp", "exp")
log = _unary("log", "log")
log1p = _unary("log1p", "log1p")
expm1 = _unary("expm1", "expm1")
sqrt = _unary("sqrt", "sqrt")
cbrt = _unary("cbrt", "cbrt")
sin = _unary("sin", "sin")
cos = _unary("cos", "cos")
tan = _unary("tan", "tan")
tanh = _unary("tanh", "tanh")
sinh = _unary("sinh", "sinh")
cosh = _unary("cosh", "cosh")
arcsin = _unary("asin", "arcsin")
arccos = _unary("acos", "arccos")
arcsinh = _unary("asinh", "arcsinh")
arccosh = _unary("acosh", "arccosh")
arctanh = _unary("atanh", "arctanh")
_floor = _unary("floor", "floor")
_ceil = _unary("ceil", "ceil")


@eager
def floor(x):
    """Elementwise floor; integers and bools are already whole and come back
    as they are, as in jax.numpy."""
    x = asarray(x)
    return x if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype) else _floor(x)


@eager
def ceil(x):
    """Elementwise ceiling; integers and bools come back as they are, as in
    jax.numpy."""
    x = asarray(x)
    return x if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype) else _ceil(x)


erf = _unary("erf", "erf")


@eager
def rint(x):
    """Round to the nearest integer, ties to even (floats; integers as they
    are, promoted to float as JAX does)."""
    x = _no_complex(_float_operand(x, "rint"), "rint")
    return ops.unary("round-nearest-even", x, op_name="rint")


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
def nextafter(x1, x2):
    """The next float after x1 toward x2, elementwise (NaN when either is
    NaN; x2 when they are equal)."""
    x, y = ops.promote("nextafter", x1, x2)
    if not dtypes.is_float(x.dtype):
        x, y = ops.convert(x, dtypes.default_float()), ops.convert(y, dtypes.default_float())
    x, y = ops.broadcast_all("nextafter", x, y)
    uint = np.dtype(f"uint{x.dtype.itemsize * 8}")
    bits = bitcast_convert_type(x, uint)
    one = asarray(np.ones((), uint))
    # Away from zero adds one to the magnitude's bits, toward zero takes one.
    away = ops.binary(
        "xor",
        ops.compare(x, y, "LT", "lt"),
        ops.compare(x, asarray(np.zeros((), x.dtype)), "LT", "lt"),
    )
    stepped = ops.select(away, ops.binary("add", bits, one), ops.binary("subtract", bits, one))
    out = bitcast_convert_type(stepped, x.dtype)
    # From zero: the smallest subnormal with y's sign.
    tiny = bitcast_convert_type(one, x.dtype)
    from_zero = ops.select(
        ops.compare(y, asarray(np.zeros((), x.dtype)), "LT", "lt"), negative(tiny), tiny
    )
    out = ops.select(ops.compare(x, asarray(np.zeros((), x.dtype)), "EQ", "eq"), from_zero, out)
    out = ops.select(ops.compare(x, y, "EQ", "eq"), y, out)
    nan = ops.binary("or", ops.compare(x, x, "NE", "ne"), ops.compare(y, y, "NE", "ne"))
    return ops.select(nan, asarray(np.full((), np.nan, x.dtype)), out)


@eager
def negative(x):
    return ops.unary("negate", x, op_name="neg")


@eager
def abs(x):
    x = asarray(x)
    if dtypes.is_complex(x.dtype):
        real_type = np.float32 if x.dtype == np.complex64 else np.float64
        return ops._comp().emit("abs", x, shape=(x.shape, real_type), op_name="abs")
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


def _complex_extreme(opcode: str, name: str):
    """maximum/minimum; on complex numbers JAX's lexicographic order: by
    real part, then imaginary part."""
    plain = _binary(opcode, name)

    def f(x, y):
        x, y = ops.promote(name, x, y)
        if not dtypes.is_complex(x.dtype):
            return plain(x, y)
        xr, xi, yr, yi = real(x), imag(x), real(y), imag(y)
        direction = greater if opcode == "maximum" else less
        first = logical_or(direction(xr, yr), logical_and(equal(xr, yr), direction(xi, yi)))
        return where(first, x, y)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as jax.numpy (complex numbers ordered lexicographically)."
    return eager(f)


maximum = _complex_extreme("maximum", "max")
minimum = _complex_extreme("minimum", "min")


def _binary_like_lax(lax_name: str, name: str, op_name: str):
    row = elementwise.BINARY[lax_name]

    def f(x, y):
        a, b = _like_lax(row, name, x, y)
        return ops.binary(row[0], a, b, op_name=op_name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting and JAX's type promotion."
    return eager(f)


arctan2 = _binary_like_lax("atan2", "arctan2", "atan2")
bitwise_and = _binary_like_lax("bitwise_and", "bitwise_and", "and")
bitwise_or = _binary_like_lax("bitwise_or", "bitwise_or", "or")
bitwise_xor = _binary_like_lax("bitwise_xor", "bitwise_xor", "xor")
left_shift = _binary_like_lax("shift_left", "left_shift", "shift_left")


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
    _no_complex(x, "floor_divide", "integer or floating")
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
    _no_complex(x, "rem", "integer or floating")
    r = ops.binary("remainder", x, y, op_name="rem")
    if x.dtype.kind == "u" or dtypes.is_bool(x.dtype):
        return r
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return where(fix, add(r, y), r)


mod = remainder


@eager
def fmod(x, y):
    x, y = ops.promote("fmod", x, y)
    _no_complex(x, "fmod", "integer or floating")
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
    return ops.is_finite(x)


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
    for v in (out, a_min, a_max):
        if v is not None and dtypes.is_complex(asarray(v).dtype):
            fail(
                "clip",
                f"clip does not accept dtype {asarray(v).dtype}: complex numbers have no order "
                "to clip by (as in JAX)",
            )
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


def linspace(
    start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis=0
):
    """num values from start to stop (stop excluded without endpoint), as
    JAX computes them: start * (1 - t) + stop * t for t = i / div, the last
    one stop itself. start and stop may be arrays (traced or not); the
    values run along `axis`. retstep adds the step."""
    num = int(num)
    if num < 0:
        fail("linspace", f"num must be non-negative, got {num}")
    traced = ops.tracing.current() is not None or builtins.any(
        isinstance(v, Tracer) for v in (start, stop)
    )
    xp_start, xp_stop = (asarray(start), asarray(stop)) if traced else (start, stop)
    kinds = [np.result_type(getattr(v, "dtype", type(v))) for v in (start, stop)]
    inexact = np.result_type(*kinds)
    if not (np.issubdtype(inexact, np.floating) or np.issubdtype(inexact, np.complexfloating)):
        inexact = np.dtype(dtypes.default_float())
    compute = dtypes.canonicalize(inexact)
    d = _dtype_or(dtype, compute)
    # JAX computes in the result's inexact type; integers' values come from
    # start + i * step, exact for whole steps.
    integer = np.issubdtype(d, np.integer) or d == np.bool_
    if not integer:
        compute = d
    bounds = list(np.broadcast_shapes(np.shape(start), np.shape(stop)))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = list(bounds)
    shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if not traced:
        lo = np.broadcast_to(np.asarray(start, compute), bounds).reshape(shape)
        hi = np.broadcast_to(np.asarray(stop, compute), bounds).reshape(shape)
        if num > 1:
            delta = (np.asarray(stop, compute) - np.asarray(start, compute)) / compute.type(div)
            t_shape = [1] * len(shape)
            t_shape[axis] = div
            if integer:
                steps = np.arange(div, dtype=compute).reshape(t_shape)
                out = lo + steps * np.broadcast_to(delta, bounds).reshape(shape)
            else:
                t = (np.arange(div, dtype=np.finfo(compute).dtype) / div).astype(compute)
                t = t.reshape(t_shape)
                out = lo * (1 - t) + hi * t
            if endpoint:
                out = np.concatenate([out, hi], axis=axis)
        elif num == 1:
            delta = np.asarray(
                np.nan if endpoint else np.asarray(stop) - np.asarray(start), compute
            )
            out = lo
        else:
            empty = list(bounds)
            empty.insert(axis, 0)
            delta, out = np.asarray(np.nan, compute), np.zeros(empty, compute)
        if np.issubdtype(d, np.integer):
            out = np.floor(out)
        out = out.astype(d)
        return (out, delta) if retstep else out
    lo = ops.broadcast_to(ops.convert(xp_start, compute), tuple(bounds), "linspace")
    hi = ops.broadcast_to(ops.convert(xp_stop, compute), tuple(bounds), "linspace")
    lo, hi = ops.reshape(lo, tuple(shape)), ops.reshape(hi, tuple(shape))
    if num > 1:
        delta = divide(
            subtract(ops.convert(xp_stop, compute), ops.convert(xp_start, compute)),
            asarray(np.asarray(div, compute)),
        )
        t_shape = [1] * len(shape)
        t_shape[axis] = div
        real = np.finfo(compute).dtype
        if integer:
            steps = ops.reshape(ops.iota(compute, (div,), 0), tuple(t_shape))
            step = ops.reshape(ops.broadcast_to(delta, tuple(bounds), "linspace"), tuple(shape))
            out = add(lo, multiply(steps, step))
        else:
            t = divide(ops.iota(real, (div,), 0), asarray(np.asarray(div, real)))
            t = ops.reshape(ops.convert(t, compute), tuple(t_shape))
            one = asarray(np.asarray(1, compute))
            out = add(multiply(lo, subtract(one, t)), multiply(hi, t))
        if endpoint:
            out = ops.concatenate([out, hi], axis=axis, op="linspace")
    elif num == 1:
        delta = (
            asarray(np.asarray(np.nan, compute))
            if endpoint
            else subtract(ops.convert(xp_stop, compute), ops.convert(xp_start, compute))
        )
        out = lo
    else:
        empty = list(bounds)
        empty.insert(axis, 0)
        delta = asarray(np.asarray(np.nan, compute))
        out = ops.broadcast_to(asarray(np.asarray(0, compute)), tuple(empty), "linspace")
    if np.issubdtype(d, np.integer):
        out = floor(out)
    out = ops.convert(out, d)
    return (out, delta) if retstep else out


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
    if ops.holds_tracers(a):
        # As jax.numpy.asarray: nested lists of traced and constant values
        # become one array, their dtypes promoted.
        parts = [public_asarray(v) for v in a]
        out = ops.concatenate([ops.reshape(v, (1, *v.shape)) for v in parts], 0, op="asarray")
        return out if dtype is None else ops.convert(out, dtypes.canonicalize(dtype))
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
        x = _no_complex(a, name, "integer, boolean or floating (complex numbers have no order)")
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
            shape=[(shape, x.dtype), (shape, index_type)],
        )[1]
        return _keep(out, x, [ax], keepdims)

    f.__name__ = name
    return eager(f)


argmax = _arg_reduce("argmax", True)
argmin = _arg_reduce("argmin", False)


# --- Complex -------------------------------------------------------------------


@eager
def real(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return x
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("real", x, shape=(x.shape, rt), op_name="real")


@eager
def imag(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return zeros_like(x)
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("imag", x, shape=(x.shape, rt), op_name="imag")


@eager
def conj(x):
    x = asarray(x)
    if not dtypes.is_complex(x.dtype):
        return x
    re, im = real(x), imag(x)
    return ops._comp().emit("complex", re, negative(im), shape=(x.shape, x.dtype), op_name="conj")


conjugate = conj

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


@eager
def ravel(a):
    x = asarray(a)
    return ops.reshape(x, (x.size,))


def result_type(*args):
    """The dtype values of `args` combine to (JAX's promotion)."""
    return dtypes.promote(
        *[
            ops.weak_dtype_of(a)
            if not isinstance(a, type) and not isinstance(a, np.dtype)
            else (dtypes.canonicalize(a), False)
            for a in args
        ]
    )[0]


def promote_types(a, b):
    return dtypes.promote((dtypes.canonicalize(a), False), (dtypes.canonicalize(b), False))[0]
