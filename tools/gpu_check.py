"""The GPU check: on a machine with a GPU (and without uir's compiler), runs
every executable `make gpu-artifacts` serialized (DIR/NAME.uirgpu) through
the runtime-only module, compares each result with NumPy's, and times each
beside jax.jit and PyTorch on the same GPU, with the device's copy
bandwidth measured in the same run. tools/gpu_check.sh builds the runtime
and calls it. Exit status 1 when a result differs from NumPy's."""

from __future__ import annotations

import ctypes
import json
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runtime_only"))
sys.path.insert(0, str(ROOT / "tools"))

import gpu_programs  # noqa: E402
import uir_runtime  # noqa: E402

# Largest |got - want| / max|want| accepted: float32 against float64.
TOLERANCE = {"matmul": 1e-4, "mlp": 1e-4, "attention": 1e-4}
DEFAULT_TOLERANCE = 2e-5


def _median_seconds(fn, sync, repeats=20, warmup=3) -> float:
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _time_jax(jax, jnp, program, args) -> float:
    fn = jax.jit(program.traced(jnp, jax.lax))
    dev = [jax.device_put(a) for a in args]
    return _median_seconds(lambda: fn(*dev), lambda: jax.block_until_ready(fn(*dev)))


def _time_torch(torch, program, args) -> float:
    fn = program.torch(torch)
    dev = [torch.from_numpy(a).cuda() for a in args]
    return _median_seconds(lambda: fn(*dev), torch.cuda.synchronize)


def _copy_bandwidth(torch) -> float:
    """GB/s of a device-to-device copy of 1 GiB (read + write counted)."""
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    t = _median_seconds(lambda: y.copy_(x), torch.cuda.synchronize)
    return 2 * x.numel() * 4 / t / 1e9


def main(folder: str = "build/gpu") -> int:
    try:
        print("devices:", uir_runtime.devices())
    except uir_runtime.Error as e:
        print("no GPU:", e)
        return 1
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    custom = pathlib.Path(folder) / "custom_call.so"
    if custom.exists():  # nvcc's build of tools/gpu_custom_call.cu
        library = ctypes.CDLL(str(custom))
        uir_runtime.register("uir_check_scale", library.uir_check_scale, api="original")
    bandwidth = _copy_bandwidth(torch) if torch is not None else float("nan")
    print(f"device copy bandwidth: {bandwidth:.0f} GB/s")
    header = f"{'program':12s} {'result':>12s} {'uir ms':>9s} {'jax ms':>9s} {'torch ms':>9s}"
    print(header + f" {'GB/s':>7s} {'of copy':>8s} {'jax/uir':>8s} {'torch/uir':>9s}")
    failed = 0
    for name, program in gpu_programs.PROGRAMS.items():
        path = pathlib.Path(folder) / f"{name}.uirgpu"
        row = f"{name:12s}"
        try:
            exe = uir_runtime.load(path)
            args = program.inputs(np.random.default_rng(0))
            got = exe(*args)
            want = program.reference(*args)
            scale = float(np.max(np.abs(want))) or 1.0
            err = float(np.max(np.abs(np.asarray(got, np.float64) - want))) / scale
            ok = err <= TOLERANCE.get(name, DEFAULT_TOLERANCE)
            failed += not ok
            row += f" {'ok' if ok else 'DIFFERS'} {err:.1e}"
            t_uir = exe.time(*args)
            if name == "mlp":  # the MLP block's steps as a Chrome trace, from CUDA events
                trace = pathlib.Path(folder) / "mlp.trace.json"
                trace.write_text(json.dumps(exe.profile(*args)))
                steps = exe.profile(*args)["traceEvents"]
                print("mlp steps (ms):", [(e["name"], round(e["dur"] / 1e3, 3)) for e in steps])
            t_jax = (
                _time_jax(jax, jnp, program, args)
                if jax is not None and program.traced is not None
                else float("nan")
            )
            t_torch = (
                _time_torch(torch, program, args)
                if torch is not None and program.torch is not None
                else float("nan")
            )
            gbs = program.bytes_moved(*args) / t_uir / 1e9 if program.bytes_moved else float("nan")
            row += f" {t_uir * 1e3:9.3f} {t_jax * 1e3:9.3f} {t_torch * 1e3:9.3f} {gbs:7.0f}"
            row += f" {gbs / bandwidth:8.0%} {t_jax / t_uir:8.2f} {t_torch / t_uir:9.2f}"
        except Exception as e:  # reported, and the check goes on
            failed += 1
            row += f" ERROR {type(e).__name__}: {e}"
        print(row, flush=True)
    print("all results equal to NumPy's" if failed == 0 else f"{failed} programs failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
