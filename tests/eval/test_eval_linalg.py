"""cholesky, triangular-solve, fft, topk, batch norm and dynamic-size ops
against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from eval_util import hlo_type

import uir


def run(op_text: str, *arrays, result: str, comps: str = ""):
    params = "\n".join(f"  p{i} = {hlo_type(a)} parameter({i})" for i, a in enumerate(arrays))
    text = f"{comps}ENTRY e {{\n{params}\n  ROOT r = {result} {op_text}\n}}"
    return uir.evaluate(uir.hlo.parse_module(text), *arrays)


def spd(n, batch=(), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal((*batch, n, n))
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_matches_numpy(dtype, lower):
    a = spd(5, (2,), dtype)
    got = run(f"cholesky(p0), lower={str(lower).lower()}", a, result=hlo_type(a))
    want = np.linalg.cholesky(a)  # lower factor
    if not lower:
        want = np.conj(np.swapaxes(want, -1, -2))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_cholesky_reads_only_its_triangle():
    a = spd(4)
    junk = a.copy()
    junk[np.triu_indices(4, 1)] = 1e9  # upper triangle ignored when lower=true
    got = run("cholesky(p0), lower=true", junk, result=hlo_type(a))
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-12)


def test_cholesky_of_a_non_positive_definite_matrix_gives_nan():
    a = -np.eye(3)
    got = run("cholesky(p0), lower=true", a, result=hlo_type(a))
    assert np.isnan(got[0, 0])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
@pytest.mark.parametrize("unit", [False, True])
def test_triangular_solve_matches_numpy(left, lower, transpose, unit):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    b = rng.standard_normal((2, 4, 3) if left else (2, 3, 4)) + 0j
    tri = np.tril(a) if lower else np.triu(a)
    if unit:  # the diagonal of `a` is not read: it is taken as 1
        idx = np.arange(4)
        tri = tri.copy()
        tri[:, idx, idx] = 1
    op = {
        "NO_TRANSPOSE": tri,
        "TRANSPOSE": np.swapaxes(tri, -1, -2),
        "ADJOINT": np.conj(np.swapaxes(tri, -1, -2)),
    }[transpose]
    want = (
        np.linalg.solve(op, b)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    got = run(
        f"triangular-solve(p0, p1), left_side={str(left).lower()}, lower={str(lower).lower()}, "
        f"unit_diagonal={str(unit).lower()}, transpose_a={transpose}",
        a.astype(np.complex128),
        b.astype(np.complex128),
        result=hlo_type(b.astype(np.complex128)),
    )
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,length", [((3, 8), (8,)), ((2, 4, 6), (4, 6)), ((5,), (5,))])
def test_fft_and_ifft_match_numpy(shape, length):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    axes = tuple(range(len(shape) - len(length), len(shape)))
    fl = ",".join(map(str, length))
    got = run(f"fft(p0), fft_type=FFT, fft_length={{{fl}}}", x, result=hlo_type(x))
    np.testing.assert_allclose(got, np.fft.fftn(x, axes=axes), rtol=1e-4, atol=1e-4)
    got = run(f"fft(p0), fft_type=IFFT, fft_length={{{fl}}}", x, result=hlo_type(x))
    np.testing.assert_allclose(got, np.fft.ifftn(x, axes=axes), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,length", [((3, 8), (8,)), ((2, 4, 7), (4, 7))])
def test_rfft_and_irfft_match_numpy(shape, length):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    axes = tuple(range(len(shape) - len(length), len(shape)))
    fl = ",".join(map(str, length))
    want = np.fft.rfftn(x, axes=axes)
    got = run(f"fft(p0), fft_type=RFFT, fft_length={{{fl}}}", x, result=hlo_type(want))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    back = run(f"fft(p0), fft_type=IRFFT, fft_length={{{fl}}}", want, result=hlo_type(x))
    np.testing.assert_allclose(
        back, np.fft.irfftn(want, s=length, axes=axes), rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("stable", ["", ", is_stable=true", ", is_stable=false"])
def test_topk_matches_a_stable_argsort(largest, stable):
    # is_stable (which XLA's parser takes) asks for ties in index order;
    # uir orders them so either way, which is also a correct unstable order.
    rng = np.random.default_rng(4)
    x = rng.integers(0, 6, (3, 10)).astype(np.float32)
    values, indices = run(
        f"topk(p0), k=4, largest={str(largest).lower()}{stable}", x, result="(f32[3,4], s32[3,4])"
    )
    order = np.argsort(-x if largest else x, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis=1))


def batch_norm_reference(x, scale, offset, eps, f):
    axes = tuple(i for i in range(x.ndim) if i != f)
    shape = [1] * x.ndim
    shape[f] = -1
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(
        shape
    ) + offset.reshape(shape)
    return y, mean, var


def test_batch_norm_training_and_inference_match_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5))
    scale = rng.standard_normal(3)
    offset = rng.standard_normal(3)
    y, mean, var = run(
        "batch-norm-training(p0, p1, p2), epsilon=0.001, feature_index=1",
        x,
        scale,
        offset,
        result="(f64[4,3,5], f64[3], f64[3])",
    )
    want = batch_norm_reference(x, scale, offset, 0.001, 1)
    for g, w in zip((y, mean, var), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    inf = run(
        "batch-norm-inference(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1",
        x,
        scale,
        offset,
        mean,
        var,
        result="f64[4,3,5]",
    )
    np.testing.assert_allclose(inf, want[0], rtol=1e-12, atol=1e-12)


def test_batch_norm_grad_matches_a_numerical_gradient():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 2))
    scale = rng.standard_normal(2)
    dy = rng.standard_normal((6, 2))
    eps = 0.01
    mean, var = x.mean(axis=0), x.var(axis=0)
    dx, dscale, doffset = run(
        "batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0.01, feature_index=1",
        x,
        scale,
        mean,
        var,
        dy,
        result="(f64[6,2], f64[2], f64[2])",
    )

    def loss(x_, scale_, offset_):
        return np.sum(batch_norm_reference(x_, scale_, offset_, eps, 1)[0] * dy)

    h = 1e-6
    offset = np.zeros(2)
    num_dx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        num_dx[i] = (loss(x + e, scale, offset) - loss(x - e, scale, offset)) / (2 * h)
    num_dscale = [
        (loss(x, scale + h * np.eye(2)[c], offset) - loss(x, scale - h * np.eye(2)[c], offset))
        / (2 * h)
        for c in range(2)
    ]
    np.testing.assert_allclose(dx, num_dx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dscale, num_dscale, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(doffset, dy.sum(axis=0), rtol=1e-12)


def test_dimension_size_ops_read_and_set_the_actual_size():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert run("get-dimension-size(p0), dimensions={1}", x, result="s32[]") == 4
    got = run("set-dimension-size(p0, p1), dimensions={1}", x, np.int32(2), result="s32[3,<=4]")
    np.testing.assert_array_equal(got, x[:, :2])


# Lengths through every path: Eigen's radix-2/3/4/5 and generic butterflies
# (7, 49, 61), and Bluestein's chirp-z for a prime factor above 64 (67, 1009,
# 2*127, 65537).
@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 49, 61, 67, 96, 254, 1000, 1009, 4096, 65537])
def test_fft_of_every_length_matches_numpy_in_double(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n)) + 1j * rng.standard_normal((2, n))
    tol = 1e-12 * np.sqrt(n) * np.abs(x).max() * np.sqrt(n)
    got = run(f"fft(p0), fft_type=FFT, fft_length={{{n}}}", x, result=hlo_type(x))
    np.testing.assert_allclose(got, np.fft.fft(x), rtol=0, atol=tol)
    back = run(f"fft(p0), fft_type=IFFT, fft_length={{{n}}}", got, result=hlo_type(x))
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-12 * np.sqrt(n) * np.abs(x).max())


def test_fft_of_a_million_points_takes_o_n_log_n():
    # 2^20 points (a naive DFT would take hours) and a large prime length.
    x = np.exp(2j * np.pi * np.arange(1 << 20) * 3 / (1 << 20)).astype(np.complex64)
    got = run(
        "fft(p0), fft_type=FFT, fft_length={1048576}", x.reshape(1, -1), result="c64[1,1048576]"
    )
    want = np.zeros(1 << 20, np.complex64)
    want[3] = 1 << 20
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-2)
    y = np.random.default_rng(0).standard_normal(104729)  # prime
    got = run("fft(p0), fft_type=RFFT, fft_length={104729}", y, result="c128[52365]")
    np.testing.assert_allclose(got, np.fft.rfft(y), rtol=0, atol=1e-8)
