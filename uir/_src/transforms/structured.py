"""Derivative rules of the structured ops: gather and scatter, sort,
reduce-window and convolution, in both modes.

- gather's transpose is a scatter-add of the cotangent (starts clamped as
  gather clamps them); scatter's is a gather of the cotangent, zero where
  the scatter dropped a window.
- sort carries the tangents as extra operands; its transpose sorts an
  iota beside the keys for the permutation and sorts the cotangents back
  by it.
- reduce-window: a sum's transpose pads the cotangent (strides as
  interior padding) and sums windows again; max and min pick one element
  per window (a variadic reduce-window carrying the tangent in forward
  mode, select-and-scatter in reverse); a product divides by the element.
- convolution's transposes are convolutions: the cotangent with the
  reversed kernel (input and output features swapped) for the input, and
  the input with the cotangent for the kernel, feature groups moved into
  batch groups and back."""

from __future__ import annotations

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.lax.convolution import convolution_with_labels
from uir._src.lax.elementwise import _conjugate
from uir._src.lax.windowed import _window_text
from uir._src.transforms import lapack_rules
from uir._src.transforms.replay import emit_like, op_name_of, replay
from uir._src.transforms.rules import (
    add,
    compare,
    computation_kind,
    convert,
    differentiable,
    div,
    instantiate,
    mul,
    reducer_kind,
    scalar,
    select,
    unsupported,
    zeros_like,
)


def _emit(opcode, *operands, op_name, **attrs):
    return ops._comp().emit(opcode, *operands, op_name=op_name, **attrs)


def _int(v, dtype=np.int32):
    return ops.asarray(np.array(v, dtype))


# --- gather and scatter -------------------------------------------------------------


def _indices_last(idx, ivd):
    """The indices with the index vector as their last dimension."""
    if ivd == idx.ndim:
        return ops.reshape(idx, (*idx.shape, 1))
    if ivd != idx.ndim - 1:
        perm = [d for d in range(idx.ndim) if d != ivd] + [ivd]
        return ops.transpose(idx, perm)
    return idx


def _columns(idx, n):
    return [
        ops.reshape(
            _emit(
                "slice",
                idx,
                slice=[(0, s, 1) for s in idx.shape[:-1]] + [(k, k + 1, 1)],
                shape=((*idx.shape[:-1], 1), idx.dtype),
                op_name="index_column",
            ),
            idx.shape[:-1],
        )
        for k in range(n)
    ]


def _clamp_starts(idx, start_map, operand_shape, sizes):
    """Starts clamped as gather clamps them: each window inside the operand."""
    cols = []
    for c, d in zip(_columns(idx, len(start_map)), start_map, strict=True):
        top = _int(max(operand_shape[d] - sizes[d], 0), idx.dtype)
        c = ops.binary("maximum", ops.binary("minimum", c, top), _int(0, idx.dtype))
        cols.append(ops.reshape(c, (*c.shape, 1)))
    return ops.concatenate(cols, idx.ndim - 1, "clamp") if cols else idx


def _in_bounds(idx, start_map, operand_shape, sizes):
    """True where the window at each start lies inside the operand."""
    ok = None
    for c, d in zip(_columns(idx, len(start_map)), start_map, strict=True):
        inside = ops.binary(
            "and",
            compare(c, _int(0, idx.dtype), "GE"),
            compare(c, _int(operand_shape[d] - sizes[d], idx.dtype), "LE"),
        )
        ok = inside if ok is None else ops.binary("and", ok, inside)
    return ok


def _add_computation(dtype):
    return ops.scalar_computation("scatter_add", dtype, lambda a, b: ops.binary("add", a, b))


# A gather's dimension numbers and the scatter's that writes where it read.
_GATHER_TO_SCATTER = {
    "offset_dims": "update_window_dims",
    "collapsed_slice_dims": "inserted_window_dims",
    "start_index_map": "scatter_dims_to_operand_dims",
    "operand_batching_dims": "input_batching_dims",
    "start_indices_batching_dims": "scatter_indices_batching_dims",
}


def _translated(attrs, names) -> dict:
    """attrs' dimension numbers under the other op's names (batching
    dimensions only where there are some)."""
    out = {}
    for old, new in names.items():
        value = list(attrs.get(old) or [])
        if value or "batching" not in old:
            out[new] = value
    return out


def _vjp_gather(inst, primals, ct):
    x, idx = primals
    a = inst.attributes
    idx = _indices_last(idx, a["index_vector_dim"])
    idx = _clamp_starts(idx, a["start_index_map"], x.shape, a["slice_sizes"])
    ct_x = _emit(
        "scatter",
        zeros_like(x),
        idx,
        ct,
        **_translated(a, _GATHER_TO_SCATTER),
        index_vector_dim=idx.ndim - 1,
        to_apply=_add_computation(x.dtype),
        shape=(x.shape, x.dtype),
        op_name="vjp/gather",
    )
    return [ct_x, None]


def _scatter_kind(inst) -> str | None:
    comp = inst.attributes["to_apply"]
    root = comp.root
    if root.opcode == "parameter" and root.attributes.get("parameter_number") == 1:
        return "set"
    return computation_kind(comp)


def _window_sizes(inst, x, u):
    a = inst.attributes
    skipped = set(a["inserted_window_dims"]) | set(a.get("input_batching_dims") or [])
    spread = [d for d in range(x.ndim) if d not in skipped]
    sizes = [1] * x.ndim
    for d, w in zip(spread, a["update_window_dims"], strict=True):
        sizes[d] = u.shape[w]
    return sizes


def _gather_updates(inst, ct, idx, u):
    """The cotangent of a scatter's updates: ct gathered at each window,
    zero where the scatter dropped the window."""
    a = inst.attributes
    sizes = _window_sizes(inst, ct, u)
    idx = _indices_last(idx, a["index_vector_dim"])
    got = _emit(
        "gather",
        ct,
        idx,
        **_translated(a, {v: k for k, v in _GATHER_TO_SCATTER.items()}),
        index_vector_dim=idx.ndim - 1,
        slice_sizes=sizes,
        shape=(u.shape, u.dtype),
        op_name="vjp/scatter",
    )
    ok = _in_bounds(idx, a["scatter_dims_to_operand_dims"], ct.shape, sizes)
    if ok is None:
        return got
    scatter_dims = [d for d in range(u.ndim) if d not in a["update_window_dims"]]
    ok = _emit(
        "broadcast",
        ok,
        dimensions=scatter_dims,
        shape=(u.shape, np.dtype(bool)),
        op_name="vjp/scatter",
    )
    return select(ok, got, scalar(got, 0))


def _winners(inst, x, idx, u, out):
    """For a max (min) scatter: where the operand's element is the result,
    where each update's is, and how many tie at each result element (the
    derivative is shared among them, as JAX shares it)."""
    from_x = convert(compare(x, out, "EQ"), x.dtype)
    from_u = convert(compare(u, _gather_updates(inst, out, idx, u), "EQ"), u.dtype)
    count = add(from_x, _scatter_add(inst, zeros_like(x), idx, from_u))
    return from_x, from_u, count


def _scatter_add(inst, base, idx, upd):
    return emit_like(inst, [base, idx, upd], prefix="ad/", to_apply=_add_computation(base.dtype))


def _products(inst, x, idx, u):
    """For a multiply scatter: the product of the updates landing on each
    operand element (P, 1 where none lands) and, for each update, the
    product of the others landing with it (its partial derivative over the
    operand element), exact when updates are zero: the nonzero updates'
    product and the count of zero ones per element decide both."""
    zero, one = scalar(u, 0), scalar(u, 1)
    is_zero = compare(u, zero, "EQ")
    nonzero = emit_like(inst, [add(zeros_like(x), scalar(x, 1)), idx, select(is_zero, one, u)])
    zeros = _scatter_add(inst, zeros_like(x), idx, convert(is_zero, x.dtype))
    product = select(compare(zeros, scalar(zeros, 0), "EQ"), nonzero, scalar(nonzero, 0))
    at_u = _gather_updates(inst, nonzero, idx, u)
    zeros_at_u = _gather_updates(inst, zeros, idx, u)
    alone = compare(zeros_at_u, scalar(zeros_at_u, 1), "EQ")
    none = compare(zeros_at_u, scalar(zeros_at_u, 0), "EQ")
    others = select(
        is_zero,
        select(alone, at_u, zero),
        select(none, div(at_u, select(is_zero, one, u)), zero),
    )
    return product, others


def _vjp_scatter(inst, primals, ct):
    if len(primals) != 3:
        return unsupported(inst, "vjp")
    x, idx, u = primals
    kind = _scatter_kind(inst)
    if kind == "add":
        ct_x, ct_u = ct, _gather_updates(inst, ct, idx, u)
    elif kind == "set":
        ct_x = emit_like(inst, [ct, idx, zeros_like(u)], prefix="vjp/")
        ct_u = _gather_updates(inst, ct, idx, u)
    elif kind in ("maximum", "minimum"):
        out = emit_like(inst, primals)
        from_x, from_u, count = _winners(inst, x, idx, u, out)
        share = div(ct, count)
        ct_x = mul(share, from_x)
        ct_u = mul(_gather_updates(inst, share, idx, u), from_u)
    elif kind == "multiply":
        product, others = _products(inst, x, idx, u)
        ct_x = mul(ct, product)
        ct_u = mul(_gather_updates(inst, mul(ct, x), idx, u), others)
    else:
        return unsupported(inst, "vjp")
    return [ct_x if differentiable(x) else None, None, ct_u if differentiable(u) else None]


def _jvp_scatter(inst, primals, tangents, out):
    kind = _scatter_kind(inst)
    if len(primals) != 3 or kind not in ("add", "set", "maximum", "minimum", "multiply"):
        return unsupported(inst, "jvp")
    tx, _, tu = tangents
    if tx is None and tu is None:
        return None
    x, idx, u = primals
    tx, tu = instantiate(tx, x), instantiate(tu, u)
    if kind in ("add", "set"):
        return emit_like(inst, [tx, idx, tu], prefix="jvp/")
    if kind == "multiply":
        product, others = _products(inst, x, idx, u)
        spread = _scatter_add(inst, zeros_like(x), idx, mul(tu, others))
        return add(mul(tx, product), mul(x, spread))
    from_x, from_u, count = _winners(inst, x, idx, u, out)
    total = add(mul(tx, from_x), _scatter_add(inst, zeros_like(x), idx, mul(tu, from_u)))
    return div(total, count)


# --- sort ---------------------------------------------------------------------------


def _extended_comparator(inst, extra_dtypes):
    """The sort's comparator taking (and ignoring) a pair of parameters more
    for each of `extra_dtypes`."""
    comp = inst.attributes["to_apply"]
    base = [dtypes.numpy_dtype(p.shape.element_type) for p in comp.parameters]
    all_dtypes = base + [d for d in extra_dtypes for _ in range(2)]

    def fn(*params):
        (root,) = replay(comp, list(params[: len(base)]))
        return root

    return ops.scalar_computation("sort_comparator", all_dtypes, fn, arity=len(all_dtypes))


def _sort_with(inst, primals, extra, op_name):
    comparator = _extended_comparator(inst, [e.dtype for e in extra])
    operands = list(primals) + list(extra)
    return _emit(
        "sort",
        *operands,
        dimensions=list(inst.attributes["dimensions"]),
        is_stable=bool(inst.attributes.get("is_stable", False)),
        to_apply=comparator,
        shape=[(o.shape, o.dtype) for o in operands],
        op_name=op_name,
    )


def _jvp_sort(inst, primals, tangents, out):
    n = len(primals)
    ts = [
        instantiate(t, p) if differentiable(p) else None
        for t, p in zip(tangents, primals, strict=True)
    ]
    carried = [t for t in ts if t is not None]
    if not carried:
        return None
    sorted_all = _sort_with(inst, primals, carried, "jvp/sort")
    it = iter(sorted_all[n:])
    t_out = tuple(next(it) if t is not None else None for t in ts)
    return t_out if isinstance(out, tuple) else t_out[0]


def _vjp_sort(inst, primals, out, ct):
    dim = inst.attributes["dimensions"][0]
    x = primals[0]
    iota = _emit(
        "iota", iota_dimension=dim, shape=(x.shape, np.dtype(np.int32)), op_name="vjp/sort"
    )
    perm = _sort_with(inst, primals, [iota], "vjp/sort")[len(primals)]
    cts = ct if isinstance(ct, tuple) else (ct,)
    want = [c for c, p in zip(cts, primals, strict=True) if differentiable(p)]
    if not want:
        return [None] * len(primals)
    lt = ops.scalar_computation(
        "permutation_lt",
        [perm.dtype, perm.dtype] + [d for c in want for d in (c.dtype, c.dtype)],
        lambda a, b, *_: compare(a, b, "LT"),
        arity=2 + 2 * len(want),
    )
    back = _emit(
        "sort",
        perm,
        *want,
        dimensions=[dim],
        is_stable=False,
        to_apply=lt,
        shape=[(perm.shape, perm.dtype)] + [(c.shape, c.dtype) for c in want],
        op_name="vjp/sort",
    )
    it = iter(back[1:])
    return [next(it) if differentiable(p) else None for p in primals]


# --- reduce-window ------------------------------------------------------------------


def _window(inst):
    w = inst.attributes["window"]
    return (
        [d["size"] for d in w],
        [d["stride"] for d in w],
        [tuple(d["padding"]) for d in w],
        [d["lhs_dilate"] for d in w],
        [d["rhs_dilate"] for d in w],
    )


def _dilate(sizes, factors):
    return [0 if s == 0 else (s - 1) * f + 1 for s, f in zip(sizes, factors, strict=True)]


def _transpose_padding(in_sizes, window, strides, out_sizes, pads, lhs_dil, rhs_dil):
    """The padding that makes a stride-1 window over the cotangent (dilated
    by the strides) land on each input element: (lo, hi) per dimension."""
    lhs_d = _dilate(in_sizes, lhs_dil)
    win_d = _dilate(window, rhs_dil)
    out_d = _dilate(out_sizes, strides)
    out = []
    for ld, wd, od, (lo, _) in zip(lhs_d, win_d, out_d, pads, strict=True):
        before = wd - lo - 1
        out.append((before, ld + wd - 1 - od - before))
    return out


def _window_sum_transpose(ct, in_shape, inst):
    sizes, strides, pads, base, win = _window(inst)
    pad_cfg = _transpose_padding(in_shape, sizes, strides, ct.shape, pads, base, win)
    zero = ops.asarray(np.zeros((), ct.dtype))
    padded_shape = [
        lo + hi + (0 if n == 0 else (n - 1) * s + 1)
        for n, s, (lo, hi) in zip(ct.shape, strides, pad_cfg, strict=True)
    ]
    padded = _emit(
        "pad",
        ct,
        zero,
        padding=[(lo, hi, s - 1) for (lo, hi), s in zip(pad_cfg, strides, strict=True)],
        shape=(padded_shape, ct.dtype),
        op_name="vjp/reduce_window",
    )
    ones = [1] * ct.ndim
    summed_shape = [
        p - ((k - 1) * w + 1) + 1 for p, k, w in zip(padded_shape, sizes, win, strict=True)
    ]
    out = _emit(
        "reduce-window",
        padded,
        zero,
        window=_window_text(sizes, ones, [(0, 0)] * ct.ndim, None, win),
        to_apply=_add_computation(ct.dtype),
        shape=(summed_shape, ct.dtype),
        op_name="vjp/reduce_window",
    )
    if any(b != 1 for b in base):
        out = _emit(
            "slice",
            out,
            slice=[(0, n, b) for n, b in zip(out.shape, base, strict=True)],
            shape=(tuple(in_shape), ct.dtype),
            op_name="vjp/reduce_window",
        )
    return out


def _window_sum(inst, t):
    """inst's windows over t, summed."""
    zero = ops.asarray(np.zeros((), t.dtype))
    return emit_like(inst, [t, zero], prefix="jvp/", to_apply=_add_computation(t.dtype))


def _pick_computation(dtype, greater: bool):
    def pick(a, at, b, bt):
        keep = compare(a, b, "GE" if greater else "LE")
        return select(keep, a, b), select(keep, at, bt)

    return ops.scalar_computation("pick_window", dtype, pick, arity=4, outputs=2)


def _jvp_reduce_window(inst, primals, tangents, out):
    if len(primals) != 2:
        return unsupported(inst, "jvp")
    x, init = primals
    tx = tangents[0]
    if tx is None:
        return None
    kind = reducer_kind(inst)
    if kind == "add":
        return _window_sum(inst, tx)
    if kind == "multiply":
        return mul(_window_sum(inst, div(tx, x)), out)
    if kind in ("maximum", "minimum"):
        pair = emit_like(
            inst,
            [x, tx, init, ops.asarray(np.zeros((), x.dtype))],
            prefix="jvp/",
            to_apply=_pick_computation(x.dtype, kind == "maximum"),
            shape=[(out.shape, x.dtype), (out.shape, x.dtype)],
        )
        return pair[1]
    return unsupported(inst, "jvp")


def _vjp_reduce_window(inst, primals, out, ct):
    if len(primals) != 2:
        return unsupported(inst, "vjp")
    x, _ = primals
    kind = reducer_kind(inst)
    if kind == "add":
        return [_window_sum_transpose(ct, x.shape, inst), None]
    if kind == "multiply":
        return [div(_window_sum_transpose(mul(ct, out), x.shape, inst), x), None]
    if kind in ("maximum", "minimum"):
        sizes, strides, pads, base, _ = _window(inst)
        if any(b != 1 for b in base) or any(
            d["rhs_dilate"] != 1 for d in inst.attributes["window"]
        ):
            return unsupported(inst, "vjp")
        chooser = ops.scalar_computation(
            "select_window",
            x.dtype,
            lambda a, b: compare(a, b, "GE" if kind == "maximum" else "LE"),
        )
        ct_x = _emit(
            "select-and-scatter",
            x,
            ct,
            ops.asarray(np.zeros((), x.dtype)),
            window=_window_text(sizes, strides, pads),
            select=chooser,
            scatter=_add_computation(x.dtype),
            shape=(x.shape, x.dtype),
            op_name="vjp/" + op_name_of(inst),
        )
        return [ct_x, None]
    return unsupported(inst, "vjp")


# --- top-k and fft -------------------------------------------------------------------


def _jvp_topk(inst, primals, tangents, out):
    """The tangent at the picked elements: a gather of t at the indices
    along the last axis, the leading axes batching dimensions. Reverse mode
    transposes it (ad.VJP), which makes it the gather's scatter-add."""
    t = tangents[0]
    if t is None:
        return None
    x, idx = primals[0], out[1]
    nb = x.ndim - 1
    taken = _emit(
        "gather",
        instantiate(t, x),
        idx,
        offset_dims=[],
        collapsed_slice_dims=[nb],
        start_index_map=[nb],
        operand_batching_dims=list(range(nb)),
        start_indices_batching_dims=list(range(nb)),
        index_vector_dim=idx.ndim,
        slice_sizes=[1] * x.ndim,
        shape=(idx.shape, x.dtype),
        op_name="jvp/top_k",
    )
    return (taken, None)


def _fft(x, kind, lengths, shape, dtype):
    return _emit(
        "fft", x, fft_type=kind, fft_length=list(lengths), shape=(shape, dtype), op_name="vjp/fft"
    )


def _vjp_fft(inst, primals, out, ct):
    """FFT and IFFT are symmetric matrices: their own transposes. RFFT's
    transpose pads the half spectrum to full length, transforms it and
    keeps the real part; IRFFT's is conj(RFFT(ct)) * c / N, c counting each
    bin of the half spectrum once (its ends) or twice (its mirrored
    middle)."""
    (x,) = primals
    kind = str(inst.attributes["fft_type"]).upper()
    lengths = [int(n) for n in inst.attributes["fft_length"]]
    if kind in ("FFT", "IFFT"):
        return [_fft(ct, kind, lengths, ct.shape, ct.dtype)]
    if kind == "RFFT":
        n = lengths[-1]
        zero = ops.asarray(np.zeros((), ct.dtype))
        pad = [(0, 0, 0)] * (ct.ndim - 1) + [(0, n - ct.shape[-1], 0)]
        full = _emit(
            "pad",
            ct,
            zero,
            padding=pad,
            shape=((*ct.shape[:-1], n), ct.dtype),
            op_name="vjp/fft",
        )
        spectrum = _fft(full, "FFT", lengths, full.shape, full.dtype)
        return [ops.unary("real", spectrum)]
    # IRFFT
    n = lengths[-1]
    half = _fft(ct, "RFFT", lengths, x.shape, x.dtype)
    c = np.full(x.shape[-1], 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    scale = ops.asarray((c / float(np.prod(lengths))).astype(x.dtype))
    return [mul(_conjugate(half), scale)]


# --- select-and-scatter ---------------------------------------------------------------
# With an add scatter, the result is init plus each source element added
# where its window's selection lands: linear in source and init, constant
# in the operand (which only decides where).


def _selected_pick(inst, dtype, ct_dtype):
    """A variadic reduce-window computation over (valid, operand, ct)
    keeping the element the select-and-scatter's select would keep; padding
    (valid false) never wins."""
    chooser = inst.attributes["select"]
    pred = np.dtype(bool)

    def pick(va, a, at, vb, b, bt):
        (keeps_a,) = replay(chooser, [a, b])
        keep = ops.binary("or", ops.unary("not", vb), ops.binary("and", va, keeps_a))
        return ops.binary("or", va, vb), select(keep, a, b), select(keep, at, bt)

    dts = [pred, dtype, ct_dtype] * 2
    return ops.scalar_computation("pick_selected", dts, pick, arity=6, outputs=3)


def _jvp_select_and_scatter(inst, primals, tangents, out):
    if computation_kind(inst.attributes["scatter"]) != "add":
        return unsupported(inst, "jvp")
    x, _, init = primals
    _, t_src, t_init = tangents
    total = None
    if t_src is not None:
        total = emit_like(inst, [x, t_src, ops.asarray(np.zeros((), init.dtype))], prefix="jvp/")
    if t_init is not None:
        spread = ops.broadcast_to(t_init, out.shape)
        total = spread if total is None else add(total, spread)
    return total


def _vjp_select_and_scatter(inst, primals, out, ct):
    if computation_kind(inst.attributes["scatter"]) != "add":
        return unsupported(inst, "vjp")
    x, src, init = primals
    ct_src = ct_init = None
    if differentiable(src):
        valid = ops.broadcast_to(ops.asarray(np.array(True)), x.shape)
        picked = _emit(
            "reduce-window",
            valid,
            x,
            ct,
            ops.asarray(np.array(False)),
            ops.asarray(np.zeros((), x.dtype)),
            ops.asarray(np.zeros((), ct.dtype)),
            window=_window_text(*_window(inst)[:3]),
            to_apply=_selected_pick(inst, x.dtype, ct.dtype),
            shape=[(src.shape, np.dtype(bool)), (src.shape, x.dtype), (src.shape, ct.dtype)],
            op_name="vjp/" + op_name_of(inst),
        )
        ct_src = picked[2]
    if differentiable(init):
        ct_init = ops.reduce(ct, "add", list(range(ct.ndim)), "vjp/select_and_scatter")
    return [None, ct_src, ct_init]


# --- convolution --------------------------------------------------------------------


def _swap(labels: str, a: str, b: str) -> str:
    return "".join(b if c == a else a if c == b else c for c in labels)


def _relabel(labels: str, mapping: dict) -> str:
    return "".join(mapping.get(c, c) for c in labels)


def _split_axis(x, axis, groups):
    shape = list(x.shape)
    shape[axis : axis + 1] = [groups, shape[axis] // groups]
    return ops.reshape(x, tuple(shape))


def _merge_axis(x, src, dst):
    """Axis `src` merged into `dst` (an index once src is removed), src
    the major part."""
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    y = ops.transpose(x, perm)
    shape = [x.shape[d] for d in range(x.ndim) if d != src]
    shape[dst] *= x.shape[src]
    return ops.reshape(y, tuple(shape))


def _conv_parts(inst):
    labels = inst.attribute_text("dim_labels")
    lhs, rest = labels.split("_")
    rhs, out = rest.split("->")
    w = inst.attributes["window"]
    a = inst.attributes
    return (
        lhs,
        rhs,
        out,
        w,
        int(a.get("feature_group_count", 1) or 1),
        int(a.get("batch_group_count", 1) or 1),
    )


def _spatial(spec: str, shape, n):
    return [shape[spec.index(str(i))] for i in range(n)]


def _conv_lhs_transpose(inst, lhs_v, rhs_v, ct):
    lhs, rhs, out, _, fgc, bgc = _conv_parts(inst)
    n = lhs_v.ndim - 2
    sizes, strides, pads, lhs_dil, rhs_dil = _window(inst)
    kernel = rhs_v
    groups = fgc if fgc > 1 else bgc
    if groups > 1:
        o, i = rhs.index("o"), rhs.index("i")
        kernel = _merge_axis(_split_axis(kernel, o, groups), o, i)
    spatial_dims = [rhs.index(str(k)) for k in range(n)]
    if spatial_dims:
        kernel = _emit(
            "reverse",
            kernel,
            dimensions=spatial_dims,
            shape=(kernel.shape, kernel.dtype),
            op_name="vjp/conv",
        )
    in_sp = _spatial(lhs, lhs_v.shape, n)
    out_sp = _spatial(out, ct.shape, n)
    pad = _transpose_padding(in_sp, sizes, strides, out_sp, pads, lhs_dil, rhs_dil)
    labels = f"{out}_{_swap(rhs, 'i', 'o')}->{lhs}"
    r = convolution_with_labels(ct, kernel, labels, lhs_dil, pad, strides, rhs_dil, groups, 1)
    if bgc > 1:
        f, b = lhs.index("f"), lhs.index("b")
        r = _merge_axis(_split_axis(r, f, bgc), f, b)
    return r


def _conv_rhs_transpose(inst, lhs_v, rhs_v, ct):
    lhs, rhs, out, _, fgc, bgc = _conv_parts(inst)
    n = lhs_v.ndim - 2
    sizes, strides, pads, lhs_dil, rhs_dil = _window(inst)
    in_sp = _dilate(_spatial(lhs, lhs_v.shape, n), lhs_dil)
    k_sp = _dilate(sizes, rhs_dil)
    out_sp = _dilate(_spatial(out, ct.shape, n), strides)
    pad = []
    for i_d, k_d, o_d, (lo, _) in zip(in_sp, k_sp, out_sp, pads, strict=True):
        pad.append((lo, (o_d - i_d) + (k_d - lo - 1)))
    new_fgc, new_bgc = (bgc, 1) if bgc > 1 else (1, fgc)
    labels = (
        f"{_swap(lhs, 'b', 'f')}_{_relabel(out, {'b': 'i', 'f': 'o'})}"
        f"->{_relabel(rhs, {'i': 'b', 'o': 'f'})}"
    )
    return convolution_with_labels(
        lhs_v, ct, labels, rhs_dil, pad, lhs_dil, strides, new_fgc, new_bgc
    )


def _vjp_convolution(inst, primals, ct):
    lhs_v, rhs_v = primals
    if inst.attributes.get("window") and any(
        d.get("rhs_reversal") for d in inst.attributes["window"]
    ):
        return unsupported(inst, "vjp")
    ct_l = _conv_lhs_transpose(inst, lhs_v, rhs_v, ct) if differentiable(lhs_v) else None
    ct_r = _conv_rhs_transpose(inst, lhs_v, rhs_v, ct) if differentiable(rhs_v) else None
    return [ct_l, ct_r]


# --- custom calls -------------------------------------------------------------------


# Derivatives registered for custom-call targets, by target name:
# (jvp, vjp), see register_custom_call_derivative.
CUSTOM_CALL_RULES: dict[str, tuple] = {}


def register_custom_call_derivative(target: str, *, jvp=None, vjp=None) -> None:
    """Derivative rules for custom calls to `target`, written with uir's
    traced ops (uir.numpy, uir.lax) so that they differentiate again:
    jvp(operands, tangents) -> the result's tangent (tangents of operands
    without one are zeros); vjp(operands, result, cotangent) -> one
    cotangent per operand (None for none). Either may be left out; the
    mode without a rule raises, naming the target."""
    if not isinstance(target, str) or not target:
        raise TypeError("a custom-call target name is a non-empty str")
    for name, fn in (("jvp", jvp), ("vjp", vjp)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    CUSTOM_CALL_RULES[target] = (jvp, vjp)


def registered(inst) -> bool:
    """Whether the user registered rules for this custom call's target."""
    return inst.attributes.get("custom_call_target", "") in CUSTOM_CALL_RULES


def _registered(inst, mode):
    rules_ = CUSTOM_CALL_RULES.get(inst.attributes.get("custom_call_target", ""))
    return None if rules_ is None else rules_[0 if mode == "jvp" else 1]


def _lapack_rule(table, inst, mode):
    name = lapack_rules.routine(inst)
    rule = table.get(name) if name else None
    if rule is None:
        target = inst.attributes.get("custom_call_target", "?")
        return unsupported(inst, f"{mode} of custom call '{target}'")
    return rule


def _jvp_custom_call(inst, primals, tangents, out):
    user = _registered(inst, "jvp")
    if user is not None:
        ts = tuple(instantiate(t, p) for t, p in zip(tangents, primals, strict=True))
        return user(tuple(primals), ts)
    return _lapack_rule(lapack_rules.JVP, inst, "jvp")(inst, primals, tangents, out)


def _vjp_custom_call(inst, primals, out, ct):
    user = _registered(inst, "vjp")
    if user is not None:
        got = user(tuple(primals), out, ct)
        if not isinstance(got, (tuple, list)) or len(got) != len(primals):
            raise TypeError(
                f"the vjp rule of custom call '{inst.attributes.get('custom_call_target')}' "
                f"must return {len(primals)} cotangents (None for none)"
            )
        return [None if g is None else ops.asarray(g) for g in got]
    return _lapack_rule(lapack_rules.VJP, inst, "vjp")(inst, primals, out, ct)


# --- Tables -------------------------------------------------------------------------

JVP = {
    "scatter": _jvp_scatter,
    "topk": _jvp_topk,
    "fft": lambda inst, p, t, out: emit_like(inst, [instantiate(t[0], p[0])], prefix="jvp/"),
    "select-and-scatter": _jvp_select_and_scatter,
    "sort": _jvp_sort,
    "reduce-window": _jvp_reduce_window,
    "custom-call": _jvp_custom_call,
}

VJP = {
    "gather": lambda inst, p, out, ct: _vjp_gather(inst, p, ct),
    "scatter": lambda inst, p, out, ct: _vjp_scatter(inst, p, ct),
    "sort": _vjp_sort,
    "reduce-window": _vjp_reduce_window,
    "select-and-scatter": _vjp_select_and_scatter,
    "fft": _vjp_fft,
    "convolution": lambda inst, p, out, ct: _vjp_convolution(inst, p, ct),
    "custom-call": _vjp_custom_call,
}

__all__ = ["JVP", "VJP", "add"]
