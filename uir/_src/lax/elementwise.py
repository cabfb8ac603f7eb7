"""jax.lax's elementwise operations, from the one table of elementwise
operations that uir.lax and uir.numpy both build on: for each of lax's
elementwise functions, its HLO opcode and the element kinds it takes. lax
checks operands against the kinds as they come (no promotion, no implicit
broadcasting); NumPy's functions of the same op promote first, as JAX's
do, then check against the same row, so the two cannot disagree on what an
op accepts. The cores NumPy's complex and nextafter functions share
(_real_part, _imag_part, _conjugate, _next_float) live here too."""

from __future__ import annotations

import builtins
import enum

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer

FLOAT = "floating"
INEXACT = "floating or complex"
INT = "integer"
INT_BOOL = "integer or boolean"
NUMBER = "numeric"
SIGNED = "signed integer, floating or complex"
ANY = "any"


def accepts(dtype, kinds: str) -> bool:
    """Whether elements of `dtype` are of `kinds`."""
    dtype = np.dtype(dtype)
    if kinds == ANY:
        return True
    f, c, i, b = (
        dtypes.is_float(dtype),
        dtypes.is_complex(dtype),
        dtypes.is_int(dtype),
        dtype == np.bool_,
    )
    return {
        FLOAT: f,
        INEXACT: f or c,
        INT: i,
        INT_BOOL: i or b,
        NUMBER: f or c or i,
        SIGNED: f or c or (i and dtype.kind == "i"),
    }[kinds]


# lax name: (HLO opcode, the element kinds it takes).
UNARY: dict[str, tuple[str, str]] = {
    "abs": ("abs", SIGNED),
    "acos": ("acos", INEXACT),
    "acosh": ("acosh", INEXACT),
    "asin": ("asin", INEXACT),
    "asinh": ("asinh", INEXACT),
    "atanh": ("atanh", INEXACT),
    "cbrt": ("cbrt", FLOAT),
    "ceil": ("ceil", FLOAT),
    "clz": ("count-leading-zeros", INT),
    "cos": ("cosine", INEXACT),
    "cosh": ("cosh", INEXACT),
    "erf": ("erf", FLOAT),
    "exp": ("exponential", INEXACT),
    "expm1": ("exponential-minus-one", INEXACT),
    "floor": ("floor", FLOAT),
    "is_finite": ("is-finite", FLOAT),
    "log": ("log", INEXACT),
    "log1p": ("log-plus-one", INEXACT),
    "logistic": ("logistic", INEXACT),
    "neg": ("negate", NUMBER),
    "bitwise_not": ("not", INT_BOOL),
    "population_count": ("popcnt", INT),
    "rsqrt": ("rsqrt", INEXACT),
    "sign": ("sign", NUMBER),
    "sin": ("sine", INEXACT),
    "sinh": ("sinh", INEXACT),
    "sqrt": ("sqrt", INEXACT),
    "tan": ("tan", INEXACT),
    "tanh": ("tanh", INEXACT),
}
BINARY: dict[str, tuple[str, str]] = {
    "sub": ("subtract", NUMBER),
    "div": ("divide", NUMBER),
    "rem": ("remainder", NUMBER),
    "pow": ("power", INEXACT),
    "atan2": ("atan2", INEXACT),
    "bitwise_and": ("and", INT_BOOL),
    "bitwise_or": ("or", INT_BOOL),
    "bitwise_xor": ("xor", INT_BOOL),
    "shift_left": ("shift-left", INT),
    "shift_right_arithmetic": ("shift-right-arithmetic", INT),
    "shift_right_logical": ("shift-right-logical", INT),
}


def _same_binary(name: str, opcode: str):
    """add, mul, max and min: operands of one dtype and shape (Python scalars
    take the array's dtype), as jax.lax's; pred adds as or and multiplies as
    and."""

    def f(x, y):
        a, b = _same(name, x, y)
        return ops.binary(opcode, a, b, op_name=name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} ({opcode}), as jax.lax.{name}."
    return eager(f)


add = _same_binary("add", "add")
_mul = _same_binary("mul", "multiply")


@eager(static=("out_dtype",))
def mul(x, y, *, out_dtype=None):
    """Elementwise x * y, as jax.lax.mul: operands of one dtype and shape;
    with out_dtype, both converted to it first."""
    if out_dtype is not None:
        target = dtypes.canonicalize(np.dtype(out_dtype))
        x, y = (ops.convert(asarray(v), target) for v in (x, y))
    return _mul(x, y)


max = _same_binary("max", "maximum")
min = _same_binary("min", "minimum")


_FLOAT = FLOAT
_INEXACT = INEXACT
_INT = INT
_INT_BOOL = INT_BOOL
_NUMBER = NUMBER
_ANY = ANY
_accepts = accepts


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
                + ", ".join(str(b.dtype) for b in arrays)
                + " (uir.numpy's functions promote their operands' types, as jax.numpy's do)",
            )
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        fail(
            f"lax.{name}",
            f"{name} got incompatible shapes for broadcasting: "
            + ", ".join(str(a.shape) for a in arrays),
        )
    return [asarray(x) if _is_array(x) else asarray(np.asarray(x, dtype)) for x in xs]


# The functions jax.lax lets trade accuracy for speed (`accuracy=`): uir
# keeps its one implementation, which meets any tolerance asked of it.
_WITH_ACCURACY = {
    *("exp", "exp2", "expm1", "log", "log1p", "logistic", "sin", "cos", "tan"),
    *("tanh", "sqrt", "rsqrt", "cbrt"),
}


def _unary(name: str):
    opcode, kinds = UNARY[name]

    def f(x):
        return ops.unary(opcode, _check(name, _same(name, x)[0], kinds), op_name=name)

    def f_accuracy(x, *, accuracy=None):
        return f(x)

    g = f_accuracy if name in _WITH_ACCURACY else f
    g.__name__ = name
    g.__doc__ = f"Elementwise {name} ({opcode}), as jax.lax.{name}." + (
        " `accuracy` is a request uir's one implementation meets." if g is f_accuracy else ""
    )
    return eager(g)


def _binary(name: str):
    opcode, kinds = BINARY[name]

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
_pow = _binary("pow")


@eager
def pow(x, y):
    """Elementwise x ** y, as jax.lax.pow: x a float or complex array, y of
    x's dtype or an integer array (the exponent, exact as a float)."""
    if _is_array(x) and _is_array(y):
        xs, ys = asarray(x), asarray(y)
        if (dtypes.is_float(xs.dtype) or dtypes.is_complex(xs.dtype)) and dtypes.is_int(ys.dtype):
            return _pow(xs, ops.convert(ys, xs.dtype))
    return _pow(x, y)


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
def exp2(x, *, accuracy=None):
    """Elementwise 2**x, as jax.lax.exp2 (`accuracy` as for exp)."""
    (a,) = _same("exp2", x)
    _check("exp2", a, _INEXACT)
    return ops.unary(
        "exponential", ops.binary("multiply", a, asarray(np.array(np.log(2), a.dtype)))
    )


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


def _next_float(x, y):
    """The float after each x toward y (x and y of one float dtype and
    shape): NaN when either is NaN, y when they are equal."""
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
        ops.compare(y, asarray(np.zeros((), x.dtype)), "LT", "lt"), ops.unary("negate", tiny), tiny
    )
    out = ops.select(ops.compare(x, asarray(np.zeros((), x.dtype)), "EQ", "eq"), from_zero, out)
    out = ops.select(ops.compare(x, y, "EQ", "eq"), y, out)
    nan = ops.binary("or", ops.compare(x, x, "NE", "ne"), ops.compare(y, y, "NE", "ne"))
    return ops.select(nan, asarray(np.full((), np.nan, x.dtype)), out)


def _real_part(x):
    """The real part of a complex x; any other x as it is."""
    if not dtypes.is_complex(x.dtype):
        return x
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("real", x, shape=(x.shape, rt), op_name="real")


def _imag_part(x):
    """The imaginary part of a complex x; zeros of x's dtype otherwise."""
    if not dtypes.is_complex(x.dtype):
        return ops.broadcast_to(asarray(np.zeros((), x.dtype)), x.shape)
    rt = np.float32 if x.dtype == np.complex64 else np.float64
    return ops._comp().emit("imag", x, shape=(x.shape, rt), op_name="imag")


def _conjugate(x):
    """The complex conjugate of a complex x; any other x as it is."""
    if not dtypes.is_complex(x.dtype):
        return x
    re, im = _real_part(x), _imag_part(x)
    return ops._comp().emit(
        "complex", re, ops.unary("negate", im), shape=(x.shape, x.dtype), op_name="conj"
    )


@eager
def nextafter(x1, x2):
    """The next float after x1 toward x2, as jax.lax.nextafter."""
    a, b = _same("nextafter", x1, x2)
    return _next_float(_check("nextafter", a, _FLOAT), b)


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
    return _real_part(_check("real", asarray(x), "floating or complex"))


@eager
def imag(x):
    """The imaginary part, as jax.lax.imag."""
    return _imag_part(asarray(x))


@eager
def conj(x):
    """The complex conjugate, as jax.lax.conj."""
    return _conjugate(asarray(x))


@eager
def bitcast_convert_type(operand, new_dtype):
    x = asarray(operand)
    new = np.dtype(new_dtype)
    a, b = x.dtype.itemsize, new.itemsize
    if a == b:
        shape = x.shape
    elif a > b:
        shape = (*x.shape, a // b)
    else:
        if not x.shape or x.shape[-1] != b // a:
            fail(
                "bitcast_convert_type", f"{ops.describe(x)} to {new} needs a last axis of {b // a}"
            )
        shape = x.shape[:-1]
    return ops._comp().emit(
        "bitcast-convert", x, shape=(shape, new), op_name="bitcast_convert_type"
    )


__all__ = [
    "RoundingMethod",
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "complex",
    "conj",
    "cos",
    "cosh",
    "div",
    "eq",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "ge",
    "gt",
    "imag",
    "integer_pow",
    "is_finite",
    "le",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "nextafter",
    "population_count",
    "pow",
    "real",
    "reciprocal",
    "rem",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
]
