"""Pytrees, as jax.tree_util has them: nested tuples, lists, dicts, None,
namedtuples and registered classes, flattened to a list of leaves and a
structure that puts them back.

    leaves, tree = uir.tree_util.tree_flatten({"a": (1, 2), "b": None})
    uir.tree_util.tree_unflatten(tree, leaves)
    uir.tree_util.register_pytree_node(MyClass, flatten, unflatten)
"""

from uir._src.core.tree_util import (  # noqa: F401
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
