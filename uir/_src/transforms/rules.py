"""Derivative rules per HLO opcode, in one table each for forward mode
(JVP) and reverse mode (VJP), written against the tracer: every rule emits
traced HLO, whose opcodes have rules of their own, so transformations
compose.

A tangent or cotangent of None is a zero nobody has materialised; values
of integer, boolean or token type have none. Tuple-shaped values carry
tuples of tangents."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, errors, ops
from uir._src.core.tracing import Tracer
from uir._src.transforms.replay import Opaque, emit_like, op_name_of

# --- Small emitters ------------------------------------------------------------


def differentiable(x) -> bool:
    return isinstance(x, Tracer) and (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype))


def scalar(x: Tracer, v) -> Tracer:
    return ops.broadcast_to(ops.asarray(np.array(v, dtype=x.dtype)), x.shape)


def zeros_like(x):
    if isinstance(x, tuple):
        return tuple(zeros_like(v) for v in x)
    if isinstance(x, Opaque):
        return x
    return scalar(x, 0)


def instantiate(t, like):
    """Tangent `t`, a materialised zero where it is None."""
    if isinstance(like, tuple):
        t = t if t is not None else (None,) * len(like)
        return tuple(instantiate(a, b) for a, b in zip(t, like, strict=True))
    if t is None:
        return zeros_like(like)
    return t


def add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(add(x, y) for x, y in zip(a, b, strict=True))
    return ops.binary("add", a, b, op_name="add_any")


def mul(a, b):
    return ops.binary("multiply", a, b)


def sub(a, b):
    return ops.binary("subtract", a, b)


def div(a, b):
    return ops.binary("divide", a, b)


def neg(a):
    return ops.unary("negate", a)


def unary(opcode: str, a):
    return ops.unary(opcode, a)


def select(p, a, b):
    return ops.select(p, a, b, op_name="select")


def compare(a, b, direction: str):
    return ops.compare(a, b, direction, "compare")


def convert(x, dtype):
    return ops.convert(x, dtype)


def reduce_sum(x, axes):
    return ops.reduce(x, "add", list(axes), "reduce_sum") if axes else x


def broadcast_in_dim(x, shape, dims):
    shape = tuple(shape)
    if tuple(x.shape) == shape and list(dims) == list(range(len(shape))):
        return x
    return ops._comp().emit(
        "broadcast", x, dimensions=list(dims), shape=(shape, x.dtype), op_name="broadcast_in_dim"
    )


def transpose(x, perm):
    return ops.transpose(x, perm)


def reshape(x, shape):
    return ops.reshape(x, shape)


def inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def unsupported(inst, mode: str):
    md = inst.attributes.get("metadata") or {}
    where = ""
    if md.get("source_file"):
        where = f" (traced at {md['source_file']}:{md.get('source_line', '?')})"
    raise errors.TraceError(
        f"{mode}: no rule for HLO op '{inst.opcode}' ({op_name_of(inst)}, %{inst.name}){where}"
    )


# --- Elementwise derivatives -----------------------------------------------------
# d(x, out): the derivative of a unary op at x, given its result.


def _d_sqrt(x, y):
    return div(scalar(y, 0.5), y)


def _d_rsqrt(x, y):
    return div(mul(scalar(y, -0.5), y), x)


def _d_cbrt(x, y):
    return div(y, mul(scalar(x, 3), x))


def _d_erf(x, y):
    return mul(scalar(x, 2 / np.sqrt(np.pi)), unary("exponential", neg(mul(x, x))))


def _d_abs(x, y):
    return unary("sign", x)


def complex_abs_factor(z, r):
    """conj(z) / |z| (0 where z is 0): |z|' = real(z' conj(z) / |z|), and
    the cotangent of z is ct times it (real's transpose, then multiply's)."""
    zero = scalar(r, 0)
    at_zero = compare(r, zero, "EQ")
    safe = select(at_zero, scalar(r, 1), r)
    conj = ops._comp().emit(
        "complex",
        unary("real", z),
        unary("negate", unary("imag", z)),
        shape=(z.shape, z.dtype),
        op_name="conj",
    )
    factor = div(conj, convert(safe, z.dtype))
    return select(at_zero, scalar(factor, 0), factor)


UNARY_DERIVATIVES = {
    "exponential": lambda x, y: y,
    "exponential-minus-one": lambda x, y: add(y, scalar(y, 1)),
    "log": lambda x, y: div(scalar(x, 1), x),
    "log-plus-one": lambda x, y: div(scalar(x, 1), add(x, scalar(x, 1))),
    "tanh": lambda x, y: sub(scalar(y, 1), mul(y, y)),
    "logistic": lambda x, y: mul(y, sub(scalar(y, 1), y)),
    "sqrt": _d_sqrt,
    "rsqrt": _d_rsqrt,
    "cbrt": _d_cbrt,
    "sine": lambda x, y: unary("cosine", x),
    "cosine": lambda x, y: neg(unary("sine", x)),
    "tan": lambda x, y: add(scalar(y, 1), mul(y, y)),
    "erf": _d_erf,
    "abs": _d_abs,
}

# Unary ops whose tangent is the op applied to the tangent.
LINEAR_UNARY = {"negate", "copy", "real", "imag", "reduce-precision"}

# Ops whose result carries no derivative (integer or piecewise-constant).
ZERO_DERIVATIVE = {
    "sign",
    "floor",
    "ceil",
    "round-nearest-afz",
    "round-nearest-even",
    "is-finite",
    "compare",
    "not",
    "and",
    "or",
    "xor",
    "popcnt",
    "count-leading-zeros",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "iota",
    "constant",
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
    "bitcast-convert",
    "after-all",
    "partition-id",
    "replica-id",
    "stochastic-convert",
}


def _max_masks(x, y, greater: bool):
    """(share of x, share of y) in max (min when not greater): 1 where the
    operand wins, 1/2 each at a tie, as JAX splits it."""
    win = compare(x, y, "GT" if greater else "LT")
    tie = compare(x, y, "EQ")
    one, half, zero = scalar(x, 1), scalar(x, 0.5), scalar(x, 0)
    mx = select(win, one, select(tie, half, zero))
    return mx, sub(one, mx)


def constant_value(t):
    """The scalar value of a Tracer that is a constant or a broadcast of a
    scalar constant, else None."""
    if not isinstance(t, Tracer):
        return None
    inst = t.inst
    while inst.opcode in ("broadcast", "reshape", "copy") and inst.operands:
        inst = inst.operands[0]
    if inst.opcode != "constant":
        return None
    lit = np.asarray(inst.attributes.get("literal"))
    if lit.size != 1 or lit.dtype.kind not in "fiu":
        return None
    return lit.reshape(()).item()


def integer_power(x, n: int):
    """x ** n by repeated squaring (1 / x ** -n for negative n)."""
    if n < 0:
        return div(scalar(x, 1), integer_power(x, -n))
    if n == 0:
        return scalar(x, 1)
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return result


def binary_partials(inst, x, y, out):
    """(d out/d x, d out/d y) of a binary elementwise op, or None for a
    partial that is zero; for add/subtract the signs as scalars."""
    op = inst.opcode
    if op == "multiply":
        return y, x
    if op == "divide":
        return div(scalar(x, 1), y), neg(div(out, y))
    if op in ("maximum", "minimum"):
        return _max_masks(x, y, op == "maximum")
    if op == "power":
        c = constant_value(y)
        if c is not None and float(c).is_integer() and abs(c) <= 64:
            # x ** n for a constant integer n (x * x, say): n * x ** (n-1),
            # as products; the exponent has no derivative worth emitting.
            return mul(scalar(x, c), integer_power(x, int(c) - 1)), scalar(y, 0)
        zero = scalar(y, 0)
        dx = select(
            compare(y, zero, "EQ"), zero, mul(y, ops.binary("power", x, sub(y, scalar(y, 1))))
        )
        safe_x = select(compare(x, scalar(x, 0), "EQ"), scalar(x, 1), x)
        return dx, mul(unary("log", safe_x), out)
    if op == "atan2":
        r = add(mul(x, x), mul(y, y))
        return div(y, r), neg(div(x, r))
    if op == "remainder":
        q = div(x, y)
        trunc = select(compare(q, scalar(q, 0), "GE"), unary("floor", q), unary("ceil", q))
        return scalar(x, 1), neg(trunc)
    return None


# --- Forward mode ------------------------------------------------------------------


def _linear(inst, primals, tangents, positions):
    """The op applied to the tangents at `positions` (zeros instantiated) and
    the primals elsewhere: the tangent of an op linear in those operands."""
    if all(tangents[i] is None for i in positions):
        return None
    args = [
        instantiate(tangents[i], primals[i]) if i in positions else primals[i]
        for i in range(len(primals))
    ]
    return emit_like(inst, args, prefix="jvp/")


def stops_gradient(inst) -> bool:
    """A copy uir.lax.stop_gradient made."""
    return inst.opcode == "copy" and op_name_of(inst) == "stop_gradient"


def jvp_rule(inst, primals, tangents):
    """(primal out, tangent out) of `inst`."""
    op = inst.opcode
    out = emit_like(inst, primals)
    if all(t is None for t in tangents) or op in ZERO_DERIVATIVE or stops_gradient(inst):
        return out, None
    if op in ("copy-start", "copy-done"):
        # an asynchronous copy: the tangent is copied beside the value
        return out, emit_like(inst, [tangents[0]], prefix="jvp/")
    if not (differentiable(out) or isinstance(out, tuple)):
        return out, None
    n = len(primals)
    if op == "abs" and dtypes.is_complex(primals[0].dtype):
        return out, unary("real", mul(tangents[0], complex_abs_factor(primals[0], out)))
    if op in UNARY_DERIVATIVES:
        return out, mul(tangents[0], UNARY_DERIVATIVES[op](primals[0], out))
    if op in LINEAR_UNARY:
        return out, emit_like(inst, [tangents[0]], prefix="jvp/")
    if op == "convert":
        if not differentiable(primals[0]):
            return out, None
        return out, convert(tangents[0], out.dtype)
    if op in ("add", "subtract"):
        tx, ty = tangents
        if op == "subtract" and ty is not None:
            ty = neg(ty)
        return out, add(tx, ty)
    if op == "complex":
        return out, _linear(inst, primals, tangents, range(2))
    if op in ("multiply", "divide", "maximum", "minimum", "power", "atan2", "remainder"):
        dx, dy = binary_partials(inst, primals[0], primals[1], out)
        t = None
        if tangents[0] is not None:
            t = mul(tangents[0], dx)
        if tangents[1] is not None:
            t = add(t, mul(tangents[1], dy))
        return out, t
    if op == "select":
        return out, _linear(inst, primals, tangents, (1, 2))
    if op == "clamp":
        lo, x, hi = primals
        t = None
        inside = ops.binary("and", compare(x, lo, "GE"), compare(x, hi, "LE"))
        if tangents[1] is not None:
            t = select(inside, tangents[1], scalar(out, 0))
        if tangents[0] is not None:
            t = add(t, select(compare(x, lo, "LT"), tangents[0], scalar(out, 0)))
        if tangents[2] is not None:
            t = add(t, select(compare(x, hi, "GT"), tangents[2], scalar(out, 0)))
        return out, t
    if op in ("broadcast", "reshape", "transpose", "slice", "reverse", "copy", "bitcast"):
        return out, _linear(inst, primals, tangents, (0,))
    if op in ("pad", "concatenate"):
        return out, _linear(inst, primals, tangents, range(n))
    if op in ("dynamic-slice", "gather"):
        return out, _linear(inst, primals, tangents, (0,))
    if op == "dynamic-update-slice":
        return out, _linear(inst, primals, tangents, (0, 1))
    if op in ("dot", "convolution"):
        t = None
        if tangents[0] is not None:
            t = emit_like(inst, [tangents[0], primals[1]], prefix="jvp/")
        if tangents[1] is not None:
            t = add(t, emit_like(inst, [primals[0], tangents[1]], prefix="jvp/"))
        return out, t
    if op == "reduce":
        return out, _jvp_reduce(inst, primals, tangents, out)
    if op == "opt-barrier":
        return out, tangents[0]
    return unsupported(inst, "jvp")


def reducer_kind(inst) -> str | None:
    """'add', 'maximum', 'minimum' or 'multiply' for a reduce whose
    computation is that one binary op of its two parameters."""
    comp = inst.attributes.get("to_apply")
    return None if comp is None else computation_kind(comp)


def computation_kind(comp) -> str | None:
    """reducer_kind of a computation."""
    root = comp.root
    params = comp.parameters
    if len(params) != 2 or root.opcode not in ("add", "maximum", "minimum", "multiply"):
        return None
    if set(o.name for o in root.operands) != {p.name for p in params}:
        return None
    return root.opcode


def _reduce_axes(inst):
    return list(inst.attributes["dimensions"])


def _kept_dims(ndim, axes):
    return [d for d in range(ndim) if d not in axes]


def is_arg_reduce(inst, primals) -> bool:
    """Whether a variadic reduce is one arg_reduce_mask handles."""
    if len(primals) != 4 or len(inst.attributes["dimensions"]) != 1:
        return False
    src = inst.operands[1]
    axis = inst.attributes["dimensions"][0]
    if src.opcode != "iota" or src.attributes.get("iota_dimension") != axis:
        return False
    return differentiable(primals[0]) and not differentiable(primals[1])


def arg_reduce_mask(inst, primals, out):
    """For a reduce of (x, iota along the one reduced axis) that picks an
    element and its index (argmax, argmin): 1 where x's element was picked,
    0 elsewhere, in x's type. None for any other variadic reduce."""
    if not is_arg_reduce(inst, primals):
        return None
    x, idx = primals[0], primals[1]
    axis = inst.attributes["dimensions"][0]
    kept = _kept_dims(x.ndim, [axis])
    picked = broadcast_in_dim(out[1], x.shape, kept)
    return convert(compare(idx, picked, "EQ"), x.dtype)


def _jvp_variadic_reduce(inst, primals, tangents, out):
    if all(t is None for t in tangents[: len(primals) // 2]):
        return None
    mask = arg_reduce_mask(inst, primals, out)
    if mask is None:
        return unsupported(inst, "jvp")
    axis = inst.attributes["dimensions"][0]
    return (reduce_sum(mul(instantiate(tangents[0], primals[0]), mask), [axis]), None)


def _jvp_reduce(inst, primals, tangents, out):
    if len(primals) > 2:
        return _jvp_variadic_reduce(inst, primals, tangents, out)
    kind = reducer_kind(inst)
    if len(primals) != 2 or kind is None:
        return unsupported(inst, "jvp")
    x, _init = primals
    axes = _reduce_axes(inst)
    if kind == "add":
        t = reduce_sum(instantiate(tangents[0], x), axes)
        return add(t, tangents[1])
    if kind in ("maximum", "minimum"):
        if tangents[0] is None:
            return None
        loc, counts = _chooser(x, out, axes)
        return div(reduce_sum(mul(tangents[0], loc), axes), counts)
    # multiply: d prod = sum(t_i * prod / x_i), for nonzero x.
    tx = instantiate(tangents[0], x)
    full = broadcast_in_dim(out, x.shape, _kept_dims(x.ndim, axes))
    return reduce_sum(mul(tx, div(full, x)), axes)


def _chooser(x, out, axes):
    """Where x equals its reduced max (min), as 0/1 in x's type, and how many
    per result (ties share the derivative equally, as in JAX)."""
    full = broadcast_in_dim(out, x.shape, _kept_dims(x.ndim, axes))
    loc = convert(compare(x, full, "EQ"), x.dtype)
    return loc, reduce_sum(loc, axes)
