"""uir.lax traced by uir.jit against NumPy: control flow (nested loops and
conds, closures over enclosing values), slicing and updates, dot_general,
reduce, conversions, and custom_call to a registered host target."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.numpy as jnp
from uir import lax

RNG = np.random.default_rng(1)


def test_while_loop_with_a_pytree_state():
    def f(x):
        def cond(s):
            return s["i"] < 5

        def body(s):
            return {"i": s["i"] + 1, "acc": s["acc"] * 2 + x}

        return lax.while_loop(cond, body, {"i": 0, "acc": jnp.zeros_like(x)})

    x = np.arange(3, dtype=np.float32)
    out = uir.jit(f)(x)
    want = np.zeros(3, np.float32)
    for _ in range(5):
        want = want * 2 + x
    assert out["i"] == 5
    np.testing.assert_array_equal(out["acc"], want)


def test_fori_loop_reads_enclosing_values():
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    f = uir.jit(lambda v: lax.fori_loop(0, v.shape[0], lambda i, acc: acc + v[i] * i, jnp.zeros(3)))
    np.testing.assert_allclose(f(x), (x * np.arange(4)[:, None]).sum(0), rtol=1e-6)


def test_nested_loops_and_conds():
    def f(n, x):
        def outer(i, acc):
            def inner(j, a):
                return lax.cond(j % 2 == 0, lambda v: v + x * j, lambda v: v - i, a)

            return lax.fori_loop(0, i, inner, acc)

        return lax.fori_loop(0, n, outer, jnp.zeros_like(x))

    x = np.float32(1.5)
    want = 0.0
    for i in range(4):
        for j in range(i):
            want = want + x * j if j % 2 == 0 else want - i
    assert np.isclose(uir.jit(f)(np.int32(4), x), want)


def test_cond_picks_a_branch_and_switch_clamps_its_index():
    f = uir.jit(lambda p, x: lax.cond(p, lambda v: v * 2, lambda v: v - 1, x))
    assert f(True, np.float32(3)) == 6 and f(False, np.float32(3)) == 2
    branches = [lambda v: v + 10, lambda v: v * 10, lambda v: -v]
    g = uir.jit(lambda i, x: lax.switch(i, branches, x))
    assert [g(np.int32(i), np.float32(2)) for i in (-5, 0, 1, 2, 7)] == [12, 12, 20, -2, -2]


def test_cond_branches_must_agree():
    with pytest.raises(uir.TraceError, match="branches return different types"):
        uir.jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v[:1], x))(
            True, np.ones(2, np.float32)
        )


def test_while_body_must_keep_shapes():
    with pytest.raises(uir.TraceError, match="body_fun changes a carried value"):
        uir.jit(lambda x: lax.while_loop(lambda v: True, lambda v: jnp.concatenate([v, v]), x))(
            np.ones(2, np.float32)
        )


def test_scan_is_a_cumulative_op():
    xs = RNG.standard_normal(6).astype(np.float32)
    carry, ys = uir.jit(lambda v: lax.scan(lambda c, x: (c + x, c + x), np.float32(0), v))(xs)
    np.testing.assert_allclose(ys, np.cumsum(xs), rtol=1e-5)
    assert np.isclose(carry, xs.sum())
    _, rev = uir.jit(
        lambda v: lax.scan(lambda c, x: (c + x, c + x), np.float32(0), v, reverse=True)
    )(xs)
    np.testing.assert_allclose(rev, np.cumsum(xs[::-1])[::-1], rtol=1e-5)


def test_map_applies_per_row():
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        uir.jit(lambda v: lax.map(lambda r: r @ r, v))(x), (x * x).sum(1), rtol=1e-5
    )


def test_dynamic_slice_and_update_slice_clamp():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    f = uir.jit(lambda v, i: lax.dynamic_slice(v, (i, 1), (2, 3)))
    np.testing.assert_array_equal(f(x, np.int32(1)), x[1:3, 1:4])
    np.testing.assert_array_equal(f(x, np.int32(9)), x[2:4, 1:4])
    g = uir.jit(lambda v, i: lax.dynamic_update_slice(v, jnp.zeros((2, 2)), (i, i)))
    want = x.copy()
    want[1:3, 1:3] = 0
    np.testing.assert_array_equal(g(x, np.int32(1)), want)


def test_slice_broadcast_in_dim_iota_select_convert():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    @uir.jit
    def f(v):
        s = lax.slice(v, (0, 1), (3, 4), (2, 2))
        b = lax.broadcast_in_dim(v[0], (2, 4), (1,))
        i = lax.iota(np.int32, 4)
        sel = lax.select(v > 5, v, jnp.zeros_like(v))
        c = lax.convert_element_type(v, np.int32)
        bits = lax.bitcast_convert_type(np.float32(1.0), np.int32)
        return s, b, i, sel, c, bits

    s, b, i, sel, c, bits = f(x)
    np.testing.assert_array_equal(s, x[0:3:2, 1:4:2])
    np.testing.assert_array_equal(b, np.broadcast_to(x[0], (2, 4)))
    np.testing.assert_array_equal(i, np.arange(4))
    np.testing.assert_array_equal(sel, np.where(x > 5, x, 0))
    assert c.dtype == np.int32 and bits == 0x3F800000


def test_dot_general_with_batch_dims():
    a, b = (
        RNG.standard_normal((2, 3, 4)).astype(np.float32),
        RNG.standard_normal((2, 4, 5)).astype(np.float32),
    )
    got = uir.jit(lambda p, q: lax.dot_general(p, q, (((2,), (1,)), ((0,), (0,)))))(a, b)
    np.testing.assert_allclose(got, np.einsum("bij,bjk->bik", a, b), rtol=1e-5)


def test_reduce_with_a_custom_computation_and_variadic_operands():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    got = uir.jit(lambda v: lax.reduce(v, np.float32(0), lambda a, b: a + b * b, (1,)))(x)
    np.testing.assert_allclose(got, (x * x).sum(1), rtol=1e-5)

    def argmax_step(acc, cur):
        better = cur[0] > acc[0]
        return jnp.where(better, cur[0], acc[0]), jnp.where(better, cur[1], acc[1])

    idx = np.broadcast_to(np.arange(5, dtype=np.int32), (3, 5))
    v, i = uir.jit(
        lambda a, b: lax.reduce((a, b), (np.float32(-np.inf), np.int32(-1)), argmax_step, (1,))
    )(x, idx)
    np.testing.assert_array_equal(i, x.argmax(1))
    np.testing.assert_array_equal(v, x.max(1))
    # outside jit too, as JAX's runs eagerly
    eager = lax.reduce(x, np.float32(0), lambda a, b: a + b * b, (1,))
    np.testing.assert_allclose(np.asarray(eager), (x * x).sum(1), rtol=1e-5)


def test_custom_call_reaches_a_registered_host_target():
    uir.custom_call.register(
        "test_trace_softsign", lambda v: (v / (1 + np.abs(v))).astype(np.float32)
    )
    try:
        f = uir.jit(
            lambda v: (
                lax.custom_call(
                    "test_trace_softsign", (v * 2,), lax.ShapeDtypeStruct(v.shape, v.dtype)
                )
                + 1
            )
        )
        x = np.linspace(-3, 3, 7).astype(np.float32)
        np.testing.assert_allclose(f(x), 2 * x / (1 + np.abs(2 * x)) + 1, rtol=1e-6)
        assert 'custom_call_target="test_trace_softsign"' in f.lower(x).as_text()
    finally:
        uir.custom_call.unregister("test_trace_softsign")


def test_lax_control_flow_runs_eagerly_too():
    assert lax.fori_loop(0, 4, lambda i, a: a + i, np.int32(0)) == 6
    assert lax.cond(np.bool_(False), lambda v: v, lambda v: v * 3, np.float32(2)) == 6


def test_scan_over_no_steps_gives_the_carry_and_empty_ys():
    def step(c, x):
        return c + x.sum(), x * 2

    xs = np.zeros((0, 3), np.float32)
    for run in (lambda c, x: lax.scan(step, c, x), uir.jit(lambda c, x: lax.scan(step, c, x))):
        carry, ys = run(np.float32(1), xs)
        assert carry == 1 and ys.shape == (0, 3) and ys.dtype == np.float32
    assert lax.map(lambda x: x + 1, np.zeros((0, 2), np.float32)).shape == (0, 2)
