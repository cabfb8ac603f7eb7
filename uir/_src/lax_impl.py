"""uir.lax's elementwise, conversion, broadcast, dot, reduce and custom-call
operations; control flow, slicing and windowed ops live in lax_control,
lax_slicing and lax_window."""

from __future__ import annotations

import numpy as np

from uir._src import dtypes, ops, tracing
from uir._src.eager import eager
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer


@eager
def select(pred, on_true, on_false):
    return ops.select(pred, on_true, on_false, op_name="select_n")


@eager
def convert_element_type(operand, new_dtype):
    return ops.convert(asarray(operand), dtypes.canonicalize(new_dtype))


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


@eager
def broadcast_in_dim(operand, shape, broadcast_dimensions):
    x = asarray(operand)
    out = ops._comp().builder.broadcast(x.inst, list(shape), list(broadcast_dimensions))
    return Tracer(x.comp, out, tuple(shape), x.dtype, x.weak_type)


def iota(dtype, size: int, dimension: int = 0):
    return (
        ops.iota(dtypes.canonicalize(dtype), (size,), 0)
        if isinstance(size, int)
        else ops.iota(dtypes.canonicalize(dtype), size, dimension)
    )


@eager
def dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out = ops.dot(
        asarray(lhs), asarray(rhs), (list(lc), list(rc)), (list(lb), list(rb)), "dot_general"
    )
    if preferred_element_type is not None:
        out = ops.convert(out, dtypes.canonicalize(preferred_element_type))
    return out


def reduce(operands, init_values, computation, dimensions):
    """XLA's reduce: computation(acc, x) folds operands over `dimensions`."""
    single = not isinstance(operands, (tuple, list))
    xs = [asarray(o) for o in ([operands] if single else operands)]
    inits = [
        ops.convert(asarray(v), x.dtype)
        for v, x in zip([init_values] if single else init_values, xs, strict=True)
    ]
    n = len(xs)
    reducer = ops.scalar_computation(
        "reducer",
        [x.dtype for x in xs] * 2,
        lambda *a: computation(a[0], a[1]) if single else computation(tuple(a[:n]), tuple(a[n:])),
        arity=2 * n,
    )
    dims = sorted(ops.normalize_axes(list(dimensions), xs[0].ndim, "reduce"))
    shape = tuple(s for i, s in enumerate(xs[0].shape) if i not in dims)
    result_shape = (shape, xs[0].dtype) if single else [(shape, x.dtype) for x in xs]
    out = ops._comp().emit(
        "reduce",
        *xs,
        *inits,
        dimensions=dims,
        to_apply=reducer,
        shape=result_shape,
        op_name="reduce",
    )
    return out


_API_VERSIONS = {
    1: "API_VERSION_ORIGINAL",
    2: "API_VERSION_STATUS_RETURNING",
    3: "API_VERSION_STATUS_RETURNING_UNIFIED",
    4: "API_VERSION_TYPED_FFI",
}


def custom_call(
    target: str,
    operands,
    result_shape_dtypes,
    opaque: bytes = b"",
    has_side_effect: bool = False,
    api_version: int | None = None,
):
    """Emits custom-call `target` on operands; result_shape_dtypes is an
    object with .shape and .dtype (or a tuple of them). The target is looked
    up in uir.custom_call's registry when the program runs. api_version
    (1 original, 2 status-returning, 3 status-returning unified, 4 typed
    FFI, as XLA's CustomCallApiVersion) goes on the instruction; it decides
    how a target registered with XLA's macros is called."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"custom_call: api_version must be 1, 2, 3 or 4, got {api_version!r}")
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(
            lambda *o: custom_call(
                target, o, result_shape_dtypes, opaque, has_side_effect, api_version
            )
        )(*operands)
    xs = [asarray(o) for o in operands]
    if isinstance(result_shape_dtypes, (tuple, list)):
        shape = [(r.shape, dtypes.canonicalize(r.dtype)) for r in result_shape_dtypes]
    else:
        shape = (result_shape_dtypes.shape, dtypes.canonicalize(result_shape_dtypes.dtype))
    attrs = {"custom_call_target": target}
    if opaque:
        attrs["backend_config"] = opaque.decode() if isinstance(opaque, bytes) else str(opaque)
    if has_side_effect:
        attrs["custom_call_has_side_effect"] = True
    if api_version is not None:
        attrs["api_version"] = _API_VERSIONS[api_version]
    return ops._comp().emit("custom-call", *xs, shape=shape, op_name="custom_call", **attrs)


class ShapeDtypeStruct:
    """The shape and dtype of a value, as jax.ShapeDtypeStruct."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


def add(x, y):
    return ops.binary("add", x, y)


def mul(x, y):
    return ops.binary("multiply", x, y)


def max(x, y):
    return ops.binary("maximum", x, y)


def min(x, y):
    return ops.binary("minimum", x, y)


# Giles' single-precision erf^-1 ("Approximating the erfinv function", GPU
# Computing Gems, 2011), in the form XLA computes it: w = -log1p(-x^2), one
# polynomial in w - 2.5 below 5 and one in sqrt(w) - 3 above; +-1 go to
# +-inf.
_ERF_INV_SMALL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERF_INV_LARGE = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _erf_inv_f32(x):
    f = np.float32
    w = ops.unary(
        "negate", ops.unary("log-plus-one", ops.binary("multiply", x, ops.unary("negate", x)))
    )
    small = ops.compare(w, asarray(f(5)), "LT", "lt")
    w = ops.select(
        small,
        ops.binary("add", w, asarray(f(-2.5))),
        ops.binary("add", ops.unary("sqrt", w), asarray(f(-3))),
    )

    def coefficient(i):
        return ops.select(
            small,
            ops.broadcast_to(asarray(f(_ERF_INV_SMALL[i])), x.shape),
            ops.broadcast_to(asarray(f(_ERF_INV_LARGE[i])), x.shape),
        )

    p = coefficient(0)
    for i in range(1, len(_ERF_INV_SMALL)):
        p = ops.binary("add", coefficient(i), ops.binary("multiply", p, w))
    result = ops.binary("multiply", p, x)
    edge = ops.compare(ops.unary("abs", x), asarray(f(1)), "EQ", "eq")
    return ops.select(edge, ops.binary("multiply", x, asarray(f(np.inf))), result)


@eager
def erf_inv(x):
    """The inverse of erf, elementwise: as XLA computes it for f32 (narrower
    floats in f32); f64 refines that estimate with two Newton steps on
    erf(y) = x (accurate to about an ulp, not XLA's f64 polynomial bits)."""
    x = asarray(x)
    if not dtypes.is_float(x.dtype):
        x = ops.convert(x, dtypes.default_float())
    if x.dtype == np.float32:
        return _erf_inv_f32(x)
    if x.dtype != np.float64:
        return ops.convert(_erf_inv_f32(ops.convert(x, np.float32)), x.dtype)
    y = ops.convert(_erf_inv_f32(ops.convert(x, np.float32)), np.float64)
    two_over_sqrt_pi = asarray(np.float64(2 / np.sqrt(np.pi)))
    for _ in range(2):
        slope = ops.binary(
            "multiply",
            two_over_sqrt_pi,
            ops.unary("exponential", ops.unary("negate", ops.binary("multiply", y, y))),
        )
        step = ops.binary("divide", ops.binary("subtract", ops.unary("erf", y), x), slope)
        finite = ops.is_finite(y)
        y = ops.select(finite, ops.binary("subtract", y, step), y)
    return y
