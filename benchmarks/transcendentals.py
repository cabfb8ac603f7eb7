"""tanh(a*b+c) and exp(a*b+c) beside a*b+c over 16M floats, per vector width.

a*b+c is memory-bound (16 bytes moved per element); the transcendental
chains move the same bytes, so on a machine whose math keeps up they take
the same time. Each width runs in a fresh process with
UIR_FLAGS=--cpu_vector_bits=N (256 with UIR_CPU_ISA=avx2: AVX2 code, no
AVX-512 instruction, on an AVX-512 host);
jax.jit (XLA:CPU) runs beside it in the same process where installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

N = 1 << 24

_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import uir, uir.numpy as unp
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
fns = {"a*b+c": lambda x, y, z: x * y + z, "tanh(a*b+c)": lambda x, y, z: unp.tanh(x * y + z),
       "exp(a*b+c)": lambda x, y, z: unp.exp(x * y + z)}
def median_ms(f):
    f()
    s = []
    for _ in range(15):
        t = time.perf_counter(); f(); s.append(time.perf_counter() - t)
    return statistics.median(s) * 1e3
out = {}
for name, fn in fns.items():
    j = uir.jit(fn)
    out[name] = median_ms(lambda: j(a, b, c))
try:
    import jax, jax.numpy as jnp
    jfns = {"a*b+c": lambda x, y, z: x * y + z, "tanh(a*b+c)": lambda x, y, z: jnp.tanh(x * y + z),
            "exp(a*b+c)": lambda x, y, z: jnp.exp(x * y + z)}
    ja = [jnp.asarray(v) for v in (a, b, c)]
    for name, fn in jfns.items():
        j = jax.jit(fn)
        out["jax " + name] = median_ms(lambda: j(*ja).block_until_ready())
except ImportError:
    pass
print(json.dumps(out))
"""


def run() -> list[dict]:
    rows = []
    for bits in ("512", "256"):
        env = dict(os.environ, UIR_FLAGS=f"--cpu_vector_bits={bits}")
        if bits == "256":
            env["UIR_CPU_ISA"] = "avx2"  # as an AVX2 host: no AVX-512 instruction at all
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(N)], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            rows.append({"vector_bits": bits, "status": done.stderr.strip().splitlines()[-1]})
            continue
        ms = json.loads(done.stdout.strip().splitlines()[-1])
        base = ms["a*b+c"]
        for name in ("a*b+c", "tanh(a*b+c)", "exp(a*b+c)"):
            row = {
                "vector_bits": bits,
                "function": name,
                "uir_ms": ms[name],
                "over_fma": ms[name] / base,
            }
            if "jax " + name in ms:
                row["jax_ms"] = ms["jax " + name]
                row["uir_over_jax"] = ms[name] / ms["jax " + name]
            rows.append(row)
    return rows


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    from run import print_table

    print_table(run())
