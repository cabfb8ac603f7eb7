"""Derivatives of convolution (both operands) across dimension numbers,
strides, padding, dilations and feature and batch groups: finite
differences in float64 and the transpose identity."""

from __future__ import annotations

import numpy as np
import pytest
from ad_util import fd_grad

import uir
import uir.lax as lax
import uir.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")


# (lhs shape, rhs shape, keyword arguments of conv_general_dilated)
CASES = {
    "nchw_valid": ((2, 3, 5, 5), (4, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID")),
    "nhwc_same_stride2": (
        (1, 6, 5, 2),
        (3, 3, 2, 4),
        dict(window_strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
    ),
    "odd_stride_explicit_padding": (
        (1, 2, 7, 6),
        (3, 2, 3, 2),
        dict(window_strides=(3, 2), padding=[(2, 0), (1, 1)]),
    ),
    "lhs_dilation": (
        (1, 2, 4, 3),
        (2, 2, 3, 3),
        dict(window_strides=(1, 1), padding=[(2, 2), (1, 2)], lhs_dilation=(2, 2)),
    ),
    "rhs_dilation": (
        (2, 1, 7, 6),
        (2, 1, 2, 3),
        dict(window_strides=(1, 2), padding="VALID", rhs_dilation=(3, 2)),
    ),
    "feature_groups": (
        (2, 4, 5, 4),
        (6, 2, 3, 2),
        dict(window_strides=(1, 1), padding="SAME", feature_group_count=2),
    ),
    "depthwise": (
        (1, 3, 5, 5),
        (3, 1, 3, 3),
        dict(window_strides=(2, 2), padding="SAME", feature_group_count=3),
    ),
    "batch_groups": (
        (4, 2, 5, 4),
        (4, 2, 2, 2),
        dict(window_strides=(1, 1), padding="VALID", batch_group_count=2),
    ),
    "conv1d_nwc": (
        (2, 7, 3),
        (3, 3, 2),
        dict(window_strides=(2,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")),
    ),
    "conv3d": ((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), dict(window_strides=(1, 1, 1), padding="SAME")),
}


def _conv(kw):
    return lambda x, w: lax.conv_general_dilated(x, w, **kw)


@pytest.mark.parametrize("name", sorted(CASES))
def test_convolution_gradients_match_finite_differences(name):
    xs, ws, kw = CASES[name]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    conv = _conv(kw)
    proj = rng.standard_normal(np.shape(uir.jit(conv)(x, w)))
    f = uir.jit(lambda a, b: jnp.sum(jnp.tanh(conv(a, b)) * proj))
    gx, gw = uir.grad(f, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), fd_grad(lambda a: f(a, w), x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(gw), fd_grad(lambda b: f(x, b), w), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_convolution_vjp_is_the_transpose_of_jvp(name):
    xs, ws, kw = CASES[name]
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    tx, tw = rng.standard_normal(xs), rng.standard_normal(ws)
    conv = _conv(kw)
    y, y_dot = uir.jvp(conv, (x, w), (tx, tw))
    ct = rng.standard_normal(np.shape(y))
    _, pull = uir.vjp(conv, x, w)
    cx, cw = pull(ct)
    lhs = float(np.sum(np.asarray(cx) * tx) + np.sum(np.asarray(cw) * tw))
    rhs = float(np.sum(ct * np.asarray(y_dot)))
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs))
