"""Replaying HLO into the computation being traced.

A transformation reads a function as HLO (traced once into a module of its
own, or any HloModule) and emits the transformed program instruction by
instruction into the current trace, so what it emits is traced HLO again:
a transformation of a transformation reads it like any other program.

Values during a replay are Tracers for arrays, Python tuples for tuple
shapes (get-tuple-element indexes them; `tuple` makes one), and Opaque for
tokens."""

from __future__ import annotations

import re

import numpy as np

from uir._src.core import dtypes, errors, hlo, tracing, tree_util
from uir._src.core.tracing import Tracer


class Opaque:
    """A value with no array type (a token) carried through a replay."""

    __slots__ = ("inst",)

    def __init__(self, inst):
        self.inst = inst


def current() -> tracing.Computation:
    comp = tracing.current()
    if comp is None:
        raise errors.TraceError("a transformation replayed HLO outside of tracing")
    return comp


def to_inst(value):
    """The instruction of the current computation holding `value`."""
    comp = current()
    if isinstance(value, Tracer):
        return comp.resolve(value).inst
    if isinstance(value, Opaque):
        return value.inst
    if isinstance(value, tuple):
        return comp.builder.op("tuple", *[to_inst(v) for v in value])
    raise TypeError(f"cannot pass {type(value).__name__} as an HLO operand")


def from_inst(inst, comp=None):
    """`inst` as a replay value: a Tracer, an Opaque token or a tuple."""
    comp = comp or current()
    shape = inst.shape
    if shape.is_tuple and inst.opcode.endswith(_HANDLES):
        return Opaque(inst)
    if shape.is_tuple:
        return tuple(
            from_inst(comp.builder.op("get-tuple-element", inst, index=i), comp)
            for i in range(len(shape.tuple_shapes))
        )
    if shape.element_type not in dtypes.NUMPY_DTYPES:  # a token, a buffer
        return Opaque(inst)
    return Tracer(comp, inst, tuple(shape.dims), dtypes.numpy_dtype(shape.element_type))


def op_name_of(inst) -> str:
    md = inst.attributes.get("metadata") or {}
    return md.get("op_name", "").rsplit("/", 1)[-1] or inst.opcode


def metadata_like(inst, prefix: str = "") -> dict:
    """The metadata of `inst` under the current scope: its op name (after
    `prefix`, the transformation's name) and the user's source line."""
    comp = current()
    md = {
        k: v
        for k, v in (inst.attributes.get("metadata") or {}).items()
        if k in ("op_type", "op_name", "source_file", "source_line")
    }
    name = op_name_of(inst)
    md["op_name"] = f"{comp.scope}/{prefix}{name}" if prefix else f"{comp.scope}/{name}"
    if "source_file" not in md:
        md.update(comp.metadata(name))
        md["op_name"] = f"{comp.scope}/{prefix}{name}"
    return md


def _clones(module: tracing.Module) -> dict:
    clones = getattr(module, "_replay_clones", None)
    if clones is None:
        clones = module._replay_clones = {}
    return clones


def clone_computation(c):
    """`c` (of any module) as a computation of the module being traced."""
    comp = current()
    clones = _clones(comp.module)
    found = clones.get(c)
    if found is not None:
        return found
    sub = tracing.Computation(comp.module, re.sub(r"\.\d+$", "", c.name), comp.scope)
    with tracing.tracing(sub):
        args = [
            from_inst(sub.builder.parameter(i, p.shape, name=p.name), sub)
            for i, p in enumerate(c.parameters)
        ]
        (root,) = replay(c, args)
        built = sub.build(to_inst(root))
    clones[c] = built
    return built


def window_text(window) -> str:
    """A window attribute (a list of per-dimension dicts) in HLO's text."""
    if not window:
        return "{}"
    parts = []
    for key, text in (
        ("size", "size"),
        ("stride", "stride"),
        ("padding", "pad"),
        ("lhs_dilate", "lhs_dilate"),
        ("rhs_dilate", "rhs_dilate"),
        ("rhs_reversal", "rhs_reversal"),
    ):
        values = [w[key] for w in window]
        if key == "padding":
            parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in values))
        elif key == "rhs_reversal":
            if any(values):
                parts.append("rhs_reversal=" + "x".join(str(int(v)) for v in values))
        elif key in ("size", "stride") or any(v != 1 for v in values):
            parts.append(f"{text}=" + "x".join(str(v) for v in values))
    return "{" + " ".join(parts) + "}"


# Attributes whose Python form the builder does not take back: passed as text.
_TEXT_ATTRIBUTES = frozenset({"output_to_operand_aliasing", "dim_labels", "window"})

# Ops whose tuple result is a handle for their -done (or -update) op, never
# taken apart.
_HANDLES = ("-start", "-update")


def _attributes(inst) -> dict:
    attrs = dict(inst.attributes)
    attrs.pop("metadata", None)
    attrs.pop("parameter_number", None)
    for key, value in attrs.items():
        if (
            key in _TEXT_ATTRIBUTES
            or isinstance(value, dict)
            or (isinstance(value, list) and value and isinstance(value[0], dict))
        ):
            attrs[key] = inst.attribute_text(key)
        if isinstance(value, hlo.HloComputation):
            attrs[key] = clone_computation(value)
        elif isinstance(value, list) and value and isinstance(value[0], hlo.HloComputation):
            attrs[key] = [clone_computation(v) for v in value]
    return attrs


def emit_like(inst, operands, prefix: str = "", **changes):
    """`inst` emitted again into the current computation on `operands`
    (replay values), its attributes, shape and metadata kept (or changed by
    `changes`: attributes, and `shape`). Called computations are cloned."""
    comp = current()
    attrs = _attributes(inst)
    if inst.opcode == "constant" and "shape" not in changes:
        literal = attrs["literal"]
        if isinstance(literal, np.ndarray):
            t = comp.constant(literal)
            return t
    attrs.update(changes)
    if isinstance(attrs.get("window"), list):
        attrs["window"] = window_text(attrs["window"])
    shape = attrs.pop("shape", inst.shape)
    out = comp.builder.op(
        inst.opcode,
        *[to_inst(o) for o in operands],
        shape=shape,
        metadata=metadata_like(inst, prefix),
        **attrs,
    )
    if inst.has_side_effect:
        comp.order_effect(out)
    return from_inst(out)


def replay(computation, args, rule=None, env=None):
    """Replays `computation` on `args` (one value per parameter) into the
    current trace: each instruction's value is rule(inst, operand values)
    (emit_like by default). Returns the root's value in a 1-tuple, and fills
    `env` (instruction -> value) when given."""
    env = {} if env is None else env
    params = computation.parameters
    if len(params) != len(args):
        raise errors.TraceError(
            f"{computation.name} takes {len(params)} parameters, given {len(args)}"
        )
    for p, a in zip(params, args, strict=True):
        env[p] = a
    for inst in computation.instructions:
        if inst in env:
            continue
        vals = [env[o] for o in inst.operands]
        if inst.opcode == "get-tuple-element":
            env[inst] = vals[0][inst.attributes["index"]]
        elif inst.opcode == "tuple":
            env[inst] = tuple(vals)
        else:
            env[inst] = (rule or emit_like)(inst, vals)
    return (env[computation.root],)


class Traced:
    """A function traced once into a module of its own, for a
    transformation to replay: `computation` takes the flat inputs and
    returns a tuple of the flat outputs; `captures` maps the stand-ins of
    enclosing traced values the function read to those values."""

    def __init__(self, module, computation, captures, out_tree, out_avals):
        self.module = module
        self.computation = computation
        self.captures = captures
        self.out_tree = out_tree
        self.out_avals = out_avals

    def env(self) -> dict:
        return dict(self.captures)


def trace(fn, args_flat, in_tree, name: str) -> Traced:
    """Traces fn(*unflatten(in_tree, args)) on stand-ins of `args_flat`'s
    shapes and dtypes."""
    from uir._src.core import ops

    outer = tracing.current()
    scope = f"{outer.scope}/{name}" if outer is not None else name
    module = tracing.Module(name)
    comp = tracing.Computation(module, "main", scope, probing=outer is not None)
    with tracing.tracing(comp):
        params = [
            comp.parameter(a.shape, a.dtype, getattr(a, "weak_type", False)) for a in args_flat
        ]
        args, kwargs = tree_util.tree_unflatten(in_tree, params)
        out = fn(*args, **kwargs)
        leaves, out_tree = tree_util.tree_flatten(out)
        roots = []
        for leaf in leaves:
            if not (isinstance(leaf, Tracer) or ops.is_array_like(leaf)):
                raise TypeError(
                    f"{name}: the function returned a {type(leaf).__name__}, which is not an array"
                )
            roots.append(ops.asarray(leaf))
        avals = [(r.shape, r.dtype, r.weak_type) for r in roots]
        entry = comp.build(comp.builder.op("tuple", *[r.inst for r in roots]))
        stand_ins = {comp.capture_map[id(t)].inst: t for t in comp.captures}
    built = module.builder.build(entry)
    by_name = {i.name: i for i in built.entry.instructions}
    captures = {by_name[inst.name]: t for inst, t in stand_ins.items()}
    return Traced(built, built.entry, captures, out_tree, avals)


# --- Replay values as trees ------------------------------------------------------


def leaves(v) -> list:
    if isinstance(v, tuple):
        return [x for e in v for x in leaves(e)]
    return [v]


def unflatten(like, flat):
    """`flat` (an iterator) in the nesting of `like`."""
    if isinstance(like, tuple):
        return tuple(unflatten(e, flat) for e in like)
    return next(flat)


def shape_of(v):
    if isinstance(v, tuple):
        return [shape_of(e) for e in v]
    if isinstance(v, Opaque):
        return v.inst.shape
    return (v.shape, v.dtype)


def sub_computation(name: str, arg_like, fn):
    """A computation of the module being traced taking one parameter shaped
    like `arg_like` and returning fn(parameter value)."""
    comp = current()
    sub = tracing.Computation(comp.module, name, comp.scope)
    with tracing.tracing(sub):
        param = sub.builder.parameter(0, shape_of(arg_like), name=f"{name}_arg")
        root = fn(from_inst(param, sub))
        if not isinstance(root, tuple):
            return sub.build(to_inst(root))
        return sub.build(sub.builder.op("tuple", *[to_inst(r) for r in root]))
