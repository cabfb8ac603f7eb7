"""Derivatives through control flow: while loops with a trip count the
module states (scan, fori_loop, a counted while_loop) in both modes, a
while loop whose trip count depends on the data in forward mode (reverse
mode raises JAX's error), cond, switch and call; checked by central
finite differences in float64, the transpose identity and second
derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from ad_util import check_vjp_transposes_jvp, fd_grad
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.lax as lax
import uir.numpy as jnp
from uir import hlo
from uir._src.transforms import ad

pytestmark = pytest.mark.usefixtures("x64")


def _rnn(x, reverse=False):
    w = jnp.linspace(-0.6, 0.8, x.shape[-1])

    def step(c, xt):
        c = jnp.tanh(c * w + xt + 0.1 * jnp.sum(c))
        return c, c * c

    c, ys = lax.scan(
        step, jnp.zeros(x.shape[-1:]), jnp.reshape(x, (-1, x.shape[-1])), reverse=reverse
    )
    return ys * 0.5 + c


def _counted_down(x):
    # A while_loop with its own counter, stepping down: GT, step -1.
    def body(s):
        k, v = s
        return k - 1, jnp.sin(v) * x + 0.2 * v

    return lax.while_loop(lambda s: s[0] > 0, body, (5, x))[1]


def _nested(x):
    def outer(i, c):
        inner = lax.scan(lambda a, _: (jnp.cos(a) * x, a), c, None, length=3)[0]
        return inner + 0.1 * c * i

    return lax.fori_loop(0, 3, outer, x)


def _cond_in_loop(x):
    def body(i, c):
        return lax.cond(i % 2 == 0, lambda a: jnp.sin(a) * x, lambda a: a * a - x, c)

    return lax.fori_loop(0, 4, body, x)


CONTROL = {
    "fori_loop": lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.tanh(c * x + 0.1 * i), x),
    "fori_loop_offset": lambda x: lax.fori_loop(2, 7, lambda i, c: c * jnp.cos(c + x) + x, x),
    "scan": _rnn,
    "scan_reverse": lambda x: _rnn(x, reverse=True),
    "while_counted_down": _counted_down,
    "nested_loops": _nested,
    "cond": lambda x: lax.cond(jnp.sum(x) > 0, lambda a: jnp.sin(a) * a, lambda a: a**3 - a, x),
    "cond_two_operands": lambda x: lax.cond(
        x.ravel()[0] > 0, lambda a, b: a * b, lambda a, b: a - jnp.exp(b), x, jnp.cos(x)
    ),
    "switch": lambda x: lax.switch(
        jnp.argmax(x.ravel()) % 3, [jnp.sin, lambda a: a * a, lambda a: jnp.exp(-a)], x
    ),
    "cond_in_loop": _cond_in_loop,
}

shapes = st.lists(st.integers(2, 3), min_size=1, max_size=2).map(tuple)


@settings(max_examples=3, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1))
@pytest.mark.parametrize("name", sorted(CONTROL))
def test_grad_through_control_flow_matches_finite_differences(name, shape, seed):
    rng = np.random.default_rng(seed)
    fn = CONTROL[name]
    x = rng.uniform(-1.2, 1.2, shape)
    w = rng.standard_normal(np.shape(fn(x)))
    f = lambda v: jnp.sum(fn(v) * w)  # noqa: E731
    np.testing.assert_allclose(np.asarray(uir.grad(f)(x)), fd_grad(f, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(uir.jit(uir.grad(f))(x)), fd_grad(f, x), rtol=1e-5, atol=1e-6
    )


@settings(max_examples=3, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1))
@pytest.mark.parametrize("name", sorted(CONTROL))
def test_vjp_through_control_flow_is_the_transpose_of_jvp(name, shape, seed):
    rng = np.random.default_rng(seed)
    fn = CONTROL[name]
    x = rng.uniform(-1.2, 1.2, shape)
    check_vjp_transposes_jvp(fn, x, rng)


@pytest.mark.parametrize(
    "name", ["fori_loop", "scan", "while_counted_down", "cond", "nested_loops"]
)
def test_second_derivatives_through_control_flow(name):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, (3,))
    fn = CONTROL[name]
    w = rng.standard_normal(np.shape(fn(x)))
    f = lambda v: jnp.sum(fn(v) * w)  # noqa: E731
    g = uir.grad(f)
    fd = np.stack([fd_grad(lambda v, i=i: g(v)[i], x) for i in range(3)])
    np.testing.assert_allclose(np.asarray(uir.hessian(f)(x)), fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(uir.jacrev(g)(x)), fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(uir.jacfwd(g)(x)), fd, rtol=1e-5, atol=1e-6)


def _doubling(x):
    return lax.while_loop(lambda c: jnp.sum(c * c) < 50.0, lambda c: c * 1.5 + 0.1, x)


def test_a_data_dependent_while_has_forward_mode_and_reverse_mode_raises():
    x = np.array([0.5, -1.0, 1.5])
    t = np.array([0.3, 0.1, -0.2])
    y, y_dot = uir.jvp(_doubling, (x,), (t,))
    np.testing.assert_allclose(np.asarray(y), np.asarray(_doubling(x)))
    eps = 1e-6
    fd = (np.asarray(_doubling(x + eps * t)) - np.asarray(_doubling(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(y_dot), fd, rtol=1e-6)
    with pytest.raises(
        uir.TraceError, match=r"dynamic start/stop.*test_control_flow_ad\.py:\d+.*lax\.scan"
    ):
        uir.grad(lambda v: jnp.sum(_doubling(v)))(x)
    # A loop the cotangent does not reach needs no reverse pass.
    g = uir.grad(lambda v: jnp.sum(v * 2.0) + 0.0 * jnp.sum(lax.stop_gradient(_doubling(v))))(x)
    np.testing.assert_allclose(np.asarray(g), 2.0)


def _while_module(init_k: str, step: str, direction: str, bound: str) -> str:
    return f"""HloModule m

cond {{
  p = (s32[], f32[2]) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  b = s32[] constant({bound})
  ROOT c = pred[] compare(k, b), direction={direction}
}}

body {{
  p = (s32[], f32[2]) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  v = f32[2] get-tuple-element(p), index=1
  s = s32[] constant({step})
  k1 = s32[] add(k, s)
  v1 = f32[2] multiply(v, v)
  ROOT t = (s32[], f32[2]) tuple(k1, v1)
}}

ENTRY main {{
  x = f32[2] parameter(0)
  k0 = s32[] constant({init_k})
  t = (s32[], f32[2]) tuple(k0, x)
  w = (s32[], f32[2]) while(t), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
}}
"""


@pytest.mark.parametrize(
    "init_k, step, direction, bound, expected",
    [
        (0, 1, "LT", 10, 10),
        (0, 3, "LT", 10, 4),
        (2, 2, "LE", 10, 5),
        (10, -1, "GT", 0, 10),
        (10, -3, "GE", 0, 4),
        (0, 2, "NE", 8, 4),
        (5, 1, "LT", 2, 0),
        (0, -1, "LT", 10, None),  # never ends
        (0, 2, "NE", 7, None),  # steps over the bound
    ],
)
def test_trip_count_is_read_from_the_module(init_k, step, direction, bound, expected):
    m = hlo.parse_module(_while_module(init_k, step, direction, bound))
    (w,) = [i for i in m.entry.instructions if i.opcode == "while"]
    assert ad.trip_count(w) == expected


def test_the_reverse_pass_stacks_the_carries_and_walks_them_back():
    f = lambda x: jnp.sum(_rnn(x))  # noqa: E731
    x = np.ones((5, 3))
    text = uir.jit(uir.grad(f)).lower(x).as_text()
    # The forward loop keeps the carry of each of the 5 steps; the backward
    # loop counts down from the last.
    assert "stacking_body" in text and "reverse_body" in text
    assert "f64[5,3]" in text
    assert "direction=GE" in text


CALL_MODULE = """HloModule with_call

sq {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  m = f32[3] multiply(a, a)
  ROOT s = f32[3] add(m, b)
}

ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  c = f32[3] call(x, y), to_apply=sq
  ROOT r = f32[3] sine(c)
}
"""


def test_grad_module_through_a_call():
    m = hlo.parse_module(CALL_MODULE)
    v = uir.transforms.vjp_module(m)
    x = np.array([0.2, -0.4, 0.9], np.float32)
    y = np.array([0.1, 0.3, -0.5], np.float32)
    ct = np.array([1.0, -2.0, 0.5], np.float32)
    out, gx, gy = (np.asarray(a) for a in uir.evaluate(v, x, y, ct))
    c = np.cos(x * x + y)
    np.testing.assert_allclose(out, np.sin(x * x + y), rtol=1e-6)
    np.testing.assert_allclose(gx, 2 * x * c * ct, rtol=1e-6)
    np.testing.assert_allclose(gy, c * ct, rtol=1e-6)


def test_vmap_of_a_gradient_through_scan_equals_a_loop():
    f = lambda x: jnp.sum(_rnn(x))  # noqa: E731
    xs = np.random.default_rng(0).uniform(-1, 1, (3, 4, 2))
    batched = np.asarray(uir.vmap(uir.grad(f))(xs))
    looped = np.stack([np.asarray(uir.grad(f)(x)) for x in xs])
    np.testing.assert_allclose(batched, looped, rtol=1e-12)


ARRAY_STATE_LOOP = """HloModule array_state
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
cond {
  p = f64[3] parameter(0)
  z = f64[] constant(0)
  r = f64[] reduce(p, z), dimensions={0}, to_apply=add
  l = f64[] constant(20)
  ROOT c = pred[] compare(r, l), direction=LT
}
body {
  p = f64[3] parameter(0)
  s = f64[3] sine(p)
  h = f64[] constant(1.5)
  hb = f64[3] broadcast(h), dimensions={}
  g = f64[3] multiply(p, hb)
  ROOT m = f64[3] add(g, s)
}
ENTRY main {
  x = f64[3] parameter(0)
  ROOT w = f64[3] while(x), condition=cond, body=body
}
"""


def test_forward_mode_through_a_loop_whose_state_is_one_array():
    m = hlo.parse_module(ARRAY_STATE_LOOP)
    j = uir.transforms.jvp_module(m)
    x, t = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 0.25])
    out, tan = (np.asarray(v) for v in uir.evaluate(j, x, t))
    eps = 1e-7
    fd = (np.asarray(uir.evaluate(m, x + eps * t)) - np.asarray(uir.evaluate(m, x - eps * t))) / (
        2 * eps
    )
    np.testing.assert_allclose(out, np.asarray(uir.evaluate(m, x)))
    np.testing.assert_allclose(tan, fd, rtol=1e-6)


TOKEN_LOOP = """HloModule token_loop
cond {
  p = (s32[], f64[3], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f64[3], token[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f64[3] get-tuple-element(p), index=1
  y = f64[3] sine(x)
  t = token[] get-tuple-element(p), index=2
  t1 = token[] after-all(t)
  ROOT r = (s32[], f64[3], token[]) tuple(i1, y, t1)
}
ENTRY main {
  x = f64[3] parameter(0)
  z = s32[] constant(0)
  t = token[] after-all()
  s = (s32[], f64[3], token[]) tuple(z, x, t)
  w = (s32[], f64[3], token[]) while(s), condition=cond, body=body
  ROOT o = f64[3] get-tuple-element(w), index=1
}
"""


def test_a_loop_carrying_a_token_has_forward_mode_and_reverse_mode_says_why_not():
    m = hlo.parse_module(TOKEN_LOOP)
    x, t = np.array([0.1, 0.5, 1.0]), np.array([1.0, -0.5, 2.0])
    _, tan = (np.asarray(v) for v in uir.evaluate(uir.transforms.jvp_module(m), x, t))
    c1 = np.cos(x)
    c2 = np.cos(np.sin(x))
    c3 = np.cos(np.sin(np.sin(x)))
    np.testing.assert_allclose(tan, c3 * c2 * c1 * t, rtol=1e-12)
    with pytest.raises(uir.TraceError, match=r"while %while .* carries a token"):
        uir.transforms.vjp_module(m)
