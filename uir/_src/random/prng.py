"""The threefry PRNG: keys, split, fold_in and random bits, as jax.random's."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from uir._src.core import dtypes, ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail

_U32 = np.uint32
# Threefry-2x32's rotations (Salmon et al., 2011), and the key-schedule parity.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = _U32(0x1BD11BDA)


def _xor(a, b):
    return ops.binary("xor", a, b, op_name="xor")


def _add(a, b):
    return ops.binary("add", a, b, op_name="add")


def _rotate_left(x, r: int):
    left = ops.binary("shift-left", x, asarray(_U32(r)), op_name="shift_left")
    right = ops.binary("shift-right-logical", x, asarray(_U32(32 - r)), op_name="shift_right")
    return ops.binary("or", left, right, op_name="or")


def threefry_2x32(k1, k2, x0, x1):
    """Threefry-2x32 with 20 rounds of key words (k1, k2) over counter words
    (x0, x1), all uint32 arrays of one shape (keys broadcast): two uint32
    arrays."""
    k1, k2, x0, x1 = ops.broadcast_all("threefry2x32", k1, k2, x0, x1)
    ks = (k1, k2, _xor(_xor(k1, k2), asarray(_PARITY)))
    x0, x1 = _add(x0, ks[0]), _add(x1, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = _add(x0, x1)
            x1 = _xor(_rotate_left(x1, r), x0)
        x0 = _add(x0, ks[(i + 1) % 3])
        x1 = _add(x1, _add(ks[(i + 2) % 3], asarray(_U32(i + 1))))
    return x0, x1


def _check_key(key, op: str):
    k = asarray(key)
    if k.dtype != np.uint32 or k.shape[-1:] != (2,):
        fail(op, f"a PRNG key is a uint32[2] array (from uir.random.key), got {ops.describe(k)}")
    return k


def _words(key, op: str):
    k = _check_key(key, op)
    if k.ndim != 1:
        fail(op, f"takes one key, got an array of keys {ops.describe(k)}; split or vmap over them")
    return (
        ops.reshape(_slice1(k, 0), ()),
        ops.reshape(_slice1(k, 1), ()),
    )


def _slice1(k, i: int):
    from uir._src.numpy.manipulation import slice_static

    return slice_static(k, [i], [i + 1], [1])


def _counters(shape: tuple[int, ...]):
    """The row-major index of every element of `shape` as a 64-bit counter:
    (high words, low words), uint32 arrays of `shape`."""
    size = math.prod(shape)
    if size > 2**64:
        fail("random_bits", f"a draw of {size} elements exceeds the 2**64 counters")
    if not shape:
        zero = asarray(np.zeros((), _U32))
        return zero, zero
    # Low words: the flat index mod 2**32 (an iota of uint32 over the whole
    # shape wraps exactly so); high words: the index's upper half.
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    index = None
    for d, stride in enumerate(strides):
        term = ops.iota(np.dtype(np.uint64), shape, d)
        if stride != 1:
            term = ops.binary("multiply", term, asarray(np.uint64(stride)), op_name="mul")
        index = term if index is None else _add(index, term)
    low = ops.convert(
        ops.binary("and", index, asarray(np.uint64(0xFFFFFFFF)), op_name="and"), np.uint32
    )
    high = ops.convert(
        ops.binary("shift-right-logical", index, asarray(np.uint64(32)), op_name="shift_right"),
        np.uint32,
    )
    return high, low


def _bits(key, bit_width: int, shape, op: str = "bits"):
    k1, k2 = _words(key, op)
    high, low = _counters(tuple(shape))
    b1, b2 = threefry_2x32(k1, k2, high, low)
    if bit_width == 64:
        hi = ops.convert(b1, np.uint64)
        lo = ops.convert(b2, np.uint64)
        shifted = ops.binary("shift-left", hi, asarray(np.uint64(32)), op_name="shift_left")
        return ops.binary("or", shifted, lo, op_name="or")
    bits = _xor(b1, b2)
    if bit_width == 32:
        return bits
    return ops.convert(bits, np.dtype(f"uint{bit_width}"))


def _shape(shape, op: str) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        fail(op, f"shape must be a sequence of ints, got {shape!r}")
        raise


# --- keys ---------------------------------------------------------------------------


def _seed_words(seed) -> np.ndarray:
    """The key of an integer seed as JAX makes it: (seed >> 32, seed & 0xFFFFFFFF),
    the high word 0 for 32-bit seeds (x64 off)."""
    from uir._src.core import config

    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        a = np.asarray(seed)
        if a.shape or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"PRNG key seed must be an integer scalar; got {seed!r}")
        seed = int(a)
    seed = int(seed)
    if config.read("enable_x64"):
        if not -(2**63) <= seed < 2**64:
            raise OverflowError(f"seed {seed} does not fit in 64 bits")
        value = seed % 2**64
        return np.array([value >> 32, value & 0xFFFFFFFF], np.uint32)
    if not -(2**31) <= seed < 2**32:
        raise OverflowError(
            f"seed {seed} does not fit in 32 bits (uir.config.update('enable_x64', True) "
            "takes 64-bit seeds)"
        )
    return np.array([0, seed % 2**32], np.uint32)


def _impl(impl, dtype=None) -> None:
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"uir.random implements threefry2x32 only, not {impl!r}")
    if dtype is not None:
        raise ValueError(
            "typed key arrays (dtype=) are not supported: uir's keys are raw uint32[2] words"
        )


def PRNGKey(seed, *, impl=None) -> np.ndarray:
    """The key of an integer seed: a uint32[2] array."""
    from uir._src.core import tracing

    _impl(impl)
    if tracing.current() is not None and hasattr(seed, "shape"):
        return _traced_seed(seed)
    return _seed_words(seed)


def key(seed, *, impl=None, dtype=None) -> np.ndarray:
    """The key of an integer seed. JAX returns a typed key array; uir returns
    the raw uint32[2] key (the same bits as jax.random.key_data(key(seed)))."""
    _impl(impl, dtype)
    return PRNGKey(seed)


def key_data(keys):
    """The raw uint32 words of keys (uir's keys are raw already)."""
    return keys


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Keys from raw uint32 words (uir's keys are raw already)."""
    _impl(impl, dtype)
    return key_bits_array


@eager
def _traced_seed(seed):
    s = asarray(seed)
    if not dtypes.is_int(s.dtype) or s.shape:
        fail("PRNGKey", f"a seed is an integer scalar, got {ops.describe(s)}")
    if s.dtype.itemsize == 8:
        high = ops.convert(
            ops.binary("shift-right-logical", ops.convert(s, np.uint64), asarray(np.uint64(32))),
            np.uint32,
        )
    else:
        high = asarray(np.zeros((), np.uint32))
    low = (
        ops.convert(s, np.uint32)
        if s.dtype.itemsize <= 4
        else ops.convert(
            ops.binary("and", ops.convert(s, np.uint64), asarray(np.uint64(0xFFFFFFFF))), np.uint32
        )
    )
    return _stack2(high, low)


def _stack2(a, b):
    from uir._src.numpy.manipulation import stack

    return stack([a, b], axis=-1)


@eager
def split(key, num: int = 2):
    """`num` new keys from `key`: a uint32[num, 2] array."""
    k1, k2 = _words(key, "split")
    shape = _shape(num, "split")
    high, low = _counters(shape)
    b1, b2 = threefry_2x32(k1, k2, high, low)
    return _stack2(b1, b2)


@eager
def fold_in(key, data):
    """A new key from `key` and an integer `data` (fold_in(key, i) for a
    loop's step i)."""
    k1, k2 = _words(key, "fold_in")
    d = asarray(data)
    if not dtypes.is_int(d.dtype) or d.shape:
        fail("fold_in", f"data is an integer scalar, got {ops.describe(d)}")
    if d.dtype.itemsize == 8:
        wide = ops.convert(d, np.uint64)
        high = ops.convert(ops.binary("shift-right-logical", wide, asarray(np.uint64(32))), _U32)
        low = ops.convert(ops.binary("and", wide, asarray(np.uint64(0xFFFFFFFF))), _U32)
    else:
        high, low = asarray(np.zeros((), _U32)), ops.convert(d, _U32)
    b1, b2 = threefry_2x32(k1, k2, high, low)
    return _stack2(b1, b2)


@eager
def bits(key, shape: Sequence[int] = (), dtype=np.uint32):
    """Random unsigned integers of `dtype` (uint8 to uint64) and `shape`."""
    dtype = dtypes.canonicalize(dtype)
    if dtype.kind != "u":
        fail("bits", f"dtype must be an unsigned integer type, got {dtype}")
    return _bits(key, dtype.itemsize * 8, _shape(shape, "bits"))


__all__ = [
    "PRNGKey",
    "bits",
    "fold_in",
    "key",
    "key_data",
    "split",
    "wrap_key_data",
]
