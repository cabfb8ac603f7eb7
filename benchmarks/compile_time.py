"""Compile time of the default pass pipeline: the largest `core` corpus module
(the ResNet-50 dump) and generated modules of 1,000 to 100,000 instructions,
whose time should grow linearly. Edits dominate the generated ones: every
third instruction is a duplicate (cse replaces it), every fifth is dead
(dce removes it) and every seventh adds zero (algsimp removes it).

Even a single linear scan costs more per instruction once a module no
longer fits in the caches (and glibc's allocator slows down with a large
heap), so beside the pipeline the table times the parser, one pass over the
text that builds the module, on the same input: `pipeline/parse` staying
flat across sizes means the pipeline scales as a linear scan does.

Then the whole compile, to machine code, beside XLA's: the ResNet-50 dump
(uir.compile: passes, lowering to the Unified IR, LLVM; XLA:CPU compiling
the same HLO text) and a traced MLP block (uir.jit against jax.jit,
tracing included), where JAX is installed.

    .venv/bin/python benchmarks/compile_time.py
"""

from __future__ import annotations

import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from corpus import CORPUS

import uir

RESNET = "xla_backends_cpu_benchmarks_hlo__resnet50_keras_jax_f32__0.hlo"


def chain(n: int) -> str:
    lines = [
        "  p = f32[8] parameter(0)",
        "  z = f32[] constant(0)",
        "  zb = f32[8] broadcast(z), dimensions={}",
    ]
    last = "p"
    for i in range(n):
        if i % 3 == 1:
            lines.append(f"  n{i} = f32[8] negate({last})")  # same as the one before: cse
            last = f"n{i}"
        elif i % 5 == 0:
            lines.append(f"  n{i} = f32[8] exponential({last})")  # dead: nobody reads it
        elif i % 7 == 0:
            lines.append(f"  n{i} = f32[8] add({last}, zb)")  # x + 0: algsimp
            last = f"n{i}"
        else:
            lines.append(f"  n{i} = f32[8] negate({last})")
            lines.append(f"  m{i} = f32[8] negate({last})")  # duplicate: cse
            lines.append(f"  k{i} = f32[8] add(n{i}, m{i})")
            last = f"k{i}"
    lines.append(f"  ROOT r = f32[8] negate({last})")
    return "HloModule chain\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


def parse_time(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        uir.hlo.parse_module(text)
        best = min(best, time.perf_counter() - start)
    return best


def timed(module, verify: bool, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        uir.passes.default_pipeline().run(module, verify=verify)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(
        f"{'module':<24} {'instructions':>12} {'pipeline s':>11} {'+verify s':>10} "
        f"{'us/instr':>9} {'parse us/instr':>15} {'pipeline/parse':>15}"
    )

    def row(label, text, module, repeat):
        count = sum(len(c.instructions) for c in module.computations)
        t, tv = timed(module, False, repeat), timed(module, True, repeat)
        p = parse_time(text, repeat)
        print(
            f"{label:<24} {count:12d} {t:11.3f} {tv:10.3f} {1e6 * t / count:9.2f} "
            f"{1e6 * p / count:15.2f} {t / p:15.1f}"
        )

    text = (CORPUS / RESNET).read_text()
    row("resnet50 (corpus)", text, uir.hlo.parse_module(text), 3)
    for n in (1_000, 10_000, 100_000):
        text = chain(n)
        row(f"chain {n}", text, uir.hlo.parse_module(text), 3 if n < 100_000 else 1)


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def backend_rows() -> None:
    """Compile to machine code: uir (cpu backend) beside XLA:CPU."""
    import numpy as np

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
    print(f"\n{'compile to machine code':<32} {'uir ms':>9} {'XLA ms':>9}  uir stages (ms)")
    text = (CORPUS / RESNET).read_text()
    module = uir.hlo.parse_module(text)
    stages = {}

    from uir._src.core.backend import clear_cache

    def uir_resnet():
        clear_cache()  # each compile from scratch, not from the in-process cache
        stages.update(uir.compile(module).compile_seconds)

    t_uir = _best(uir_resnet)
    try:
        import xla_reference

        t_xla = _best(lambda: xla_reference.compile_hlo(text))
    except ImportError:
        t_xla = float("nan")
    detail = ", ".join(f"{k} {v * 1e3:.0f}" for k, v in stages.items() if "_" in k or k == "llvm")
    print(f"{'resnet50 (corpus)':<32} {t_uir * 1e3:9.0f} {t_xla * 1e3:9.0f}  {detail}")

    import uir.nn as unn
    import uir.numpy as unp

    def block(xp, gelu):
        def f(x, g, w1, b1, w2, b2):
            mu = xp.mean(x, axis=-1, keepdims=True)
            var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
            h = (x - mu) / xp.sqrt(var + 1e-5) * g
            return x + gelu(h @ w1 + b1) @ w2 + b2

        return f

    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal(s).astype(np.float32)
        for s in [(256, 1024), (1024,), (1024, 4096), (4096,), (4096, 1024), (1024,)]
    ]

    def uir_mlp():
        clear_cache()
        uir.jit(block(unp, unn.gelu)).lower(*args).compile()

    t_uir = _best(uir_mlp)
    try:
        import jax
        import jax.numpy as jnp

        t_jax = _best(lambda: jax.jit(block(jnp, jax.nn.gelu)).lower(*args).compile())
    except ImportError:
        t_jax = float("nan")
    print(f"{'MLP block 256x1024->4096 (traced)':<32} {t_uir * 1e3:9.0f} {t_jax * 1e3:9.0f}")
    aot_rows(uir.compile(module), uir.jit(block(unp, unn.gelu)).lower(*args).compile())


_LOAD = """
import sys, time
import uir
blob = open(sys.argv[1], "rb").read()
start = time.perf_counter()
exe = uir.deserialize(blob)
print((time.perf_counter() - start) * 1e3)
"""


def aot_rows(*executables) -> None:
    """Serialized executables (Executable.serialize) loaded by uir.deserialize
    in a fresh process: the milliseconds from bytes to a callable executable
    (best of 3 processes; `import uir` not counted), beside compiling the
    same program from scratch in this one."""
    import subprocess
    import tempfile

    print(f"\n{'serialized executable':<32} {'KiB':>9} {'load ms':>9} {'compile ms':>11}")
    for exe in executables:
        blob = exe.serialize()
        with tempfile.NamedTemporaryFile(suffix=".uirx") as f:
            f.write(blob)
            f.flush()
            load = min(
                float(
                    subprocess.run(
                        [sys.executable, "-c", _LOAD, f.name],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(3)
            )
        seconds = getattr(exe, "executable", exe).compile_seconds
        compiled = sum(seconds.get(k, 0.0) for k in ("hlo_passes", "lowering", "llvm"))
        name = exe.module.name
        print(f"{name:<32} {len(blob) / 1024:9.0f} {load:9.1f} {compiled * 1e3:11.0f}")


if __name__ == "__main__":
    main()
    backend_rows()
