"""custom_vjp, custom_jvp and checkpoint: the user's rules are the ones
used, they stay in the module as tagged calls, and checkpoint trades
residuals for recomputation without changing the gradient."""

from __future__ import annotations

import numpy as np
import pytest
from ad_util import fd_grad

import uir
import uir.lax as lax
import uir.numpy as jnp
from uir import hlo

policies = uir.checkpoint_policies


pytestmark = pytest.mark.usefixtures("x64")


@uir.custom_vjp
def logsumexp(x):
    return jnp.log(jnp.sum(jnp.exp(x)))


def _lse_fwd(x):
    m = jnp.max(x)
    y = m + jnp.log(jnp.sum(jnp.exp(x - m)))
    return y, (x, y)


def _lse_bwd(res, g):
    x, y = res
    return (g * jnp.exp(x - y),)


logsumexp.defvjp(_lse_fwd, _lse_bwd)


@uir.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def test_custom_vjp_backward_is_the_users():
    x = np.array([1.0, 2.0, 1000.0], np.float32)
    g = np.asarray(uir.grad(logsumexp)(x))
    # The naive derivative overflows (exp(1000)); the rule's does not.
    np.testing.assert_allclose(g, [0.0, 0.0, 1.0], atol=1e-6)
    y = np.array([0.3, -1.2, 0.8])
    e = np.exp(y - y.max())
    np.testing.assert_allclose(np.asarray(uir.grad(logsumexp)(y)), e / e.sum(), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(uir.jit(uir.grad(lambda v: logsumexp(v * 2.0)))(y)),
        2 * np.exp(2 * y) / np.exp(2 * y).sum(),
        rtol=1e-5,
    )
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        uir.jvp(logsumexp, (y,), (y,))


def test_custom_vjp_stays_a_tagged_call_and_runs():
    x = np.array([0.5, 1.5], np.float32)
    text = uir.jit(logsumexp).lower(x).as_text()
    assert 'uir_rule="custom_vjp:' in text and "call(" in text
    module = hlo.parse_module(text)
    np.testing.assert_allclose(
        np.asarray(uir.evaluate(module, x)), np.log(np.exp(x).sum()), rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(logsumexp(x)), np.log(np.exp(x).sum()), rtol=1e-6)


def test_custom_vjp_nondiff_argnums_pytrees_and_errors():
    def f(scale, xs):
        return jnp.sum(xs["a"] * scale) + jnp.sum(xs["b"])

    g = uir.custom_vjp(f, nondiff_argnums=(0,))
    g.defvjp(
        lambda scale, xs: (f(scale, xs), xs),
        lambda scale, res, ct: ({"a": ct * scale * 10.0 * jnp.ones_like(res["a"]), "b": None},),
    )
    xs = {"a": np.ones(3, np.float32), "b": np.ones(2, np.float32)}
    got = uir.grad(lambda v: g(2.0, v))(xs)
    np.testing.assert_allclose(np.asarray(got["a"]), 20.0)
    np.testing.assert_allclose(np.asarray(got["b"]), 0.0)

    bad = uir.custom_vjp(lambda x: jnp.sum(x))
    bad.defvjp(lambda x: (jnp.sum(x), None), lambda res, ct: (ct, ct))
    with pytest.raises(TypeError, match="2 cotangents for 1 arguments"):
        uir.grad(bad)(np.ones(2, np.float32))
    wrong = uir.custom_vjp(lambda x: jnp.sum(x))
    wrong.defvjp(lambda x: (jnp.sum(x), None), lambda res, ct: (jnp.ones(5),))
    with pytest.raises(TypeError, match=r"shape \(5,\)"):
        uir.grad(wrong)(np.ones(2, np.float32))
    undefined = uir.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined"):
        undefined(np.ones(2))


def test_custom_jvp_rule_is_used_in_both_modes():
    x = np.array([-3.0, 0.5, 100.0])
    _, t = uir.jvp(log1pexp, (x,), (np.ones(3),))
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(np.asarray(t), sig, rtol=1e-12)
    # reverse mode transposes the rule: finite at x = 100, where the
    # derivative of the body would be inf / inf.
    g = np.asarray(uir.grad(lambda v: jnp.sum(log1pexp(v)))(x))
    np.testing.assert_allclose(g, sig, rtol=1e-12)
    # A rule that differs from the body's derivative shows which one runs.
    f = uir.custom_jvp(jnp.sin)
    f.defjvp(lambda p, t: (jnp.sin(p[0]), 3.0 * t[0]))
    np.testing.assert_allclose(np.asarray(uir.grad(f)(0.4)), 3.0)
    np.testing.assert_allclose(np.asarray(uir.jvp(f, (0.4,), (1.0,))[1]), 3.0)
    # defjvps: one rule per argument
    h = uir.custom_jvp(lambda a, b: a * b)
    h.defjvps(lambda ta, ans, a, b: ta * b * 2.0, lambda tb, ans, a, b: tb * a)
    ga, gb = uir.grad(h, argnums=(0, 1))(2.0, 5.0)
    assert float(ga) == 10.0 and float(gb) == 2.0


def test_custom_jvp_second_order_and_under_vmap():
    x = np.linspace(-2, 2, 5)
    gg = uir.grad(uir.grad(lambda v: log1pexp(v)))
    sig = 1 / (1 + np.exp(-x))
    got = np.asarray([gg(v) for v in x])
    np.testing.assert_allclose(got, sig * (1 - sig), rtol=1e-9)
    batched = np.asarray(uir.vmap(uir.grad(lambda v: log1pexp(v)))(x))
    np.testing.assert_allclose(batched, sig, rtol=1e-12)


def _mlp(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        x = uir.checkpoint_name(x, f"pre{i}")
        x = jnp.tanh(x)
    return x


def _block_loss(policy):
    block = _mlp if policy == "off" else uir.checkpoint(_mlp, policy=policy)

    def loss(params, x):
        h = block(params[:2], x)
        return jnp.sum(block(params[2:], h))

    return loss


POLICIES = {
    "off": "off",
    "nothing_saveable": None,
    "dots_saveable": policies.dots_saveable,
    "everything_saveable": policies.everything_saveable,
    "save_only_these_names": policies.save_only_these_names("pre1"),
    "save_anything_except_these_names": policies.save_anything_except_these_names("pre0"),
    "both": policies.save_from_both_policies(
        policies.dots_saveable, policies.save_only_these_names("pre0")
    ),
}


def _params(rng, n=4, d=5):
    return [(rng.standard_normal((d, d)) * 0.4, rng.standard_normal(d) * 0.1) for _ in range(n)]


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_checkpoint_policies_keep_the_gradient(policy):
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.standard_normal((3, 5))
    ref = uir.grad(_block_loss("off"))(params, x)
    got = uir.jit(uir.grad(_block_loss(POLICIES[policy])))(params, x)
    for (rw, rb), (gw, gb) in zip(ref, got, strict=True):
        np.testing.assert_allclose(np.asarray(gw), np.asarray(rw), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gb), np.asarray(rb), rtol=1e-5, atol=1e-6)


def test_checkpoint_recomputes_behind_an_opt_barrier_and_keeps_less():
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.standard_normal((3, 5)).astype(np.float32)
    params = [(w.astype(np.float32), b.astype(np.float32)) for w, b in params]
    text = uir.jit(uir.grad(_block_loss(None))).lower(params, x).as_text()
    assert "opt-barrier" in text
    assert 'uir_rule="checkpoint:' in uir.jit(_block_loss(None)).lower(params, x).as_text()

    def nbytes(policy):
        rows = uir.saved_residuals(_block_loss(policy), params, x)
        return sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d, _ in rows)

    off, nothing = nbytes("off"), nbytes(None)
    dots, everything = nbytes(policies.dots_saveable), nbytes(policies.everything_saveable)
    assert nothing < dots < everything
    assert nothing < off
    # nothing_saveable keeps the two blocks' inputs and the parameters
    rows = uir.saved_residuals(_block_loss(None), params, x)
    assert sum(1 for _, _, w in rows if "argument" in w) == 9
    assert sum(1 for _, _, w in rows if "argument" not in w) == 1


def test_print_saved_residuals_lists_types_bytes_and_sources(capsys):
    def f(x, w):
        return jnp.sum(jnp.sin(x @ w))

    uir.print_saved_residuals(f, np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    out = capsys.readouterr().out
    assert "f32[2,3]" in out and "from the argument x" in out
    assert "from the argument w" in out
    assert "cosine" in out or "sin" in out
    assert "test_custom_rules.py" in out
    assert out.strip().splitlines()[-1].endswith("bytes")


def test_checkpoint_inside_scan_and_with_static_argnums():
    def cell(h, x, scale):
        return jnp.tanh(h * scale + x)

    ck = uir.checkpoint(cell, static_argnums=(2,))

    def loss(xs):
        h, _ = lax.scan(lambda h, x: (ck(h, x, 0.7), None), jnp.zeros(3), xs)
        return jnp.sum(h)

    xs = np.random.default_rng(1).standard_normal((4, 3))
    np.testing.assert_allclose(
        np.asarray(uir.grad(loss)(xs)), fd_grad(uir.jit(loss), xs), rtol=1e-5, atol=1e-7
    )


SQUARE_CALL = """HloModule with_custom_call

ENTRY main {
  x = f32[3] parameter(0)
  s = f32[3] custom-call(x), custom_call_target="test_square", api_version=API_VERSION_STATUS_RETURNING
  ROOT r = f32[3] sine(s)
}
"""


def test_custom_calls_with_a_registered_derivative():
    uir.custom_call.register("test_square", lambda x: (x * x).astype(x.dtype))
    m = hlo.parse_module(SQUARE_CALL)
    x = np.array([0.3, -0.7, 1.1], np.float32)
    ct = np.array([1.0, 2.0, -1.0], np.float32)
    with pytest.raises(uir.TraceError, match="custom call 'test_square'"):
        uir.transforms.vjp_module(m)
    uir.transforms.register_custom_call_derivative(
        "test_square",
        jvp=lambda ops, ts: 2.0 * ops[0] * ts[0],
        vjp=lambda ops, out, ct: (2.0 * ops[0] * ct,),
    )
    try:
        out, gx = (np.asarray(a) for a in uir.compile(uir.transforms.vjp_module(m))(x, ct))
        np.testing.assert_allclose(out, np.sin(x * x), rtol=1e-6)
        np.testing.assert_allclose(gx, np.cos(x * x) * 2 * x * ct, rtol=1e-6)
        _, tan = (np.asarray(a) for a in uir.compile(uir.transforms.jvp_module(m))(x, ct))
        np.testing.assert_allclose(tan, np.cos(x * x) * 2 * x * ct, rtol=1e-6)
    finally:
        uir.custom_call.unregister("test_square")
        from uir._src.transforms.structured import CUSTOM_CALL_RULES

        CUSTOM_CALL_RULES.pop("test_square", None)


def test_custom_rules_batch_under_vmap_without_a_loop():
    from uir.transforms import loop_ops

    rng = np.random.default_rng(13)
    xs = rng.standard_normal((4, 5))
    xs[2, 1] = 1000.0  # the user's backward is what keeps this row finite
    before = len(loop_ops)
    # vmap of grad, and grad of vmap: the custom_vjp's fwd and bwd run batched
    per_row = np.asarray(uir.vmap(uir.grad(logsumexp))(xs))
    through = np.asarray(uir.grad(lambda v: jnp.sum(uir.vmap(logsumexp)(v) * jnp.arange(4.0)))(xs))
    values = np.asarray(uir.vmap(logsumexp)(xs))
    # custom_jvp in both modes, and a checkpoint, batched
    jvp_rows = np.asarray(uir.vmap(lambda v: uir.jvp(log1pexp, (v,), (jnp.ones_like(v),))[1])(xs))
    ckpt = np.asarray(
        uir.grad(lambda v: jnp.sum(uir.vmap(uir.checkpoint(lambda r: jnp.sin(r) ** 2))(v)))(xs)
    )
    assert loop_ops[before:] == []
    want = np.stack([np.asarray(uir.grad(logsumexp)(r)) for r in xs])
    assert np.isfinite(per_row).all()
    np.testing.assert_allclose(per_row, want, rtol=1e-12)
    np.testing.assert_allclose(through, want * np.arange(4.0)[:, None], rtol=1e-12)
    np.testing.assert_allclose(values, [float(logsumexp(r)) for r in xs], rtol=1e-12)
    np.testing.assert_allclose(jvp_rows, 1 / (1 + np.exp(-xs)), rtol=1e-12)
    np.testing.assert_allclose(ckpt, np.sin(2 * xs), rtol=1e-12)
    # the batched call keeps its tag
    text = uir.jit(uir.vmap(logsumexp)).lower(xs).as_text()
    assert 'uir_rule="custom_vjp:' in text
