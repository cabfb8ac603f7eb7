"""XLA:CPU as a second oracle: runs an HLO module, given as text, through
the XLA that the installed jaxlib carries, on NumPy inputs.

The route (jaxlib 0.10): parse the text with jaxlib's HLO parser
(`xla_client.hlo.hlo_module_from_text`), serialize it as an HloModuleProto,
convert that to StableHLO (`_xla.mlir.hlo_to_stablehlo`), compile it for the
CPU client (`backend.compile_and_load`) and execute it on device arrays.
Tuple results come back flattened, one array per leaf.

    python tools/xla_reference.py FILE.hlo [--seed N] [--compare]

--compare also runs uir's reference evaluator on the same inputs and
reports whether they agree.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np


def _jax():
    import jax

    # Modules use 64-bit types freely; JAX would otherwise refuse them.
    jax.config.update("jax_enable_x64", True)
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    return jax, xla_bridge, xla_client


def compile_hlo(text: str):
    """An XLA:CPU executable for HLO `text`."""
    _, xla_bridge, xc = _jax()
    module = xc.hlo.hlo_module_from_text(text)
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    backend = xla_bridge.get_backend("cpu")
    devices = backend.devices()[:1]
    return backend.compile_and_load(
        stablehlo, xc.DeviceList(tuple(devices)), xc.CompileOptions()
    ), devices[0]


def run_hlo(text: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of HLO `text` on `args` under XLA:CPU, flattened."""
    jax, _, _ = _jax()
    exe, device = compile_hlo(text)
    buffers = [jax.device_put(np.asarray(a), device) for a in args]
    return [np.asarray(o) for o in exe.execute(buffers)]


def save_arrays(path, arrays) -> None:
    """Arrays to .npz with their dtype names, so ml_dtypes types (bf16, f8,
    int4), which .npz cannot describe, come back as themselves."""
    data = {}
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        data[f"arr_{i}"] = (
            a.view(f"u{a.dtype.itemsize}")
            if a.dtype.kind == "V" or a.dtype.name not in np.sctypeDict
            else a
        )
        data[f"dtype_{i}"] = np.array(a.dtype.name)
    np.savez(path, **data)


def load_arrays(path) -> list[np.ndarray]:
    import ml_dtypes

    with np.load(path, allow_pickle=False) as data:
        out = []
        i = 0
        while f"arr_{i}" in data:
            a = data[f"arr_{i}"]
            name = str(data[f"dtype_{i}"]) if f"dtype_{i}" in data else a.dtype.name
            dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
            out.append(a.view(dtype) if a.dtype != dtype else a)
            i += 1
        return out


def run_hlo_isolated(
    text: str, args: list[np.ndarray], workdir: pathlib.Path, timeout: float = 300
) -> list[np.ndarray]:
    """run_hlo in a child process, so a module XLA aborts on (a failed CHECK
    kills the process) or hangs on becomes an exception here."""
    import subprocess

    hlo = workdir / "module.hlo"
    hlo.write_text(text)
    save_arrays(workdir / "in.npz", args)
    out = workdir / "out.npz"
    result = subprocess.run(
        [
            sys.executable,
            __file__,
            str(hlo),
            "--inputs",
            str(workdir / "in.npz"),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"XLA exited with {result.returncode}: {' | '.join(tail)[:300]}")
    return load_arrays(out)


def flatten(value) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in flatten(v)]
    return [np.asarray(value)]


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing two correct implementations' results."""
    name = np.dtype(dtype).name
    if name in ("bfloat16",) or name.startswith("float8"):
        return 2e-2, 2e-2
    if name == "float16":
        return 5e-3, 5e-3
    if name in ("float32", "complex64"):
        return 1e-4, 1e-5
    if name in ("float64", "complex128"):
        return 1e-10, 1e-12
    return 0.0, 0.0


def compare(uir_out: list[np.ndarray], xla_out: list[np.ndarray]) -> str | None:
    """None when they agree, else what differs."""
    if len(uir_out) != len(xla_out):
        return f"{len(uir_out)} outputs vs XLA's {len(xla_out)}"
    for i, (a, b) in enumerate(zip(uir_out, xla_out, strict=True)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"output {i}: {a.dtype}{list(a.shape)} vs XLA's {b.dtype}{list(b.shape)}"
        rtol, atol = tolerance(a.dtype)
        x, y = a, b
        if a.dtype.kind not in "biuc" and a.dtype.kind != "f":
            x, y = a.astype(np.float64), b.astype(np.float64)
        if a.dtype == np.bool_ or rtol == 0:
            ok = np.array_equal(x, y, equal_nan=a.dtype.kind in "fc")
        else:
            # Relative to the output's scale: long sums carry absolute
            # rounding errors of that order even where the result is near 0.
            with np.errstate(all="ignore"):
                finite = np.isfinite(y.astype(np.complex128 if y.dtype.kind == "c" else np.float64))
                scale = float(np.max(np.abs(y[finite]))) if finite.any() else 0.0
            ok = np.allclose(x, y, rtol=rtol, atol=atol + rtol * scale, equal_nan=True)
        if not ok:
            with np.errstate(all="ignore"):
                d = np.abs(
                    x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
                    - y.astype(np.complex128 if y.dtype.kind == "c" else np.float64)
                )
                diff = float(np.max(d[~np.isnan(d)])) if (~np.isnan(d)).any() else float("nan")
                nans = int(
                    np.isnan(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)).sum()
                )
                xla_nans = int(
                    np.isnan(y.astype(np.complex128 if y.dtype.kind == "c" else np.float64)).sum()
                )
            return f"output {i} ({a.dtype}{list(a.shape)}): max |difference| {diff:.3g}, NaNs {nans} (XLA {xla_nans})"
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compare", action="store_true", help="also run uir's evaluator and compare"
    )
    parser.add_argument("--inputs", help="an .npz of inputs arr_0, arr_1, ... (default: random)")
    parser.add_argument("--output", help="save XLA's outputs as arr_0, arr_1, ... in this .npz")
    parser.add_argument(
        "--time",
        type=int,
        default=0,
        metavar="N",
        help="print the median of N timed runs (after a warm-up)",
    )
    args = parser.parse_args(argv)
    text = pathlib.Path(args.file).read_text()
    if args.inputs:
        inputs = load_arrays(args.inputs)
    else:
        import uir
        from uir._src.core.evaluate import random_arguments

        inputs = random_arguments(uir.hlo.parse_module(text, file=args.file), seed=args.seed)
    if args.time:
        import statistics
        import time

        jax, _, _ = _jax()
        t0 = time.perf_counter()
        exe, device = compile_hlo(text)
        compile_ms = (time.perf_counter() - t0) * 1e3
        buffers = [jax.device_put(np.asarray(a), device) for a in inputs]
        [o.block_until_ready() for o in exe.execute(buffers)]
        samples = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            [o.block_until_ready() for o in exe.execute(buffers)]
            samples.append((time.perf_counter() - t0) * 1e3)
        print(f"xla_ms={statistics.median(samples):.4f} compile_ms={compile_ms:.1f}")
        return 0
    xla_out = run_hlo(text, inputs)
    if args.output:
        save_arrays(args.output, xla_out)
        return 0
    for i, o in enumerate(xla_out):
        print(f"xla out.{i}: {o.dtype}{list(o.shape)} first={o.reshape(-1)[:6]}")
    if args.compare:
        import uir

        module = uir.hlo.parse_module(text, file=args.file)
        problem = compare(flatten(uir.evaluate(module, *inputs)), xla_out)
        print("uir and XLA agree" if problem is None else f"uir and XLA differ: {problem}")
        return 0 if problem is None else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
