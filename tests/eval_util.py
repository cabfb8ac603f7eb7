"""Helpers for the evaluator tests: one-op modules and edge-value inputs."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st

import uir
from uir._src.core.dtypes import NUMPY_DTYPES

HLO_NAME = {np.dtype(v): k for k, v in NUMPY_DTYPES.items() if k not in ("s2", "s4", "u2", "u4")}


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


def dilate_and_pad(x, pads, dilation):
    """x: [N, C, spatial...]; pads: (low, high) per spatial dim."""
    for d, ((lo, hi), dil) in enumerate(zip(pads, dilation, strict=True)):
        axis = 2 + d
        n = x.shape[axis]
        size = max(0, (n - 1) * dil + 1)
        shape = list(x.shape)
        shape[axis] = size
        y = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, size, dil)
        y[tuple(index)] = x
        # Negative padding crops.
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, widths)
        crop = [slice(None)] * x.ndim
        crop[axis] = slice(max(-lo, 0), y.shape[axis] - max(-hi, 0))
        x = y[tuple(crop)]
    return x


def conv_reference(lhs, rhs, strides, pads, lhs_dil, rhs_dil, reversal, fgc=1, bgc=1):
    """lhs [N, C, S...], rhs [O, I, K...] -> [N/bgc, O, S'...], in float64."""
    if fgc > 1 or bgc > 1:
        groups = max(fgc, bgc)
        lhses = np.split(lhs, groups, axis=1 if fgc > 1 else 0)
        rhses = np.split(rhs, groups, axis=0)
        outs = [
            conv_reference(a, b, strides, pads, lhs_dil, rhs_dil, reversal)
            for a, b in zip(lhses, rhses, strict=True)
        ]
        return np.concatenate(outs, axis=1)
    x = dilate_and_pad(lhs.astype(np.float64), pads, lhs_dil)
    k = rhs.astype(np.float64)
    for d, rev in enumerate(reversal):
        if rev:
            k = np.flip(k, axis=2 + d)
    spatial = len(strides)
    ksizes = rhs.shape[2:]
    out_sizes = [
        (x.shape[2 + d] - (ksizes[d] - 1) * rhs_dil[d] - 1) // strides[d] + 1
        for d in range(spatial)
    ]
    out_sizes = [max(s, 0) for s in out_sizes]
    out = np.zeros((lhs.shape[0], rhs.shape[0], *out_sizes))
    for pos in itertools.product(*[range(s) for s in out_sizes]):
        window = [
            slice(
                pos[d] * strides[d],
                pos[d] * strides[d] + (ksizes[d] - 1) * rhs_dil[d] + 1,
                rhs_dil[d],
            )
            for d in range(spatial)
        ]
        patch = x[(slice(None), slice(None), *window)]  # [N, C, K...]
        out[(slice(None), slice(None), *pos)] = np.tensordot(
            patch, k, axes=(list(range(1, patch.ndim)), list(range(1, k.ndim)))
        )
    return out


def window_text(sizes, strides, pads, lhs_dil, rhs_dil, reversal):
    """The window={...} text of a convolution."""
    parts = ["size=" + "x".join(map(str, sizes))]
    parts.append("stride=" + "x".join(map(str, strides)))
    parts.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads))
    parts.append("lhs_dilate=" + "x".join(map(str, lhs_dil)))
    parts.append("rhs_dilate=" + "x".join(map(str, rhs_dil)))
    if any(reversal):
        parts.append("rhs_reversal=" + "x".join(str(int(r)) for r in reversal))
    return " ".join(parts)


@st.composite
def conv_case(draw):
    """A convolution window: sizes, strides, padding (negative too), base and
    window dilation, reversal and input sizes, over one or two spatial dims."""
    spatial = draw(st.integers(1, 2))
    sizes = [draw(st.integers(1, 3)) for _ in range(spatial)]
    strides = [draw(st.integers(1, 3)) for _ in range(spatial)]
    pads = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(spatial)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(spatial)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(spatial)]
    reversal = [draw(st.booleans()) for _ in range(spatial)]
    in_sizes = [draw(st.integers(1, 6)) for _ in range(spatial)]
    return sizes, strides, pads, lhs_dil, rhs_dil, reversal, in_sizes
