"""tanh(a*b+c) and exp(a*b+c) beside a*b+c over 16M floats, per vector width.

a*b+c is memory-bound (16 bytes moved per element); the transcendental
chains move the same bytes, so on a machine whose math keeps up they take
the same time. Each width runs in a fresh process with
UIR_FLAGS=--cpu_vector_bits=N (256 with UIR_CPU_ISA=avx2: AVX2 code, no
AVX-512 instruction, on an AVX-512 host). In that process, beside uir:
IREE compiled for the same instructions (the host's CPU at 512 bits,
`znver3` (AVX2) at 256) and `jax.jit` (XLA:CPU, the host's), where
installed. The inputs are NumPy's own arrays (16 bytes into a page, as a
user's are); IREE copies them into its device arrays first.

The machines these run on are shared: their memory bandwidth moves by up
to 1.6x from one minute to the next. So the frameworks take turns, round
after round, and each keeps its fastest call: the ratios compare calls
made under the same conditions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

N = 1 << 24
ROUNDS = 12

_CHILD = r"""
import json, sys, time
import numpy as np
import uir, uir.numpy as unp
n, rounds, iree_cpu = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
NAMES = ("a*b+c", "tanh(a*b+c)", "exp(a*b+c)")
calls = {}
for name, fn in zip(NAMES, (lambda x, y, z: x * y + z, lambda x, y, z: unp.tanh(x * y + z),
                            lambda x, y, z: unp.exp(x * y + z))):
    j = uir.jit(fn)
    calls["uir " + name] = lambda j=j: j(a, b, c)
try:
    import jax, jax.numpy as jnp
    jfns = (lambda x, y, z: x * y + z, lambda x, y, z: jnp.tanh(x * y + z),
            lambda x, y, z: jnp.exp(x * y + z))
except ImportError:
    jax = None
if jax is not None:
    try:
        import iree.compiler, iree.runtime
        iree.runtime.flags.parse_flags("--task_topology_max_group_count=2")
        config = iree.runtime.Config("local-task")
        for name, fn in zip(NAMES, jfns):
            text = str(jax.jit(fn).lower(a, b, c).compiler_ir("stablehlo"))
            vmfb = iree.compiler.compile_str(
                text, target_backends=["llvm-cpu"], input_type="stablehlo",
                extra_args=["--iree-llvmcpu-target-cpu=" + iree_cpu])
            ctx = iree.runtime.SystemContext(config=config)
            vm = iree.runtime.VmModule.copy_buffer(ctx.instance, vmfb)
            ctx.add_vm_module(vm)
            main = ctx.modules[vm.name]["main"]
            dev = [iree.runtime.asdevicearray(config.device, v) for v in (a, b, c)]
            calls["iree " + name] = lambda main=main, dev=dev: main(*dev)
    except ImportError:
        pass
    ja = [jnp.asarray(v) for v in (a, b, c)]
    for name, fn in zip(NAMES, jfns):
        j = jax.jit(fn)
        calls["jax " + name] = lambda j=j: j(*ja).block_until_ready()
best = {}
for _ in range(rounds):
    for key, call in calls.items():
        call()  # the first call after another framework's may find its threads
        for _ in range(3):
            t = time.perf_counter(); call(); s = time.perf_counter() - t
            best[key] = min(best.get(key, s), s)
print(json.dumps({k: v * 1e3 for k, v in best.items()}))
"""


def run() -> list[dict]:
    rows = []
    import uir

    offered = "avx512f" in uir.info()["cpu_features"]
    for bits in ("512", "256"):
        if bits == "512" and not offered:
            # LLVM would split each 512-bit operation in two: not a width
            # this host offers.
            rows.append({"vector_bits": bits, "status": "the host has no AVX-512"})
            continue
        env = dict(os.environ, UIR_FLAGS=f"--cpu_vector_bits={bits}")
        iree_cpu = "host"
        if bits == "256":
            env["UIR_CPU_ISA"] = "avx2"  # as an AVX2 host: no AVX-512 instruction at all
            iree_cpu = "znver3"
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(N), str(ROUNDS), iree_cpu],
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            rows.append({"vector_bits": bits, "status": done.stderr.strip().splitlines()[-1]})
            continue
        ms = json.loads(done.stdout.strip().splitlines()[-1])
        for name in ("a*b+c", "tanh(a*b+c)", "exp(a*b+c)"):
            row = {
                "vector_bits": bits,
                "function": name,
                "uir_ms": ms["uir " + name],
                "over_fma": ms["uir " + name] / ms["uir a*b+c"],
            }
            for other in ("iree", "jax"):
                if f"{other} {name}" in ms:
                    row[f"{other}_ms"] = ms[f"{other} {name}"]
                    row[f"uir_over_{other}"] = ms["uir " + name] / ms[f"{other} {name}"]
            rows.append(row)
    return rows


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    from run import print_table

    print_table(run())
