"""Transformations of whole HLO modules (any module: traced, parsed from
XLA's text, or built): the module's entry is replayed as a function, the
transformation applied with the same rules as for traced functions, and
the result traced into a new module that prints, verifies and runs."""

from __future__ import annotations

from uir._src.core import config, dtypes, errors
from uir._src.core.api import ShapeDtypeStruct, jit
from uir._src.transforms import api, replay
from uir._src.transforms.vmap import vmap


def _entry_avals(module):
    avals = []
    for p in module.entry.parameters:
        s = p.shape
        if s.is_tuple or s.element_type == "token":
            raise errors.TraceError(
                f"transforms: parameter %{p.name} of {module.name} has shape {s}; only array "
                "parameters can be transformed"
            )
        avals.append(ShapeDtypeStruct(tuple(s.dims), dtypes.numpy_dtype(s.element_type)))
    return avals


def as_function(module):
    """A function of the module's entry parameters that replays its entry
    computation into the trace: its result is the root's value (an array,
    or a tuple for a tuple root)."""
    _entry_avals(module)

    def fn(*args):
        (out,) = replay.replay(module.entry, list(args))
        return out

    fn.__name__ = module.name.replace("-", "_").replace(".", "_")
    return fn


def _lowered(fn, avals, name):
    """fn traced on `avals` exactly (64-bit types kept as they are)."""
    fn.__name__ = name
    before = config.read("enable_x64")
    config.update("enable_x64", True)
    try:
        return jit(fn).lower(*avals).module
    finally:
        config.update("enable_x64", before)


def _wrt(module, wrt):
    n = len(module.entry.parameters)
    if wrt is None:
        return [
            i
            for i, p in enumerate(module.entry.parameters)
            if dtypes.is_float(dtypes.numpy_dtype(p.shape.element_type))
        ]
    nums = [wrt] if isinstance(wrt, int) else list(wrt)
    for i in nums:
        if not 0 <= i < n:
            raise ValueError(f"grad_module: wrt {i} out of range for {n} parameters")
    return nums


def grad_module(module, wrt=None):
    """A module taking `module`'s parameters and returning the gradient of
    its scalar result with respect to the parameters `wrt` (indices; all
    float parameters by default): one array, or a tuple for several."""
    fn = as_function(module)
    nums = _wrt(module, wrt)
    many = not isinstance(wrt, int)
    g = api.grad(fn, argnums=tuple(nums) if many else nums[0])
    return _lowered(lambda *a: g(*a), _entry_avals(module), f"grad_{fn.__name__}")


def vjp_module(module):
    """A module taking `module`'s parameters and a cotangent of its result
    (one per output of a tuple root), returning (the result, the cotangents
    of every parameter)."""
    fn = as_function(module)
    avals = _entry_avals(module)
    root = module.entry.root.shape
    outs = root.tuple_shapes if root.is_tuple else [root]
    ct_avals = [ShapeDtypeStruct(tuple(s.dims), dtypes.numpy_dtype(s.element_type)) for s in outs]
    n = len(avals)

    def f(*a):
        out, pull = api.vjp(fn, *a[:n])
        ct = tuple(a[n:]) if root.is_tuple else a[n]
        return out, pull(ct)

    return _lowered(f, [*avals, *ct_avals], f"vjp_{fn.__name__}")


def jvp_module(module):
    """A module taking `module`'s parameters and a tangent for each,
    returning (the result, its tangent)."""
    fn = as_function(module)
    avals = _entry_avals(module)
    n = len(avals)

    def f(*a):
        return api.jvp(fn, tuple(a[:n]), tuple(a[n:]))

    return _lowered(f, [*avals, *avals], f"jvp_{fn.__name__}")


def vmap_module(module, in_axes=0, axis_size: int | None = None, out_axes=0):
    """`module` mapped over a new axis of its parameters: in_axes is an int,
    None, or one per parameter; each mapped parameter gains an axis of
    `axis_size` there."""
    if axis_size is None or int(axis_size) < 0:
        raise ValueError("vmap_module needs axis_size, the length of the mapped axis")
    fn = as_function(module)
    avals = _entry_avals(module)
    axes = list(in_axes) if isinstance(in_axes, (tuple, list)) else [in_axes] * len(avals)
    if len(axes) != len(avals):
        raise ValueError(f"vmap_module: {len(axes)} in_axes for {len(avals)} parameters")
    batched = []
    for a, ax in zip(avals, axes, strict=True):
        if ax is None:
            batched.append(a)
            continue
        shape = list(a.shape)
        shape.insert(ax % (len(shape) + 1), int(axis_size))
        batched.append(ShapeDtypeStruct(tuple(shape), a.dtype))
    mapped = vmap(fn, in_axes=tuple(axes), out_axes=out_axes, axis_size=int(axis_size))
    return _lowered(lambda *a: mapped(*a), batched, f"vmap_{fn.__name__}")


__all__ = ["as_function", "grad_module", "jvp_module", "vjp_module", "vmap_module"]
