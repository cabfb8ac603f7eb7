"""The runtime's rng-bit-generator (runtime/rng_bits.h) against the
reference evaluator, bit for bit, and against the generators' published
known-answer vectors: Philox-4x32-10 and Threefry-2x32-20, every element
width, any shape (Threefry's split along the first even dimension, or the
largest), two- and three-word states, the advanced state. The compiled
executable runs each as an "rng" thunk, never on the evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir

TYPES = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]
ALGORITHMS = ["rng_default", "rng_philox", "rng_three_fry"]


def _module(algorithm, words, t, dims):
    shape = f"{t}[{','.join(map(str, dims))}]"
    return uir.hlo.parse_module(f"""HloModule r

ENTRY e {{
  s = u64[{words}] parameter(0)
  ROOT r = (u64[{words}], {shape}) rng-bit-generator(s), algorithm={algorithm}
}}
""")


def _check(algorithm, words, t, dims, state):
    module = _module(algorithm, words, t, dims)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("rng") == 1, exe.thunk_text
    got = exe(state)
    want = uir.evaluate(module, state)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))
    return got


@settings(max_examples=60, deadline=None)
@given(
    algorithm=st.sampled_from(ALGORITHMS),
    words=st.sampled_from([2, 3]),
    t=st.sampled_from(TYPES),
    dims=st.lists(st.integers(0, 9), max_size=3),
    state=st.lists(st.integers(0, 2**64 - 1), min_size=3, max_size=3),
)
def test_bits_and_state_match_the_evaluator(algorithm, words, t, dims, state):
    _check(algorithm, words, t, dims, np.array(state[:words], np.uint64))


def test_counters_carry_across_their_words():
    # Philox's low counter word wraps into the high one; Threefry's 64-bit
    # counter wraps.
    top = np.uint64(2**64 - 3)
    state = _check("rng_philox", 3, "u32", [37], np.array([9, top, 4], np.uint64))[0]
    np.testing.assert_array_equal(state, [9, (int(top) + 10) % 2**64, 5])
    _check("rng_three_fry", 2, "u16", [6, 7], np.array([1, top], np.uint64))


def test_published_vectors():
    # Random123's known answers, through the compiled executable.
    key = 0x13198A2E | (0x03707344 << 32)
    counter = 0x243F6A88 | (0x85A308D3 << 32)
    state, bits = _check("rng_three_fry", 2, "u32", [2], np.array([key, counter], np.uint64))
    assert [hex(b) for b in bits] == ["0xc4923a9c", "0x483df7a0"]
    assert state[1] == counter + 1
    state, bits = _check("rng_philox", 3, "u32", [4], np.zeros(3, np.uint64))
    assert [hex(b) for b in bits] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    assert state[1] == 1


@pytest.mark.parametrize("algorithm", ["rng_philox", "rng_three_fry"])
def test_a_loop_threading_the_state_draws_new_bits_each_step(algorithm):
    module = uir.hlo.parse_module(f"""HloModule loop

cond {{
  p = (s32[], u64[2], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}}

body {{
  p = (s32[], u64[2], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  s = u64[2] get-tuple-element(p), index=1
  acc = f32[64] get-tuple-element(p), index=2
  r = (u64[2], u32[64]) rng-bit-generator(s), algorithm={algorithm}
  next = u64[2] get-tuple-element(r), index=0
  bits = u32[64] get-tuple-element(r), index=1
  nine = u32[] constant(9)
  nines = u32[64] broadcast(nine), dimensions={{}}
  mantissa = u32[64] shift-right-logical(bits, nines)
  f = f32[64] convert(mantissa)
  a2 = f32[64] add(acc, f)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], u64[2], f32[64]) tuple(i2, next, a2)
}}

ENTRY e {{
  s = u64[2] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  acc = f32[64] broadcast(z), dimensions={{}}
  init = (s32[], u64[2], f32[64]) tuple(zero, s, acc)
  w = (s32[], u64[2], f32[64]) while(init), condition=cond, body=body
  ROOT out = f32[64] get-tuple-element(w), index=2
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    state = np.array([123, 456], np.uint64)
    np.testing.assert_array_equal(exe(state), uir.evaluate(module, state))
