"""uir.jit and its stages: trace a Python function into an HLO module once
per abstract signature, and run it (compiled for this CPU by default; on the
reference evaluator with backend="eval").

    f = uir.jit(fn, static_argnums=(1,))
    f(x, 3)                      # NumPy in, NumPy out (pytrees of them)
    lowered = f.lower(x, 3)      # .as_text(), .module
    compiled = lowered.compile() # .as_text(), __call__
    uir.make_hlo(fn)(x)          # the module
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from uir._src.core import distributed, dtypes, errors, tracing, tree_util
from uir._src.core.passes import flags
from uir._src.core.tracing import Tracer


class ShapeDtype:
    """An abstract value: what a traced argument is known to be."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    def key(self):
        return (self.shape, self.dtype.str, self.dtype.name, self.weak_type)

    def __repr__(self) -> str:
        return f"ShapeDtype({self.shape}, {self.dtype}{', weak' if self.weak_type else ''})"


class ShapeDtypeStruct:
    """The shape and dtype of a value, as jax.ShapeDtypeStruct: what
    uir.jit(f).lower and uir.eval_shape take for an argument without data,
    and what eval_shape gives back."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and self.shape == other.shape
            and self.dtype == other.dtype
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def _abstractify(x) -> tuple[ShapeDtype, np.ndarray]:
    """The abstract value of an argument leaf, and the array it is passed as."""
    if isinstance(x, Tracer):
        raise errors.TraceError(
            "a traced value was passed to a jitted function from outside tracing"
        )
    if isinstance(x, bool):
        return ShapeDtype((), np.bool_), np.asarray(x)
    if isinstance(x, (int, float, complex)):
        dtype, weak = dtypes.promote((np.asarray(x).dtype, True))
        return ShapeDtype((), dtype, weak), np.asarray(x, dtype)
    if (
        hasattr(x, "shape")
        and hasattr(x, "dtype")
        and not isinstance(x, np.ndarray)
        and not isinstance(x, np.generic)
    ):
        if isinstance(x, ShapeDtype):
            return x, None
        if not hasattr(x, "__array__"):
            # A shape and dtype without data (uir.ShapeDtypeStruct, or
            # jax's): enough to lower, not to call.
            return ShapeDtype(tuple(x.shape), dtypes.canonicalize(x.dtype)), None
        x = np.asarray(x)
    a = np.asarray(x)
    if a.dtype == object or a.dtype.name not in dtypes._HLO:
        raise TypeError(
            f"{type(x).__name__} {x!r} is not a valid argument: pass arrays, scalars, or pytrees of them"
        )
    dtype = dtypes.canonicalize(a.dtype)
    return ShapeDtype(a.shape, dtype), (a if a.dtype == dtype else a.astype(dtype))


class Lowered:
    """A traced function: its HLO module and how to call it."""

    def __init__(self, module, in_tree, out_tree, in_avals, fn_name: str, donated=()):
        self.module = module
        # Parameter numbers whose arrays the caller donates (donate_argnums).
        self.donated = tuple(donated)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = in_avals
        self._fn_name = fn_name
        self._compiled: dict[str, Compiled] = {}

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The traced HLO module as text. With debug_info, a listing to read:
        each instruction without its metadata, followed by the file, line
        and text of the user's source that made it (as jax's
        Lowered.as_text(debug_info=True) adds locations)."""
        if dialect not in (None, "hlo"):
            raise ValueError(f"as_text: uir's dialect is 'hlo', not {dialect!r}")
        if not debug_info:
            return self.module.to_text()
        return _with_source(self.module.to_text())

    def compile(self, backend: str | None = None) -> Compiled:
        """The compiled function for `backend` (the default backend if None);
        compiled once per backend and kept."""
        from uir._src.core.backend import default_backend

        name = default_backend() if backend is None else backend
        if name not in self._compiled:
            self._compiled[name] = Compiled(self, name)
        return self._compiled[name]

    def __repr__(self) -> str:
        return f"Lowered({self._fn_name})"


_METADATA = re.compile(r", metadata=\{([^{}]*)\}")
_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def _with_source(text: str) -> str:
    """Module text with each instruction's metadata replaced by a comment
    naming its op and the user's source line (file:line and the line)."""
    import linecache
    import os

    lines = []
    for line in text.splitlines():
        found = _METADATA.search(line)
        if not found:
            lines.append(line)
            continue
        fields = {k: v.strip('"') for k, v in _FIELD.findall(found.group(1))}
        body = line[: found.start()] + line[found.end() :]
        where = fields.get("op_name", "")
        if "source_file" in fields and "source_line" in fields:
            number = int(fields["source_line"])
            code = linecache.getline(fields["source_file"], number).strip()
            where += f"  {os.path.basename(fields['source_file'])}:{number}"
            if code:
                where += f"  {code}"
        lines.append(f"{body}  # {where}" if where else body)
    return "\n".join(lines) + "\n"


class Compiled:
    """A lowered function ready to run: `module` is the lowered module after
    the default pass pipeline (`lowered.module` is untouched), `executable`
    its uir.compile result on the chosen backend ("cpu" by default)."""

    def __init__(self, lowered: Lowered, backend: str | None = None):
        from uir._src.core.backend import compile

        self.lowered = lowered
        self.executable = compile(lowered.module, backend)
        self.module = self.executable.module
        self._buffer_assignment = None
        # Compiled for positional arrays only (no pytrees, no keywords)?
        self._flat_args = lowered.in_tree == _flat_tree(len(lowered.in_avals))
        self._in_signature = tuple((v.shape, np.dtype(v.dtype)) for v in lowered.in_avals)
        # One array out, returned as it comes?
        self._single_out = lowered.out_tree == tree_util.tree_structure(0)
        # Participants of an SPMD program (a shard_map inside), else 1.
        self._participants = self.executable.participants

    @property
    def backend(self) -> str:
        return self.executable.backend

    @property
    def fallbacks(self) -> list[str]:
        """What runs on the evaluator instead of compiled code, with reasons."""
        return self.executable.fallbacks

    def as_text(self) -> str:
        return self.module.to_text()

    @property
    def buffer_assignment(self):
        """Where each value of the optimized module lives (uir.buffers.assign)."""
        if self._buffer_assignment is None:
            from uir._src.core.buffers import assign

            self._buffer_assignment = assign(self.module)
        return self._buffer_assignment

    @property
    def kernel_graph(self):
        """The Unified IR of the optimized module for this machine's CPU
        model (uir.igraph.lower): a Kernel Graph of iGraph kernels, library
        calls and the nodes that still run on the evaluator."""
        return self.executable.kernel_graph

    def cost_analysis(self) -> dict[str, float]:
        """The cost model's flops and bytes accessed over the compiled
        thunks (uir._src.core.cost), as jax's Compiled.cost_analysis()."""
        from uir._src.core.cost import cost_analysis

        return cost_analysis(self.executable)

    def memory_analysis(self):
        """Argument, output, alias, temporary and generated-code bytes, in
        the fields of JAX's CompiledMemoryStats (uir._src.core.cost)."""
        from uir._src.core.cost import memory_analysis

        return memory_analysis(self.executable, self.buffer_assignment)

    def profile(
        self,
        *args,
        roofline: tuple[float, float] | None = None,
        warmup: int = 1,
        loop_bodies: bool = False,
    ):
        """Runs on `args` (as the function takes them) with every op timed:
        a Profile of per-op rows (see Executable.profile; `loop_bodies` adds
        a row per iGraph timing its loop bodies)."""
        leaves = [np.asarray(a) for a in tree_util.tree_leaves(args)]
        profile = self.executable.profile(
            *leaves, roofline=roofline, warmup=warmup, loop_bodies=loop_bodies
        )
        profile.result = self._unflatten(profile.result)
        return profile

    def serialize(self) -> bytes:
        """The compiled function as bytes (Executable.serialize);
        uir.deserialize(blob) gives an executable that takes the function's
        array arguments flattened in order and returns its results flat."""
        return self.executable.serialize()

    def call_flat(self, arrays: Sequence[np.ndarray]):
        env = flags()
        checking = bool(env and env.get("check_kernel_graph"))
        participants = self._participants
        if participants > 1 and not distributed.is_initialized():
            # An SPMD program (shard_map inside) outside a run across
            # processes: every participant in a thread of this process. Its
            # results are global, the same on each: participant 0's.
            result = self.executable(*arrays, replicas=participants)[0]
            return self._unflatten(result)
        if self.lowered.donated and not checking:  # the check reads the arguments after
            result = self.executable.call_donating(arrays, self.lowered.donated)
        else:
            result = self.executable(*arrays)
        if checking:
            self._check_kernel_graph(arrays, result, env.get("kernel_graph_log"))
        return self._unflatten(result)

    def _unflatten(self, result):
        """The executable's flat result in the function's output structure."""
        if self._single_out:
            return result
        leaves = list(result) if self.lowered.out_tree.num_leaves != 1 else [result]
        return tree_util.tree_unflatten(self.lowered.out_tree, leaves)

    def _check_kernel_graph(self, arrays, result, log) -> None:
        """UIR_FLAGS=--check_kernel_graph: runs the Kernel Graph beside the
        evaluator and raises InternalError when they disagree. With
        --kernel_graph_log=PATH, appends one line per node (kind, name and the
        reason of a fallback) to PATH."""
        from uir._src.core.errors import InternalError
        from uir._src.core.igraph import interpret

        kg = self.kernel_graph
        if isinstance(log, str):
            with open(log, "a") as f:
                for node in kg.nodes:
                    f.write(f"{self.module.name}\t{node.kind}\t{node.name}\t{node.reason}\n")
        if any(i.opcode == "rng" for c in self.module.computations for i in c.instructions):
            return  # the stateful rng draws other numbers in each (and on each run)
        got = interpret(kg, *arrays)
        want_leaves = result if isinstance(result, tuple) else (result,)
        got_leaves = got if isinstance(got, tuple) else (got,)
        for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
            g, w = np.asarray(g), np.asarray(w)
            if w.dtype.kind == "c" or dtypes.is_float(w.dtype):
                same = np.allclose(
                    g.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                    w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                    rtol=1e-4,
                    atol=1e-5,
                    equal_nan=True,
                )
            else:
                same = np.array_equal(g, w)
            if g.shape != w.shape or not same:
                raise InternalError(
                    f"the Kernel Graph of {self.module.name} differs from the evaluator "
                    f"in output {i}"
                )

    def __call__(self, *args, **kwargs):
        # Plain NumPy arrays of the compiled shapes and dtypes go straight in.
        if (
            self._flat_args
            and not kwargs
            and all(type(a) is np.ndarray for a in args)
            and tuple((a.shape, a.dtype) for a in args) == self._in_signature
        ):
            return self.call_flat(args)
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.lowered.in_tree:
            raise errors.ArgumentError(
                f"called with arguments of structure {tree}, compiled for {self.lowered.in_tree}"
            )
        arrays = []
        for leaf, aval in zip(leaves, self.lowered.in_avals, strict=True):
            got, array = _abstractify(leaf)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                raise errors.ArgumentError(f"argument {got} does not match the compiled {aval}")
            arrays.append(array)
        return self.call_flat(arrays)


@functools.cache
def _flat_tree(n: int):
    """The tree of n positional array arguments and no keyword arguments."""
    return tree_util.tree_flatten((tuple(range(n)), {}))[1]


def _trace(
    fn: Callable, fn_name: str, args_tree, in_avals: list[ShapeDtype], rebuild, donated=()
) -> Lowered:
    module = tracing.Module(f"jit_{fn_name}")
    comp = tracing.Computation(module, "main", f"jit({fn_name})")
    with tracing.tracing(comp):
        params = [comp.parameter(a.shape, a.dtype, a.weak_type) for a in in_avals]
        args, kwargs = rebuild(params)
        out = fn(*args, **kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        from uir._src.core import ops

        roots = []
        for leaf in out_leaves:
            if not (isinstance(leaf, Tracer) or ops.is_array_like(leaf)):
                raise errors.TraceError(
                    f"{fn_name} returned a {type(leaf).__name__}, which is not an array"
                )
            roots.append(ops.asarray(leaf))
        if len(roots) == 1:
            root = roots[0].inst
        else:
            root = comp.builder.op("tuple", *[r.inst for r in roots])
        entry = comp.build(root)
    built = module.builder.build(entry)
    # A shard_map inside: one SPMD program of its mesh's participants.
    partitions = getattr(module, "partitions", None)
    if partitions:
        built.num_partitions = partitions
    if donated:
        built.input_output_alias = _aliases([in_avals[i] for i in donated], donated, roots, fn_name)
    return Lowered(built, args_tree, out_tree, in_avals, fn_name, donated)


def _aliases(donated_avals, donated, roots, fn_name: str):
    """input_output_alias for donated parameters, as JAX pairs them: each
    output takes the first unused donated parameter of its shape and dtype;
    a donated parameter no output can use is reported, not an error."""
    single = len(roots) == 1
    free = list(zip(donated, donated_avals, strict=True))
    aliases = []
    for j, r in enumerate(roots):
        for k, (param, aval) in enumerate(free):
            if aval.shape == tuple(r.shape) and aval.dtype == np.dtype(r.dtype):
                aliases.append(((() if single else (j,)), param, (), False))
                del free[k]
                break
    if free:
        warnings.warn(
            f"{fn_name}: some donated buffers were not usable: "
            + ", ".join(f"{a.dtype}{list(a.shape)}" for _, a in free),
            stacklevel=4,
        )
    return aliases


class Jitted:
    """What uir.jit returns: call it like the function."""

    def __init__(
        self, fn: Callable, static_argnums=(), static_argnames=(), donate_argnums=(), backend=None
    ):
        if not callable(fn):
            raise TypeError(f"uir.jit takes a function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._name = getattr(fn, "__name__", "fn").replace("<", "").replace(">", "") or "fn"
        as_tuple = lambda v: (v,) if isinstance(v, (int, str)) else tuple(v)  # noqa: E731
        self.static_argnums = as_tuple(static_argnums)
        self.static_argnames = as_tuple(static_argnames)
        self.donate_argnums = as_tuple(donate_argnums)
        if any(not isinstance(i, int) for i in self.donate_argnums):
            raise TypeError(f"donate_argnums must be ints, got {donate_argnums!r}")
        if set(self.donate_argnums) & {i for i in self.static_argnums if isinstance(i, int)}:
            raise ValueError(
                f"static_argnums {self.static_argnums} and donate_argnums "
                f"{self.donate_argnums} cannot share an argument"
            )
        self.backend = backend
        try:
            self._signature = inspect.signature(fn)
        except (TypeError, ValueError):
            self._signature = None
        # Traces by abstract signature; each Lowered compiles on first call
        # and keeps its executable per backend.
        self._cache: dict[Any, Lowered] = {}
        # Calls with only NumPy arrays of canonical dtypes, positional and
        # not static, skip flattening: keyed by their shapes and dtypes.
        self._fast: dict[Any, Compiled] = {}
        self.trace_count = 0

    def _split(self, args, kwargs):
        """(static part as a hashable key, dynamic args and kwargs)."""
        nargs = len(args)
        static_nums = {i % nargs if nargs and i < 0 else i for i in self.static_argnums}
        static_names = set(self.static_argnames)
        if self._signature is not None:
            params = list(self._signature.parameters)
            for i in list(static_nums):
                if i < len(params):
                    static_names.add(params[i])
            for name in list(static_names):
                if name in params:
                    static_nums.add(params.index(name))
        static = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in static_nums:
                static.append((i, _hashable(a, f"static argument {i}")))
            else:
                dyn_args.append((i, a))
        dyn_kwargs = {}
        for k, v in sorted(kwargs.items()):
            if k in static_names:
                static.append((k, _hashable(v, f"static argument {k!r}")))
            else:
                dyn_kwargs[k] = v
        return tuple(static), dyn_args, dyn_kwargs

    def _lowered_and_arrays(self, args, kwargs):
        static, dyn_args, dyn_kwargs = self._split(args, kwargs)
        leaves, tree = tree_util.tree_flatten((tuple(a for _, a in dyn_args), dyn_kwargs))
        abstract = [_abstractify(leaf) for leaf in leaves]
        avals = [a for a, _ in abstract]
        key = (static, tree, tuple(a.key() for a in avals), dtypes.config.read("enable_x64"))
        lowered = self._cache.get(key)
        if lowered is None:
            positions = [i for i, _ in dyn_args]

            def rebuild(params):
                dyn, kw = tree_util.tree_unflatten(tree, params)
                full = list(args)
                for pos, value in zip(positions, dyn, strict=True):
                    full[pos] = value
                out_kwargs = dict(kwargs)
                out_kwargs.update(kw)
                return full, out_kwargs

            self.trace_count += 1
            lowered = _trace(
                self._fn, self._name, tree, avals, rebuild, self._donated_leaves(args, dyn_args)
            )
            self._cache[key] = lowered
        return lowered, [a for _, a in abstract]

    def _donated_leaves(self, args, dyn_args) -> list[int]:
        """The flat parameter numbers of the donated arguments' leaves."""
        if not self.donate_argnums:
            return []
        nargs = len(args)
        donated = {i % nargs if nargs and i < 0 else i for i in self.donate_argnums}
        out, first = [], 0
        for pos, value in dyn_args:
            count = len(tree_util.tree_flatten(value)[0])
            if pos in donated:
                out.extend(range(first, first + count))
            first += count
        return out

    def __call__(self, *args, **kwargs):
        if tracing.current() is not None:
            # Inside another trace, a jitted function is inlined.
            return self._fn(*args, **kwargs)
        fast_key = None
        if (
            not kwargs
            and not self.static_argnums
            and not self.static_argnames
            and all(type(a) is np.ndarray for a in args)
        ):
            fast_key = (tuple((a.shape, a.dtype) for a in args), dtypes.config.read("enable_x64"))
            compiled = self._fast.get(fast_key)
            if compiled is not None:
                return compiled.call_flat(args)
        lowered, arrays = self._lowered_and_arrays(args, kwargs)
        if any(a is None for a in arrays):
            raise TypeError(
                f"{self._name}: a ShapeDtypeStruct has a shape and dtype but no data: pass it "
                "to .lower() (or uir.eval_shape), and arrays to the call"
            )
        compiled = lowered.compile(self.backend)
        if fast_key is not None and all(x is a for x, a in zip(arrays, args, strict=True)):
            self._fast[fast_key] = compiled  # the arrays needed no conversion
        return compiled.call_flat(arrays)

    def lower(self, *args, **kwargs) -> Lowered:
        """The traced function for these arguments (traced once per abstract
        signature); nothing is compiled until `.compile()` or a call."""
        lowered, _ = self._lowered_and_arrays(args, kwargs)
        return lowered

    def __repr__(self) -> str:
        return f"uir.jit({self._name})"


def eval_shape(fn: Callable, *args, **kwargs):
    """The shapes and dtypes of fn's results for these arguments (arrays or
    uir.ShapeDtypeStruct), as a pytree of uir.ShapeDtypeStruct: fn is traced,
    nothing is compiled or run (jax.eval_shape)."""
    lowered = Jitted(fn).lower(*args, **kwargs)
    root = lowered.module.entry.root.shape
    shapes = root.tuple_shapes if lowered.out_tree.num_leaves != 1 else [root]
    # (A shape's dtype is the HLO type's name where NumPy has none: bf16.)
    leaves = [
        ShapeDtypeStruct(
            tuple(s.dims),
            s.dtype if isinstance(s.dtype, np.dtype) else dtypes.numpy_dtype(str(s.dtype)),
        )
        for s in shapes
    ]
    return tree_util.tree_unflatten(lowered.out_tree, leaves)


def block_until_ready(x):
    """x itself: uir's results are NumPy arrays, complete when a call
    returns (jax.block_until_ready, for code written against JAX)."""
    return x


def _aligned_copy(a) -> np.ndarray:
    """A C-contiguous copy of `a` at a 64-byte aligned address (the
    alignment compiled code writes donated arrays in place at)."""
    a = np.asarray(a)
    raw = np.empty(a.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """The arrays of pytree x as NumPy arrays, copied (unless `may_alias`)
    to 64-byte aligned memory, where a donated argument is written in
    place: uir runs on the host's memory, so there is one device
    (jax.device_put, for code written against JAX)."""
    if device is not None and device not in ("cpu", None) and not hasattr(device, "platform"):
        raise ValueError(f"device_put: unknown device {device!r}; uir's device is the CPU")
    if may_alias is True:
        return tree_util.tree_map(np.asarray, x)
    return tree_util.tree_map(_aligned_copy, x)


def _hashable(value, what: str):
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"{what} must be hashable to be static (it keys the trace cache), got {type(value).__name__}"
        ) from None
    return value


def jit(
    fn: Callable | None = None,
    *,
    static_argnums=(),
    static_argnames=(),
    donate_argnums=(),
    backend: str | None = None,
):
    """Traces `fn` once per abstract signature (shapes, dtypes, static
    values, pytree structure) into HLO, compiles it for `backend` ("cpu",
    the default, or "eval") and runs it. Usable as @uir.jit or
    @uir.jit(static_argnums=...)."""
    if fn is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            backend=backend,
        )
    return Jitted(fn, static_argnums, static_argnames, donate_argnums, backend)


def make_hlo(fn: Callable, static_argnums=(), static_argnames=()):
    """make_hlo(fn)(*args) -> the HloModule fn traces to on those arguments."""

    def lower(*args, **kwargs):
        return Jitted(fn, static_argnums, static_argnames).lower(*args, **kwargs).module

    return lower
