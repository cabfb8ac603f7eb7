"""UIR_CPU_ISA narrows the host to measure as on a narrower x86-64 one:
under "avx2" no kernel holds an AVX-512 instruction (no zmm register, no
EVEX-only op), uir.info() lists no AVX-512 feature, and results stay the
same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import uir

_CHILD = r"""
import json
import numpy as np
import uir
import uir.numpy as unp
x = np.linspace(-12, 12, 4099, dtype=np.float32)
f = uir.jit(lambda v: unp.tanh(v * 1.5 + 0.25) + unp.exp(-v * v))
compiled = f.lower(x).compile()
asm = compiled.executable.assembly
print(json.dumps({
    "features": uir.info()["cpu_features"],
    "zmm": "zmm" in asm,
    "ymm": "ymm" in asm,
    "scalef": "vscalef" in asm,
    "values": np.asarray(f(x)).tolist(),
}))
"""


def _run(isa):
    env = dict(os.environ)
    env.pop("UIR_CPU_ISA", None)
    if isa:
        env["UIR_CPU_ISA"] = isa
    env["UIR_FLAGS"] = "--executable_cache=0"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    "avx2" not in uir.info()["cpu_features"], reason="the host has no AVX2 to narrow to"
)
def test_avx2_isa_compiles_without_avx512_and_gives_the_same_values():
    narrow = _run("avx2")
    assert not any(f.startswith("avx512") for f in narrow["features"])
    assert "avx2" in narrow["features"]
    assert not narrow["zmm"] and not narrow["scalef"] and narrow["ymm"]
    native = _run(None)
    x = np.linspace(-12, 12, 4099, dtype=np.float32)
    want = np.tanh(x * 1.5 + 0.25) + np.exp(-x * x)
    np.testing.assert_allclose(narrow["values"], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(native["values"], want, rtol=1e-6, atol=1e-6)


def test_sse_isa_leaves_out_every_avx_feature():
    narrow = _run("sse")
    assert not any(f.startswith("avx") or f == "fma" for f in narrow["features"])
    assert not narrow["ymm"] and not narrow["zmm"]
