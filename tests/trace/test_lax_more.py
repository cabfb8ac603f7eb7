"""uir.lax's rng_uniform, rng_bit_generator, broadcast_like, scatter_apply,
conv_general_dilated_patches, conv_general_dilated_local and ragged_dot
against NumPy (and, where JAX is installed, jax.lax)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import uir
import uir.lax as lax

rng = np.random.default_rng(0)


def test_rng_uniform_draws_in_its_range():
    out = uir.jit(lambda a, b: lax.rng_uniform(a, b, (1000,)))(np.float32(-2.0), np.float32(3.0))
    assert out.shape == (1000,) and out.dtype == np.float32
    assert out.min() >= -2.0 and out.max() < 3.0 and out.std() > 1.0
    ints = uir.jit(lambda a, b: lax.rng_uniform(a, b, (500,)))(np.int32(3), np.int32(9))
    assert ints.dtype == np.int32 and set(np.unique(ints)) <= set(range(3, 9))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_rng_bit_generator_gives_a_new_key_and_bits(dtype):
    key = np.array([1, 2, 3, 4], np.uint32)
    new_key, bits = lax.rng_bit_generator(key, (64, 3), dtype=dtype)
    assert new_key.shape == (4,) and new_key.dtype == np.uint32
    # 64-bit types are off: uint64 is canonicalized to uint32, as in JAX.
    assert bits.shape == (64, 3) and bits.dtype == (np.uint32 if dtype == np.uint64 else dtype)
    assert not np.array_equal(new_key, key)
    assert len(np.unique(bits)) > 16
    again = lax.rng_bit_generator(key, (64, 3), dtype=dtype)[1]
    np.testing.assert_array_equal(bits, again)  # the same key, the same bits
    assert not np.array_equal(lax.rng_bit_generator(new_key, (64, 3), dtype=dtype)[1], bits)


# Recorded from jax 0.10.2 (XLA:CPU): jax.lax.rng_bit_generator(key, shape, dtype, algorithm).
RECORDED_BITS = {
    lax.RandomAlgorithm.RNG_THREE_FRY: (
        [1, 2, 6, 4],
        [[1576285164, 740599976, 2436392515], [2249660814, 2425682526, 1497962777]],
        [236, 142, 168, 94, 67],
    ),
    lax.RandomAlgorithm.RNG_PHILOX: (
        [1, 2, 5, 4],
        [[512747620, 1298009047, 1267190206], [761827841, 1383286907, 1639995030]],
        [100, 215, 190, 1, 123],
    ),
}


@pytest.mark.parametrize("algorithm", sorted(RECORDED_BITS))
def test_rng_bit_generator_gives_xlas_bits(algorithm):
    key = np.array([1, 2, 3, 4], np.uint32)
    want_key, want_bits, want_bytes = RECORDED_BITS[algorithm]
    new_key, bits = lax.rng_bit_generator(key, (2, 3), algorithm=algorithm)
    np.testing.assert_array_equal(new_key, want_key)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(
        lax.rng_bit_generator(key, (5,), dtype=np.uint8, algorithm=algorithm)[1], want_bytes
    )
    if algorithm == lax.RandomAlgorithm.RNG_PHILOX:  # XLA:CPU's default
        np.testing.assert_array_equal(lax.rng_bit_generator(key, (2, 3))[1], want_bits)


@pytest.mark.xla
def test_rng_bit_generator_matches_xla_in_every_layout(jax_x32):
    jax = jax_x32
    jax.config.update("jax_enable_x64", True)
    uir.config.update("enable_x64", True)
    try:
        for key in (
            np.array([1, 2, 3, 4], np.uint32),
            np.array([0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32),  # counter carries
        ):
            for algorithm in lax.RandomAlgorithm:
                for shape in [(5,), (4, 3), (3, 5), (2, 3, 4), (), (7, 1, 3)]:
                    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
                        jk, jb = jax.lax.rng_bit_generator(
                            key,
                            shape,
                            dtype=dtype,
                            algorithm=jax.lax.RandomAlgorithm(int(algorithm)),
                        )
                        uk, ub = lax.rng_bit_generator(key, shape, dtype=dtype, algorithm=algorithm)
                        np.testing.assert_array_equal(uk, np.asarray(jk))
                        np.testing.assert_array_equal(ub, np.asarray(jb))
    finally:
        jax.config.update("jax_enable_x64", False)
        uir.config.update("enable_x64", False)


def test_broadcast_like():
    out = lax.broadcast_like(np.array([1, 2, 3], np.int32), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])


def test_scatter_apply_applies_the_function_at_the_indices():
    x = np.arange(6, dtype=np.float32)
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    out = lax.scatter_apply(
        x, np.array([[1], [4]], np.int32), lambda v: v * 10 + 1, dn, update_shape=(2,)
    )
    np.testing.assert_array_equal(out, [0, 11, 2, 3, 41, 5])


def _patches_reference(x, filt, stride):
    n, c, h, w = x.shape
    kh, kw = filt
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, c * kh * kw, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = win.reshape(n, c * kh * kw)
    return out


def test_conv_patches_are_the_windows_channel_major():
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    got = lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")
    np.testing.assert_allclose(got, _patches_reference(x, (2, 3), 1), rtol=1e-6)
    strided = lax.conv_general_dilated_patches(x, (3, 2), (2, 2), "VALID")
    np.testing.assert_allclose(strided, _patches_reference(x, (3, 2), 2), rtol=1e-6)
    nhwc = lax.conv_general_dilated_patches(
        x.transpose(0, 2, 3, 1), (2, 3), (1, 1), "VALID", dimension_numbers=("NHWC", "OIHW", "NHWC")
    )
    np.testing.assert_allclose(
        nhwc, _patches_reference(x, (2, 3), 1).transpose(0, 2, 3, 1), rtol=1e-6
    )


def test_a_local_convolution_has_a_kernel_per_position():
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    kh, kw, out_c = 2, 2, 4
    oh, ow = 4, 3
    # rhs: [out features, in features * kh * kw, oh, ow] for ("NCHW", "OIHW", "NCHW").
    w = rng.standard_normal((out_c, 3 * kh * kw, oh, ow)).astype(np.float32)
    got = lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (kh, kw))
    patches = _patches_reference(x, (kh, kw), 1)  # [n, c*kh*kw, oh, ow]
    want = np.einsum("nkij,okij->noij", patches, w)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_ragged_dot_multiplies_each_group_of_rows_by_its_matrix():
    lhs = rng.standard_normal((7, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    sizes = np.array([2, 0, 4], np.int32)  # row 6 belongs to no group
    got = lax.ragged_dot(lhs, rhs, sizes)
    want = np.zeros((7, 5), np.float32)
    start = 0
    for g, size in enumerate(sizes):
        want[start : start + size] = lhs[start : start + size] @ rhs[g]
        start += size
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(uir.TraceError, match="ragged_dot: needs lhs"):
        lax.ragged_dot(lhs, rhs[:, :3], sizes)


@pytest.mark.xla
def test_patches_local_conv_and_ragged_dot_match_jax(jax_x32):
    jl = jax_x32.lax
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    for args in (((2, 2), (1, 1), "SAME"), ((3, 1), (2, 1), [(1, 0), (0, 1)])):
        np.testing.assert_allclose(
            lax.conv_general_dilated_patches(x, *args),
            jl.conv_general_dilated_patches(x, *args),
            rtol=1e-6,
        )
    w = rng.standard_normal((3, 8, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        lax.conv_general_dilated_local(x, w, (1, 1), "SAME", (2, 2)),
        jl.conv_general_dilated_local(x, w, (1, 1), "SAME", (2, 2)),
        rtol=1e-5,
        atol=1e-5,
    )
    lhs = rng.standard_normal((6, 3)).astype(np.float32)
    rhs = rng.standard_normal((2, 3, 4)).astype(np.float32)
    sizes = np.array([4, 2], np.int32)
    np.testing.assert_allclose(
        lax.ragged_dot(lhs, rhs, sizes), jl.ragged_dot(lhs, rhs, sizes), rtol=1e-5, atol=1e-6
    )


def _ragged(lhs, rhs, sizes, dims, lhs_ragged, rhs_group):
    dn = lax.RaggedDotDimensionNumbers(dims, lhs_ragged, rhs_group)
    return lax.ragged_dot_general(lhs, rhs, sizes, dn)


def test_ragged_dot_general_in_each_mode():
    lhs = rng.standard_normal((2, 6, 4)).astype(np.float32)
    rhs = rng.standard_normal((3, 2, 4, 5)).astype(np.float32)
    sizes = np.array([[2, 1, 3], [0, 4, 1]], np.int32)  # per batch row
    got = _ragged(lhs, rhs, sizes, (((2,), (2,)), ((0,), (1,))), [1], [0])
    want = np.zeros((2, 6, 5), np.float32)
    for b in range(2):
        start = 0
        for g, size in enumerate(sizes[b]):
            want[b, start : start + size] = lhs[b, start : start + size] @ rhs[g, b]
            start += size
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # A ragged contracting dimension: one product per group of k.
    a = rng.standard_normal((3, 7)).astype(np.float32)
    w = rng.standard_normal((7, 5)).astype(np.float32)
    groups = np.array([2, 4, 1], np.int32)
    got = _ragged(a, w, groups, (((1,), (0,)), ((), ())), [1], [])
    edges = np.concatenate([[0], np.cumsum(groups)])
    want = np.stack([a[:, s:e] @ w[s:e] for s, e in itertools.pairwise(edges)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # A ragged batch dimension: an ordinary batched dot.
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    y = rng.standard_normal((4, 2, 5)).astype(np.float32)
    got = _ragged(x, y, np.array([1, 3], np.int32), (((2,), (1,)), ((0,), (0,))), [0], [])
    np.testing.assert_allclose(got, x @ y, rtol=1e-5, atol=1e-5)
