"""jax.lax's structural operations (shapes, reductions, sorting, products, tokens,
FFT) and the types of lax's parameters, with lax's rules: no type promotion,
no implicit broadcasting, each op's dtypes checked at trace time."""

from __future__ import annotations

import builtins
import enum
import math
import operator

import numpy as np

from uir._src.core import dtypes, ops, tracing
from uir._src.core.api import ShapeDtypeStruct
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.core.tracing import Tracer
from uir._src.lax.elementwise import (
    _ANY,
    _FLOAT,
    _INT,
    _INT_BOOL,
    _NUMBER,
    _check,
    _imag_part,
    _is_array,
    _real_part,
    _same,
    bitcast_convert_type,
)
from uir._src.lax.slicing import GatherScatterMode, index_in_dim, slice_in_dim


@eager
def select(pred, on_true, on_false):
    return ops.select(pred, on_true, on_false, op_name="select_n")


@eager
def convert_element_type(operand, new_dtype):
    return ops.convert(asarray(operand), dtypes.canonicalize(new_dtype))


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
def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out = ops.dot(
        asarray(lhs), asarray(rhs), (list(lc), list(rc)), (list(lb), list(rb)), "dot_general"
    )
    if preferred_element_type is not None:
        out = ops.convert(out, dtypes.canonicalize(preferred_element_type))
    return out


@eager
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
        from uir._src.core.api import jit

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


def stop_gradient(x):
    """x (a pytree of arrays) with no derivative: a copy named stop_gradient,
    which uir's transformations give a zero tangent and cotangent and the
    compiler removes."""
    from uir._src.core import tree_util

    if tracing.current() is None:
        return x
    leaves, tree = tree_util.tree_flatten(x)
    out = []
    for leaf in leaves:
        t = asarray(leaf)
        out.append(ops._comp().emit("copy", t, op_name="stop_gradient"))
    return tree_util.tree_unflatten(tree, out)


@eager
def optimization_barrier(operand):
    """The operands unchanged, through an opt-barrier no pass moves work across."""
    from uir._src.core import tree_util

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
    xs = _same_dtype("concatenate", operands)
    return ops.concatenate(xs, dimension)


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
    x = asarray(array)
    dims = [dimensions] if isinstance(dimensions, int) else list(dimensions)
    ndim = x.ndim + len(dims)
    shape = list(x.shape)
    for ax in sorted(ops.normalize_axis(d, ndim, "expand_dims") for d in dims):
        shape.insert(ax, 1)
    return ops.reshape(x, shape)


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


def _filled(shape, fill_value, dtype=None):
    """An array of `shape` (a tuple) filled with fill_value: of `dtype`, else
    of fill_value's dtype (weak for a Python scalar); a NumPy array when
    nothing is being traced."""
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


def _tile(x, reps):
    """x repeated reps (an int or one count per dimension) times along each
    dimension, as numpy.tile."""
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
def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with fill_value."""
    return _filled(_shape_tuple(shape, "full"), fill_value, dtype)


@eager
def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (or of `shape`) filled with fill_value."""
    a = asarray(x)
    return _filled(
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


def _index_of_extreme(x, ax: int, take_greater: bool, index_type, name: str):
    """The index of the largest (take_greater) or smallest element of x
    along axis ax, the first among equals; NaN counts as the extreme, as
    in NumPy. One variadic reduce over (values, indices)."""
    if x.shape[ax] == 0:
        fail(name, f"attempt to get {name} of an empty sequence")
    idx = ops.iota(index_type, x.shape, ax)
    direction = "GT" if take_greater else "LT"

    def pick(av, ai, bv, bi):
        better = ops.compare(av, bv, direction, direction.lower())
        if dtypes.is_float(av.dtype):
            a_nan = ops.compare(av, av, "NE", "ne")
            b_not_nan = ops.compare(bv, bv, "EQ", "eq")
            better = ops.binary("or", a_nan, ops.binary("and", b_not_nan, better))
        tie = ops.binary("and", ops.compare(av, bv, "EQ", "eq"), ops.compare(ai, bi, "LT", "lt"))
        keep = ops.binary("or", better, tie)
        return ops.select(keep, av, bv), ops.select(keep, ai, bi)

    reducer = ops.scalar_computation(
        f"{name}_reducer", [x.dtype, index_type, x.dtype, index_type], pick, arity=4
    )
    init_v = ops.asarray(ops.reduction_identity("maximum" if take_greater else "minimum", x.dtype))
    init_i = ops.asarray(np.zeros((), index_type))
    shape = tuple(s for i, s in enumerate(x.shape) if i != ax)
    return ops._comp().emit(
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


@eager
def argmax(operand, axis: int, index_dtype):
    """The index of the largest element along `axis` (the first among equals)."""
    x = asarray(operand)
    if dtypes.is_complex(x.dtype):
        fail("lax.argmax", f"argmax of complex numbers is undefined: {ops.describe(x)}")
    ax = ops.normalize_axis(axis, x.ndim, "argmax")
    return _index_of_extreme(x, ax, True, dtypes.canonicalize(index_dtype), "argmax")


@eager
def argmin(operand, axis: int, index_dtype):
    """The index of the smallest element along `axis` (the first among equals)."""
    x = asarray(operand)
    if dtypes.is_complex(x.dtype):
        fail("lax.argmin", f"argmin of complex numbers is undefined: {ops.describe(x)}")
    ax = ops.normalize_axis(axis, x.ndim, "argmin")
    return _index_of_extreme(x, ax, False, dtypes.canonicalize(index_dtype), "argmin")


@eager
def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """operand (or a tuple of operands, ordered by the first num_keys)
    sorted along `dimension`."""
    xs = [asarray(o) for o in operand] if isinstance(operand, (tuple, list)) else [asarray(operand)]
    out = _sort(xs, dimension, num_keys=num_keys)
    return tuple(out) if isinstance(operand, (tuple, list)) else out[0]


@eager
def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """keys sorted along `dimension`, values permuted alike."""
    k, v = _sort([asarray(keys), asarray(values)], dimension, num_keys=1)
    return k, v


@eager
def top_k(operand, k: int, *, axis: int = -1):
    """The k largest entries along `axis` (the last by default) and their
    indices, largest first in the total order of the values (NaN above
    +inf, -NaN below -inf, +0 above -0), equal values in index order: XLA's
    topk, as jax.lax.top_k."""
    x = asarray(operand)
    if x.ndim == 0:
        fail("lax.top_k", f"needs an operand of rank 1 or more, got shape {x.shape}")
    if dtypes.is_complex(x.dtype):
        fail("lax.top_k", f"is not compatible with complex inputs ({x.dtype})")
    ax = ops.normalize_axis(axis, x.ndim, "lax.top_k")
    n = x.shape[ax]
    k = operator.index(k)
    if not 0 <= k <= n:
        fail("lax.top_k", f"k={k} must be in [0, {n}] for shape {x.shape} along axis {ax}")
    # topk works along the last dimension: `axis` is moved there and the
    # k entries moved back to its place.
    x = ops.moveaxis(x, ax, -1)
    dims = (*x.shape[:-1], k)
    out = [(dims, x.dtype), (dims, np.dtype(np.int32))]
    values, idx = ops._comp().emit("topk", x, k=k, largest=True, shape=out, op_name="top_k")
    return ops.moveaxis(values, -1, ax), ops.moveaxis(idx, -1, ax)


# --- products ---------------------------------------------------------------------------


class Precision(enum.Enum):
    """Matrix-product precision (uir computes f32 products in f32 at every setting)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


@eager
def dot(
    lhs,
    rhs,
    precision=None,
    preferred_element_type=None,
    *,
    dimension_numbers=None,
    out_sharding=None,
):
    """Vector/matrix products of rank-1 and rank-2 operands, as jax.lax.dot;
    with dimension_numbers, dot_general's contraction of any ranks."""
    a, b = asarray(lhs), asarray(rhs)
    if dimension_numbers is not None:
        return dot_general(a, b, dimension_numbers, preferred_element_type=preferred_element_type)
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
    return _tile(asarray(operand), reps)


@eager
def stack(operands, axis: int = 0):
    """operands (one dtype and shape) stacked along a new `axis`."""
    xs = _same_dtype("stack", operands)
    ax = ops.normalize_axis(axis, xs[0].ndim + 1, "stack")
    return ops.concatenate([expand_dims(x, (ax,)) for x in xs], ax)


@eager
def unstack(x, axis: int = 0):
    """The slices of x along `axis`, as a tuple (jax.lax.unstack)."""
    x = asarray(x)
    ax = ops.normalize_axis(axis, x.ndim, "unstack")
    return tuple(index_in_dim(x, i, ax, keepdims=False) for i in range(x.shape[ax]))


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
        x = asarray(operand)
        ax = ops.normalize_axis(reduction_dimension, x.ndim, name)
        # top_k works along the last dimension: reduction_dimension is moved
        # there and the k entries moved back to its place.
        x = ops.moveaxis(x, ax, -1)
        values, idx = top_k(x if largest else ops.unary("negate", x), k)
        if not largest:
            values = ops.unary("negate", values)
        return ops.moveaxis(values, -1, ax), ops.moveaxis(idx, -1, ax)

    f.__name__ = name
    f.__doc__ = (
        f"The k {'largest' if largest else 'smallest'} entries and their indices along "
        "reduction_dimension, exactly (recall 1), as jax.lax." + name + "."
    )
    return eager(f)


approx_max_k = _approx_k("approx_max_k", True)
approx_min_k = _approx_k("approx_min_k", False)


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
def broadcast_like(arr, like_arr):
    """arr broadcast to like_arr's shape."""
    return ops.broadcast_to(asarray(arr), tuple(asarray(like_arr).shape), "broadcast_like")


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

    def total(a, b, direction: str):
        return ops._comp().emit(
            "compare",
            a,
            b,
            direction=direction,
            type="TOTALORDER",
            shape=((), np.bool_),
            op_name=direction.lower(),
        )

    def key_compare(a, b, direction: str):
        if dtypes.is_complex(a.dtype):
            # JAX's order of complex numbers: by real part, then imaginary,
            # each in the total order of its floats.
            ar, ai, br, bi = (
                _sort_key(v) for v in (_real_part(a), _imag_part(a), _real_part(b), _imag_part(b))
            )
            if direction == "EQ":
                return ops.binary("and", total(ar, br, "EQ"), total(ai, bi, "EQ"))
            tie = ops.binary("and", total(ar, br, "EQ"), total(ai, bi, "LT"))
            return ops.binary("or", total(ar, br, "LT"), tie)
        a, b = _sort_key(a), _sort_key(b)
        if dtypes.is_float(a.dtype):
            return total(a, b, direction)
        return ops.compare(a, b, direction, direction.lower())

    def less(*params):
        # Lexicographic over the first num_keys operands.
        keys = max(1, min(num_keys, len(xs)))
        out = key_compare(params[2 * keys - 2], params[2 * keys - 1], "LT")
        for k in range(keys - 2, -1, -1):
            a, b = params[2 * k], params[2 * k + 1]
            tie = ops.binary("and", key_compare(a, b, "EQ"), out)
            out = ops.binary("or", key_compare(a, b, "LT"), tie)
        return out

    comparator = ops.scalar_computation(
        f"{name}_comparator", [d for x in xs for d in (x.dtype, x.dtype)], less, arity=2 * len(xs)
    )
    shape = [(x.shape, x.dtype) for x in xs] if len(xs) > 1 else (xs[0].shape, xs[0].dtype)
    out = ops._comp().emit(
        "sort", *xs, dimensions=[ax], is_stable=True, to_apply=comparator, shape=shape, op_name=name
    )
    return out if isinstance(out, tuple) else (out,)


__all__ = [
    "AccuracyMode",
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "FftType",
    "GatherScatterMode",
    "Precision",
    "PrecisionLike",
    "RaggedDotDimensionNumbers",
    "RandomAlgorithm",
    "ShapeDtypeStruct",
    "Tolerance",
    "after_all",
    "approx_max_k",
    "approx_min_k",
    "argmax",
    "argmin",
    "batch_matmul",
    "bitcast_convert_type",
    "broadcast",
    "broadcast_in_dim",
    "broadcast_like",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "collapse",
    "concatenate",
    "convert_element_type",
    "create_token",
    "custom_call",
    "dot",
    "dot_general",
    "dtype",
    "empty",
    "expand_dims",
    "fft",
    "full",
    "full_like",
    "iota",
    "mulhi",
    "optimization_barrier",
    "pad",
    "reduce",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_precision",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
    "reshape",
    "rev",
    "select",
    "select_n",
    "sort",
    "sort_key_val",
    "split",
    "squeeze",
    "stack",
    "stop_gradient",
    "tile",
    "top_k",
    "transpose",
    "unstack",
]
