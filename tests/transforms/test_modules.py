"""Transformations of HLO modules uir did not trace: replaying a module
reproduces it (a walk over XLA's corpus), and grad_module, vjp_module,
jvp_module and vmap_module give modules that verify, print and run, checked
against finite differences and loops."""

from __future__ import annotations

import corpus
import numpy as np
import pytest
from ad_util import fd_grad

import uir
from uir.transforms import as_function, grad_module, jvp_module, vjp_module, vmap_module

MLP = """
HloModule mlp_loss

%add (a: f64[], b: f64[]) -> f64[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}

ENTRY %main (w: f64[4,3], b: f64[3], x: f64[5,4]) -> f64[] {
  %x = f64[5,4] parameter(2)
  %w = f64[4,3] parameter(0)
  %d = f64[5,3] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b = f64[3] parameter(1)
  %bb = f64[5,3] broadcast(%b), dimensions={1}
  %h = f64[5,3] add(%d, %bb)
  %t = f64[5,3] tanh(%h)
  %sq = f64[5,3] multiply(%t, %t)
  %zero = f64[] constant(0)
  ROOT %r = f64[] reduce(%sq, %zero), dimensions={0,1}, to_apply=%add
}
"""


def _args(module, rng):
    out = []
    for p in module.entry.parameters:
        dtype = uir._src.core.dtypes.numpy_dtype(p.shape.element_type)
        shape = tuple(p.shape.dims)
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.random(shape) < 0.5)
        else:
            out.append(rng.integers(0, 3, shape).astype(dtype))
    return out


def _evaluate(module, args):
    return uir.evaluate(module, *args)


def test_grad_module_of_a_parsed_module_matches_finite_differences():
    m = uir.hlo.parse_module(MLP)
    g = grad_module(m, wrt=[0, 1])
    g.verify()
    assert "HloModule" in g.to_text()
    rng = np.random.default_rng(0)
    w, b, x = _args(m, rng)
    gw, gb = (np.asarray(v) for v in _evaluate(g, [w, b, x]))
    compiled = uir.compile(g)
    cw, cb = (np.asarray(v) for v in compiled(w, b, x))
    np.testing.assert_allclose(cw, gw, rtol=1e-12)
    np.testing.assert_allclose(cb, gb, rtol=1e-12)

    def f(w_, b_):
        return float(np.asarray(_evaluate(m, [w_, b_, x])))

    eps = 1e-6
    for idx in np.ndindex(w.shape):
        wp, wm = w.copy(), w.copy()
        wp[idx] += eps
        wm[idx] -= eps
        assert abs((f(wp, b) - f(wm, b)) / (2 * eps) - gw[idx]) < 1e-6
    for idx in np.ndindex(b.shape):
        bp, bm = b.copy(), b.copy()
        bp[idx] += eps
        bm[idx] -= eps
        assert abs((f(w, bp) - f(w, bm)) / (2 * eps) - gb[idx]) < 1e-6


def test_jvp_and_vjp_modules_agree():
    m = uir.hlo.parse_module(MLP)
    rng = np.random.default_rng(1)
    args = _args(m, rng)
    tangents = [rng.standard_normal(a.shape) for a in args]
    out, tan = _evaluate(jvp_module(m), [*args, *tangents])
    out2, *cts = _evaluate(vjp_module(m), [*args, np.float64(1.0)])
    assert float(np.asarray(out)) == pytest.approx(float(np.asarray(out2)), rel=1e-12)
    inner = sum(float(np.sum(np.asarray(c) * t)) for c, t in zip(cts, tangents, strict=True))
    assert float(np.asarray(tan)) == pytest.approx(inner, rel=1e-10)


def test_vmap_module_equals_a_loop():
    m = uir.hlo.parse_module(MLP)
    rng = np.random.default_rng(2)
    w, b, _ = _args(m, rng)
    xs = rng.standard_normal((3, 5, 4))
    v = vmap_module(m, in_axes=(None, None, 0), axis_size=3)
    v.verify()
    got = np.asarray(_evaluate(v, [w, b, xs]))
    want = [float(np.asarray(_evaluate(m, [w, b, x]))) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _clonable():
    return sorted(
        r["file"]
        for r in corpus.manifest_rows()
        if r["cpu_class"] in ("core", "extended") and r["file"] not in corpus.TOO_HEAVY
    )


MAP = """
HloModule mapped

%f (a: f64[], b: f64[]) -> f64[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %s = f64[] sine(%a)
  %m = f64[] multiply(%s, %b)
  ROOT %r = f64[] multiply(%m, %m)
}

ENTRY %e (x: f64[2,3], y: f64[2,3]) -> f64[2,3] {
  %x = f64[2,3] parameter(0)
  %y = f64[2,3] parameter(1)
  ROOT %mp = f64[2,3] map(%x, %y), dimensions={0,1}, to_apply=%f
}
"""


OWN_REDUCERS = """
HloModule own_reducers

%r (a: f64[], b: f64[]) -> f64[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %ab = f64[] multiply(%a, %b)
  %s = f64[] add(%a, %b)
  ROOT %o = f64[] add(%ab, %s)
}

%v (a: f64[], b: f64[], c: f64[], d: f64[]) -> (f64[], f64[]) {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %c = f64[] parameter(2)
  %d = f64[] parameter(3)
  %x = f64[] add(%a, %c)
  %y = f64[] maximum(%b, %d)
  ROOT %t = (f64[], f64[]) tuple(%x, %y)
}

ENTRY %e (x: f64[3,5], y: f64[3,5]) -> f64[] {
  %x = f64[3,5] parameter(0)
  %y = f64[3,5] parameter(1)
  %z = f64[] constant(0)
  %ninf = f64[] constant(-inf)
  %rx = f64[3] reduce(%x, %z), dimensions={1}, to_apply=%r
  %vv = (f64[5], f64[5]) reduce(%x, %y, %z, %ninf), dimensions={0}, to_apply=%v
  %v0 = f64[5] get-tuple-element(%vv), index=0
  %v1 = f64[5] get-tuple-element(%vv), index=1
  %m = f64[5] multiply(%v0, %v1)
  %all = f64[] reduce(%m, %z), dimensions={0}, to_apply=%r
  %s3 = f64[] reduce(%rx, %z), dimensions={0}, to_apply=%r
  ROOT %o = f64[] add(%all, %s3)
}
"""


def test_reduces_with_reducers_of_their_own_differentiate():
    # (a + 1)(b + 1) - 1 (associative, identity 0) and a variadic (sum, max)
    m = uir.hlo.parse_module(OWN_REDUCERS)
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-0.5, 0.5, (3, 5)), rng.uniform(-0.5, 0.5, (3, 5))
    g = grad_module(m, wrt=[0, 1])
    g.verify()
    gx, gy = (np.asarray(a) for a in uir.evaluate(g, x, y))

    def f(a, b):
        return float(uir.evaluate(m, a, b))

    np.testing.assert_allclose(gx, fd_grad(lambda v: f(v, y), x), atol=1e-8)
    np.testing.assert_allclose(gy, fd_grad(lambda v: f(x, v), y), atol=1e-8)
    tx, ty = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    out, t = uir.evaluate(jvp_module(m), x, y, tx, ty)
    np.testing.assert_allclose(float(out), f(x, y), rtol=1e-12)
    np.testing.assert_allclose(float(t), np.sum(gx * tx) + np.sum(gy * ty), rtol=1e-10)


def test_a_map_differentiates_and_batches_as_maps():
    m = uir.hlo.parse_module(MAP)
    rng = np.random.default_rng(3)
    x, y, ct, tx, ty = (rng.standard_normal((2, 3)) for _ in range(5))
    v, j = vjp_module(m), jvp_module(m)
    for mod in (v, j):
        mod.verify()
        assert " map(" in mod.to_text()
    dx, dy = 2 * np.sin(x) * y * y * np.cos(x), 2 * np.sin(x) ** 2 * y
    _, gx, gy = (np.asarray(a) for a in uir.evaluate(v, x, y, ct))
    np.testing.assert_allclose(gx, ct * dx, rtol=1e-12)
    np.testing.assert_allclose(gy, ct * dy, rtol=1e-12)
    _, t = (np.asarray(a) for a in uir.evaluate(j, x, y, tx, ty))
    np.testing.assert_allclose(t, dx * tx + dy * ty, rtol=1e-12)
    compiled = uir.compile(v, backend="cpu")
    np.testing.assert_allclose(np.asarray(compiled(x, y, ct)[1]), gx, rtol=1e-12)
    b = vmap_module(m, in_axes=(0, None), axis_size=4)
    xs = rng.standard_normal((4, 2, 3))
    np.testing.assert_allclose(np.asarray(uir.evaluate(b, xs, y)), (np.sin(xs) * y) ** 2)


@pytest.mark.slow
@corpus.needs_corpus
@pytest.mark.parametrize("name", _clonable())
def test_replaying_a_corpus_module_reproduces_it(name):
    try:
        m = uir.hlo.load(corpus.CORPUS / name)
        m.verify()
    except uir.Error:
        pytest.skip("the module does not verify (see the corpus tests)")
    if any(p.shape.is_tuple or p.shape.element_type == "token" for p in m.entry.parameters):
        pytest.skip("tuple or token parameters")
    from uir._src.transforms.modules import _entry_avals, _lowered

    clone = _lowered(as_function(m), _entry_avals(m), "replayed")
    clone.verify()
    rng = np.random.default_rng(0)
    args = _args(m, rng)
    try:
        want = _evaluate(m, args)
    except uir.Error:
        pytest.skip("the evaluator does not run the original on random inputs")
    got = _evaluate(clone, args)
    flat_w = want if isinstance(want, (tuple, list)) else [want]
    flat_g = got if isinstance(got, (tuple, list)) else [got]
    # The clone's root is the original's value: a tuple root stays a tuple.
    assert len(flat_g) == len(flat_w)
    for a, b in zip(flat_g, flat_w, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
