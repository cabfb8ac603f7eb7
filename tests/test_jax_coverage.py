"""How much of JAX's public surface uir covers: the names of jax.numpy,
jax.lax, jax.nn and jax.random (tests/data/jax_public_names.txt, a snapshot
of one JAX release, with jax.numpy.linalg, jax.numpy.fft, jax.lax.linalg,
jax.image and jax.scipy's special, linalg, signal and stats.norm) that
uir's modules of the same names define, out of those in scope. Out of
scope, each with its reason: JAX's tracing machinery (primitives),
collectives over named axes and sharding (pmap/shard_map), autodiff-only
helpers, host I/O and printing, Python-function transforms, and the
jax.scipy functions listed below.

    .venv/bin/python -m pytest tests/test_jax_coverage.py -s   # prints the figures

The floors below only rise: a name once covered stays covered."""

from __future__ import annotations

import importlib
import pathlib
import re
import types

import pytest

SNAPSHOT = pathlib.Path(__file__).parent / "data" / "jax_public_names.txt"

OUT_OF_SCOPE: dict[str, dict[str, str]] = {
    "jax.numpy": {
        **dict.fromkeys(
            [
                "array_repr",
                "array_str",
                "from_dlpack",
                "frombuffer",
                "fromfile",
                "fromiter",
                "fromstring",
                "load",
                "save",
                "savez",
            ],
            "host I/O and printing of arrays, not a traced computation",
        ),
        **dict.fromkeys(
            [
                "apply_along_axis",
                "apply_over_axes",
                "frompyfunc",
                "vectorize",
            ],
            "transforms a Python function (needs vmap)",
        ),
        "einsum_path": "NumPy's contraction planner, not a computation",
        "place": "in-place mutation of a NumPy array",
    },
    "jax.lax": {
        **dict.fromkeys(
            [
                "all_gather",
                "all_to_all",
                "axis_index",
                "axis_size",
                "pbroadcast",
                "pcast",
                "pmax",
                "pmean",
                "pmin",
                "ppermute",
                "precv",
                "psend",
                "pshuffle",
                "psum",
                "psum_scatter",
                "pswapaxes",
                "ragged_all_to_all",
                "with_sharding_constraint",
            ],
            "collectives over named axes and sharding (pmap/shard_map)",
        ),
        **dict.fromkeys(
            ["custom_linear_solve", "custom_root", "random_gamma_grad", "igamma_grad_a"],
            "autodiff-only: custom derivative rules and gradients",
        ),
        **dict.fromkeys(
            ["dce_sink", "stage", "platform_dependent", "composite", "shape_as_value"],
            "JAX's tracing and lowering machinery",
        ),
        "scaled_dot": "block-scaled low-precision (MX) matmul, as jax.nn's scaled_dot_general",
    },
    "jax.nn": dict.fromkeys(
        ["get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"],
        "block-scaled low-precision (MX) matmul configuration",
    ),
    "jax.numpy.linalg": {},
    "jax.numpy.fft": {},
    "jax.lax.linalg": {},
    "jax.image": {},
    "jax.scipy.special": {
        **dict.fromkeys(
            [
                "bernoulli",
                "bessel_jn",
                "dawsn",
                "erfcx",
                "exp1",
                "expi",
                "expn",
                "fresnel",
                "hyp1f1",
                "hyp2f1",
                "owens_t",
                "sici",
                "spence",
                "sph_harm_y",
                "wofz",
            ],
            "functions that need series or continued-fraction kernels of their own; "
            "not the ones a user reaches first",
        ),
    },
    "jax.scipy.linalg": {
        **dict.fromkeys(
            ["funm", "sqrtm", "rsf2csf", "solve_sylvester", "qr_multiply", "expm_frechet"],
            "matrix functions built on the complex Schur form and Sylvester solvers "
            "(rarely the first reach)",
        ),
        "eigh_tridiagonal": "a tridiagonal eigensolver (bisection) of its own",
    },
    "jax.scipy.signal": dict.fromkeys(
        ["csd", "istft", "stft", "welch"],
        "spectral estimation (windows, overlapping segments): beyond the convolutions",
    ),
    "jax.scipy.stats.norm": {},
    "jax.random": {
        "random_gamma_p": "a primitive of JAX's tracing machinery",
        **dict.fromkeys(
            ["key_dtype", "key_impl", "clone"], "typed key arrays (uir's keys are raw uint32[2])"
        ),
    },
}
# Primitives (lax.add_p, ...) are objects of JAX's tracing machinery.
PRIMITIVE = re.compile(r".*_p$")

UIR_MODULE = {
    "jax.numpy": "uir.numpy",
    "jax.lax": "uir.lax",
    "jax.nn": "uir.nn",
    "jax.random": "uir.random",
    "jax.numpy.linalg": "uir.numpy.linalg",
    "jax.numpy.fft": "uir.numpy.fft",
    "jax.lax.linalg": "uir.lax.linalg",
    "jax.image": "uir.image",
    "jax.scipy.special": "uir.scipy.special",
    "jax.scipy.linalg": "uir.scipy.linalg",
    "jax.scipy.signal": "uir.scipy.signal",
    "jax.scipy.stats.norm": "uir.scipy.stats.norm",
}
# Coverage (%) of the names in scope; raised as names land, never lowered.
FLOORS = {
    "jax.numpy": 100.0,
    "jax.lax": 100.0,
    "jax.nn": 100.0,
    "jax.random": 100.0,
    "jax.numpy.linalg": 100.0,
    "jax.numpy.fft": 100.0,
    "jax.lax.linalg": 100.0,
    "jax.image": 100.0,
    "jax.scipy.special": 100.0,
    "jax.scipy.linalg": 100.0,
    "jax.scipy.signal": 100.0,
    "jax.scipy.stats.norm": 100.0,
}
# uir names beyond JAX's: each on purpose.
EXTRAS = {
    "uir.numpy": {"erf", "rsqrt", "row_stack"},
    # jax.ShapeDtypeStruct for custom_call's results; custom_call as
    # jax.extend.ffi's, under lax.
    "uir.lax": {"ShapeDtypeStruct", "custom_call"},
    "uir.nn": {"layer_norm"},
    "uir.random": {"threefry_2x32"},
    "uir.numpy.linalg": set(),
    "uir.numpy.fft": set(),
    "uir.lax.linalg": set(),
    "uir.image": set(),
    "uir.scipy.special": set(),
    "uir.scipy.linalg": set(),
    "uir.scipy.signal": set(),
    "uir.scipy.stats.norm": set(),
}


def snapshot() -> tuple[str, dict[str, list[str]]]:
    version, modules, current = "", {}, None
    for line in SNAPSHOT.read_text().splitlines():
        if line.startswith("# Public names of JAX "):
            version = line.split()[5].rstrip(":")
        elif line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            modules[current] = []
        elif line and not line.startswith("#") and current:
            modules[current].append(line)
    return version, modules


def in_scope(module: str, names: list[str]) -> list[str]:
    skip = OUT_OF_SCOPE.get(module, {})
    return [n for n in names if n not in skip and not PRIMITIVE.match(n)]


def coverage() -> dict[str, tuple[int, int, list[str]]]:
    _, modules = snapshot()
    out = {}
    for module, names in modules.items():
        uir_module = importlib.import_module(UIR_MODULE[module])
        scope = in_scope(module, names)
        missing = [n for n in scope if not hasattr(uir_module, n)]
        out[module] = (len(scope) - len(missing), len(scope), missing)
    return out


def test_the_snapshot_names_its_jax_version_and_its_modules():
    version, modules = snapshot()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert set(modules) == set(UIR_MODULE)
    assert len(modules["jax.numpy"]) > 300 and len(modules["jax.lax"]) > 300


@pytest.mark.parametrize("module", sorted(UIR_MODULE))
def test_coverage_of_each_module_stays_at_its_floor(module):
    have, total, missing = coverage()[module]
    percent = 100 * have / total
    version, _ = snapshot()
    print(
        f"\n{module} (JAX {version}): {have} of {total} names in scope, {percent:.1f}%; "
        f"missing: {' '.join(missing)}"
    )
    assert percent >= FLOORS[module], (
        f"{module}: {percent:.1f}% < {FLOORS[module]}%; missing {missing}"
    )


@pytest.mark.parametrize("module", sorted(UIR_MODULE))
def test_out_of_scope_names_are_in_the_snapshot(module):
    _, modules = snapshot()
    stale = set(OUT_OF_SCOPE.get(module, {})) - set(modules[module])
    assert not stale, f"{module}: out-of-scope names JAX no longer has: {sorted(stale)}"


@pytest.mark.parametrize("module", sorted(UIR_MODULE))
def test_public_modules_leak_no_implementation_names(module):
    _, modules = snapshot()
    uir_name = UIR_MODULE[module]
    uir_module = importlib.import_module(uir_name)
    public = {
        n
        for n in dir(uir_module)
        if not n.startswith("_") and not isinstance(getattr(uir_module, n), types.ModuleType)
    }
    unknown = public - set(modules[module]) - EXTRAS[uir_name]
    assert not unknown, f"{uir_name} exposes names jax has not: {sorted(unknown)}"
