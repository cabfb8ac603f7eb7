"""Every public function of uir's JAX-shaped modules takes the parameters
JAX's takes (tests/data/jax_signatures.txt, written by tools/jax_names.py
from one JAX release), so code written against jax.numpy, jax.lax, jax.nn,
jax.random, their linalg and fft modules, jax.image and the chosen
jax.scipy modules calls uir's unchanged. Out of scope, each with its
reason: the placement parameters (devices, shardings) everywhere, and the
few listed below."""

from __future__ import annotations

import importlib
import inspect
import pathlib

import pytest

from tests.test_jax_coverage import OUT_OF_SCOPE, UIR_MODULE

SIGNATURES = pathlib.Path(__file__).parent / "data" / "jax_signatures.txt"

# Parameters no uir function takes: uir runs on one host device.
PLACEMENT = {"device", "sharding", "out_sharding"}

# (module, function) -> {parameter: why it is absent}.
ABSENT: dict[tuple[str, str], dict[str, str]] = {
    ("jax.lax.linalg", "tridiagonal_solve"): {
        "perturb_singular": "uir solves with LAPACK's gtsv, which has no perturbed pivots: "
        "a singular system gives NaN",
    },
}


def signatures() -> dict[str, dict[str, list[str]]]:
    modules: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in SIGNATURES.read_text().splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = modules.setdefault(line[1:-1], {})
        elif line and not line.startswith("#") and current is not None:
            name, _, params = line.partition(":")
            current[name] = params.split()
    return modules


def missing(module: str) -> dict[str, list[str]]:
    """JAX's parameters that uir's functions of `module` lack."""
    uir_module = importlib.import_module(UIR_MODULE[module])
    out = {}
    for name, params in signatures()[module].items():
        if name in OUT_OF_SCOPE.get(module, {}):
            continue
        fn = getattr(uir_module, name, None)
        if fn is None or inspect.isclass(fn) or not callable(fn):
            continue
        ours = inspect.signature(fn).parameters.values()
        names = {p.name for p in ours}
        var_positional = any(p.kind == p.VAR_POSITIONAL for p in ours)
        var_keyword = any(p.kind == p.VAR_KEYWORD for p in ours)
        positional = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ours)
        absent = ABSENT.get((module, name), {})
        lacking = []
        for p in params:
            if p.startswith("**"):
                ok = var_keyword
            elif p.startswith("*"):
                ok = var_positional or positional
            else:
                ok = p in names or var_keyword or p in PLACEMENT or p.startswith("_")
            if not ok and p.lstrip("*") not in absent:
                lacking.append(p)
        if lacking:
            out[name] = lacking
    return out


def test_the_snapshot_covers_every_module():
    assert set(signatures()) == set(UIR_MODULE)


@pytest.mark.parametrize("module", sorted(UIR_MODULE))
def test_every_function_takes_jax_parameters(module):
    lacking = missing(module)
    assert not lacking, f"{UIR_MODULE[module]} lacks JAX's parameters: {lacking}"


def test_absent_parameters_are_jax_parameters():
    known = signatures()
    for (module, name), params in ABSENT.items():
        assert name in known[module], (module, name)
        stale = set(params) - {p.lstrip("*") for p in known[module][name]}
        assert not stale, f"{module}.{name}: JAX has no parameters {sorted(stale)}"
