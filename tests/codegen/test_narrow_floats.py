"""The f8, f6 and f4 types compiled: read through a table of their values
and written by rounding f32 bits in the kernel, bit for bit as the
evaluator rounds them (ties to even, subnormals, overflow to infinity or
NaN or the largest value, each type's own NaN and zeros)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import uir

TYPES = {
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f6e3m2fn": ml_dtypes.float6_e3m2fn,
    "f6e2m3fn": ml_dtypes.float6_e2m3fn,
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}


def _values(np_type):
    """Every value of the type, the midpoints between neighbours (ties),
    points just off them, beyond the range, and the specials."""
    finfo = ml_dtypes.finfo(np_type)
    every = np.arange(256, dtype=np.uint8)
    bits = finfo.bits
    codes = every[every.astype(np.int64) < (1 << bits)]
    exact = np.frombuffer(codes.tobytes(), dtype=np_type).astype(np.float32)
    finite = np.unique(exact[np.isfinite(exact)])
    mids = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    near = np.concatenate([mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    big = float(finfo.max)
    extra = [big * 1.01, big * 1.1, big * 4, 3.4e38, np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-30]
    out = np.concatenate([exact, near, -near, np.array(extra)]).astype(np.float32)
    return out[np.isfinite(out) | np.isnan(out) | np.isinf(out)]


@pytest.mark.parametrize("t", sorted(TYPES))
def test_rounding_to_each_narrow_float_matches_the_evaluator_bit_for_bit(t):
    x = _values(TYPES[t])
    n = x.size
    module = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  x = f32[{n}] parameter(0)
  c = {t}[{n}] convert(x)
  w = f32[{n}] convert(c)
  h = f32[{n}] multiply(w, w)
  c2 = {t}[{n}] convert(h)
  ROOT o = ({t}[{n}], f32[{n}], {t}[{n}]) tuple(c, w, c2)
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got = exe(x)
    want = uir.evaluate(module, x)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype
        if g.dtype == np.float32:
            np.testing.assert_array_equal(g, w)
            continue
        # Bits, NaNs of either sign compared as NaN.
        gf, wf = g.astype(np.float32), w.astype(np.float32)
        both_nan = np.isnan(gf) & np.isnan(wf)
        mismatch = (g.view(np.uint8) != w.view(np.uint8)) & ~both_nan
        assert not mismatch.any(), (t, x[mismatch][:8], g[mismatch][:8], w[mismatch][:8])


def test_f8_arithmetic_rounds_after_each_op_like_the_evaluator():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(1000).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal(1000).astype(ml_dtypes.float8_e5m2)
    module = uir.hlo.parse_module("""HloModule m

ENTRY e {
  a = f8e4m3fn[1000] parameter(0)
  b = f8e5m2[1000] parameter(1)
  bc = f8e4m3fn[1000] convert(b)
  m = f8e4m3fn[1000] multiply(a, bc)
  ROOT s = f8e4m3fn[1000] add(m, a)
}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    got, want = np.asarray(exe(a, b)), np.asarray(uir.evaluate(module, a, b))
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("t", ["f32", "f64", "bf16", "f16"])
@pytest.mark.parametrize(("e", "m"), [(5, 10), (8, 7), (4, 3), (5, 2), (2, 0), (8, 23), (11, 52)])
def test_reduce_precision_compiles_to_the_bits_the_evaluator_gives(t, e, m):
    np_type = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[
        t
    ]
    rng = np.random.default_rng(e * 100 + m)
    with np.errstate(over="ignore"):  # out-of-range values become infinities
        x = np.concatenate(
            [
                rng.standard_normal(500) * 10.0 ** rng.integers(-40, 40, 500),
                [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, 3.4e38, 65504, 1.5, 2.5],
            ]
        ).astype(np_type)
    n = x.size
    module = uir.hlo.parse_module(f"""HloModule m

ENTRY e {{
  x = {t}[{n}] parameter(0)
  r = {t}[{n}] reduce-precision(x), exponent_bits={e}, mantissa_bits={m}
  ROOT o = {t}[{n}] add(r, r)
}}
""")
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    got, want = np.asarray(exe(x)), np.asarray(uir.evaluate(module, x))
    same = (got.view(np.uint8) == want.view(np.uint8)).reshape(n, -1).all(axis=1)
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    assert (same | both_nan).all(), (x[~(same | both_nan)][:5], got[~same][:5], want[~same][:5])
