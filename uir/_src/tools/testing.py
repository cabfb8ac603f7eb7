"""Assertions for experiments written as pytest files (uir.testing)."""

from __future__ import annotations

import numpy as np

from uir._src.core import tree_util
from uir._src.core.compile_options import BACKENDS


def _module_and_args(f_or_module, args, seed: int):
    """The HLO module to check and flat NumPy arguments for it: a function is
    traced on `args` as uir.jit would; a module without arguments gets
    random ones suited to its parameters."""
    from uir._src.core import api, hlo
    from uir._src.core.evaluate import random_arguments

    if isinstance(f_or_module, hlo.HloModule):
        module = f_or_module
        flat = list(args) if args else random_arguments(module, seed=seed)
        return module, [np.asarray(a) if not isinstance(a, tuple) else a for a in flat]
    lowered = api.jit(f_or_module).lower(*args)
    return lowered.module, [np.asarray(a) for a in tree_util.tree_leaves(args)]


def _outputs(value) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_outputs(v))
        return out
    return [np.asarray(value)]


def _compare(got: list[np.ndarray], want: list[np.ndarray], what: str, rtol, atol) -> None:
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} outputs, the evaluator gives {len(want)}")
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or g.dtype != w.dtype:
            raise AssertionError(
                f"{what}: output {k} is {g.dtype}{list(g.shape)}, "
                f"the evaluator's {w.dtype}{list(w.shape)}"
            )
        if g.dtype.kind in "fc":
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = g != w
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise AssertionError(
                f"{what}: output {k} differs from the evaluator at {int(bad.sum())} of {g.size} "
                f"elements; first at {where}: {g[where]!r} against {w[where]!r} "
                f"(rtol={rtol}, atol={atol})"
            )


def assert_matches_evaluator(
    f_or_module,
    *args,
    backends=("cpu",),
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Runs a function (traced on `args`) or an HLO module (on `args`, or on
    random arguments from `seed`) on each backend in `backends` and on the
    reference evaluator; raises AssertionError naming the backend, the
    output and the first element that differs."""
    from uir._src.core.backend import compile
    from uir._src.core.evaluate import evaluate

    if isinstance(backends, str):
        backends = (backends,)
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown backend(s) {unknown}; uir has {list(BACKENDS)}")
    module, flat = _module_and_args(f_or_module, args, seed)
    want = _outputs(evaluate(module, *flat))
    for backend in backends:
        got = _outputs(compile(module, backend)(*flat))
        _compare(got, want, f"{module.name} on {backend}", rtol, atol)


def assert_passes_preserve(
    module, passes=None, *, seed: int = 0, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """Runs `passes` (pass names, a Pipeline, or None for the default
    pipeline) on a copy of `module` with every changing pass checked against
    the evaluator on random inputs; raises AssertionError naming the first
    pass that changes the results or breaks the verifier."""
    from uir._src.core import passes as passes_mod
    from uir._src.core.errors import VerifyError

    if passes is None:
        pipeline = passes_mod.default_pipeline()
    elif isinstance(passes, passes_mod.Pipeline):
        pipeline = passes
    else:
        pipeline = passes_mod.make_pipeline(list(passes))
    try:
        pipeline.run(module, check=True, seed=seed, rtol=rtol, atol=atol)
    except passes_mod.PassCheckError as e:
        raise AssertionError(f"pass {e.pass_name} changed what {module.name} computes: {e}") from e
    except VerifyError as e:
        raise AssertionError(f"the passes left {module.name} invalid: {e}") from e


def assert_fusion(f_or_module, *args, kernels: int) -> None:
    """Compiles a function (traced on `args`) or a module for the CPU and
    asserts it runs as `kernels` fused kernels; the message lists the
    kernels and priority fusion's decisions that kept producers apart."""
    from uir._src.core.backend import compile
    from uir._src.tools.fusion_report import explain_fusion

    module, _ = _module_and_args(f_or_module, args, 0)
    kg = compile(module, "cpu").kernel_graph
    found = [n.name for n in kg.nodes if n.kind == "kernel"]
    if len(found) != kernels:
        kept = [
            f"{d.producer} ({d.producer_op}): {d.rule}" for d in explain_fusion(module).rejected
        ]
        raise AssertionError(
            f"{module.name} runs as {len(found)} kernels, not {kernels}: {', '.join(found)}; "
            f"producers not fused: {'; '.join(kept) if kept else 'none'}"
        )
