"""jax.numpy's elementwise functions (NumPy's ufuncs and their aliases): the
operands promoted as JAX promotes, then the op of lax's elementwise table."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax import control_flow, elementwise
from uir._src.lax.elementwise import _next_float, _real_part
from uir._src.lax.lax import _filled, bitcast_convert_type
from uir._src.numpy.util import no_out as _no_out
from uir._src.numpy.util import public_asarray

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
    (uir._src.lax.elementwise) is `row`: JAX's type promotion (to an inexact
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
def nextafter(x, y, /):
    """The next float after x toward y, elementwise (NaN when either is
    NaN; y when they are equal)."""
    x, y = ops.promote("nextafter", x, y)
    if not dtypes.is_float(x.dtype):
        x, y = ops.convert(x, dtypes.default_float()), ops.convert(y, dtypes.default_float())
    return _next_float(*ops.broadcast_all("nextafter", x, y))


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
def round(a, decimals: int = 0, out=None):
    _no_out("round", out)
    x = asarray(a)
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
multiply = _binary("multiply", "mul")


@eager
def subtract(x, y):
    """Elementwise x - y with broadcasting and JAX's type promotion; two
    booleans are refused, as JAX refuses them (use logical_xor)."""
    a, b = ops.promote("sub", x, y)
    if dtypes.is_bool(a.dtype):
        fail(
            "sub",
            "sub does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
            "complexfloating (use logical_xor for booleans)",
        )
    return ops.binary("subtract", a, b, op_name="sub")


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

    def f(x1, x2, /):
        a, b = _like_lax(row, name, x1, x2)
        return ops.binary(row[0], a, b, op_name=op_name)

    f.__name__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting and JAX's type promotion."
    return eager(f)


arctan2 = _binary_like_lax("atan2", "arctan2", "atan2")
bitwise_and = _binary_like_lax("bitwise_and", "bitwise_and", "and")
bitwise_or = _binary_like_lax("bitwise_or", "bitwise_or", "or")
bitwise_xor = _binary_like_lax("bitwise_xor", "bitwise_xor", "xor")
_left_shift = _binary_like_lax("shift_left", "left_shift", "shift_left")


@eager
def left_shift(x, y, /):
    """x shifted left by y bits, elementwise, with JAX's type promotion."""
    return _left_shift(x, y)


@eager
def right_shift(x1, x2, /):
    x, y = x1, x2
    x, y = ops.promote("right_shift", x, y)
    opcode = "shift-right-logical" if x.dtype.kind == "u" else "shift-right-arithmetic"
    return ops.binary(opcode, x, y, op_name="shift_right")


@eager
def divide(x1, x2, /):
    """True division: integers are divided as floats, as in jax.numpy."""
    x, y = x1, x2
    x, y = ops.promote("div", x, y)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        x = ops.convert(x, dtypes.default_float(), x.weak_type)
        y = ops.convert(y, dtypes.default_float(), y.weak_type)
    return ops.binary("divide", x, y, op_name="div")


true_divide = divide


def _bools_as_ints(x, y):
    """Operands both bool, as JAX's arithmetic takes them: the default int."""
    if dtypes.is_bool(x.dtype):
        return ops.convert(x, dtypes.default_int()), ops.convert(y, dtypes.default_int())
    return x, y


@eager
def floor_divide(x1, x2, /):
    x, y = x1, x2
    x, y = _bools_as_ints(*ops.promote("floor_divide", x, y))
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
def remainder(x1, x2, /):
    """Python's modulo: the result has the sign of the divisor."""
    x, y = x1, x2
    x, y = _bools_as_ints(*ops.promote("rem", x, y))
    _no_complex(x, "rem", "integer or floating")
    r = ops.binary("remainder", x, y, op_name="rem")
    if x.dtype.kind == "u" or dtypes.is_bool(x.dtype):
        return r
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return where(fix, add(r, y), r)


mod = remainder


@eager
def fmod(x1, x2, /):
    x, y = x1, x2
    x, y = ops.promote("fmod", x, y)
    _no_complex(x, "fmod", "integer or floating")
    return ops.binary("remainder", x, y, op_name="fmod")


@eager
def power(x1, x2, /):
    x, y = x1, x2
    x, y = _bools_as_ints(*ops.promote("pow", x, y))
    if dtypes.is_int(x.dtype):
        # Integer powers: repeated squaring would need the exponent's value;
        # compute in float64-free fashion via HLO power on integers.
        return ops.binary("power", x, y, op_name="pow")
    return ops.binary("power", x, y, op_name="pow")


def _compare(direction: str, name: str):
    def f(x, y):
        if direction in ("LT", "LE", "GT", "GE"):
            a, b = ops.promote(name, x, y)
            if dtypes.is_complex(a.dtype):
                return _complex_order(a, b, direction, name)
        return ops.compare(x, y, direction, name)

    f.__name__ = name
    return eager(f)


def _complex_order(a, b, direction: str, name: str):
    """NumPy's (and jax.numpy's) order of complex numbers: by real part,
    then by imaginary part."""
    ar, ai, br, bi = _real_part(a), elementwise.imag(a), _real_part(b), elementwise.imag(b)
    strict = "LT" if direction in ("LT", "LE") else "GT"
    first = ops.compare(ar, br, strict, name)
    tie = ops.binary("and", ops.compare(ar, br, "EQ", name), ops.compare(ai, bi, direction, name))
    return ops.binary("or", first, tie)


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
        return _filled(x.shape, False, np.bool_)
    return not_equal(x, x)


@eager
def isfinite(x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return _filled(x.shape, True, np.bool_)
    return ops.is_finite(x)


@eager
def isinf(x):
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        return _filled(x.shape, False, np.bool_)
    return equal(abs(x), np.inf)


@eager
def where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(
            "uir.numpy.where needs x and y (the one-argument form has a data-dependent shape)"
        )
    return ops.select(_as_bool(condition), x, y, op_name="select_n")


@eager
def clip(arr=None, /, min=None, max=None):
    """arr with values below min raised to it and above max lowered to it
    (jax.numpy.clip)."""
    if arr is None:
        fail("clip", "needs an array")
    a_min, a_max = min, max
    out = asarray(arr)
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


# --- Complex -------------------------------------------------------------------


@eager
def real(val, /):
    return _real_part(asarray(val))


# jax.numpy's imag and conj are lax's (every dtype; zeros and x itself
# for real x).
conj = elementwise.conj


@eager
def imag(val, /):
    return elementwise.imag(val)


conjugate = conj

# --- aliases (NumPy 2 / array-API spellings) -----------------------------------------


def _alias(name: str, target):
    def f(*args, **kwargs):
        return target(*args, **kwargs)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: the same as uir.numpy.{target.__name__}."
    return f


acos = _alias("acos", arccos)
acosh = _alias("acosh", arccosh)
asin = _alias("asin", arcsin)
asinh = _alias("asinh", arcsinh)
atan = _alias("atan", arctan)
atanh = _alias("atanh", arctanh)
atan2 = _alias("atan2", arctan2)
bitwise_invert = _alias("bitwise_invert", invert)
bitwise_left_shift = _alias("bitwise_left_shift", left_shift)
bitwise_right_shift = _alias("bitwise_right_shift", right_shift)
pow = _alias("pow", power)


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
    return abs(x if dtypes.is_float(x.dtype) else x.astype(dtypes.default_float()))


@eager
def deg2rad(x):
    """Degrees to radians."""
    return multiply(_floats(x), np.pi / 180)


radians = deg2rad


@eager
def rad2deg(x):
    """Radians to degrees."""
    return multiply(_floats(x), 180 / np.pi)


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
        return less(x, 0) if x.dtype.kind == "i" else _filled(x.shape, False, np.bool_)
    if x.dtype == np.bool_:
        return _filled(x.shape, False, np.bool_)

    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    return less(bitcast_convert_type(x, signed), 0)


@eager
def copysign(x1, x2):
    """|x1| with the sign of x2."""
    x1, x2 = ops.promote("copysign", _floats(x1), _floats(x2))
    return where(signbit(x2), negative(abs(x1)), abs(x1))


@eager
def fmax(x1, x2):
    """The larger, ignoring NaNs (NaN only when both are)."""
    x1, x2 = ops.promote("fmax", x1, x2)
    return where(
        isnan(x2),
        x1,
        where(isnan(x1), x2, maximum(x1, x2)),
    )


@eager
def fmin(x1, x2):
    """The smaller, ignoring NaNs (NaN only when both are)."""
    x1, x2 = ops.promote("fmin", x1, x2)
    return where(
        isnan(x2),
        x1,
        where(isnan(x1), x2, minimum(x1, x2)),
    )


@eager
def hypot(x1, x2):
    """sqrt(x1^2 + x2^2) without overflow in the squares."""
    _no_complex(x1, "hypot", "real")
    _no_complex(x2, "hypot", "real")
    x1, x2 = (_floats(v) for v in ops.promote("hypot", x1, x2))  # (promoted first, as JAX)
    a, b = abs(x1), abs(x2)
    big, small = maximum(a, b), minimum(a, b)
    safe = where(big == 0, 1, big)
    ratio = small / safe
    out = big * sqrt(1 + ratio * ratio)
    return where(isinf(a) | isinf(b), np.inf, where(big == 0, 0, out))


@eager
def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)), stably."""
    x1, x2 = (_floats(v) for v in ops.promote("logaddexp", x1, x2))  # (promoted first, as JAX)
    m = maximum(x1, x2)
    d = where(x1 == x2, 0, -abs(x1 - x2))
    return where(isnan(d), x1 + x2, m + log1p(exp(d)))


@eager
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2), stably."""
    x1, x2 = (_floats(v) for v in ops.promote("logaddexp2", x1, x2))  # (promoted first, as JAX)
    m = maximum(x1, x2)
    d = where(x1 == x2, 0, -abs(x1 - x2))
    return where(isnan(d), x1 + x2, m + log1p(exp2(d)) / np.log(2))


@eager
def float_power(x, y, /):
    """x ** y in the widest float type."""
    f = dtypes.canonicalize(np.float64)
    return power(asarray(x).astype(f), asarray(y).astype(f))


@eager
def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1, x2 = ops.promote("heaviside", _floats(x1), x2)
    return where(x1 < 0, 0, where(x1 > 0, 1, x2)).astype(x1.dtype)


@eager
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _floats(x)
    safe = where(x == 0, 1, x)
    return where(x == 0, 1, sin(np.pi * safe) / (np.pi * safe)).astype(x.dtype)


@eager
def ldexp(x1, x2):
    """x1 * 2**x2."""
    x1 = _floats(x1)
    return multiply(x1, exp2(asarray(x2).astype(x1.dtype)))


@eager
def modf(x, /, out=None):
    """(fractional part, integral part), each with x's sign."""
    _no_out("modf", out)
    x = _floats(x)
    whole = trunc(x)
    return x - whole, whole


@eager
def divmod(x1, x2):
    """(floor_divide, remainder)."""
    return floor_divide(x1, x2), remainder(x1, x2)


@eager
def isneginf(x, /, out=None):
    """x == -inf."""
    _no_out("isneginf", out)
    return equal(asarray(x), -np.inf)


@eager
def isposinf(x, /, out=None):
    """x == +inf."""
    _no_out("isposinf", out)
    return equal(asarray(x), np.inf)


@eager
def isreal(x):
    """Whether each element has no imaginary part."""
    x = asarray(x)
    return equal(imag(x), 0) if dtypes.is_complex(x.dtype) else _filled(x.shape, True, np.bool_)


@eager
def iscomplex(x):
    """Whether each element has an imaginary part."""
    return logical_not(isreal(x))


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
    out = arctan2(imag(z).astype(_real_of(z.dtype)), real(z).astype(_real_of(z.dtype)))
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
        return equal(a, b)
    close = less_equal(abs(a - b), atol + rtol * abs(b))
    finite = isfinite(a) & isfinite(b)
    out = where(finite, close, equal(a, b))
    if equal_nan:
        out = out | (isnan(a) & isnan(b))
    return out


@eager
def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """NaN to `nan`, infinities to the largest finite values (or posinf/neginf)."""
    x = asarray(x)
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        return x
    if dtypes.is_complex(x.dtype):
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return re + 1j * im
    info = dtypes.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(isposinf(x), hi, out)
    return where(isneginf(x), lo, out).astype(x.dtype)


@eager
def bitwise_count(x):
    """The number of set bits of |x| (integers)."""
    x = asarray(x)
    if not dtypes.is_int(x.dtype):
        fail("bitwise_count", f"takes integers, got {x.dtype}")
    magnitude = abs(x) if x.dtype.kind == "i" else x
    return ops.convert(ops.unary("popcnt", magnitude), np.dtype(np.uint8))


@eager
def frexp(x):
    """(mantissa in [0.5, 1), exponent) with x = mantissa * 2**exponent."""
    x = _floats(x)
    finite_nonzero = isfinite(x) & (x != 0)
    safe = where(finite_nonzero, abs(x), 1)
    e = floor(log2(safe)) + 1
    m = abs(x) / exp2(e)
    # log2 may land a hair off at powers of two: correct by one step.
    e = where(m >= 1, e + 1, where(m < 0.5, e - 1, e))
    m = abs(x) / exp2(e)
    m = where(finite_nonzero, where(x < 0, -m, m), x)
    return m, where(finite_nonzero, e, 0).astype(np.int32)


@eager
def gcd(x1, x2):
    """The greatest common divisor, elementwise (Euclid's loop, 64 rounds at most)."""

    a, b = ops.promote("gcd", x1, x2)
    if not dtypes.is_int(a.dtype):
        fail("gcd", f"takes integers, got {a.dtype}")
    a, b = ops.broadcast_all("gcd", abs(a), abs(b))

    def body(_, ab):
        x, y = ab
        safe = where(y == 0, 1, y)
        return where(y == 0, x, y), where(y == 0, 0, remainder(x, safe))

    return control_flow.fori_loop(0, 8 * a.dtype.itemsize * 2, body, (a, b))[0]


@eager
def lcm(x1, x2):
    """The least common multiple, elementwise."""
    a, b = ops.promote("lcm", x1, x2)
    g = gcd(a, b)
    return where(g == 0, 0, abs(a // where(g == 0, 1, g) * b))


# --- more ----------------------------------------------------------------------------


@eager
def spacing(x):
    """The distance from |x| to the next larger float, with x's sign."""
    x = _floats(x)
    ax = abs(x)
    step = nextafter(ax, public_asarray(np.inf).astype(x.dtype)) - ax
    return where(x < 0, -step, step)


@eager
def i0(x):
    """The modified Bessel function of the first kind, order 0 (its power
    series, summed until the terms vanish: 60 terms reach double precision
    for |x| up to about 30)."""
    x = _floats(x)
    half_sq = (x / 2) ** 2
    term = _filled(x.shape, 1, x.dtype)
    total = _filled(x.shape, 1, x.dtype)
    for k in range(1, 60):
        term = term * half_sq / (k * k)
        total = total + term
    return total


__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_count",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "divide",
    "divmod",
    "equal",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "float_power",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "gcd",
    "greater",
    "greater_equal",
    "heaviside",
    "hypot",
    "i0",
    "imag",
    "invert",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "lcm",
    "ldexp",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "modf",
    "multiply",
    "nan_to_num",
    "negative",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "power",
    "rad2deg",
    "radians",
    "real",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "rsqrt",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "spacing",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "where",
]
