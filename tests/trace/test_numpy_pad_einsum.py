"""jax.numpy.pad in every NumPy mode and jax.numpy.einsum in every NumPy
form (ellipses, diagonals, the interleaved operand/sublist form), checked
against NumPy by Hypothesis, eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as jnp

MODES = [
    "constant",
    "edge",
    "wrap",
    "reflect",
    "symmetric",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
]


@st.composite
def pad_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([np.float32, np.int32]))
    x = (np.random.default_rng(draw(st.integers(0, 99))).standard_normal(shape) * 10).astype(dtype)
    mode = draw(st.sampled_from(MODES))
    widths = [tuple(draw(st.lists(st.integers(0, 7), min_size=2, max_size=2))) for _ in range(ndim)]
    kwargs = {}
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = draw(st.sampled_from(["even", "odd"]))
    elif mode == "constant" and draw(st.booleans()):
        kwargs["constant_values"] = [
            tuple(draw(st.lists(st.integers(-5, 5), min_size=2, max_size=2))) for _ in range(ndim)
        ]
    elif mode == "linear_ramp" and draw(st.booleans()):
        kwargs["end_values"] = (draw(st.integers(-9, 9)), draw(st.integers(-9, 9)))
    elif mode in ("maximum", "minimum", "mean", "median") and draw(st.booleans()):
        kwargs["stat_length"] = draw(st.integers(1, 4))
    return x, widths, mode, kwargs


@settings(max_examples=200, deadline=None)
@given(pad_cases(), st.booleans())
def test_pad_matches_numpy(case, jitted):
    x, widths, mode, kwargs = case
    want = np.pad(x, widths, mode=mode, **kwargs)

    def f(v):
        return jnp.pad(v, widths, mode=mode, **kwargs)

    got = uir.jit(f)(x) if jitted else f(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    # Odd reflections (2 * edge - x, again at corners and for widths past
    # the array) cancel: their rounding is relative to the largest values.
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.slow
def test_integer_linear_ramp_floors_as_numpy_linspace():
    # NumPy takes the step first and whole multiples of it, then the floor:
    # a ramp from -25 to 0 in 5 steps is exactly -20, -15, ... (a fraction
    # of the distance, 0.6 * -25 in float32, floors -15 to -16).
    edges = np.stack([np.full(61, 3), np.arange(-30, 31)], axis=1).astype(np.int32)
    for width in range(1, 8):
        for end in range(-9, 10):
            widths = [(0, 0), (width, width)]
            want = np.pad(edges, widths, mode="linear_ramp", end_values=end)
            got = jnp.pad(edges, widths, mode="linear_ramp", end_values=end)
            np.testing.assert_array_equal(got, want, err_msg=f"width={width} end={end}")


def test_pad_refuses_what_it_cannot_do():
    with pytest.raises(uir.TraceError, match="mode must be one of"):
        jnp.pad(np.ones(3), 1, mode="mirror")
    with pytest.raises(uir.TraceError, match="unsupported keyword"):
        jnp.pad(np.ones(3), 1, mode="edge", constant_values=2)
    with pytest.raises(uir.TraceError, match="empty axis"):
        jnp.pad(np.ones((0, 2)), 1, mode="wrap")


RNG = np.random.default_rng(4)
SQUARE = RNG.standard_normal((3, 3)).astype(np.float32)
BATCH = RNG.standard_normal((2, 3, 4)).astype(np.float32)
ONE = RNG.standard_normal((1, 4, 5)).astype(np.float32)
CUBE = RNG.standard_normal((3, 3, 2)).astype(np.float32)
TAIL = RNG.standard_normal((3, 4, 2)).astype(np.float32)
MAT = RNG.standard_normal((4, 5)).astype(np.float32)


@pytest.mark.parametrize(
    "spec, operands",
    [
        ("ii->i", (SQUARE,)),
        ("ii", (SQUARE,)),
        ("ii->", (SQUARE,)),
        ("iij->j", (CUBE,)),
        ("...ij,...jk->...ik", (BATCH, ONE)),
        ("...ij,...jk", (BATCH, ONE)),
        ("i...->...", (BATCH,)),
        ("...", (BATCH,)),
        ("ij...,jk->ik...", (TAIL, MAT)),
        ("bij,bjk->", (BATCH, np.repeat(ONE, 2, 0))),
    ],
)
def test_einsum_forms_match_numpy(spec, operands):
    want = np.einsum(spec, *operands)
    for got in (jnp.einsum(spec, *operands), uir.jit(lambda *o: jnp.einsum(spec, *o))(*operands)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_interleaved_sublists():
    np.testing.assert_allclose(
        jnp.einsum(SQUARE, [0, 1], SQUARE, [1, 2], [0, 2]),
        np.einsum(SQUARE, [0, 1], SQUARE, [1, 2], [0, 2]),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        jnp.einsum(BATCH, [Ellipsis, 1, 2], ONE, [Ellipsis, 2, 3]),
        np.einsum(BATCH, [Ellipsis, 1, 2], ONE, [Ellipsis, 2, 3]),
        rtol=1e-5,
        atol=1e-5,
    )
    with pytest.raises(uir.TraceError, match="drops the dimensions"):
        jnp.einsum("ij...,jk->ik", TAIL, MAT)
    with pytest.raises(uir.TraceError, match="repeated subscripts in the output"):
        jnp.einsum("ij->ii", SQUARE)
