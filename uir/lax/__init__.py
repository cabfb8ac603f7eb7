"""uir.lax: XLA's operations, and structured control flow, as jax.lax."""

from __future__ import annotations

from uir._src.lax_control import (
    cond,
    fori_loop,
    map,
    scan,
    switch,
    while_loop,
)
from uir._src.lax_impl import (
    ShapeDtypeStruct,
    add,
    bitcast_convert_type,
    broadcast_in_dim,
    convert_element_type,
    custom_call,
    dot_general,
    iota,
    max,
    min,
    mul,
    reduce,
    select,
)
from uir._src.lax_slicing import (
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    dynamic_slice,
    dynamic_update_slice,
    gather,
    scatter,
    scatter_add,
    scatter_max,
    scatter_min,
    scatter_mul,
    slice,
)
from uir._src.lax_window import (
    conv_general_dilated,
    reduce_window,
)

__all__ = [
    "GatherDimensionNumbers",
    "ScatterDimensionNumbers",
    "ShapeDtypeStruct",
    "add",
    "bitcast_convert_type",
    "broadcast_in_dim",
    "cond",
    "conv_general_dilated",
    "convert_element_type",
    "custom_call",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "fori_loop",
    "gather",
    "iota",
    "map",
    "max",
    "min",
    "mul",
    "reduce",
    "reduce_window",
    "scan",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "select",
    "slice",
    "switch",
    "while_loop",
]
