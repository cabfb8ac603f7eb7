"""Tracing: Python functions run on Tracers, which stand for arrays of a
known shape and dtype, and each operation on them adds an HLO instruction
to the computation being built (through uir.hlo's builder)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

import numpy as np

from uir._src.core import dtypes, errors, hlo

_UIR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_state = threading.local()


def _user_frame():
    """The innermost frame outside the uir package (the user's code)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_UIR_DIR):
        f = f.f_back
    return f


def where() -> str:
    """'file:line' of the user's code being traced, for error messages."""
    f = _user_frame()
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


# The opcodes that can carry a side effect the tracer emits: host calls
# and the control flow that may hold them.
_MAY_HAVE_EFFECTS = frozenset({"custom-call", "while", "conditional", "call"})


class Computation:
    """One computation being traced: its builder and where its ops come from."""

    def __init__(self, module: Module, name: str, scope: str, probing: bool = False):
        self.module = module
        self.builder = module.builder.computation(module.unique_name(name))
        self.scope = scope
        self.parameters: list[Tracer] = []
        # Values of enclosing computations this one reads (closure
        # conversion): a probing trace records them with stand-ins; the real
        # trace maps each to the operand it is passed in as.
        self.probing = probing
        self.captures: list[Tracer] = []
        self.capture_map: dict[int, Tracer] = {}
        # The last instruction with a side effect (a host callback, or a
        # loop or branch holding one): the next such runs after it.
        self.last_effect = None

    def resolve(self, t: Tracer) -> Tracer:
        """`t` as a value of this computation."""
        if t.comp is self:
            return t
        inner = self.capture_map.get(id(t))
        if inner is not None:
            return inner
        sunk = self._sink_constant(t)
        if sunk is not None:
            self.capture_map[id(t)] = sunk
            return sunk
        if self.probing:
            inner = self.constant(np.zeros(t.shape, t.dtype))
            inner.weak_type = t.weak_type
            self.capture_map[id(t)] = inner
            self.captures.append(t)
            return inner
        raise errors.TraceError(
            f"{t!r} is a traced value of another computation used at {where()}; values of an "
            "enclosing function can be read inside lax control flow, but not from a reducer or "
            "comparator"
        )

    def _sink_constant(self, t: Tracer) -> Tracer | None:
        """A small constant of an enclosing computation (or a broadcast
        of a scalar one) emitted again here instead of captured: loop
        bounds and step counts stay constants a pass can read."""
        inst = t.inst
        if inst.opcode == "broadcast" and inst.operands[0].opcode == "constant":
            scalar = inst.operands[0].attributes["literal"]
            if np.ndim(scalar) != 0:
                return None
            out = self.builder.op(
                "broadcast",
                self.builder.constant(np.asarray(scalar)),
                dimensions=[],
                shape=(t.shape, t.dtype),
            )
        elif inst.opcode == "constant" and np.size(inst.attributes["literal"]) <= 16:
            out = self.builder.constant(np.asarray(inst.attributes["literal"]))
        else:
            return None
        return Tracer(self, out, t.shape, t.dtype, t.weak_type)

    def parameter(self, shape, dtype, weak: bool = False, name: str = "") -> Tracer:
        i = len(self.parameters)
        inst = self.builder.parameter(i, (shape, dtype), name=name)
        t = Tracer(self, inst, tuple(shape), np.dtype(dtype), weak)
        self.parameters.append(t)
        return t

    def metadata(self, op_name: str) -> dict:
        md = {"op_name": f"{self.scope}/{op_name}"}
        f = _user_frame()
        if f is not None:
            md["source_file"] = f.f_code.co_filename
            md["source_line"] = f.f_lineno
        return md

    def emit(self, opcode: str, *operands, op_name: str | None = None, weak=False, **attrs):
        """Adds `opcode(operands)` and returns its Tracer (or a tuple of
        them for a tuple-shaped result)."""
        insts = [self.resolve(o).inst for o in operands]
        inst = self.builder.op(opcode, *insts, metadata=self.metadata(op_name or opcode), **attrs)
        if opcode in _MAY_HAVE_EFFECTS:
            self.order_effect(inst)
        return self.wrap(inst, weak)

    def order_effect(self, inst) -> None:
        """Keeps a side-effecting `inst` (a host call, or control flow
        holding one) after the previous one, by a control dependency: side
        effects run in program order, as JAX's ordered effects do."""
        if not inst.has_side_effect:
            return
        if self.last_effect is not None:
            self.builder.add_control_dependency(self.last_effect, inst)
        self.last_effect = inst

    def wrap(self, inst, weak=False):
        shape = inst.shape
        if shape.is_tuple:
            return tuple(
                self._wrap_shape(inst, i, s, weak) for i, s in enumerate(shape.tuple_shapes)
            )
        return Tracer(self, inst, tuple(shape.dims), dtypes.numpy_dtype(shape.element_type), weak)

    def _wrap_shape(self, tuple_inst, index, shape, weak):
        gte = self.builder.op("get-tuple-element", tuple_inst, index=index)
        return self.wrap(gte, weak)

    def constant(self, value, dtype=None) -> Tracer:
        array = np.asarray(value, dtype=dtype)
        inst = self.builder.constant(array)
        return Tracer(self, inst, array.shape, array.dtype, False)

    def build(self, root):
        return self.builder.build(root.inst if isinstance(root, Tracer) else root)


class Module:
    """A module being traced: computations are added callees first."""

    def __init__(self, name: str):
        self.name = name
        self.builder = hlo.ModuleBuilder(name)
        self._names: dict[str, int] = {}

    def unique_name(self, base: str) -> str:
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}.{n}"


def current() -> Computation | None:
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def tracing(comp: Computation):
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(comp)
    try:
        yield comp
    finally:
        stack.pop()


class Tracer:
    """An array being traced: a shape, a dtype, and the instruction that
    computes it. Operators and methods follow jax.Array."""

    __slots__ = ("comp", "dtype", "inst", "shape", "weak_type")
    __array_priority__ = 1000

    def __init__(self, comp: Computation, inst, shape, dtype, weak_type: bool = False):
        self.comp = comp
        self.inst = inst
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Traced<{dtypes.shape_text(self.shape, self.dtype)}{'(weak)' if self.weak_type else ''}>"

    # Python control flow on a traced value cannot work: the value is not known.
    def _concrete(self, what: str):
        raise errors.TraceError(
            f"{what} of a traced array {self!r} at {where()}: its value is not known while "
            "tracing. Use uir.lax.cond / uir.lax.while_loop / uir.lax.fori_loop for control "
            "flow on array values, uir.numpy.where for selection, or mark the argument static "
            "with static_argnums / static_argnames."
        )

    def __bool__(self):
        self._concrete("bool()")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __complex__(self):
        self._concrete("complex()")

    def __index__(self):
        self._concrete("Using as an index")

    def __array__(self, *args, **kwargs):
        self._concrete("Converting to a NumPy array")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # arrays are not hashable, as in JAX


def is_tracer(x) -> bool:
    return isinstance(x, Tracer)
