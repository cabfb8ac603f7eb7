"""Donated arguments (uir.jit(donate_argnums=...)): the traced module says
which outputs may live in which parameters (input_output_alias, checked by
the verifier), and the CPU backend computes such an output in the donated
array's memory instead of a fresh one, when the array can be written and no
other argument shares its bytes, and is 64-byte aligned (as the executor's
own buffers are)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import uir


def step(x, g):
    return x - 0.5 * g


def aligned(values, dtype=np.float32):
    """A copy of `values` whose data starts on a 64-byte boundary (NumPy's
    own arrays are 16-byte aligned; only aligned arrays are donated)."""
    values = np.asarray(values, dtype)
    raw = np.empty(values.nbytes + 64, np.uint8)
    skip = (-raw.ctypes.data) % 64
    out = raw[skip : skip + values.nbytes].view(dtype).reshape(values.shape)
    out[...] = values
    return out


def test_a_donated_argument_holds_the_result():
    f = uir.jit(step, donate_argnums=0)
    x = aligned(np.arange(1000))
    g = np.ones(1000, np.float32)
    want = x - 0.5
    address = x.ctypes.data
    got = f(x, g)
    np.testing.assert_array_equal(got, want)
    assert got.ctypes.data == address  # computed where x was
    assert np.shares_memory(got, x)
    np.testing.assert_array_equal(g, 1)  # the other argument is untouched
    # The loop fusion reads x element by element, so it writes over x with
    # no copy (copy insertion leaves it alone).
    optimized = f.lower(x, g).compile().module.to_text()
    assert "input_output_alias={ {}: (0, {}, may-alias) }" in optimized
    assert " copy(" not in optimized


def test_the_module_says_which_output_lives_in_which_parameter():
    f = uir.jit(lambda a, b: (b * 2, a + 1), donate_argnums=(0, 1))
    a = np.zeros((4, 3), np.float32)
    b = np.zeros(5, np.int32)
    text = f.lower(a, b).as_text()
    assert "input_output_alias={ {0}: (1, {}, may-alias), {1}: (0, {}, may-alias) }" in text
    assert f.lower(a, b).module.input_output_alias == [((0,), 1, (), False), ((1,), 0, (), False)]
    got_b, got_a = f(aligned(a), aligned(b, np.int32))
    np.testing.assert_array_equal(got_b, b * 2)
    np.testing.assert_array_equal(got_a, a + 1)


def test_a_loop_of_donating_calls_keeps_one_buffer():
    f = uir.jit(step, donate_argnums=0)
    x = np.linspace(0, 1, 1 << 20, dtype=np.float32)  # 16-byte aligned: read only
    g = np.full(1 << 20, 0.25, np.float32)
    want = x - np.float32(0.125)
    with warnings.catch_warnings():  # x may or may not be 64-byte aligned: a warning if not
        warnings.simplefilter("ignore")
        x = f(x, g)  # an aligned result, donated from here on
    first = x.ctypes.data
    for _ in range(20):
        x = f(x, g)
        want = want - np.float32(0.125)
        assert x.ctypes.data == first
    np.testing.assert_allclose(x, want, rtol=1e-6)


def test_what_cannot_be_donated_is_only_read():
    f = uir.jit(step, donate_argnums=0)
    x = aligned(np.arange(8))
    x.flags.writeable = False  # read-only: not written, a fresh result
    with pytest.warns(UserWarning, match="read-only"):
        got = f(x, np.ones(8, np.float32))
    np.testing.assert_array_equal(got, np.arange(8) - 0.5)
    np.testing.assert_array_equal(x, np.arange(8))
    assert not np.shares_memory(got, x)
    u = aligned(np.arange(64))[1:9]  # not 64-byte aligned: read only
    with pytest.warns(UserWarning, match="not 64-byte aligned"):
        got = f(u, np.ones(8, np.float32))
    np.testing.assert_array_equal(got, np.arange(1, 9) - 0.5)
    np.testing.assert_array_equal(u, np.arange(1, 9))
    y = aligned(np.arange(8))  # the same array twice: x is read as g
    with pytest.warns(UserWarning, match="overlaps another argument"):
        got = f(y, y)
    np.testing.assert_array_equal(got, 0.5 * np.arange(8))
    np.testing.assert_array_equal(y, np.arange(8))
    z = np.arange(16, dtype=np.float32)[::2]  # not contiguous: read through a copy, not donated
    with pytest.warns(UserWarning, match="converted"):
        got = f(z, np.ones(8, np.float32))
    np.testing.assert_array_equal(got, np.arange(0, 16, 2) - 0.5)


def test_a_donated_argument_no_output_fits_is_reported():
    f = uir.jit(lambda x: x.sum(), donate_argnums=0)
    with pytest.warns(UserWarning, match=r"not usable: float32\[6\]"):
        got = f(np.ones(6, np.float32))
    assert got == 6


def test_donation_on_the_evaluator_gives_the_same_values():
    f = uir.jit(step, donate_argnums=0, backend="eval")
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(f(x, np.ones(5, np.float32)), np.arange(5) - 0.5)


def test_donated_and_static_argnums_must_not_meet():
    with pytest.raises(ValueError, match="cannot share an argument"):
        uir.jit(step, static_argnums=1, donate_argnums=1)


def test_a_donated_parameter_read_after_the_output_is_written_is_copied_first():
    # The output over x is written before x's last read: copy insertion
    # keeps a copy of x, so the result is what it would be without donation.
    def f(x):
        y = x[::-1] + 1.0
        return y, x.sum()

    jitted = uir.jit(f, donate_argnums=0)
    x = aligned(np.arange(1, 65))
    want_y, want_s = f(x.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got_y, got_s = jitted(x)
    np.testing.assert_array_equal(got_y, want_y)
    assert got_s == want_s


@pytest.mark.parametrize(
    "alias,message",
    [
        ("{}: (2, {}, may-alias)", "names a parameter the entry does not have"),
        ("{}: (0, {}, may-alias)", r"aliases f32\[3\] \(12 bytes\) with f32\[4\] \(16 bytes\)"),
        ("{}: (1, {0}, may-alias)", "no array at that index of the parameter"),
        ("{}: (1, {}, may-alias), {}: (1, {}, may-alias)", "that output is aliased twice"),
    ],
)
def test_the_verifier_checks_input_output_alias(alias, message):
    m = uir.hlo.parse_module(
        f"HloModule m, input_output_alias={{ {alias} }}\n"
        "ENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[4] parameter(1)\n"
        "  ROOT c = f32[4] negate(b)\n}"
    )
    with pytest.raises(uir.VerifyError, match=message):
        m.verify()


def test_an_hlo_module_with_input_output_alias_writes_an_argument_only_when_told():
    # input_output_alias says an output MAY live in a parameter; the caller
    # decides per call whether its array is given up (as PjRt's donation).
    m = uir.hlo.parse_module(
        "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
        "ENTRY e {\n  x = f32[256] parameter(0)\n  ROOT y = f32[256] negate(x)\n}"
    )
    exe = uir.compile(m, backend="cpu")
    x = aligned(np.arange(256))
    got = exe(x)
    np.testing.assert_array_equal(got, -np.arange(256))
    np.testing.assert_array_equal(x, np.arange(256))  # only read
    got = exe.call_donating([x], [0])
    np.testing.assert_array_equal(got, -np.arange(256))
    assert np.shares_memory(got, x)
