"""uir.vmap: vmap(f)(xs) equals stacking f over the examples, with
assorted in_axes/out_axes, pytrees and ops with and without a batching
rule (those without run in a per-example loop, which must be correct too)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.lax as lax
import uir.nn as nn
import uir.numpy as jnp
from uir.transforms import loop_ops

W = np.random.default_rng(7).standard_normal((4, 3)).astype(np.float32)

# Per-example functions of a float32 array shaped (2, 4).
EXAMPLES = {
    "elementwise": lambda x: jnp.tanh(x) * 2 + jnp.exp(-x),
    "matmul_const": lambda x: x @ W,
    "matmul_self": lambda x: x @ x.T,
    "reduce": lambda x: jnp.sum(x, axis=0) + jnp.max(x),
    "softmax": lambda x: nn.softmax(x, axis=-1),
    "transpose_reshape": lambda x: jnp.reshape(x.T, (8,)),
    "broadcast": lambda x: x[:, None, :] + jnp.ones((2, 3, 4)),
    "slice_pad_concat": lambda x: jnp.concatenate([x[:, 1:3], jnp.pad(x, ((0, 0), (1, 0)))], 1),
    "flip_where": lambda x: jnp.where(x > 0, jnp.flip(x, 1), 0.0),
    "clip_select": lambda x: jnp.clip(x, -0.5, 0.5) + lax.select(x > 0, x, -x),
    "dynamic_slice": lambda x: lax.dynamic_slice(x, (1, 1), (1, 2)),
    "dynamic_update": lambda x: lax.dynamic_update_slice(x, jnp.ones((1, 2)), (0, 2)),
    "cumsum": lambda x: jnp.cumsum(x, axis=1),
    "sort": lambda x: jnp.sort(x, axis=1),
    "argmax": lambda x: jnp.argmax(x, axis=1),
    "gather": lambda x: x[:, jnp.array([3, 0, 0])],
    "gather_batched_indices": lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
    "gather_indices_only": lambda x: jnp.asarray(W)[jnp.argmax(x, axis=1) % 4],
    "scatter_add": lambda x: jnp.zeros(5).at[jnp.argmax(x, axis=1)].add(x[:, 0]),
    "scatter_set": lambda x: x.at[:, jnp.argmin(x[0])].set(x[1, 0]),
    "scatter_into_const": lambda x: jnp.asarray(W).at[jnp.argmax(x[0]) % 4].add(x[1, :3]),
    "conv_input": lambda x: lax.conv_general_dilated(
        x[None, None], jnp.ones((2, 1, 2, 2)) * 0.5, (1, 1), "SAME"
    ),
    "conv_kernel": lambda x: lax.conv_general_dilated(
        jnp.ones((1, 2, 5, 5)), x.reshape(1, 2, 2, 2), (2, 1), "VALID"
    ),
    "conv_both": lambda x: lax.conv_general_dilated(
        x.reshape(1, 2, 4, 1),
        x[:, :2].reshape(2, 2, 1, 1),
        (1, 1),
        "VALID",
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
    ),
    "conv_nhwc_groups": lambda x: lax.conv_general_dilated(
        x.reshape(1, 2, 2, 2),
        jnp.ones((1, 1, 1, 4)),
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=2,
    ),
    "while": lambda x: lax.fori_loop(0, 3, lambda i, v: v * 0.5 + jnp.sin(v), x),
    # (|c| * 1.5 + 0.5 only grows: every example's loop ends)
    "while_batched_predicate": lambda x: lax.while_loop(
        lambda c: jnp.sum(c[0]) < 8.0, lambda c: (jnp.abs(c[0]) * 1.5 + 0.5, c[1] + 1), (x, 0)
    ),
    "cond": lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: -v, x),
    "switch": lambda x: lax.switch(
        jnp.argmax(x[0]), [jnp.sin, jnp.cos, lambda v: v * v, lambda v: -v], x
    ),
    "cond_unbatched_predicate": lambda x: lax.cond(
        W[0, 0] > 0, lambda v: v @ W, lambda v: v @ W * 2, x
    ),
    "grad": uir.grad(lambda x: jnp.sum(jnp.tanh(x @ W) ** 2)),
    "grad_through_scan": uir.grad(
        lambda x: jnp.sum(lax.scan(lambda c, r: (jnp.tanh(c + r), c), jnp.zeros(4), x)[0])
    ),
    "rfft": lambda x: jnp.abs(jnp.fft.rfft(x)),
    "fft2": lambda x: jnp.fft.fft2(x * (1 + 1j)),
    "top_k": lambda x: lax.top_k(x, 2),
    "own_reducer": lambda x: lax.reduce(x, 0.0, lambda a, b: a * b + a + b, (1,)),
    "qr": lambda x: jnp.linalg.qr(x),
    "dynamic_slice_batched_starts": lambda x: lax.dynamic_slice(
        x, (jnp.argmax(x[0]) % 2, jnp.argmax(x[1]) - 1), (1, 3)
    ),
    "dynamic_update_slice_batched_starts": lambda x: lax.dynamic_update_slice(
        jnp.zeros((2, 4)), x[:1, :2] * 10, (1, jnp.argmax(x[1]) * 2 - 3)
    ),
    "lapack_solve": lambda x: jnp.linalg.solve(x @ x.T + 2 * jnp.eye(2), x),
    "grad_of_qr": uir.grad(lambda x: jnp.sum(jnp.linalg.qr(x)[0] ** 3)),
}

# Examples whose batching must not fall back to a per-example loop.
KEPT_BATCHED = {
    "gather_batched_indices",
    "gather_indices_only",
    "scatter_add",
    "scatter_set",
    "scatter_into_const",
    "conv_input",
    "conv_kernel",
    "conv_both",
    "conv_nhwc_groups",
    "while",
    "while_batched_predicate",
    "cond",
    "switch",
    "cond_unbatched_predicate",
    "grad_through_scan",
    "rfft",
    "fft2",
    "top_k",
    "own_reducer",
    "qr",
    "grad_of_qr",
    "dynamic_slice_batched_starts",
    "dynamic_update_slice_batched_starts",
    "lapack_solve",
}


@settings(max_examples=3, deadline=None)
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_vmap_equals_a_loop(name, batch, seed):
    f = EXAMPLES[name]
    xs = np.random.default_rng(seed).standard_normal((batch, 2, 4)).astype(np.float32)
    before = len(loop_ops)
    got = uir.vmap(f)(xs)
    if name in KEPT_BATCHED:
        assert loop_ops[before:] == [], f"{name} ran per example: {loop_ops[before:]}"
    got = [np.asarray(g) for g in uir.tree_util.tree_leaves(got)]
    outs = [uir.tree_util.tree_leaves(uir.jit(f)(x)) for x in xs]
    for k, g in enumerate(got):
        want = np.stack([np.asarray(o[k]) for o in outs])
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6)


def test_in_axes_out_axes_and_pytrees():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 4)).astype(np.float32)  # mapped over axis 1
    b = rng.standard_normal((4,)).astype(np.float32)  # not mapped
    c = {"s": rng.standard_normal((5,)).astype(np.float32)}

    def f(x, y, d):
        return {"o": x @ y * d["s"], "t": (x.sum(), y)}

    out = uir.vmap(f, in_axes=(1, None, {"s": 0}), out_axes={"o": 1, "t": (0, None)})(a, b, c)
    assert out["o"].shape == (3, 5)
    assert out["t"][1].shape == (4,)
    for k in range(5):
        np.testing.assert_allclose(np.asarray(out["o"])[:, k], a[:, k] @ b * c["s"][k], rtol=1e-5)
        np.testing.assert_allclose(np.asarray(out["t"][0])[k], a[:, k].sum(), rtol=1e-5)
    # an unmapped output is broadcast along out_axes
    ones = uir.vmap(lambda x: jnp.ones(2), axis_size=3, in_axes=None)(np.zeros(1))
    assert np.asarray(ones).shape == (3, 2)


def test_negative_axes_and_nested_vmap():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out = uir.vmap(uir.vmap(lambda v: v * jnp.sum(v), in_axes=-1), in_axes=0)(x)
    want = np.stack([np.stack([x[i, :, j] * x[i, :, j].sum() for j in range(4)]) for i in range(2)])
    np.testing.assert_allclose(np.asarray(out), want)


def test_ops_without_a_rule_run_per_example():
    before = len(loop_ops)
    xs = np.random.default_rng(0).standard_normal((3, 2, 4)).astype(np.float32)

    def f(x):
        # a pad whose padding value differs per example has no rule
        return lax.pad(x, x[0, 0], [(1, 0, 0), (0, 1, 1)])

    got = uir.vmap(f)(xs)
    assert loop_ops[before:] == ["pad"]
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(f(x)) for x in xs]))
    # LAPACK's calls take the batch as one more leading dimension
    before = len(loop_ops)
    got = uir.vmap(lambda x: jnp.linalg.cholesky(x @ x.T + jnp.eye(2)))(xs)
    assert loop_ops[before:] == []
    np.testing.assert_allclose(
        np.asarray(got), np.stack([np.linalg.cholesky(x @ x.T + np.eye(2)) for x in xs]), rtol=1e-5
    )
    before = len(loop_ops)
    uir.vmap(EXAMPLES["elementwise"])(np.ones((2, 2, 4), np.float32))
    assert loop_ops[before:] == []


def test_vmap_errors_as_jax():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        uir.vmap(lambda a, b: a + b)(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="at least one non-None"):
        uir.vmap(lambda a: a, in_axes=None)(np.ones(2))
    with pytest.raises(ValueError, match="axis 2"):
        uir.vmap(lambda a: a, in_axes=2)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out_axes is None"):
        uir.vmap(lambda a: a * 2, out_axes=None)(np.ones((2, 3)))


def test_per_example_gradients_equal_a_loop():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    xs = rng.standard_normal((6, 4)).astype(np.float32)
    ys = rng.standard_normal((6, 3)).astype(np.float32)

    def loss(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)

    per = uir.jit(uir.vmap(uir.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys)
    want = np.stack([np.asarray(uir.grad(loss)(w, x, y)) for x, y in zip(xs, ys, strict=True)])
    np.testing.assert_allclose(np.asarray(per), want, rtol=1e-5, atol=1e-6)
