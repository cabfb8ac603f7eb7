"""Writes tests/data/jax_linalg/: the HLO modules JAX's CPU lowering makes
of the linear-algebra programs in tests/linalg_cases.py, as XLA dumps them
(`<name>.hlo`, before XLA's passes; `<name>.opt.hlo`, XLA:CPU's optimized
module, for the cases marked `optimized`). They call JAX's LAPACK custom
calls (lapack_sgetrf_ffi, ...), which uir runs as built-in targets.

    .venv/bin/python tools/jax_linalg_dumps.py     # needs jax (make test-xla installs it)
"""

from __future__ import annotations

import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "jax_linalg"


def jax_namespace():
    import jax.lax.linalg
    import jax.numpy
    import jax.scipy.linalg

    return types.SimpleNamespace(jnp=jax.numpy, lax=jax.lax.linalg, jsl=jax.scipy.linalg)


def lower(case, jax):
    """JAX's lowering of `case` on its inputs (64-bit types on for 64-bit
    cases, as JAX needs)."""
    import numpy as np
    from linalg_cases import inputs_of

    wide = (
        np.dtype(case.dtype).itemsize == 8 and np.dtype(case.dtype).kind == "f"
    ) or case.dtype == "complex128"
    jax.config.update("jax_enable_x64", bool(wide))
    fn = case.jax(jax_namespace())
    return jax.jit(fn).lower(*inputs_of(case))


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import jax
    from linalg_cases import CASES

    jax.config.update("jax_platforms", "cpu")
    OUT.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        lowered = lower(case, jax)
        (OUT / f"{case.name}.hlo").write_text(lowered.as_text(dialect="hlo"))
        if case.optimized:
            (OUT / f"{case.name}.opt.hlo").write_text(lowered.compile().as_text())
    (OUT / "VERSION").write_text(f"jax {jax.__version__}\n")
    print(f"wrote {len(CASES)} cases to {OUT} (jax {jax.__version__})")


if __name__ == "__main__":
    main()
