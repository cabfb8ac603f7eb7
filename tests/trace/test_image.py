"""uir.image: resize in every method and scale_and_translate, against
jax.image where JAX is installed, and against properties any resampler
must keep everywhere (constant images stay constant, identity warps keep
the image, nearest picks the pixel under each centre)."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.image as ui

RNG = np.random.default_rng(3)
IMAGE = RNG.standard_normal((5, 7, 3)).astype(np.float32)
METHODS = ["linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]


@pytest.mark.xla
@pytest.mark.parametrize("method", ["nearest", *METHODS])
@pytest.mark.parametrize("shape", [(10, 14, 3), (3, 4, 3), (12, 5, 3), (1, 1, 3)])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_jax(method, shape, antialias, jax_x32):
    jax_image = pytest.importorskip("jax.image")
    want = np.asarray(jax_image.resize(IMAGE, shape, method, antialias=antialias))
    got = np.asarray(ui.resize(IMAGE, shape, method, antialias=antialias))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)


@pytest.mark.xla
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale, shift", [((2.0, 1.5), (0.5, -1.0)), ((0.5, 0.7), (1.0, 0.0))])
def test_scale_and_translate_matches_jax(method, scale, shift, jax_x32):
    jax_image = pytest.importorskip("jax.image")
    jnp = pytest.importorskip("jax.numpy")
    for antialias in (True, False):
        want = jax_image.scale_and_translate(
            IMAGE,
            (9, 8, 3),
            (0, 1),
            jnp.array(scale),
            jnp.array(shift),
            method,
            antialias=antialias,
        )
        got = ui.scale_and_translate(
            IMAGE,
            (9, 8, 3),
            (0, 1),
            np.float32(scale),
            np.float32(shift),
            method,
            antialias=antialias,
        )
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_constant_images_stay_constant_and_identity_keeps_the_image(method):
    flat = np.full((6, 5), 2.5, np.float32)
    for shape in [(12, 10), (3, 2), (7, 5)]:
        np.testing.assert_allclose(ui.resize(flat, shape, method), 2.5, rtol=1e-5)
    np.testing.assert_allclose(ui.resize(IMAGE, IMAGE.shape, method), IMAGE)
    same = ui.scale_and_translate(
        IMAGE, IMAGE.shape, (0, 1), np.ones(2, np.float32), np.zeros(2, np.float32), method
    )
    np.testing.assert_allclose(same, IMAGE, atol=1e-6)


def test_nearest_picks_the_pixel_under_each_centre_and_keeps_the_dtype():
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    got = ui.resize(x, (6, 2), "nearest")
    assert got.dtype == np.uint8
    rows = np.floor((np.arange(6) + 0.5) * 3 / 6).astype(int)
    cols = np.floor((np.arange(2) + 0.5) * 4 / 2).astype(int)
    np.testing.assert_array_equal(got, x[rows][:, cols])
    assert ui.resize(x, (6, 8), "bilinear").dtype == np.float32


def test_traced_scale_and_refusals():
    f = uir.jit(
        lambda x, s: ui.scale_and_translate(
            x, (10, 14, 3), (0, 1), s, np.zeros(2, np.float32), "linear"
        )
    )
    np.testing.assert_allclose(
        f(IMAGE, np.float32([2, 2])), ui.resize(IMAGE, (10, 14, 3), "linear"), atol=1e-6
    )
    assert ui.ResizeMethod.from_string("tricubic") is ui.ResizeMethod.CUBIC
    with pytest.raises(ValueError, match="Unknown resize method"):
        ui.resize(IMAGE, (2, 2, 3), "gaussian")
    with pytest.raises(uir.TraceError, match="one entry per dimension"):
        ui.resize(IMAGE, (2, 2), "linear")
    with pytest.raises(uir.TraceError, match="nearest"):
        ui.scale_and_translate(IMAGE, IMAGE.shape, (0,), np.ones(1), np.zeros(1), "nearest")
