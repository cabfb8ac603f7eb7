"""jax.numpy.ufunc: functions of nin arrays, broadcast elementwise, with
NumPy's methods (reduce, accumulate, at, reduceat, outer); and jax.numpy's
fourteen ufunc objects (add, multiply, maximum, logaddexp, ...), whose
methods use uir's reductions, cumulative ops and scatters. A ufunc of the
user's function reduces with lax.reduce (given an identity) or a
sequential scan, accumulates with a scan and applies `at` one index at a
time, as NumPy's unbuffered semantics ask."""

from __future__ import annotations

import functools
import math

import numpy as np

from uir._src.core import dtypes, ops, tracing
from uir._src.core.ops import fail
from uir._src.core.tracing import Tracer
from uir._src.lax import control_flow, cumulative
from uir._src.lax import lax as lax_core
from uir._src.numpy import manipulation, reductions, ufuncs
from uir._src.numpy.util import no_out, public_asarray


def _traced(method):
    """Runs a ufunc method inside a trace: at once under uir.jit, or as a
    one-call program on NumPy arrays (as uir.numpy's functions run)."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if tracing.current() is not None:
            return method(self, *args, **kwargs)
        from uir._src.core.api import jit

        return jit(lambda: method(self, *args, **kwargs))()

    return run


def _axes(axis, ndim: int, name: str):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(ops.normalize_axis(a, ndim, name) for a in axis)
    return (ops.normalize_axis(axis, ndim, name),)


class ufunc:
    """A function of `nin` arrays broadcast elementwise (jax.numpy.ufunc):
    calling it calls `call` (func by default); reduce, accumulate, at and
    reduceat use the given implementations, or generic ones built on
    func."""

    def __init__(
        self,
        func,
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity=None,
        call=None,
        reduce=None,
        accumulate=None,
        at=None,
        reduceat=None,
    ):
        self._func = func
        self._call = call or func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs if nargs is not None else nin)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None)
        self._reduce, self._accumulate, self._at, self._reduceat = reduce, accumulate, at, reduceat

    def __repr__(self) -> str:
        return f"<uir.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        no_out(self.__name__, out)
        if where is not None:
            fail(self.__name__, "the 'where' argument is not supported: use uir.numpy.where")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} arguments, got {len(args)}")
        return self._call(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(
                f"{method} is only supported for binary ufuncs with one output, not {self.__name__}"
            )

    @_traced
    def reduce(
        self, a, axis=0, dtype=None, out=None, keepdims: bool = False, initial=None, where=None
    ):
        """func folded over `axis` (a tuple, or None for all)."""
        self._binary("reduce")
        no_out(f"{self.__name__}.reduce", out)
        a = public_asarray(a) if dtype is None else public_asarray(a, dtype)
        if self._reduce is not None:
            return self._reduce(a, axis, keepdims=keepdims, initial=initial, where=where)
        return self._generic_reduce(a, axis, keepdims, initial, where)

    def _generic_reduce(self, a, axis, keepdims, initial, where):
        if axis is None and self.identity is None and initial is None:
            # All axes of a function that may not reorder: the flat order.
            out = self._generic_reduce(manipulation.ravel(a), 0, False, None, where)
            return manipulation.reshape(out, (1,) * a.ndim) if keepdims else out
        axes = _axes(axis, a.ndim, f"{self.__name__}.reduce")
        start = initial if initial is not None else self.identity
        if where is not None:
            if start is None:
                fail(f"{self.__name__}.reduce", "where needs an identity or an initial value")
            a = ufuncs.where(where, a, ops.convert(public_asarray(start), a.dtype))
        if start is not None:
            out = lax_core.reduce(a, ops.convert(public_asarray(start), a.dtype), self._func, axes)
        else:
            out = a
            for ax in sorted(axes, reverse=True):
                if out.shape[ax] == 0:
                    fail(
                        f"{self.__name__}.reduce",
                        "an empty reduction needs an identity or an initial value",
                    )
                out = self._fold(out, ax)
        if keepdims:
            out = manipulation.expand_dims(out, axes)
        return out

    def _fold(self, a, axis: int):
        """func folded left to right along one axis, without an identity."""
        moved = manipulation.moveaxis(a, axis, 0)
        if moved.shape[0] == 1:
            return moved[0]

        def body(carry, x):
            return ops.convert(public_asarray(self._func(carry, x)), moved.dtype), None

        carry, _ = control_flow.scan(body, moved[0], moved[1:])
        return carry

    @_traced
    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running func along `axis`."""
        self._binary("accumulate")
        no_out(f"{self.__name__}.accumulate", out)
        a = public_asarray(a) if dtype is None else public_asarray(a, dtype)
        axis = ops.normalize_axis(axis, a.ndim, f"{self.__name__}.accumulate")
        if self._accumulate is not None:
            return self._accumulate(a, axis)
        moved = manipulation.moveaxis(a, axis, 0)
        if moved.shape[0] <= 1:
            return a

        def body(carry, x):
            nxt = ops.convert(public_asarray(self._func(carry, x)), moved.dtype)
            return nxt, nxt

        _, rest = control_flow.scan(body, moved[0], moved[1:])
        out = manipulation.concatenate([moved[:1], rest], axis=0)
        return manipulation.moveaxis(out, 0, axis)

    @_traced
    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """a with func applied at `indices` (with b's values for a binary
        ufunc), once per occurrence of each index; inplace must be False,
        as JAX arrays cannot change."""
        if inplace:
            raise NotImplementedError(
                "uir arrays are immutable: ufunc.at cannot work in place; pass inplace=False "
                "and use the result (a = uir.numpy.add.at(a, i, v, inplace=False))"
            )
        if (self.nin == 2) != (b is not None):
            raise TypeError(
                f"{self.__name__}.at takes {'b' if self.nin == 2 else 'no b'} for a ufunc of {self.nin} inputs"
            )
        a = public_asarray(a)
        if self._at is not None:
            return self._at(a, indices, b)
        # One index at a time: the flat positions indices name, then a loop.
        positions = public_asarray(np.arange(a.size, dtype=np.int32).reshape(a.shape))[indices]
        positions = manipulation.ravel(positions)
        count = positions.shape[0]
        flat = manipulation.ravel(a)
        values = None
        if b is not None:
            values = manipulation.ravel(
                manipulation.broadcast_to(public_asarray(b), positions.shape)
            )

        def body(k, flat):
            p = positions[k]
            current = flat[p]
            new = self._func(current) if values is None else self._func(current, values[k])
            return flat.at[p].set(ops.convert(public_asarray(new), flat.dtype))

        flat = control_flow.fori_loop(0, count, body, flat)
        return manipulation.reshape(flat, a.shape)

    @_traced
    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """func reduced over a's slices [indices[i], indices[i + 1]) along
        `axis` (a[indices[i]] where the next index is not larger); the
        indices must be static."""
        self._binary("reduceat")
        no_out(f"{self.__name__}.reduceat", out)
        if isinstance(indices, Tracer):
            fail(f"{self.__name__}.reduceat", "indices must be static (a NumPy array or a list)")
        a = public_asarray(a) if dtype is None else public_asarray(a, dtype)
        axis = ops.normalize_axis(axis, a.ndim, f"{self.__name__}.reduceat")
        idx = np.asarray(indices).reshape(-1)
        n = a.shape[axis]
        if idx.dtype.kind not in "iu" or (idx < 0).any() or (idx >= n).any():
            fail(
                f"{self.__name__}.reduceat",
                f"indices must be integers in [0, {n}), got {indices!r}",
            )
        if self._reduceat is not None:
            return self._reduceat(a, idx, axis)
        parts = []
        for i, j in enumerate(idx):
            k = int(idx[i + 1]) if i + 1 < len(idx) else n
            piece = manipulation.moveaxis(a, axis, 0)[int(j) : max(k, int(j) + 1)]
            parts.append(self.reduce(piece, axis=0, keepdims=True))
        return manipulation.moveaxis(manipulation.concatenate(parts, axis=0), 0, axis)

    @_traced
    def outer(self, A, B, /):
        """func of every element of A with every element of B: shape A.shape + B.shape."""
        self._binary("outer")
        A, B = public_asarray(A), public_asarray(B)
        return self(manipulation.reshape(A, A.shape + (1,) * B.ndim), B)


def _at_method(name: str):
    def at(a, indices, b):
        return getattr(a.at[indices], name)(b)

    return at


def _from_cumulative(cumulative_fn):
    def accumulate(a, axis):
        return cumulative_fn(a, axis=axis)

    return accumulate


def _reduction(fn):
    def reduce(a, axis, *, keepdims, initial, where):
        return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)

    return reduce


def _subtract_reduce(a, axis, *, keepdims, initial, where):
    """a[0] - a[1] - ... = a[0] - sum(a[1:]) along one axis."""
    if axis is None:
        out = _subtract_reduce(
            manipulation.ravel(a),
            0,
            keepdims=False,
            initial=initial,
            where=None if where is None else manipulation.ravel(where),
        )
        return manipulation.reshape(out, (1,) * a.ndim) if keepdims else out
    if where is not None or initial is not None or isinstance(axis, (tuple, list)):
        return subtract._generic_reduce(a, axis, keepdims, initial, where)
    ax = ops.normalize_axis(axis, a.ndim, "subtract.reduce")
    moved = manipulation.moveaxis(a, ax, 0)
    if moved.shape[0] == 0:
        fail("subtract.reduce", "an empty reduction needs an initial value")
    out = ufuncs.subtract(moved[0], reductions.sum(moved[1:], axis=0))
    return manipulation.expand_dims(out, ax) if keepdims else out


def _subtract_accumulate(a, axis):
    moved = manipulation.moveaxis(a, axis, 0)
    if moved.shape[0] == 0:
        return a
    rest = ufuncs.subtract(moved[:1], cumulative.cumsum(moved[1:], axis=0))
    return manipulation.moveaxis(manipulation.concatenate([moved[:1], rest], axis=0), 0, axis)


def _logsumexp(x, axis, keepdims: bool, where):
    """log(sum(exp(x))) over `axis`, stably (the largest term factored out)."""
    top = reductions.max(x, axis=axis, keepdims=True, initial=-np.inf, where=where)
    top = ufuncs.where(ufuncs.isfinite(top), top, 0).astype(x.dtype)
    total = reductions.sum(
        ufuncs.exp(ufuncs.subtract(x, top)), axis=axis, keepdims=True, where=where
    )
    out = ufuncs.add(ufuncs.log(total), top)
    return out if keepdims else manipulation.squeeze(out, _axes(axis, x.ndim, "logaddexp.reduce"))


def _logsumexp_reduce(base2: bool):
    scale = math.log(2.0) if base2 else 1.0

    def reduce(a, axis, *, keepdims, initial, where):
        x = ufuncs.multiply(a, scale) if base2 else a
        if initial is not None:
            init = (
                ufuncs.multiply(public_asarray(initial), scale)
                if base2
                else public_asarray(initial)
            )
            axes = _axes(axis, x.ndim, "logaddexp.reduce")
            rest = _logsumexp(x, axes, True, where)
            out = ufuncs.logaddexp(rest, init)
            out = out if keepdims else manipulation.squeeze(out, axes)
        else:
            out = _logsumexp(x, axis, keepdims, where)
        return ufuncs.divide(out, scale) if base2 else out

    return reduce


def _bitwise_reduce(opcode: str, identity: int):
    def reduce(a, axis, *, keepdims, initial, where):
        axes = _axes(axis, a.ndim, "reduce")
        start = identity if initial is None else initial
        x = (
            a
            if where is None
            else ufuncs.where(where, a, ops.convert(public_asarray(start), a.dtype))
        )
        if dtypes.is_bool(x.dtype):
            fn = {"and": reductions.all, "or": reductions.any}.get(opcode)
            if fn is not None:
                out = fn(x, axis=axes, keepdims=keepdims)
                return out if initial is None else _combine(opcode, out, initial)
        out = ops.reduce(x, opcode, list(axes), f"reduce_{opcode}")
        out = ops.convert(out, x.dtype)
        if initial is not None:
            out = _combine(opcode, out, initial)
        return manipulation.expand_dims(out, axes) if keepdims else out

    return reduce


def _combine(opcode: str, out, initial):
    fn = {"and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor}[opcode]
    return fn(out, ops.convert(public_asarray(initial), out.dtype))


def _extreme_accumulate(which: str):
    def accumulate(a, axis):
        return (cumulative.cummax if which == "max" else cumulative.cummin)(a, axis=axis)

    return accumulate


def _logsumexp_accumulate(base2: bool):
    def accumulate(a, axis):
        if not base2:
            return cumulative.cumlogsumexp(a, axis=axis)
        scale = math.log(2.0)
        return ufuncs.divide(cumulative.cumlogsumexp(ufuncs.multiply(a, scale), axis=axis), scale)

    return accumulate


add = ufunc(
    ufuncs.add,
    2,
    1,
    name="add",
    identity=0,
    reduce=_reduction(reductions.sum),
    accumulate=_from_cumulative(reductions.cumsum),
    at=_at_method("add"),
)
subtract = ufunc(
    ufuncs.subtract, 2, 1, name="subtract", reduce=_subtract_reduce, accumulate=_subtract_accumulate
)
multiply = ufunc(
    ufuncs.multiply,
    2,
    1,
    name="multiply",
    identity=1,
    reduce=_reduction(reductions.prod),
    accumulate=_from_cumulative(reductions.cumprod),
    at=_at_method("multiply"),
)
maximum = ufunc(
    ufuncs.maximum,
    2,
    1,
    name="maximum",
    reduce=_reduction(reductions.max),
    accumulate=_extreme_accumulate("max"),
    at=_at_method("max"),
)
minimum = ufunc(
    ufuncs.minimum,
    2,
    1,
    name="minimum",
    reduce=_reduction(reductions.min),
    accumulate=_extreme_accumulate("min"),
    at=_at_method("min"),
)
logaddexp = ufunc(
    ufuncs.logaddexp,
    2,
    1,
    name="logaddexp",
    identity=-np.inf,
    reduce=_logsumexp_reduce(False),
    accumulate=_logsumexp_accumulate(False),
)
logaddexp2 = ufunc(
    ufuncs.logaddexp2,
    2,
    1,
    name="logaddexp2",
    identity=-np.inf,
    reduce=_logsumexp_reduce(True),
    accumulate=_logsumexp_accumulate(True),
)
logical_and = ufunc(ufuncs.logical_and, 2, 1, name="logical_and", identity=True)
logical_or = ufunc(ufuncs.logical_or, 2, 1, name="logical_or", identity=False)
logical_xor = ufunc(ufuncs.logical_xor, 2, 1, name="logical_xor", identity=False)
bitwise_and = ufunc(
    ufuncs.bitwise_and, 2, 1, name="bitwise_and", identity=-1, reduce=_bitwise_reduce("and", -1)
)
bitwise_or = ufunc(
    ufuncs.bitwise_or, 2, 1, name="bitwise_or", identity=0, reduce=_bitwise_reduce("or", 0)
)
bitwise_xor = ufunc(
    ufuncs.bitwise_xor, 2, 1, name="bitwise_xor", identity=0, reduce=_bitwise_reduce("xor", 0)
)
negative = ufunc(ufuncs.negative, 1, 1, name="negative")

__all__ = [
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "subtract",
    "ufunc",
]
