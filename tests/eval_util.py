"""Helpers for the evaluator tests: one-op modules and edge-value inputs."""

from __future__ import annotations

import numpy as np

import uir
from uir._src.evaluate import _DTYPES

HLO_NAME = {np.dtype(v): k for k, v in _DTYPES.items() if k not in ("s2", "s4", "u2", "u4")}


def hlo_type(array: np.ndarray) -> str:
    return f"{HLO_NAME[array.dtype]}[{','.join(map(str, array.shape))}]"


def one_op(op: str, *arrays: np.ndarray, result: str | None = None, attrs: str = ""):
    """Evaluates `op(p0, p1, ...)` on `arrays`; the result shape is the first
    operand's unless `result` (an HLO shape) is given."""
    params = "\n".join(f"  p{i} = {hlo_type(a)} parameter({i})" for i, a in enumerate(arrays))
    operands = ", ".join(f"p{i}" for i in range(len(arrays)))
    result = result or hlo_type(arrays[0])
    text = f"ENTRY e {{\n{params}\n  ROOT r = {result} {op}({operands}){', ' + attrs if attrs else ''}\n}}"
    module = uir.hlo.parse_module(text)
    module.verify()
    return uir.evaluate(module, *arrays)


def edge_floats(dtype, n: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-30, -3e5, 7.0])
    values = np.concatenate([special, rng.standard_normal(n - len(special)) * 10])
    return values.astype(dtype)


def edge_ints(dtype, n: int = 64, seed: int = 0) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    special = [0, 1, info.max, info.min, info.max - 1, 2, 3, 7]
    if info.min < 0:
        special += [-1, -2, -7, info.min + 1]
    values = np.concatenate(
        [
            np.array(special, dtype=dtype),
            rng.integers(info.min, info.max, n - len(special), dtype=dtype, endpoint=True),
        ]
    )
    return values.astype(dtype)
