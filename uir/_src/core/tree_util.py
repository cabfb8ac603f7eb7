"""Pytrees as jax.tree_util has them (uir.tree_util's implementation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


class PyTreeDef(NamedTuple):
    """The structure of a pytree: a node kind, its auxiliary data (dict keys,
    the namedtuple class, what a registered flatten returned), children."""

    kind: Any  # "leaf", "none", tuple, list, dict, a namedtuple class or a registered class
    aux: Any
    children: tuple[PyTreeDef, ...]

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind is dict:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children, strict=True))
            return "PyTreeDef({" + inner + "})"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"PyTreeDef({name}({inner}))"


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Makes instances of `cls` pytree nodes: flatten_fn(x) -> (children,
    aux_data); unflatten_fn(aux_data, children) -> x."""
    if cls in _REGISTRY or cls in (tuple, list, dict, type(None)):
        raise ValueError(f"{cls.__name__} is already a pytree node type")
    _REGISTRY[cls] = (flatten_fn, unflatten_fn)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(x, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return PyTreeDef("leaf", None, ())
    if x is None:
        return PyTreeDef("none", None, ())
    t = type(x)
    if t in _REGISTRY:
        children, aux = _REGISTRY[t][0](x)
        return PyTreeDef(t, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))
    if _is_namedtuple(x):
        return PyTreeDef(t, None, tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t in (tuple, list):
        return PyTreeDef(t, None, tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is dict:
        keys = tuple(sorted(x))
        return PyTreeDef(dict, keys, tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    leaves.append(x)
    return PyTreeDef("leaf", None, ())


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """The leaves of `tree` (dict entries in sorted key order) and its structure."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _unflatten(treedef: PyTreeDef, leaves) -> Any:
    if treedef.kind == "leaf":
        return next(leaves)
    if treedef.kind == "none":
        return None
    children = [_unflatten(c, leaves) for c in treedef.children]
    if treedef.kind in (tuple, list):
        return treedef.kind(children)
    if treedef.kind is dict:
        return dict(zip(treedef.aux, children, strict=True))
    if treedef.kind in _REGISTRY:
        return _REGISTRY[treedef.kind][1](treedef.aux, children)
    return treedef.kind(*children)  # a namedtuple


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """The pytree of structure `treedef` holding `leaves`."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"{treedef} takes {treedef.num_leaves} leaves, got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None) -> Any:
    """f applied to each leaf of `tree` (and the matching leaves of `rest`,
    which must have the same structure)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} vs {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others, strict=True)])


__all__ = [
    "PyTreeDef",
    "register_pytree_node",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]
