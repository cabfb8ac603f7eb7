"""What a function's backward pass keeps from its forward pass:
uir.print_saved_residuals(f, *args) and saved_residuals.

The gradient is traced as one module taking the arguments and the output
cotangent; the backward pass is every instruction that depends on the
cotangent, and a residual is a value of the forward pass (an argument or
an intermediate) that the backward pass reads. Constants are not
counted."""

from __future__ import annotations

import inspect

import numpy as np

from uir._src.core import dtypes, tree_util


def _constant_like(inst, memo) -> bool:
    known = memo.get(inst.name)
    if known is not None:
        return known
    if inst.opcode in ("constant", "iota"):
        result = True
    elif inst.opcode == "parameter" or not inst.operands:
        result = False
    else:
        result = all(_constant_like(o, memo) for o in inst.operands)
    memo[inst.name] = result
    return result


def _argument_names(f, args) -> list[str]:
    """A name per flat leaf of args: the parameter's name, with the leaf's
    index when the argument holds several."""
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        names = []
    out = []
    for i, a in enumerate(args):
        base = names[i] if i < len(names) else f"args[{i}]"
        n = len(tree_util.tree_leaves(a))
        out.extend([base] if n == 1 else [f"{base}[leaf {k}]" for k in range(n)])
    return out


def saved_residuals(f, *args) -> list[tuple]:
    """(shape, dtype, description) of each value the backward pass of f
    at args reads from the forward pass."""
    from uir._src.core.api import ShapeDtypeStruct, eval_shape, jit
    from uir._src.transforms import api

    out_shape = eval_shape(f, *args)
    ct_leaves, ct_tree = tree_util.tree_flatten(out_shape)
    n_ct = len(ct_leaves)

    def grads(*a):
        primals, cts = a[: len(a) - n_ct], a[len(a) - n_ct :]
        _, pull = api.vjp(f, *primals)
        return pull(tree_util.tree_unflatten(ct_tree, list(cts)))

    cts = [ShapeDtypeStruct(c.shape, c.dtype) for c in ct_leaves]
    module = jit(grads).lower(*args, *cts).module
    entry = module.entry
    params = entry.parameters
    names = _argument_names(f, args)
    n_args = len(params) - n_ct
    backward = {p.name for p in params[n_args:]}
    for inst in entry.instructions:
        if any(o.name in backward for o in inst.operands):
            backward.add(inst.name)
    memo: dict = {}
    seen, rows = set(), []
    for inst in entry.instructions:
        if inst.name not in backward:
            continue
        for o in _ungrouped(inst.operands):
            if o.name in backward or o.name in seen or _constant_like(o, memo):
                continue
            if o.shape.is_tuple:
                continue
            seen.add(o.name)
            rows.append(_row(o, params, names))
    return rows


def _ungrouped(operands):
    """Operands with tuples built in place (an opt-barrier's group) opened."""
    for o in operands:
        if o.opcode == "tuple":
            yield from _ungrouped(o.operands)
        else:
            yield o


def _row(inst, params, names):
    shape = tuple(inst.shape.dims)
    dtype = dtypes.numpy_dtype(inst.shape.element_type)
    if inst.opcode == "parameter":
        k = [p.name for p in params].index(inst.name)
        what = f"from the argument {names[k] if k < len(names) else k}"
    else:
        md = inst.attributes.get("metadata") or {}
        op = md.get("op_name", inst.opcode).rsplit("/", 1)[-1]
        where = (
            f" from {md['source_file']}:{md.get('source_line', '?')}"
            if md.get("source_file")
            else ""
        )
        what = f"output of {op} ({inst.opcode}){where}"
    return shape, dtype, what


def print_saved_residuals(f, *args) -> None:
    """Prints each value f's backward pass keeps from its forward pass at
    `args` (its type, bytes and where it comes from) and their total."""
    rows = saved_residuals(f, *args)
    total = 0
    for shape, dtype, what in rows:
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        total += size
        print(f"{dtypes.shape_text(shape, dtype):<20} {size:>12,} B  {what}")
    print(f"{len(rows)} residuals, {total:,} bytes")


__all__ = ["print_saved_residuals", "saved_residuals"]
