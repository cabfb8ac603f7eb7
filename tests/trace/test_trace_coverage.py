"""Every name uir.numpy, uir.lax and uir.nn promise exists, and each is
exercised by a tracing test."""

from __future__ import annotations

import pathlib
import re

import pytest

import uir
import uir.numpy as jnp
from uir import lax, nn

NUMPY = [
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "argmax",
    "argmin",
    "var",
    "std",
    "any",
    "all",
    "matmul",
    "dot",
    "einsum",
    "tensordot",
    "reshape",
    "transpose",
    "swapaxes",
    "moveaxis",
    "expand_dims",
    "squeeze",
    "concatenate",
    "stack",
    "split",
    "pad",
    "tile",
    "repeat",
    "flip",
    "arange",
    "zeros",
    "ones",
    "full",
    "eye",
    "linspace",
    "zeros_like",
    "ones_like",
    "full_like",
    "cumsum",
    "sort",
    "argsort",
    "take",
    "take_along_axis",
    "exp",
    "log",
    "log1p",
    "expm1",
    "tanh",
    "sqrt",
    "rsqrt",
    "erf",
    "sin",
    "cos",
    "power",
    "where",
    "clip",
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "abs",
    "floor",
    "ceil",
]
LAX = [
    "dot_general",
    "conv_general_dilated",
    "reduce",
    "reduce_window",
    "broadcast_in_dim",
    "slice",
    "dynamic_slice",
    "dynamic_update_slice",
    "gather",
    "scatter",
    "select",
    "iota",
    "convert_element_type",
    "bitcast_convert_type",
    "while_loop",
    "fori_loop",
    "cond",
    "switch",
    "scan",
    "map",
    "custom_call",
]
NN = [
    "relu",
    "gelu",
    "sigmoid",
    "silu",
    "softmax",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "layer_norm",
]

TESTS = pathlib.Path(__file__).resolve().parent
TEXT = "\n".join(
    p.read_text() for p in TESTS.glob("test_trace_*.py") if p.name != "test_trace_coverage.py"
)


@pytest.mark.parametrize(
    "module,name",
    [(jnp, n) for n in NUMPY] + [(lax, n) for n in LAX] + [(nn, n) for n in NN],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_name_exists_and_is_tested(module, name):
    assert callable(getattr(module, name))
    prefix = {jnp: "jnp", lax: "lax", nn: "nn"}[module]
    used = re.search(rf"\b{prefix}\.{name}\b", TEXT) or (
        # Methods and operators reach some of them: x.T, x @ y, v.at[...].
        prefix == "jnp" and re.search(rf'"{name}"', TEXT)
    )
    assert used, f"{prefix}.{name} is not exercised by a tracing test"


def test_make_hlo_and_the_stage_objects_exist():
    assert callable(uir.make_hlo) and callable(uir.jit)
