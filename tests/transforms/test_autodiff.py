"""uir.grad, vjp, jvp, jacfwd, jacrev and hessian: every rule checked by
central finite differences in float64 (first and second order, forward and
reverse) and by the identity <vjp(ct), t> == <ct, jvp(t)>, which needs no
oracle."""

from __future__ import annotations

import numpy as np
import pytest
from ad_util import check_vjp_transposes_jvp, fd_grad
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.lax as lax
import uir.nn as nn
import uir.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")


# Each function maps an array of `shape` to an array; the test sums a
# random projection of the result so every output element counts.
UNARY = {
    "exp": jnp.exp,
    "log": lambda x: jnp.log(x * x + 1.0),
    "log1p": lambda x: jnp.log1p(x * x),
    "expm1": jnp.expm1,
    "tanh": jnp.tanh,
    "logistic": nn.sigmoid,
    "sqrt": lambda x: jnp.sqrt(x * x + 0.5),
    "rsqrt": lambda x: lax.rsqrt(x * x + 0.5),
    "cbrt": lambda x: jnp.cbrt(x * x + 0.5),
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": lambda x: jnp.tan(x * 0.3),
    "erf": lax.erf,
    "abs": lambda x: jnp.abs(x + 0.05),
    "square_sub_div": lambda x: (x * x - x) / (x * x + 1.0),
    "pow": lambda x: jnp.power(x * x + 0.5, x),
    "atan2": lambda x: jnp.arctan2(x, x * x + 1.0),
    "max_min": lambda x: jnp.maximum(x, 0.1) + jnp.minimum(x * 2, -0.2),
    "where": lambda x: jnp.where(x > 0, x * x, -x),
    "clip": lambda x: jnp.clip(x, -0.5, 0.7),
    "softmax": lambda x: nn.softmax(x, axis=-1),
    "logsumexp": lambda x: nn.logsumexp(x, axis=0),
    "sum_axes": lambda x: jnp.sum(x * x, axis=0),
    "max_reduce": lambda x: jnp.max(x, axis=-1),
    "prod": lambda x: jnp.prod(x + 2.0, axis=0),
    "mean_var": lambda x: jnp.var(x) + jnp.mean(x, axis=-1),
    "transpose_reshape": lambda x: jnp.reshape(x.T, (-1,)) * jnp.arange(x.size),
    "broadcast": lambda x: x[None] * x[:, None] if x.ndim == 1 else x[:, None, :] * x[None],
    "slice": lambda x: x[..., 1::2] * 3 - x[..., :1],
    "pad": lambda x: jnp.pad(x, [(1, 2)] * x.ndim) * 2 + 1,
    "lax_pad_negative": lambda x: lax.pad(x, 0.5, [(-1, 2, 1)] * x.ndim),
    "concat_flip": lambda x: jnp.concatenate([x, jnp.flip(x, -1) * 2], axis=-1),
    "dynamic_slice": lambda x: lax.dynamic_slice_in_dim(x, 1, 1, -1) * x,
    "dynamic_update": lambda x: lax.dynamic_update_slice_in_dim(x, x[..., :1] ** 2, 1, -1),
    "matmul": lambda x: jnp.tanh(x @ jnp.ones((x.shape[-1], 3)) * 0.1) @ jnp.ones((3, 2)),
    "einsum_batch": lambda x: jnp.einsum("...i,...j->...ij", x, jnp.sin(x)),
    "convert_complex": lambda x: jnp.real((x * 2).astype(np.complex128) * (1 + 1j) * x),
    "index": lambda x: x[..., -1] * x[..., 0],
    "fancy_index": lambda x: x[..., jnp.array([0, -1, 1, 0])] * 2.0,
    "argmax_take": lambda x: jnp.take_along_axis(x, jnp.argmax(x, -1, keepdims=True), -1) * x,
    "scatter_add": lambda x: (
        jnp.zeros(4)
        .at[jnp.array([1, 1, 3])]
        .add(jnp.concatenate([x.ravel()[:2], x.ravel()[:1] ** 2]))
    ),
    "scatter_set": lambda x: x.at[..., 0].set(jnp.sin(x[..., 1])),
    "scatter_max": lambda x: (
        (x * 0.5).at[..., jnp.array([0, 1, 0])].max(x[..., jnp.array([1, 0, 1])] * 0.9 + 0.1)
    ),
    "scatter_min": lambda x: x.at[..., 1].min(jnp.cos(x[..., 0])),
    # duplicates, an update that is 0 and one that is dropped (out of range)
    "scatter_multiply": lambda x: (
        (x[..., :3] + 2.0)
        .at[..., jnp.array([0, 2, 2, 2, 5])]
        .multiply(x[..., jnp.array([1, 0, 1, 0, 0])] * jnp.array([1.0, 1.0, 0.0, 2.0, 1.0]))
    ),
    "sort": lambda x: jnp.sort(x, axis=-1) * jnp.arange(1, x.shape[-1] + 1),
    "top_k": lambda x: lax.top_k(x, 2)[0] * jnp.arange(1.0, 3.0),
    "fft": lambda x: jnp.abs(jnp.fft.fft(x * (1.0 + 0.5j))) ** 2,
    "rfft_irfft": lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * (0.5 + 1j), n=x.shape[-1]) ** 2,
    "rfftn": lambda x: jnp.abs(jnp.fft.rfftn(x)) ** 3,
    "ifft": lambda x: jnp.imag(jnp.fft.ifft(jnp.sin(x) + 1j * x**2)),
    # a reduce with a reducer of its own: (a + 1)(b + 1) - 1
    "own_reducer": lambda x: lax.reduce(x, 0.0, lambda a, b: a * b + a + b, (x.ndim - 1,)),
    # a max pool's gradient is a select-and-scatter; differentiated again
    "select_and_scatter": lambda x: uir.grad(
        lambda v: jnp.sum(
            jnp.sin(
                lax.reduce_window(
                    v, -np.inf, lax.max, (1,) * (v.ndim - 1) + (2,), (1,) * v.ndim, "SAME"
                )
            )
        )
    )(x),
    "argsort_keys": lambda x: lax.sort((x, jnp.cos(x)), dimension=0, num_keys=1)[1],
    "cumsum": lambda x: jnp.cumsum(x, axis=-1) * jnp.arange(x.shape[-1]),
    "cumprod": lambda x: jnp.cumprod(x + 2.0, axis=0),
    "cummax": lambda x: lax.cummax(x, axis=x.ndim - 1),
    "max_pool": lambda x: lax.reduce_window(
        x, -np.inf, lax.max, (2,) * x.ndim, (1,) * x.ndim, "VALID"
    ),
    "min_pool_strided": lambda x: lax.reduce_window(
        x, np.inf, lax.min, (2,) * x.ndim, (2,) * x.ndim, "SAME"
    ),
    "avg_pool_padded": lambda x: lax.reduce_window(
        x * x, 0.0, lax.add, (2,) * x.ndim, (2,) * x.ndim, [(1, 0)] * x.ndim
    ),
    "window_dilated_sum": lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2,) * x.ndim, (1,) * x.ndim, "SAME", None, (2,) * x.ndim
    ),
}

shapes = st.lists(st.integers(2, 4), min_size=1, max_size=2).map(tuple)


def _projected(fn, w):
    return lambda x: jnp.sum(fn(x) * w)


@settings(max_examples=4, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_grad_matches_finite_differences(name, shape, seed):
    rng = np.random.default_rng(seed)
    fn = UNARY[name]
    x = rng.uniform(-1.5, 1.5, shape)
    w = rng.standard_normal(np.shape(uir.jit(fn)(x)))
    f = _projected(fn, w)
    g = np.asarray(uir.grad(f)(x))
    np.testing.assert_allclose(g, fd_grad(uir.jit(f), x), rtol=1e-5, atol=1e-6)


@settings(max_examples=4, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**31 - 1))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_vjp_is_the_transpose_of_jvp(name, shape, seed):
    rng = np.random.default_rng(seed)
    fn = UNARY[name]
    x = rng.uniform(-1.5, 1.5, shape)
    check_vjp_transposes_jvp(fn, x, rng)


@pytest.mark.parametrize("name", ["tanh", "pow", "softmax", "matmul", "prod", "max_min"])
def test_second_order_forward_and_reverse(name):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.2, 1.2, (3,))
    fn = UNARY[name]
    w = rng.standard_normal(np.shape(uir.jit(fn)(x)))
    f = _projected(fn, w)
    h_rev = np.asarray(uir.jacrev(uir.grad(f))(x))
    h_fwd = np.asarray(uir.hessian(f)(x))
    g = uir.grad(f)
    fd = np.stack([fd_grad(lambda v, i=i: g(v)[i], x) for i in range(3)])
    np.testing.assert_allclose(h_rev, fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_fwd, fd, rtol=1e-5, atol=1e-6)
    # grad of grad of a scalar function
    s = lambda v: jnp.sin(v) * v**3  # noqa: E731
    gg = uir.grad(uir.grad(s))(0.7)
    assert (
        abs(float(gg) - (-np.sin(0.7) * 0.343 + 6 * np.cos(0.7) * 0.49 + 6 * np.sin(0.7) * 0.7))
        < 1e-9
    )


def test_jacobians_of_pytrees_and_argnums():
    x = np.array([0.3, -1.2, 2.0])
    y = np.array([[1.0, 2.0], [0.5, -1.0]])

    def f(a, b):
        return {"p": a * jnp.sum(b), "q": jnp.sin(b) * a[0]}

    for jac in (uir.jacfwd, uir.jacrev):
        j = jac(f, argnums=(0, 1))(x, y)
        assert j["p"][0].shape == (3, 3) and j["p"][1].shape == (3, 2, 2)
        assert j["q"][0].shape == (2, 2, 3) and j["q"][1].shape == (2, 2, 2, 2)
        np.testing.assert_allclose(np.asarray(j["p"][0]), np.eye(3) * y.sum())
        np.testing.assert_allclose(
            np.asarray(j["q"][1]).reshape(4, 4), np.diag(np.cos(y).ravel() * x[0]), atol=1e-12
        )


def test_value_and_grad_has_aux_and_pytrees():
    params = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -0.5])}
    x = np.array([0.1, 0.2])

    def loss(p, x):
        y = jnp.tanh(p["w"] @ x + p["b"])
        return jnp.sum(y**2), {"y": y}

    (v, aux), g = uir.value_and_grad(loss, has_aux=True)(params, x)
    y = np.tanh(params["w"] @ x + params["b"])
    assert abs(float(v) - np.sum(y**2)) < 1e-12
    np.testing.assert_allclose(np.asarray(aux["y"]), y)
    dy = 2 * y * (1 - y**2)
    np.testing.assert_allclose(np.asarray(g["b"]), dy, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g["w"]), np.outer(dy, x), rtol=1e-12)
    gx = uir.grad(lambda p, x: loss(p, x)[0], argnums=1)(params, x)
    np.testing.assert_allclose(np.asarray(gx), params["w"].T @ dy, rtol=1e-12)


def test_transformations_compose_with_jit():
    f = lambda x: jnp.sum(jnp.sin(x) ** 2)  # noqa: E731
    x = np.linspace(-1, 1, 5)
    expected = 2 * np.sin(x) * np.cos(x)
    np.testing.assert_allclose(np.asarray(uir.jit(uir.grad(f))(x)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(uir.grad(uir.jit(f))(x)), expected, rtol=1e-12)
    per_example = uir.jit(uir.vmap(uir.grad(lambda v: jnp.sum(jnp.sin(v) ** 2))))
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(per_example(xs)), 2 * np.sin(xs) * np.cos(xs), rtol=1e-12)


def test_closures_over_traced_values_are_differentiated():
    # The inner function reads the outer argument: its derivative flows.
    def outer(x):
        return uir.grad(lambda y: jnp.sin(x * y))(1.0)  # cos(x) * x

    np.testing.assert_allclose(
        float(uir.grad(outer)(0.4)), np.cos(0.4) - 0.4 * np.sin(0.4), rtol=1e-12
    )


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="scalar-output"):
        uir.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(TypeError, match=r"int32|int64"):
        uir.grad(lambda x: jnp.sum(x * 2))(np.ones(3, np.int32))
    # an op without a rule: named, with the transformation and the user's line
    with pytest.raises(
        uir.TraceError,
        match=r"vjp of custom call 'lapack_dgees_ffi': no rule for HLO op 'custom-call'.*test_autodiff",
    ):
        uir.grad(lambda x: jnp.sum(lax.linalg.schur(x)[0]))(np.eye(3) * 2.0)
    with pytest.raises(ValueError, match="structure"):
        _, pull = uir.vjp(lambda x: (x, x), np.ones(2))
        pull(np.ones(2))


def test_integer_inputs_through_vjp_and_allow_int():
    f = lambda x, n: jnp.sum(x**2) * n  # noqa: E731
    g = uir.grad(f)(np.array([1.0, 2.0]), np.int32(3))
    np.testing.assert_allclose(np.asarray(g), [6.0, 12.0])
    gi = uir.grad(f, argnums=1, allow_int=True)(np.array([1.0, 2.0]), np.int32(3))
    assert np.asarray(gi) == 0


def test_stop_gradient_blocks_both_modes():
    x = np.array([0.5, -2.0])
    f = lambda v: jnp.sum(v * lax.stop_gradient(v) ** 2)  # noqa: E731
    np.testing.assert_allclose(np.asarray(uir.grad(f)(x)), x**2)
    _, t = uir.jvp(f, (x,), (np.ones(2),))
    assert float(t) == np.sum(x**2)
    # the compiled function is unchanged by the marker
    assert float(uir.jit(f)(x)) == np.sum(x**3)


DTYPE_TOLERANCE = {"float16": 2e-2, "bfloat16": 6e-2, "float32": 2e-5, "float64": 1e-9}


@settings(max_examples=12, deadline=None)
@given(
    dtype=st.sampled_from(sorted(DTYPE_TOLERANCE)),
    name=st.sampled_from(["tanh", "softmax", "matmul", "max_pool", "cumsum", "sort", "pow"]),
    seed=st.integers(0, 2**31 - 1),
)
def test_gradients_keep_the_input_dtype_and_match_float64(dtype, name, seed):
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (3, 4))
    fn = UNARY[name]
    w = rng.standard_normal(np.shape(uir.jit(fn)(x)))

    def f(v):
        return jnp.sum(fn(v) * w.astype(v.dtype))

    # float64 (the fixture enables x64) at the same, rounded, input: a max
    # or a sort must pick the same elements in both.
    low = x.astype(dt)
    exact = np.asarray(uir.grad(f)(low.astype(np.float64)))
    got = uir.grad(f)(low)
    assert np.asarray(got).dtype == dt
    tol = DTYPE_TOLERANCE[dtype]
    np.testing.assert_allclose(
        np.asarray(got).astype(np.float64),
        exact,
        rtol=tol,
        atol=tol * max(1.0, np.abs(exact).max()),
    )


@pytest.mark.parametrize(
    "f, d",
    [
        (jnp.exp, np.exp),
        (jnp.sin, np.cos),
        (jnp.tanh, lambda z: 1 - np.tanh(z) ** 2),
        (lambda z: z * z * z, lambda z: 3 * z * z),
        (jnp.log, lambda z: 1 / z),
        (
            lambda z: jnp.sqrt(z) / (z + 2.0),
            lambda z: (0.5 / np.sqrt(z)) / (z + 2) - np.sqrt(z) / (z + 2) ** 2,
        ),
    ],
)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_holomorphic_grad_of_complex_functions(f, d, dtype):
    z = np.array([0.3 + 0.2j, -0.5 + 1.0j, 1.2 - 0.7j], dtype)
    g = np.asarray(uir.vmap(uir.grad(f, holomorphic=True))(z))
    assert g.dtype == dtype
    np.testing.assert_allclose(
        g, d(z.astype(np.complex128)), rtol=2e-5 if dtype == np.complex64 else 1e-12
    )


# Real-valued functions of complex inputs, not holomorphic: JAX's gradient
# g pairs with a direction t as Re(sum(g * t)) (the transposes of complex,
# real, imag and conj follow from that pairing).
NON_HOLOMORPHIC = {
    "abs": lambda z: jnp.sum(jnp.abs(z) ** 3),
    "conj": lambda z: jnp.sum(jnp.real(jnp.conj(z) * jnp.sin(z))),
    "imag_of_conj": lambda z: jnp.sum(jnp.imag(jnp.conj(z)) * jnp.arange(3.0)),
    "complex": lambda z: jnp.sum(jnp.abs(lax.complex(jnp.imag(z), jnp.real(z) ** 2)) ** 2),
    "angle": lambda z: jnp.sum(jnp.angle(z * z) * jnp.arange(1.0, 4.0)),
}


@pytest.mark.parametrize("name", sorted(NON_HOLOMORPHIC))
def test_gradients_of_real_functions_of_complex_inputs(name):
    rng = np.random.default_rng(11)
    z = np.array([0.3 + 0.2j, -0.5 + 1.0j, 1.2 - 0.7j])
    t = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    f = NON_HOLOMORPHIC[name]
    eps = 1e-6
    fd = (float(uir.jit(f)(z + eps * t)) - float(uir.jit(f)(z - eps * t))) / (2 * eps)
    _, dot = uir.jvp(f, (z,), (t,))
    g = np.asarray(uir.grad(f)(z))
    assert abs(float(dot) - fd) < 1e-7 * max(1.0, abs(fd))
    assert abs(float(np.real(np.sum(g * t))) - fd) < 1e-7 * max(1.0, abs(fd))
