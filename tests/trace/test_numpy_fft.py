"""uir.numpy.fft against numpy.fft: every transform over random shapes,
axes, lengths (cut and zero-padded) and norms, eagerly and compiled (with no
fallback), and the signatures of jax.numpy.fft."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp

NORMS = [None, "backward", "ortho", "forward"]


@st.composite
def transform_cases(draw):
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(rank))
    count = draw(st.integers(1, rank))
    axes = draw(st.permutations(range(rank)))[:count]
    lengths = [draw(st.integers(1, 8)) for _ in axes] if draw(st.booleans()) else None
    return shape, list(axes), lengths, draw(st.sampled_from(NORMS)), draw(st.integers(0, 2**32 - 1))


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@settings(max_examples=60, deadline=None)
@given(transform_cases(), st.sampled_from(["fftn", "ifftn", "rfftn", "irfftn"]))
def test_n_dimensional_transforms_match_numpy(case, name):
    shape, axes, lengths, norm, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if name in ("fftn", "ifftn", "irfftn"):
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if name == "irfftn" and lengths is None and x.shape[axes[-1]] < 2:
        lengths = [2] * len(axes)  # (the default length 2 (m - 1) needs m >= 2)
    want = getattr(np.fft, name)(x, s=lengths, axes=axes, norm=norm)
    _close(getattr(unp.fft, name)(x, s=lengths, axes=axes, norm=norm), want)
    f = uir.jit(lambda v: getattr(unp.fft, name)(v, s=lengths, axes=axes, norm=norm))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == []
    _close(compiled(x), want)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
    st.integers(1, 3),
    st.integers(2, 9),
    st.one_of(st.none(), st.integers(1, 12)),
    st.sampled_from(NORMS),
    st.integers(0, 2**32 - 1),
)
def test_one_axis_transforms_match_numpy(name, rank, size, n, norm, seed):
    rng = np.random.default_rng(seed)
    shape = (3,) * (rank - 1) + (size,)
    x = rng.standard_normal(shape).astype(np.float32)
    if name not in ("rfft", "ihfft"):
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    axis = int(rng.integers(-rank, rank))
    if name in ("irfft", "hfft") and n is None and x.shape[axis] < 2:
        n = 2
    want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    _close(uir.jit(lambda v: getattr(unp.fft, name)(v, n=n, axis=axis, norm=norm))(x), want)


def test_two_axis_forms_frequencies_and_shifts_match_numpy():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32)
    c = (x + 1j * x[::-1]).astype(np.complex64)
    for name in ("fft2", "ifft2"):
        _close(getattr(unp.fft, name)(c, s=(5, 3)), getattr(np.fft, name)(c, s=(5, 3)))
    _close(unp.fft.rfft2(x, axes=(0, 2)), np.fft.rfft2(x, axes=(0, 2)))
    _close(unp.fft.irfft2(c, s=(4, 7)), np.fft.irfft2(c, s=(4, 7)))
    for n in (1, 6, 7):
        _close(unp.fft.fftfreq(n, d=0.25), np.fft.fftfreq(n, d=0.25))
        _close(unp.fft.rfftfreq(n, d=2.0), np.fft.rfftfreq(n, d=2.0))
    for axes in (None, 1, (0, 2)):
        _close(unp.fft.fftshift(x, axes=axes), np.fft.fftshift(x, axes=axes))
        _close(unp.fft.ifftshift(x, axes=axes), np.fft.ifftshift(x, axes=axes))


def test_bad_arguments_are_refused_with_the_reason():
    x = np.ones((2, 4), np.float32)
    with pytest.raises(uir.TraceError, match="invalid norm"):
        unp.fft.fft(x, norm="unitary")
    with pytest.raises(uir.TraceError, match="needs real input"):
        unp.fft.rfft(x.astype(np.complex64))
    with pytest.raises(uir.TraceError, match="repeated axes"):
        unp.fft.fftn(x, axes=(1, -1))
    with pytest.raises(uir.TraceError, match="at least 1"):
        unp.fft.fft(x, n=0)


def test_signatures_are_jaxs():
    jfft = pytest.importorskip("jax.numpy").fft
    for name in unp.fft.__all__:
        theirs = inspect.signature(getattr(jfft, name)).parameters
        ours = inspect.signature(getattr(unp.fft, name)).parameters
        assert list(theirs) == list(ours), name
