"""Bounded dynamic shapes (f32[<=1801]) as compiled code.

XLA pads an array of dynamic size to its bound and carries the size beside
it; ops that only move elements along a dynamic dimension, or combine
elements at the same position, work on the padded array unchanged, and the
result is the padded result cut to the size. A module whose dynamic sizes
pass only through such ops (elementwise ops, broadcast, transpose, reshapes
that add or drop dimensions of one, tuples) compiles as the same module at
its bounds: its arguments are padded with zeros to the bounds, and each
dynamic dimension of its results is cut to the size of the argument
dimension it comes from. Any other op on a dynamic dimension (a reduction
over it, a slice, a dot, ...) would mix padding into the result; such
modules run on the evaluator, which reads only the valid entries."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from uir._src.core.errors import ArgumentError


class Unsupported(Exception):
    """A dynamic dimension reaches an op that would mix padding in."""


class Dims(tuple):
    """An array value's dimensions: for each, None (static) or the
    (parameter number, dimension) whose size it has. A tuple value's is a
    list of its elements'."""


def _dims_of(inst, known: dict, equal: set) -> Dims | list:
    op, shape, ops = inst.opcode, inst.shape, inst.operands
    if shape.is_tuple:
        if op == "tuple":
            return [known[o.unique_id] for o in ops]
        raise Unsupported(f"{op} of a tuple (%{inst.name})")
    if op == "get-tuple-element":
        return known[ops[0].unique_id][inst.attributes["index"]]
    if op == "parameter":
        p = inst.attributes["parameter_number"]
        return Dims((p, d) if dyn else None for d, dyn in enumerate(shape.dynamic_dims))
    out: list = [None] * shape.rank
    operands = [known[o.unique_id] for o in ops]
    if op == "broadcast":
        for k, d in enumerate(inst.attributes["dimensions"]):
            out[d] = operands[0][k]
    elif op == "transpose":
        out = [operands[0][d] for d in inst.attributes["dimensions"]]
    elif op in ("reshape", "bitcast") and any(operands[0]):
        # Dimensions of one added or dropped: the others carry over.
        source = ops[0].shape.dims
        kept_in = [d for d, n in enumerate(source) if n != 1]
        kept_out = [d for d, n in enumerate(shape.dims) if n != 1]
        moved = [d for d, s in enumerate(operands[0]) if s is not None]
        if [source[d] for d in kept_in] != [shape.dims[d] for d in kept_out] or any(
            d not in kept_in for d in moved
        ):
            raise Unsupported(f"{op} regrouping a dynamic dimension (%{inst.name})")
        for i, o in zip(kept_in, kept_out, strict=True):
            out[o] = operands[0][i]
    elif inst.is_elementwise:
        # Operands of one shape: dynamic sizes from two arguments must be
        # equal (checked on each call).
        for dims in operands:
            for d, s in enumerate(dims):
                if s is not None and out[d] not in (None, s):
                    equal.add((out[d], s))
                out[d] = s if out[d] is None else out[d]
    elif any(isinstance(dims, list) or any(dims) for dims in operands):
        raise Unsupported(f"{op} over a dynamic dimension (%{inst.name})")
    for d, dyn in enumerate(shape.dynamic_dims):
        if dyn and out[d] is None:
            raise Unsupported(f"a dynamic dimension of unknown size (%{inst.name})")
    return Dims(out)


def _dynamic_dims(shape):
    if shape.is_tuple:
        for s in shape.tuple_shapes:
            yield from _dynamic_dims(s)
    else:
        yield from shape.dynamic_dims


@dataclass
class DynamicPlan:
    """How a module of dynamic shapes runs at its bounds."""

    bounds: list[tuple[int, ...]]  # per parameter: the padded shape
    dynamic: list[tuple[bool, ...]]  # per parameter: which dimensions are dynamic
    results: Dims | list  # the root's dimensions
    static_text: str  # the module at its bounds
    equal: list  # pairs of argument dimensions whose sizes must be equal

    @staticmethod
    def of(module) -> DynamicPlan:
        """The plan, or Unsupported naming the op that stops it."""
        entry = module.entry
        for c in module.computations:
            for inst in c.instructions if c.name != entry.name else ():
                if any(_dynamic_dims(inst.shape)):
                    raise Unsupported(f"a dynamic size inside %{c.name} (%{inst.name})")
        known: dict = {}
        equal: set = set()
        for inst in entry.instructions:
            known[inst.unique_id] = _dims_of(inst, known, equal)
        params = sorted(entry.parameters, key=lambda p: p.attributes["parameter_number"])
        return DynamicPlan(
            bounds=[tuple(p.shape.dims) for p in params],
            dynamic=[tuple(p.shape.dynamic_dims) for p in params],
            results=known[entry.root.unique_id],
            static_text=re.sub(r"<=(\d+)", r"\1", module.to_text()),
            equal=sorted(equal),
        )

    def pad(self, arrays) -> list[np.ndarray]:
        """Each argument at its bound, zeros past its sizes."""
        if len(arrays) != len(self.bounds):
            raise ArgumentError(f"takes {len(self.bounds)} arguments, got {len(arrays)}")
        out = []
        for i, (a, bound, dynamic) in enumerate(
            zip(arrays, self.bounds, self.dynamic, strict=True)
        ):
            a = np.asarray(a)
            fits = a.ndim == len(bound) and all(
                n <= b if dyn else n == b for n, b, dyn in zip(a.shape, bound, dynamic, strict=True)
            )
            if not fits:
                wanted = ", ".join(
                    f"<={b}" if d else str(b) for b, d in zip(bound, dynamic, strict=True)
                )
                raise ArgumentError(f"parameter {i} takes shape ({wanted}), got {a.shape}")
            if a.shape != bound:
                padded = np.zeros(bound, a.dtype)
                padded[tuple(slice(0, n) for n in a.shape)] = a
                a = padded
            out.append(a)
        for (p, d), (q, e) in self.equal:
            n, m = np.shape(arrays[p])[d], np.shape(arrays[q])[e]
            if n != m:
                raise ArgumentError(
                    f"dimension {d} of parameter {p} ({n}) and dimension {e} of parameter {q} "
                    f"({m}) meet in one op, so their sizes must be equal"
                )
        return out

    def crop(self, result, arrays):
        """The result cut to the sizes of the argument dimensions its
        dynamic dimensions have."""

        def cut(value, dims):
            if isinstance(dims, list):
                return tuple(cut(v, d) for v, d in zip(value, dims, strict=True))
            if not any(dims):
                return value
            return np.asarray(value)[
                tuple(
                    slice(None) if s is None else slice(0, np.shape(arrays[s[0]])[s[1]])
                    for s in dims
                )
            ]

        return cut(result, self.results)
