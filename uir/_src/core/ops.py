"""The primitive operations tracing is built from: each checks its operands,
works out the result's shape and dtype (JAX's rules), and emits HLO into
the computation being traced. uir.numpy, uir.lax and uir.nn are written
on top of these."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from uir._src.core import dtypes, errors, tracing
from uir._src.core.tracing import Tracer


def _comp() -> tracing.Computation:
    comp = tracing.current()
    if comp is None:
        raise errors.TraceError("an operation on traced arrays ran outside of tracing")
    return comp


def fail(op: str, message: str):
    raise errors.TraceError(f"{op}: {message} (at {tracing.where()})")


def describe(x) -> str:
    if isinstance(x, Tracer):
        return dtypes.shape_text(x.shape, x.dtype)
    a = np.asarray(x)
    return dtypes.shape_text(a.shape, a.dtype) if a.dtype.name in dtypes._HLO else repr(x)


def is_array_like(x) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, int, float, complex, bool))


def weak_dtype_of(x) -> tuple[np.dtype, bool]:
    """The (dtype, weak) a value takes in JAX's promotion."""
    if isinstance(x, Tracer):
        return x.dtype, x.weak_type
    if isinstance(x, bool):
        return np.dtype(np.bool_), False
    if isinstance(x, int):
        return dtypes.default_int(), True
    if isinstance(x, float):
        return dtypes.default_float(), True
    if isinstance(x, complex):
        return dtypes.canonicalize(np.complex128), True
    a = np.asarray(x)
    if a.dtype == object or (a.dtype.kind in "USV" and a.dtype.name not in dtypes._HLO):
        raise TypeError(f"{x!r} is not an array")
    return dtypes.canonicalize(a.dtype), False


def holds_tracers(x) -> bool:
    """Whether `x` is a list or tuple with a traced value somewhere inside."""
    if isinstance(x, (list, tuple)):
        return any(isinstance(v, Tracer) or holds_tracers(v) for v in x)
    return False


def asarray(x, dtype=None) -> Tracer:
    """`x` as a Tracer of the current computation (constants are embedded).
    A list or tuple holding traced values is refused as JAX refuses it in
    its array functions (uir.numpy.asarray stacks one)."""
    if isinstance(x, Tracer):
        x = _comp().resolve(x)
        return x if dtype is None else convert(x, dtype)
    if holds_tracers(x):
        raise errors.TraceError(
            f"a {type(x).__name__} of traced values where an array is expected (at "
            f"{tracing.where()}): a list or tuple passed to a jitted function is traced as "
            "that many separate values, as in JAX; make it one array with "
            "uir.numpy.asarray(...) or uir.numpy.stack(...), or pass a NumPy array"
        )
    d, weak = weak_dtype_of(x)
    if dtype is not None:
        d, weak = dtypes.canonicalize(dtype), False
    value = np.asarray(x, dtype=d)
    t = _comp().constant(value)
    t.weak_type = weak
    return t


def convert(x, dtype, weak: bool = False) -> Tracer:
    x = asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        if x.weak_type != weak:
            return Tracer(x.comp, x.inst, x.shape, x.dtype, weak)
        return x
    out = _comp().emit("convert", x, shape=(x.shape, dtype), op_name="convert_element_type")
    out.weak_type = weak
    return out


def broadcast_shapes(op: str, *shapes) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            fail(op, "shapes " + ", ".join(str(tuple(s)) for s in shapes) + " do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x, shape, op: str = "broadcast_to") -> Tracer:
    """NumPy broadcasting of `x` to `shape` (HLO broadcast, after dropping
    the size-1 dimensions that stretch)."""
    x = asarray(x)
    shape = tuple(int(s) for s in shape)
    if x.shape == shape:
        return x
    if len(x.shape) > len(shape):
        fail(op, f"cannot broadcast {describe(x)} to {shape}")
    offset = len(shape) - len(x.shape)
    keep, dims = [], []
    for i, s in enumerate(x.shape):
        target = shape[offset + i]
        if s == target:
            keep.append(s)
            dims.append(offset + i)
        elif s != 1:
            fail(op, f"cannot broadcast {describe(x)} to {shape}")
    if len(keep) != len(x.shape):
        x = reshape(x, tuple(keep))
    out = _comp().builder.broadcast(x.inst, list(shape), dims)
    return Tracer(x.comp, out, shape, x.dtype, x.weak_type)


def reshape(x, shape) -> Tracer:
    x = asarray(x)
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        fail("reshape", f"cannot reshape {describe(x)} to {shape}")
    if shape == x.shape:
        return x
    out = _comp().emit("reshape", x, shape=(shape, x.dtype))
    out.weak_type = x.weak_type
    return out


def promote(op: str, *xs) -> list[Tracer]:
    """The operands converted to their common (JAX-promoted) dtype."""
    dtype, weak = dtypes.promote(*[weak_dtype_of(x) for x in xs])
    out = []
    for x in xs:
        if isinstance(x, Tracer):
            out.append(convert(x, dtype, weak))
        else:  # a constant is made in the promoted type directly
            t = asarray(x, dtype)
            t.weak_type = weak
            out.append(t)
    return out


def broadcast_all(op: str, *xs) -> list[Tracer]:
    shape = broadcast_shapes(op, *[x.shape for x in xs])
    return [broadcast_to(x, shape, op) for x in xs]


def unary(opcode: str, x, op_name: str | None = None) -> Tracer:
    x = asarray(x)
    out = _comp().emit(opcode, x, op_name=op_name)
    out.weak_type = x.weak_type
    return out


def binary(opcode: str, x, y, op_name: str | None = None) -> Tracer:
    name = op_name or opcode
    x, y = broadcast_all(name, *promote(name, x, y))
    out = _comp().emit(opcode, x, y, op_name=name)
    out.weak_type = x.weak_type and y.weak_type
    return out


def compare(x, y, direction: str, op_name: str) -> Tracer:
    x, y = broadcast_all(op_name, *promote(op_name, x, y))
    return _comp().emit(
        "compare",
        x,
        y,
        op_name=op_name,
        direction=direction,
        shape=(x.shape, np.bool_),
    )


def select(pred, on_true, on_false, op_name: str = "select_n") -> Tracer:
    pred = asarray(pred)
    if pred.dtype != np.bool_:
        fail(op_name, f"the predicate must be bool, got {describe(pred)}")
    a, b = promote(op_name, on_true, on_false)
    pred, a, b = broadcast_all(op_name, pred, a, b)
    out = _comp().emit("select", pred, a, b, op_name=op_name)
    out.weak_type = a.weak_type and b.weak_type
    return out


def scalar_computation(name: str, dtype, fn, arity: int = 2, outputs: int = 1):
    """Builds `fn` as a computation of `arity` scalars of `dtype` (a reducer
    or comparator); `fn` gets Tracers and returns one or a tuple."""
    comp = _comp()
    sub = tracing.Computation(comp.module, name, comp.scope)
    with tracing.tracing(sub):
        dts = dtype if isinstance(dtype, (list, tuple)) else [dtype] * arity
        params = [sub.parameter((), d) for d in dts]
        result = fn(*params)
        if isinstance(result, tuple):
            root = sub.builder.op("tuple", *[asarray(r).inst for r in result])
        else:
            root = asarray(result).inst
        return sub.build(root)


def reduction_identity(opcode: str, dtype):
    dtype = np.dtype(dtype)
    if opcode == "add":
        return np.zeros((), dtype)
    if opcode == "multiply":
        return np.ones((), dtype)
    if opcode in ("or", "xor"):
        return np.zeros((), dtype)
    if opcode == "and":
        # All bits set: True for bool, -1 (or the largest unsigned) for ints.
        return np.array(True) if dtype == np.bool_ else np.array(-1).astype(dtype)
    if dtypes.is_float(dtype):
        v = -np.inf if opcode == "maximum" else np.inf
        return np.array(v).astype(dtype)
    if dtype == np.bool_:
        return np.array(opcode == "minimum")
    info = ml_dtypes.iinfo(dtype)  # int4 and the other narrow ones too
    return np.array(info.min if opcode == "maximum" else info.max, dtype)


def reduce(x, opcode: str, axes, op_name: str) -> Tracer:
    """reduce(x) over `axes` with a simple binary reducer."""
    x = asarray(x)
    axes = sorted(axes)
    reducer = scalar_computation(f"{op_name}_reducer", x.dtype, lambda a, b: binary(opcode, a, b))
    init = asarray(reduction_identity(opcode, x.dtype))
    shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    out = _comp().emit(
        "reduce",
        x,
        init,
        op_name=op_name,
        dimensions=axes,
        to_apply=reducer,
        shape=(shape, x.dtype),
    )
    out.weak_type = x.weak_type
    return out


def normalize_axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        fail(op, f"axis {axis} is out of range for an array of rank {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str) -> list[int]:
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = [normalize_axis(a, ndim, op) for a in axis]
    else:
        axes = [normalize_axis(axis, ndim, op)]
    if len(set(axes)) != len(axes):
        fail(op, f"repeated axis in {axis}")
    return axes


def transpose(x, perm) -> Tracer:
    x = asarray(x)
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(x.ndim)):
        fail("transpose", f"{perm} is not a permutation of the axes of {describe(x)}")
    if perm == list(range(x.ndim)):
        return x
    shape = tuple(x.shape[p] for p in perm)
    out = _comp().emit("transpose", x, dimensions=perm, shape=(shape, x.dtype))
    out.weak_type = x.weak_type
    return out


def moveaxis(x, source, destination, op: str = "moveaxis") -> Tracer:
    """x with its axes `source` (an int or a sequence) moved to
    `destination`, the others keeping their order (numpy.moveaxis)."""
    x = asarray(x)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [normalize_axis(s, x.ndim, op) for s in src]
    dst = [normalize_axis(d, x.ndim, op) for d in dst]
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


def is_finite(x) -> Tracer:
    """Whether each element of a float array is finite (HLO is-finite)."""
    x = asarray(x)
    return _comp().emit("is-finite", x, shape=(x.shape, np.bool_), op_name="is_finite")


def dot(x, y, contract, batch, name: str) -> Tracer:
    """HLO dot with (lhs, rhs) contracting and batch dims, operands promoted;
    the result's dims are batch, lhs free, rhs free."""
    x, y = promote(name, x, y)
    (lc, rc), (lb, rb) = contract, batch
    for a, b in zip(lc, rc, strict=True):
        if x.shape[a] != y.shape[b]:
            fail(
                name,
                f"contracting dimensions of {describe(x)} and {describe(y)} differ "
                f"({x.shape[a]} vs {y.shape[b]})",
            )
    lf = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(y.ndim) if i not in rc and i not in rb]
    shape = [x.shape[i] for i in lb] + [x.shape[i] for i in lf] + [y.shape[i] for i in rf]
    attrs = {"lhs_contracting_dims": list(lc), "rhs_contracting_dims": list(rc)}
    if lb:
        attrs.update(lhs_batch_dims=list(lb), rhs_batch_dims=list(rb))
    out = _comp().emit("dot", x, y, shape=(shape, x.dtype), op_name=name, **attrs)
    out.weak_type = x.weak_type and y.weak_type
    return out


def concatenate(arrays, axis: int, op: str = "concatenate") -> Tracer:
    """HLO concatenate of `arrays` (promoted) along `axis`; shapes must agree
    off that axis."""
    xs = promote(op, *arrays)
    if not xs:
        fail(op, "need at least one array")
    ndim = xs[0].ndim
    if ndim == 0:
        fail(op, "zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, ndim, op)
    for x in xs:
        if x.ndim != ndim or any(x.shape[i] != xs[0].shape[i] for i in range(ndim) if i != ax):
            fail(
                op,
                "shapes " + ", ".join(describe(v) for v in xs) + f" do not match off axis {ax}",
            )
    if len(xs) == 1:
        return xs[0]
    shape = list(xs[0].shape)
    shape[ax] = sum(x.shape[ax] for x in xs)
    out = _comp().emit("concatenate", *xs, dimensions=[ax], shape=(shape, xs[0].dtype), op_name=op)
    out.weak_type = all(x.weak_type for x in xs)
    return out


def iota(dtype, shape, dimension: int) -> Tracer:
    shape = tuple(shape)
    return _comp().emit("iota", shape=(shape, dtype), iota_dimension=dimension)
