"""Writes tests/data/jax_public_names.txt: the public names of jax.numpy,
jax.lax, jax.nn, jax.random, jax.numpy.linalg, jax.numpy.fft and jax.lax.linalg in the
installed JAX (dir(module) without
underscores and submodules), the snapshot tests/test_jax_coverage.py
measures uir's coverage against.

    .venv/bin/python tools/jax_names.py     # needs jax (make test-xla installs it)
"""

from __future__ import annotations

import pathlib
import types

MODULES = (
    "jax.numpy",
    "jax.lax",
    "jax.nn",
    "jax.random",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.lax.linalg",
)
OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "jax_public_names.txt"


def main() -> None:
    import importlib

    import jax

    lines = [
        f"# Public names of JAX {jax.__version__}: dir(module) without underscores",
        "# and submodules, one per line under its module. Regenerate with",
        "# tools/jax_names.py when moving to a newer JAX.",
        "",
    ]
    for name in MODULES:
        module = importlib.import_module(name)
        names = sorted(
            n
            for n in dir(module)
            if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType)
        )
        lines += [f"[{name}]", *names, ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
