"""Gradients of XLA's own modules: each corpus module (its f32 made f64, so
that finite differences are exact enough to judge) gets vjp_module and
jvp_module; the gradient of <ct, f(x)> agrees with a central difference
along a random direction, and <vjp(ct), t> == <ct, jvp(t)>. vmap_module of
each equals a loop over the batch. Modules with an op no rule covers are
skipped, naming the op."""

from __future__ import annotations

import re

import corpus
import numpy as np
import pytest

import uir
from uir._src.core import dtypes
from uir.transforms import jvp_module, vjp_module, vmap_module


def _candidates():
    return sorted(
        r["file"]
        for r in corpus.manifest_rows()
        if r["cpu_class"] in ("core", "extended") and r["file"] not in corpus.TOO_HEAVY
    )


def _as_f64(name):
    text = (corpus.CORPUS / name).read_text()
    if re.search(r"\b(bf16|f16|f8\w*|c64|c128|token)\b", text):
        pytest.skip("reduced-precision, complex or token types")
    try:
        m = uir.hlo.parse_module(re.sub(r"\bf32\b", "f64", text))
        m.verify()
    except uir.Error as e:
        pytest.skip(f"does not verify in f64: {str(e).splitlines()[0][:80]}")
    if any(p.shape.is_tuple for p in m.entry.parameters):
        pytest.skip("tuple parameters")
    if not m.entry.parameters:
        pytest.skip("no parameters")
    return m


def _args(m, rng):
    out = []
    for p in m.entry.parameters:
        dt = dtypes.numpy_dtype(p.shape.element_type)
        shape = tuple(p.shape.dims)
        if dt.kind == "f":
            out.append(rng.uniform(0.5, 1.5, shape).astype(dt))  # away from kinks at 0
        elif dt.kind == "b":
            out.append(rng.random(shape) < 0.5)
        else:
            out.append(np.zeros(shape, dt))  # indices stay in range
    return out


def _flat(v):
    return list(v) if isinstance(v, (tuple, list)) else [v]


def _vdot(a, b):
    return sum(
        float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.slow
@corpus.needs_corpus
@pytest.mark.parametrize("name", _candidates())
def test_gradients_of_a_corpus_module(name):
    m = _as_f64(name)
    rng = np.random.default_rng(0)
    args = _args(m, rng)
    try:
        outs = _flat(uir.evaluate(m, *args))
    except uir.Error:
        pytest.skip("the evaluator does not run it on these inputs")
    floats = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
    if not floats or any(np.asarray(o).dtype.kind != "f" for o in outs):
        pytest.skip("no float inputs, or a non-float output")
    if not all(np.all(np.isfinite(o)) for o in outs):
        pytest.skip("non-finite outputs on these inputs")
    try:
        v = vjp_module(m)
        j = jvp_module(m)
    except uir.TraceError as e:
        pytest.skip(f"no rule: {str(e)[:100]}")
    v.verify()
    j.verify()
    cts = [rng.standard_normal(np.shape(o)) for o in outs]
    tangents = [
        rng.standard_normal(np.shape(a)) if i in floats else np.zeros_like(a)
        for i, a in enumerate(args)
    ]
    got = _flat(uir.evaluate(v, *args, *cts))
    grads = got[len(outs) :]
    lhs = _vdot([grads[i] for i in floats], [tangents[i] for i in floats])
    jv = _flat(uir.evaluate(j, *args, *tangents))
    rhs = _vdot(cts, jv[len(outs) :])
    assert abs(lhs - rhs) <= 1e-8 * max(1.0, abs(lhs)), (lhs, rhs)
    eps = 1e-6

    def at(s):
        moved = [
            a + s * t if i in floats else a
            for i, (a, t) in enumerate(zip(args, tangents, strict=True))
        ]
        return _vdot(cts, _flat(uir.evaluate(m, *moved)))

    fd = (at(eps) - at(-eps)) / (2 * eps)
    finer = (at(eps / 10) - at(-eps / 10)) / (eps / 5)
    if abs(fd - finer) > 1e-4 * max(1.0, abs(fd)):
        return  # not smooth along t here (a sort's keys swap): the identity above holds
    assert abs(fd - lhs) <= 1e-5 * max(1.0, abs(fd)), (fd, lhs)


@pytest.mark.slow
@corpus.needs_corpus
@pytest.mark.parametrize("name", _candidates())
def test_vmap_of_a_corpus_module_equals_a_loop(name):
    m = _as_f64(name)
    rng = np.random.default_rng(1)
    batch = [_args(m, rng) for _ in range(3)]
    try:
        want = [_flat(uir.evaluate(m, *a)) for a in batch]
    except uir.Error:
        pytest.skip("the evaluator does not run it on these inputs")
    try:
        v = vmap_module(m, in_axes=0, axis_size=3)
    except (uir.TraceError, NotImplementedError) as e:
        pytest.skip(f"no batching: {str(e)[:100]}")
    v.verify()
    stacked = [np.stack([a[k] for a in batch]) for k in range(len(batch[0]))]
    got = _flat(uir.evaluate(v, *stacked))
    for k, g in enumerate(got):
        np.testing.assert_allclose(
            np.asarray(g), np.stack([np.asarray(w[k]) for w in want]), rtol=1e-9, atol=1e-12
        )
