"""uir.lax: XLA's operations one to one, and structured control flow."""

from __future__ import annotations

import builtins

import numpy as np

from uir._src import dtypes, ops, tracing, tree_util
from uir._src.eager import eager
from uir._src.ops import asarray, fail
from uir._src.tracing import Tracer


def _flatten_avals(op: str, tree_value):
    leaves, tree = tree_util.tree_flatten(tree_value)
    ts = []
    for leaf in leaves:
        if not ops.is_array_like(leaf):
            fail(op, f"the carried value holds a {type(leaf).__name__}, which is not an array")
        ts.append(asarray(leaf))
    return ts, tree


def _tuple_param(sub, name, avals):
    tuple_shape = "(" + ", ".join(dtypes.hlo_shape(a.shape, a.dtype) for a in avals) + ")"
    param = sub.builder.parameter(0, tuple_shape, name=f"{name}_arg")
    return [
        Tracer(
            sub, sub.builder.op("get-tuple-element", param, index=i), a.shape, a.dtype, a.weak_type
        )
        for i, a in enumerate(avals)
    ]


def _captures_of(name: str, avals, tree, fn, op: str) -> list[Tracer]:
    """The enclosing values `fn` reads: found by tracing it once into a
    throwaway module."""
    comp = ops._comp()
    probe = tracing.Computation(tracing.Module("probe"), name, f"{comp.scope}/{op}", probing=True)
    with tracing.tracing(probe):
        leaves = _tuple_param(probe, name, avals)
        fn(tree_util.tree_unflatten(tree, leaves))
    return probe.captures


def _sub_computation(name: str, avals, tree, fn, op: str, captures=()):
    """Traces fn(pytree of params) into a computation taking one tuple
    parameter (XLA's convention for loop bodies and branches): the values,
    then `captures` (enclosing values it reads). Returns the computation,
    the output leaves and their tree."""
    comp = ops._comp()
    sub = tracing.Computation(comp.module, name, f"{comp.scope}/{op}")
    with tracing.tracing(sub):
        params = _tuple_param(sub, name, list(avals) + list(captures))
        for outer, inner in zip(captures, params[len(avals) :], strict=True):
            sub.capture_map[id(outer)] = inner
        out = fn(tree_util.tree_unflatten(tree, params[: len(avals)]))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        outs = [asarray(o) for o in out_leaves]
        root = sub.builder.op("tuple", *[o.inst for o in outs])
        return sub.build(root), outs, out_tree


def _union(*lists):
    seen, out = set(), []
    for lst in lists:
        for t in lst:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


def _tuple(op_name: str, leaves):
    comp = ops._comp()
    return comp.builder.op("tuple", *[x.inst for x in leaves], metadata=comp.metadata(op_name))


def _unpack(inst, like):
    comp = ops._comp()
    out = []
    for i, a in enumerate(like):
        gte = comp.builder.op("get-tuple-element", inst, index=i)
        out.append(Tracer(comp, gte, a.shape, a.dtype, a.weak_type))
    return out


def while_loop(cond_fun, body_fun, init_val):
    """Repeats body_fun while cond_fun is true; the carried value is a pytree
    whose shapes and dtypes the body must keep."""
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda v: while_loop(cond_fun, body_fun, v))(init_val)
    leaves, tree = _flatten_avals("while_loop", init_val)

    def check_body(v):
        out = body_fun(v)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            fail(
                "while_loop",
                f"body_fun must return the structure of init_val ({tree}), got {out_tree}",
            )
        fixed = []
        for a, o in zip(leaves, out_leaves, strict=True):
            o = asarray(o)
            if o.shape != a.shape or (o.dtype != a.dtype and not o.weak_type):
                fail(
                    "while_loop",
                    f"body_fun changes a carried value from {ops.describe(a)} to {ops.describe(o)}",
                )
            fixed.append(ops.convert(o, a.dtype, a.weak_type))
        return tree_util.tree_unflatten(tree, fixed)

    def check_cond(v):
        p = asarray(cond_fun(v))
        if p.shape != () or p.dtype != np.bool_:
            fail("while_loop", f"cond_fun must return a bool scalar, got {ops.describe(p)}")
        return p

    comp = ops._comp()
    # Enclosing values the body or the condition read ride along in the
    # loop state, unchanged.
    captures = _union(
        _captures_of("body", leaves, tree, check_body, "while/body"),
        _captures_of("cond", leaves, tree, check_cond, "while/cond"),
    )
    # The captured values as operands here (they may themselves be captures
    # of this computation); inside, they are found by the original objects.
    operands = [asarray(c) for c in captures]
    n = len(leaves)

    def body_with_captures(v):
        out = tree_util.tree_leaves(check_body(v))
        inner = tracing.current()
        return (*out, *[inner.capture_map[id(c)] for c in captures])

    body, _, _ = _sub_computation("body", leaves, tree, body_with_captures, "while/body", captures)
    sub = tracing.Computation(comp.module, "cond", f"{comp.scope}/while/cond")
    with tracing.tracing(sub):
        params = _tuple_param(sub, "cond", list(leaves) + operands)
        for outer, inner in zip(captures, params[n:], strict=True):
            sub.capture_map[id(outer)] = inner
        cond = sub.build(check_cond(tree_util.tree_unflatten(tree, params[:n])))
    init = _tuple("while", list(leaves) + operands)
    out = comp.builder.op("while", init, condition=cond, body=body, metadata=comp.metadata("while"))
    return tree_util.tree_unflatten(tree, _unpack(out, list(leaves) + operands)[:n])


def fori_loop(lower, upper, body_fun, init_val):
    """body_fun(i, val) for i in [lower, upper)."""
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda lo, hi, v: fori_loop(lo, hi, body_fun, v))(lower, upper, init_val)
    index_type = dtypes.promote(ops.weak_dtype_of(lower), ops.weak_dtype_of(upper))[0]
    lo = ops.convert(asarray(lower), index_type)
    hi = ops.convert(asarray(upper), index_type)

    def cond(state):
        i, h, _ = state
        return ops.compare(i, h, "LT", "lt")

    def body(state):
        i, h, v = state
        return (
            ops.binary("add", i, ops.asarray(np.ones((), index_type)), op_name="add"),
            h,
            body_fun(i, v),
        )

    return while_loop(cond, body, (lo, hi, init_val))[2]


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands); both branches
    are traced and must return the same structure, shapes and dtypes."""
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda p, *o: cond(p, true_fun, false_fun, *o))(pred, *operands)
    p = asarray(pred)
    if p.shape != ():
        fail("cond", f"pred must be a scalar, got {ops.describe(p)}")
    if p.dtype != np.bool_:
        p = ops.compare(p, ops.asarray(np.zeros((), p.dtype)), "NE", "ne")
    return _branches(p, [false_fun, true_fun], operands, "cond", pred_is_bool=True)


def switch(index, branches, *operands):
    """branches[index](*operands), with index clamped into range."""
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda i, *o: switch(i, branches, *o))(index, *operands)
    i = ops.convert(asarray(index), np.dtype(np.int32))
    if i.shape != ():
        fail("switch", f"index must be a scalar, got {ops.describe(i)}")
    n = len(branches)
    i = ops.binary("maximum", ops.binary("minimum", i, n - 1), 0)
    return _branches(i, list(branches), operands, "switch", pred_is_bool=False)


def _branches(selector, funs, operands, op, pred_is_bool):
    leaves, tree = _flatten_avals(op, tuple(operands))
    calls = [lambda args, f=f: f(*args) for f in funs]
    captures = _union(
        *[_captures_of(f"branch_{k}", leaves, tree, c, op) for k, c in enumerate(calls)]
    )
    operands = [asarray(c) for c in captures]
    comps, outs, out_tree = [], None, None
    for k, call in enumerate(calls):
        c, o, t = _sub_computation(f"branch_{k}", leaves, tree, call, op, captures)
        if outs is None:
            outs, out_tree = o, t
        elif t != out_tree or any(
            a.shape != b.shape or a.dtype != b.dtype for a, b in zip(o, outs, strict=True)
        ):
            fail(
                op,
                f"branches return different types: {[ops.describe(x) for x in outs]} vs {[ops.describe(x) for x in o]}",
            )
        comps.append(c)
    comp = ops._comp()
    arg = _tuple(op, list(leaves) + operands)
    if pred_is_bool:
        out = comp.builder.op(
            "conditional",
            selector.inst,
            arg,
            arg,
            true_computation=comps[1],
            false_computation=comps[0],
            metadata=comp.metadata(op),
        )
    else:
        out = comp.builder.op(
            "conditional",
            selector.inst,
            *([arg] * len(comps)),
            branch_computations=comps,
            metadata=comp.metadata(op),
        )
    return tree_util.tree_unflatten(out_tree, _unpack(out, outs))


def scan(f, init, xs=None, length: int | None = None, reverse: bool = False):
    """carry, ys = scan(f, init, xs): f(carry, x) -> (carry, y) over the
    leading axis of xs, stacking the ys."""
    from uir._src import numpy_impl

    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda c, x: scan(f, c, x, length, reverse))(init, xs)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    x_leaves = [asarray(x) for x in x_leaves]
    n = length if length is not None else (x_leaves[0].shape[0] if x_leaves else None)
    if n is None:
        fail("scan", "give xs or length")
    for x in x_leaves:
        if x.shape[:1] != (n,):
            fail("scan", f"every xs leaf needs a leading axis of {n}, got {ops.describe(x)}")
    # Trace one step to learn the ys' shapes.
    carry_leaves, carry_tree = _flatten_avals("scan", init)

    def step_y_avals():
        comp = ops._comp()
        probe = tracing.Computation(tracing.Module("probe"), "scan_probe", comp.scope, probing=True)
        with tracing.tracing(probe):
            c = [probe.parameter(a.shape, a.dtype, a.weak_type) for a in carry_leaves]
            xl = [probe.parameter(x.shape[1:], x.dtype, x.weak_type) for x in x_leaves]
            _, y = f(
                tree_util.tree_unflatten(carry_tree, c),
                tree_util.tree_unflatten(x_tree, xl) if x_leaves else None,
            )
            y_leaves, y_tree = tree_util.tree_flatten(y)
            return [(asarray(v).shape, asarray(v).dtype) for v in y_leaves], y_tree

    y_avals, y_tree = step_y_avals()
    ys0 = [numpy_impl.zeros((n, *s), d) for s, d in y_avals]
    index_type = np.dtype(np.int32)

    def body(i, state):
        carry, ys = state
        k = ops.binary("subtract", n - 1, i) if reverse else i
        x_t = [_index_leading(x, k) for x in x_leaves]
        new_carry, y = f(carry, tree_util.tree_unflatten(x_tree, x_t) if x_leaves else None)
        y_leaves = [asarray(v) for v in tree_util.tree_leaves(y)]
        ys = [_update_leading(acc, v, k) for acc, v in zip(ys, y_leaves, strict=True)]
        return new_carry, ys

    carry, ys = fori_loop(ops.asarray(np.zeros((), index_type)), n, body, (init, ys0))
    return carry, tree_util.tree_unflatten(y_tree, ys)


def _index_leading(x, k):
    return ops.reshape(dynamic_slice(x, [k] + [0] * (x.ndim - 1), (1, *x.shape[1:])), x.shape[1:])


def _update_leading(acc, v, k):
    v = ops.convert(asarray(v), acc.dtype)
    return dynamic_update_slice(acc, ops.reshape(v, (1, *v.shape)), [k] + [0] * (acc.ndim - 1))


def map(f, xs):
    """f applied to each slice of xs along its leading axis (a loop)."""
    return scan(lambda c, x: (c, f(x)), (), xs)[1]


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
        "bitcast-convert", x, shape=dtypes.hlo_shape(shape, new), op_name="bitcast_convert_type"
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
def slice(operand, start_indices, limit_indices, strides=None):
    from uir._src import numpy_shapes as jnp

    x = asarray(operand)
    strides = strides or [1] * x.ndim
    return jnp.slice_static(x, list(start_indices), list(limit_indices), list(strides))


def _index_scalars(starts, op):
    idx = []
    for s in starts:
        t = ops.convert(asarray(s), np.dtype(np.int32))
        if t.shape != ():
            fail(op, f"start indices must be scalars, got {ops.describe(t)}")
        idx.append(t)
    return idx


@eager
def dynamic_slice(operand, start_indices, slice_sizes):
    x = asarray(operand)
    if len(start_indices) != x.ndim or len(slice_sizes) != x.ndim:
        fail("dynamic_slice", f"needs {x.ndim} start indices and sizes for {ops.describe(x)}")
    idx = _index_scalars(start_indices, "dynamic_slice")
    out = ops._comp().emit(
        "dynamic-slice",
        x,
        *idx,
        dynamic_slice_sizes=list(slice_sizes),
        shape=dtypes.hlo_shape(slice_sizes, x.dtype),
        op_name="dynamic_slice",
    )
    out.weak_type = x.weak_type
    return out


@eager
def dynamic_update_slice(operand, update, start_indices):
    x = asarray(operand)
    u = ops.convert(asarray(update), x.dtype)
    if u.ndim != x.ndim:
        fail(
            "dynamic_update_slice",
            f"update {ops.describe(u)} must have the rank of {ops.describe(x)}",
        )
    idx = _index_scalars(start_indices, "dynamic_update_slice")
    out = ops._comp().emit("dynamic-update-slice", x, u, *idx, op_name="dynamic_update_slice")
    out.weak_type = x.weak_type
    return out


@eager
def dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    from uir._src import numpy_shapes as jnp

    (lc, rc), (lb, rb) = dimension_numbers
    out = jnp._dot_general(
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
    result_shape = (
        dtypes.hlo_shape(shape, xs[0].dtype)
        if single
        else "(" + ", ".join(dtypes.hlo_shape(shape, x.dtype) for x in xs) + ")"
    )
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


def custom_call(
    target: str, operands, result_shape_dtypes, opaque: bytes = b"", has_side_effect: bool = False
):
    """Emits custom-call `target` on operands; result_shape_dtypes is an
    object with .shape and .dtype (or a tuple of them). The target is looked
    up in uir.custom_call's registry when the program runs."""
    if tracing.current() is None:
        from uir._src.api import jit

        return jit(lambda *o: custom_call(target, o, result_shape_dtypes, opaque, has_side_effect))(
            *operands
        )
    xs = [asarray(o) for o in operands]
    if isinstance(result_shape_dtypes, (tuple, list)):
        shape = (
            "("
            + ", ".join(
                dtypes.hlo_shape(r.shape, dtypes.canonicalize(r.dtype)) for r in result_shape_dtypes
            )
            + ")"
        )
    else:
        shape = dtypes.hlo_shape(
            result_shape_dtypes.shape, dtypes.canonicalize(result_shape_dtypes.dtype)
        )
    attrs = {"custom_call_target": target}
    if opaque:
        attrs["backend_config"] = opaque.decode() if isinstance(opaque, bytes) else str(opaque)
    if has_side_effect:
        attrs["custom_call_has_side_effect"] = True
    return ops._comp().emit("custom-call", *xs, shape=shape, op_name="custom_call", **attrs)


class ShapeDtypeStruct:
    """The shape and dtype of a value, as jax.ShapeDtypeStruct."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


def _padding_pairs(padding, in_sizes, window, strides, dilation=None):
    """'SAME' / 'VALID' / explicit (lo, hi) pairs, as JAX resolves them."""
    dilation = dilation or [1] * len(window)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(window)
        if padding.upper() == "SAME":
            out = []
            for n, k, s, d in zip(in_sizes, window, strides, dilation, strict=True):
                k = (k - 1) * d + 1
                total = builtins.max((-(-n // s) - 1) * s + k - n, 0)
                out.append((total // 2, total - total // 2))
            return out
        fail("padding", f"unknown padding {padding!r} (use 'SAME', 'VALID' or (low, high) pairs)")
    return [tuple(int(v) for v in p) for p in padding]


def _window_text(sizes, strides, pads, base_dil=None, win_dil=None):
    n = len(sizes)
    parts = [
        "size=" + "x".join(builtins.map(str, sizes)),
        "stride=" + "x".join(builtins.map(str, strides)),
        "pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads),
    ]
    if base_dil and any(d != 1 for d in base_dil):
        parts.append("lhs_dilate=" + "x".join(builtins.map(str, base_dil)))
    if win_dil and any(d != 1 for d in win_dil):
        parts.append("rhs_dilate=" + "x".join(builtins.map(str, win_dil)))
    return "{" + " ".join(parts) + "}" if n else "{}"


@eager
def reduce_window(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """XLA's reduce-window with a binary `computation` (e.g. lax.add)."""
    x = asarray(operand)
    init = ops.convert(asarray(init_value), x.dtype)
    pads = _padding_pairs(padding, x.shape, window_dimensions, window_strides, window_dilation)
    reducer = ops.scalar_computation("reduce_window", x.dtype, computation)
    base = base_dilation or [1] * x.ndim
    win = window_dilation or [1] * x.ndim
    shape = []
    for n, k, s, (lo, hi), bd, wd in zip(
        x.shape, window_dimensions, window_strides, pads, base, win, strict=True
    ):
        padded = (n - 1) * bd + 1 + lo + hi if n else lo + hi
        shape.append(builtins.max(0, (padded - ((k - 1) * wd + 1)) // s + 1))
    out = ops._comp().emit(
        "reduce-window",
        x,
        init,
        window=_window_text(window_dimensions, window_strides, pads, base, win),
        to_apply=reducer,
        shape=dtypes.hlo_shape(shape, x.dtype),
        op_name="reduce_window",
    )
    out.weak_type = x.weak_type
    return out


def _conv_labels(dimension_numbers, ndim: int) -> str:
    """HLO dim_labels for JAX's dimension_numbers: three layout strings
    (N/C for batch/feature of lhs and output, O/I for the kernel, the same
    spatial letters in each), or None for NCHW, OIHW, NCHW."""
    spatial = "".join(str(i) for i in range(ndim - 2))
    if dimension_numbers is None:
        return f"bf{spatial}_oi{spatial}->bf{spatial}"
    lhs, rhs, out = dimension_numbers
    order = [c for c in lhs if c not in "NC"]

    def labels(spec: str, batch: str, feature: str, b: str, f: str) -> str:
        if len(spec) != ndim:
            fail("conv_general_dilated", f"dimension numbers {spec!r} for rank {ndim}")
        s = []
        for c in spec:
            if c == batch:
                s.append(b)
            elif c == feature:
                s.append(f)
            elif c in order:
                s.append(str(order.index(c)))
            else:
                fail(
                    "conv_general_dilated", f"spatial dimension {c!r} of {spec!r} is not in {lhs!r}"
                )
        return "".join(s)

    return f"{labels(lhs, 'N', 'C', 'b', 'f')}_{labels(rhs, 'O', 'I', 'o', 'i')}->{labels(out, 'N', 'C', 'b', 'f')}"


@eager
def conv_general_dilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    preferred_element_type=None,
):
    """jax.lax.conv_general_dilated: dimension_numbers as three strings
    (e.g. ("NHWC", "HWIO", "NHWC")) with matching spatial letters, or None
    for NCHW / OIHW / NCHW."""
    x, w = ops.promote("conv_general_dilated", lhs, rhs)
    n = x.ndim - 2
    labels = _conv_labels(dimension_numbers, x.ndim)
    lhs_spec, rest = labels.split("_")
    rhs_spec, out_spec = rest.split("->")
    in_spatial = [x.shape[lhs_spec.index(str(i))] for i in range(n)]
    k_spatial = [w.shape[rhs_spec.index(str(i))] for i in range(n)]
    strides = list(window_strides)
    lhs_dil = list(lhs_dilation or [1] * n)
    rhs_dil = list(rhs_dilation or [1] * n)
    pads = _padding_pairs(padding, in_spatial, k_spatial, strides, rhs_dil)
    out_spatial = []
    for size, k, s, (lo, hi), ld, rd in zip(
        in_spatial, k_spatial, strides, pads, lhs_dil, rhs_dil, strict=True
    ):
        padded = (size - 1) * ld + 1 + lo + hi
        out_spatial.append(builtins.max(0, (padded - ((k - 1) * rd + 1)) // s + 1))
    out_shape = [0] * x.ndim
    out_shape[out_spec.index("b")] = x.shape[lhs_spec.index("b")] // batch_group_count
    out_shape[out_spec.index("f")] = w.shape[rhs_spec.index("o")]
    for i in range(n):
        out_shape[out_spec.index(str(i))] = out_spatial[i]
    attrs = {}
    if feature_group_count != 1:
        attrs["feature_group_count"] = feature_group_count
    if batch_group_count != 1:
        attrs["batch_group_count"] = batch_group_count
    out = ops._comp().emit(
        "convolution",
        x,
        w,
        window=_window_text(k_spatial, strides, pads, lhs_dil, rhs_dil),
        dim_labels=labels,
        shape=dtypes.hlo_shape(out_shape, x.dtype),
        op_name="conv_general_dilated",
        **attrs,
    )
    if preferred_element_type is not None:
        out = ops.convert(out, dtypes.canonicalize(preferred_element_type))
    return out


class GatherDimensionNumbers(tuple):
    """jax.lax.GatherDimensionNumbers."""

    def __new__(
        cls,
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        operand_batching_dims=(),
        start_indices_batching_dims=(),
    ):
        return super().__new__(
            cls,
            (
                tuple(offset_dims),
                tuple(collapsed_slice_dims),
                tuple(start_index_map),
                tuple(operand_batching_dims),
                tuple(start_indices_batching_dims),
            ),
        )


class ScatterDimensionNumbers(tuple):
    """jax.lax.ScatterDimensionNumbers."""

    def __new__(
        cls,
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
        operand_batching_dims=(),
        scatter_indices_batching_dims=(),
    ):
        return super().__new__(
            cls,
            (
                tuple(update_window_dims),
                tuple(inserted_window_dims),
                tuple(scatter_dims_to_operand_dims),
                tuple(operand_batching_dims),
                tuple(scatter_indices_batching_dims),
            ),
        )


@eager
def gather(operand, start_indices, dimension_numbers, slice_sizes):
    """XLA's gather; start_indices' last dimension is the index vector, and
    out-of-range starts are clamped."""
    x, idx = asarray(operand), asarray(start_indices)
    offset, collapsed, start_map, op_batch, idx_batch = dimension_numbers
    batch_shape = idx.shape[:-1]
    offset_sizes = [
        s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in op_batch
    ]
    rank = len(batch_shape) + len(offset_sizes)
    shape, bi, oi = [], 0, 0
    for d in range(rank):
        if d in offset:
            shape.append(offset_sizes[oi])
            oi += 1
        else:
            shape.append(batch_shape[bi])
            bi += 1
    attrs = {}
    if op_batch:
        attrs.update(
            operand_batching_dims=list(op_batch), start_indices_batching_dims=list(idx_batch)
        )
    out = ops._comp().emit(
        "gather",
        x,
        idx,
        offset_dims=list(offset),
        collapsed_slice_dims=list(collapsed),
        start_index_map=list(start_map),
        index_vector_dim=idx.ndim - 1,
        slice_sizes=list(slice_sizes),
        shape=dtypes.hlo_shape(shape, x.dtype),
        op_name="gather",
        **attrs,
    )
    out.weak_type = x.weak_type
    return out


def _scatter(name: str, combine):
    @eager
    def f(operand, scatter_indices, updates, dimension_numbers):
        x, idx = asarray(operand), asarray(scatter_indices)
        u = ops.convert(asarray(updates), x.dtype)
        window, inserted, to_operand, op_batch, idx_batch = dimension_numbers
        reducer = ops.scalar_computation(name, x.dtype, combine)
        attrs = {}
        if op_batch:
            attrs.update(
                input_batching_dims=list(op_batch), scatter_indices_batching_dims=list(idx_batch)
            )
        out = ops._comp().emit(
            "scatter",
            x,
            idx,
            u,
            update_window_dims=list(window),
            inserted_window_dims=list(inserted),
            scatter_dims_to_operand_dims=list(to_operand),
            index_vector_dim=idx.ndim - 1,
            to_apply=reducer,
            shape=dtypes.hlo_shape(x.shape, x.dtype),
            op_name=name,
            **attrs,
        )
        out.weak_type = x.weak_type
        return out

    f.__name__ = name
    return f


scatter = _scatter("scatter", lambda a, b: b)
scatter_add = _scatter("scatter_add", lambda a, b: ops.binary("add", a, b))
scatter_mul = _scatter("scatter_mul", lambda a, b: ops.binary("multiply", a, b))
scatter_min = _scatter("scatter_min", lambda a, b: ops.binary("minimum", a, b))
scatter_max = _scatter("scatter_max", lambda a, b: ops.binary("maximum", a, b))


def add(x, y):
    return ops.binary("add", x, y)


def mul(x, y):
    return ops.binary("multiply", x, y)


def max(x, y):
    return ops.binary("maximum", x, y)


def min(x, y):
    return ops.binary("minimum", x, y)
