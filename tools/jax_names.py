"""Writes the JAX snapshots the coverage tests measure uir against:

- tests/data/jax_public_names.txt: the public names of each module below in
  the installed JAX (dir(module) without underscores and submodules);
- tests/data/jax_signatures.txt: the parameters of each public function
  (`*args` and `**kwargs` marked as such), for tests/test_jax_signatures.py.

    .venv/bin/python tools/jax_names.py     # needs jax (make test-xla installs it)
"""

from __future__ import annotations

import importlib
import inspect
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
    "jax.image",
    "jax.scipy.special",
    "jax.scipy.linalg",
    "jax.scipy.signal",
    "jax.scipy.stats.norm",
)
DATA = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data"


def _public(module) -> list[str]:
    return sorted(
        n
        for n in dir(module)
        if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType)
    )


def _parameters(fn) -> str | None:
    """`fn`'s parameters, one word each, or None when it has no signature."""
    if inspect.isclass(fn) or not callable(fn):
        return None
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    marks = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return " ".join(marks.get(p.kind, "") + p.name for p in params)


def main() -> None:
    import jax

    names = [
        f"# Public names of JAX {jax.__version__}: dir(module) without underscores",
        "# and submodules, one per line under its module. Regenerate with",
        "# tools/jax_names.py when moving to a newer JAX.",
        "",
    ]
    signatures = [
        f"# Parameters of JAX {jax.__version__}'s public functions: `name: parameters`",
        "# (*args and **kwargs marked), under each module. Regenerate with",
        "# tools/jax_names.py when moving to a newer JAX.",
        "",
    ]
    for name in MODULES:
        module = importlib.import_module(name)
        public = _public(module)
        names += [f"[{name}]", *public, ""]
        signatures.append(f"[{name}]")
        for n in public:
            params = _parameters(getattr(module, n))
            if params is not None:
                signatures.append(f"{n}: {params}".rstrip())
        signatures.append("")
    (DATA / "jax_public_names.txt").write_text("\n".join(names))
    (DATA / "jax_signatures.txt").write_text("\n".join(signatures))
    print(f"wrote {DATA / 'jax_public_names.txt'} and {DATA / 'jax_signatures.txt'}")


if __name__ == "__main__":
    main()
