"""Convolutions of common shapes (NHWC input, HWIO kernel, f32) through
uir.jit and jax.jit (XLA:CPU) on the same inputs in one process: each
one's time, GFLOP/s and fraction of this machine's FP32 FMA peak
(benchmarks/roofline.py; depthwise convolutions are memory-bound, and
their fraction is of the peak all the same, as a floor)."""

from __future__ import annotations

import time

import numpy as np
from roofline import FP32_PEAK_GFLOPS

# name: (input NHWC, kernel HWIO, strides, padding, rhs dilation, feature groups)
CASES = {
    "resnet 3x3 64->64 4x56x56": ((4, 56, 56, 64), (3, 3, 64, 64), (1, 1), "SAME", (1, 1), 1),
    "1x1 256->64 4x56x56": ((4, 56, 56, 256), (1, 1, 256, 64), (1, 1), "SAME", (1, 1), 1),
    "3x3 stride 2 64->128 4x56x56": ((4, 56, 56, 64), (3, 3, 64, 128), (2, 2), "SAME", (1, 1), 1),
    "stem 7x7 stride 2 3->64 4x224x224": (
        (4, 224, 224, 3),
        (7, 7, 3, 64),
        (2, 2),
        "SAME",
        (1, 1),
        1,
    ),
    "dilated 3x3 rate 2 64->64 4x28x28": (
        (4, 28, 28, 64),
        (3, 3, 64, 64),
        (1, 1),
        "SAME",
        (2, 2),
        1,
    ),
    "grouped 3x3 g4 128->128 4x28x28": (
        (4, 28, 28, 128),
        (3, 3, 32, 128),
        (1, 1),
        "SAME",
        (1, 1),
        4,
    ),
    "depthwise 3x3 128 4x56x56": ((4, 56, 56, 128), (3, 3, 1, 128), (1, 1), "SAME", (1, 1), 128),
}


def _best_ms(fn, repeats: int = 15) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def run() -> list[dict[str, object]]:
    import jax
    import jax.numpy as jnp
    from jax import lax as jlax

    import uir
    from uir import lax as ulax

    jax.config.update("jax_platforms", "cpu")
    peak = FP32_PEAK_GFLOPS[2]
    rows = []
    rng = np.random.default_rng(0)
    for name, (xs, ks, strides, pad, dil, groups) in CASES.items():
        x = rng.standard_normal(xs).astype(np.float32)
        k = (rng.standard_normal(ks) * 0.1).astype(np.float32)
        dn = ("NHWC", "HWIO", "NHWC")

        def conv(lax, a, b, strides=strides, pad=pad, dil=dil, groups=groups, dn=dn):
            return lax.conv_general_dilated(
                a, b, strides, pad, rhs_dilation=dil, dimension_numbers=dn,
                feature_group_count=groups,
            )  # fmt: skip

        uf = uir.jit(lambda a, b, conv=conv: conv(ulax, a, b))
        jf = jax.jit(lambda a, b, conv=conv: conv(jlax, a, b))
        got, want = np.asarray(uf(x, k)), np.asarray(jf(x, k))
        out = want.shape
        flops = 2 * np.prod(out) * ks[0] * ks[1] * ks[2]
        row: dict[str, object] = {"case": name, "gflop": flops / 1e9}
        if not np.allclose(got, want, rtol=1e-3, atol=1e-3):
            row["status"] = "disagrees with jax.jit"
            rows.append(row)
            continue
        ja, jb = jnp.asarray(x), jnp.asarray(k)
        t_uir = _best_ms(lambda uf=uf, x=x, k=k: uf(x, k))
        t_jax = _best_ms(lambda jf=jf, ja=ja, jb=jb: jf(ja, jb).block_until_ready())
        fallbacks = len(uf.lower(x, k).compile().fallbacks)
        row.update(
            uir_ms=t_uir, jax_ms=t_jax, uir_over_jax=t_uir / t_jax,
            uir_gflops=flops / t_uir / 1e6, uir_peak_fraction=flops / t_uir / 1e6 / peak,
            jax_peak_fraction=flops / t_jax / 1e6 / peak, fallbacks=fallbacks, status="ok",
        )  # fmt: skip
        rows.append(row)
    return rows


if __name__ == "__main__":
    import os
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from run import print_table

    print_table(run())
