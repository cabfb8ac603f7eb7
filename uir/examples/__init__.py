"""Example HLO modules that ship with uir, for the README and for trying
things out from any directory:

    import uir, uir.examples
    m = uir.hlo.load(uir.examples.path("mlp.hlo"))

mlp.hlo: a two-layer perceptron (8x16 inputs, tanh, 10-way softmax) as
uir.jit traces it. square.hlo: x * x over four floats. jax_solve.hlo:
JAX's CPU lowering of jnp.linalg.solve on a batch of three 5x5 systems with
two right-hand sides, with its LAPACK custom calls (lapack_sgetrf_ffi,
lapack_strsm_ffi), as `jax.jit(jnp.linalg.solve).lower(a, b).as_text("hlo")`
wrote it.
"""

from __future__ import annotations

import pathlib

_HERE = pathlib.Path(__file__).resolve().parent


def path(name: str) -> pathlib.Path:
    """The path of the bundled example `name` (e.g. "mlp.hlo")."""
    p = _HERE / name
    if not p.is_file() or p.suffix != ".hlo":
        raise FileNotFoundError(f"no bundled example {name!r}; there are {names()}")
    return p


def names() -> list[str]:
    """The bundled examples."""
    return sorted(p.name for p in _HERE.glob("*.hlo"))
