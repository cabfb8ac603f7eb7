"""Compiles the GPU check's programs for backend="gpu" and writes each
serialized executable to DIR/NAME.uirgpu (default build/gpu), for
tools/gpu_check.sh to run on a machine with a GPU and no compiler.
`make gpu-artifacts` runs it. The programs and their NumPy references are
tools/gpu_programs.py's, shared with the check."""

from __future__ import annotations

import ctypes
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import gpu_programs

import uir
import uir.numpy as jnp


def main(out: str = "build/gpu") -> None:
    folder = pathlib.Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    # The custom call's target is nvcc's on the GPU machine (built by
    # gpu_check.sh); here a placeholder of its name lets the plan call it.
    stand_in = ctypes.CFUNCTYPE(None)(lambda: None)
    uir.custom_call.register("uir_check_scale", stand_in, api="original", platform="CUDA")
    for name, program in gpu_programs.PROGRAMS.items():
        args = program.inputs(np.random.default_rng(0))
        if program.hlo is not None:
            module = uir.hlo.parse_module(program.hlo)
        else:
            module = uir.jit(program.traced(jnp, uir.lax)).lower(*args).module
        exe = uir.compile(module, backend="gpu")
        blob = exe.serialize()
        (folder / f"{name}.uirgpu").write_bytes(blob)
        kernels = len(exe.gpu_kernels)
        print(f"{name:12s} {len(blob):9d} bytes, {kernels} kernels")


if __name__ == "__main__":
    main(*sys.argv[1:])
