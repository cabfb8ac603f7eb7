"""`uir run FILE.hlo`: evaluate a module on given or random inputs and
summarize each output."""

from __future__ import annotations

import time

import numpy as np

from uir._src import hlo
from uir._src.evaluate import evaluate, random_arguments


def _load_inputs(path: str, module) -> list[np.ndarray]:
    params = module.entry.parameters
    with np.load(path) as data:
        keys = list(data.keys())
        by_name = all(p.name in data for p in params)
        arrays = [data[p.name] if by_name else data.get(f"arr_{i}") for i, p in enumerate(params)]
    missing = [p.name for p, a in zip(params, arrays, strict=True) if a is None]
    if missing:
        raise ValueError(f"{path} has no arrays for parameters {missing} (it has {keys})")
    return arrays


def _flatten(value, prefix: str = "out") -> list[tuple[str, np.ndarray]]:
    if isinstance(value, tuple):
        out = []
        for i, v in enumerate(value):
            out += _flatten(v, f"{prefix}.{i}")
        return out
    return [(prefix, np.asarray(value))]


def summarize(name: str, array: np.ndarray) -> str:
    line = f"{name}: {array.dtype}{list(array.shape)}"
    if (array.size and array.dtype.kind in "biufV") or array.dtype.name.startswith(
        ("bfloat", "float")
    ):
        values = array.astype(np.float64) if array.dtype.kind != "c" else np.abs(array)
        if array.size:
            with np.errstate(all="ignore"):
                line += f"  min={np.nanmin(values):.6g} max={np.nanmax(values):.6g} mean={np.nanmean(values):.6g}"
    first = ", ".join(str(v) for v in array.reshape(-1)[:6])
    return line + f"  first=[{first}{', ...' if array.size > 6 else ''}]"


def main(path: str, *, inputs: str | None, seed: int, output: str | None) -> int:
    module = hlo.load(path)
    args = _load_inputs(inputs, module) if inputs else random_arguments(module, seed)
    start = time.perf_counter()
    result = evaluate(module, *args)
    seconds = time.perf_counter() - start
    outputs = _flatten(result)
    print(f"{module.name}: {len(args)} input(s), evaluated in {seconds * 1e3:.1f} ms")
    for name, array in outputs:
        print("  " + summarize(name, array))
    if output:
        np.savez(output, **{name: array for name, array in outputs})
        print(f"saved {len(outputs)} output(s) to {output}")
    return 0
