"""uir.lax: XLA's operations, and structured control flow, as jax.lax."""

from __future__ import annotations

from uir._src.lax_impl import (
    ShapeDtypeStruct,
    bitcast_convert_type,
    broadcast_in_dim,
    cond,
    convert_element_type,
    custom_call,
    dot_general,
    dynamic_slice,
    dynamic_update_slice,
    fori_loop,
    iota,
    map,
    reduce,
    scan,
    select,
    slice,
    switch,
    while_loop,
)

__all__ = [
    "ShapeDtypeStruct",
    "bitcast_convert_type",
    "broadcast_in_dim",
    "cond",
    "convert_element_type",
    "custom_call",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "fori_loop",
    "iota",
    "map",
    "reduce",
    "scan",
    "select",
    "slice",
    "switch",
    "while_loop",
]
