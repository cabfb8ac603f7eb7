"""The runtime-only build (runtime_only/, `make runtime-only`): a shared
library with no LLVM, HLO or pybind11 in it, and uir_runtime.py over it,
which load what uir serialized for the GPU and run it where there is a GPU.
Here (no GPU) they load, read the signature, and refuse to run with the
driver's reason; the serialized bytes themselves run simulated in uir."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import uir
import uir.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIB = ROOT / "build" / "runtime-only" / "libuir_runtime.so"
needs_lib = pytest.mark.skipif(
    not LIB.exists(), reason=f"{LIB} is not built: run 'make runtime-only' (make test does)"
)


def _blob():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 300)).astype(np.float32)
    w = rng.standard_normal((300, 8)).astype(np.float32)

    def f(x, w):
        e = jnp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True) @ w, uir.lax.fori_loop(0, 3, lambda i, v: v + i, x)

    module = uir.jit(f).lower(x, w).module
    return uir.compile(module, backend="gpu").serialize(), module, (x, w)


def test_serialized_gpu_executable_runs_simulated_like_the_evaluator():
    blob, module, args = _blob()
    loaded = uir.deserialize(blob)
    assert loaded.backend == "gpu"
    got, want = loaded.simulate(*args), uir.evaluate(module, *args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    with pytest.raises(uir.SerializationError, match="damaged or cut short"):
        uir.deserialize(blob[: len(blob) // 2])
    with pytest.raises(uir.ShapeError, match="takes 2 arrays"):
        loaded.simulate(args[0])


def test_host_steps_do_not_serialize():
    m = uir.jit(lambda v: jnp.sort(v)).lower(np.ones(8, np.float32)).module
    with pytest.raises(uir.SerializationError, match="runs on the host"):
        uir.compile(m, backend="gpu").serialize()


@needs_lib
def test_runtime_only_library_has_no_compiler_in_it():
    out = subprocess.run(["ldd", str(LIB)], capture_output=True, text=True, check=True).stdout
    assert "LLVM" not in out and "python" not in out and "blas" not in out, out


@needs_lib
def test_runtime_only_module_loads_without_uir(tmp_path):
    blob, _, _ = _blob()
    path = tmp_path / "f.uirgpu"
    path.write_bytes(blob)
    code = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "runtime_only")!r})
import numpy as np, uir_runtime
exe = uir_runtime.load({str(path)!r})
report = {{"parameters": [[str(d), list(s)] for d, s in exe.parameters],
          "results": [[str(d), list(s)] for d, s in exe.results],
          "tuple": exe.tuple_result, "sm": exe.sm}}
try:
    uir_runtime.devices()
    report["gpu"] = True
except uir_runtime.Error as e:
    report["gpu"] = False
    try:
        exe(np.ones((16, 300), np.float32), np.ones((300, 8), np.float32))
    except uir_runtime.Error as e:
        report["run"] = str(e)
try:
    uir_runtime.load(open({str(path)!r}, "rb").read()[:50])
except uir_runtime.Error as e:
    report["damaged"] = str(e)
report["uir"] = any(m == "uir" or m.startswith("uir.") for m in sys.modules)
print(json.dumps(report))
"""
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"UIR_RUNTIME_LIB": str(LIB), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["parameters"] == [["float32", [16, 300]], ["float32", [300, 8]]]
    assert report["results"] == [["float32", [16, 8]], ["float32", [16, 300]]]
    assert report["tuple"] is True and report["sm"] == "sm_90"
    assert report["uir"] is False
    assert "damaged" in report["damaged"]
    if not report["gpu"]:
        assert "no GPU" in report["run"]
