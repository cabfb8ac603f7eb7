"""The CPU backend (iGraph -> LLVM IR -> ORC JIT) against the reference
evaluator: XLA's core corpus, random fusions over awkward sizes, integer and
narrow-float arithmetic, concurrency and memory, and its text."""

from __future__ import annotations

import gc
import threading

import ml_dtypes
import numpy as np
import pytest
from corpus import CORPUS, TOO_HEAVY, XLA_REJECTS, manifest_rows
from fusion_strategies import fusion_modules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_util import rss_kib, skip_under_asan
from thunk_util import check_dag, parse_thunks

import uir
from uir._src.core.evaluate import random_arguments, required_replicas

CORE = sorted(r["file"] for r in manifest_rows() if r["cpu_class"] == "core")


# Tolerances, per dtype: integers and pred exact; f32/f64 rtol 1e-4 and
# atol 1e-5 plus 8 machine epsilons of the largest expected magnitude (a
# reduction's order is not fixed by HLO, and the kernels sum in vector
# lanes while the evaluator sums one element after another); f16/bf16 the
# same with their own epsilon, which also covers per-step rounding in
# another order. Modules whose outputs are sums of very many products get
# their own bound, with the reason.
MODULE_ATOL = {
    # 4 x 512 x 512 products summed per output: about 3e-4 apart in f32.
    "xla_backends_cpu_benchmarks_hlo__xnn.parallel_dots.optimized__0.hlo": 2e-3,
}


def _close(got, want, atol_extra: float = 0.0):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _close(g, w, atol_extra)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    floating = (
        want.dtype.kind in "fc" or want.dtype.name == "bfloat16" or "float8" in want.dtype.name
    )
    if not floating:
        np.testing.assert_array_equal(got, want)
        return
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    narrow = want.dtype.itemsize <= 2
    eps = (
        2.0**-7
        if want.dtype.name == "bfloat16"
        else np.finfo(want.dtype).eps
        if not narrow or want.dtype == np.float16
        else 2.0**-3
    )
    finite = np.abs(w[np.isfinite(w)])
    scale = float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(
        g,
        w,
        rtol=3e-2 if narrow else 1e-4,
        atol=(1e-2 if narrow else 1e-5) + 8 * float(eps) * scale + atol_extra,
        equal_nan=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in CORE if n not in XLA_REJECTS])
def test_core_corpus_compiles_and_runs_like_the_evaluator(name):
    module = uir.hlo.parse_module((CORPUS / name).read_text(), file=name)
    exe = uir.compile(module, backend="cpu")
    # Nothing of the core corpus runs on the evaluator, collectives across
    # several replicas included.
    assert exe.fallbacks == []
    if exe.thunk_kinds:
        # Each thunk waits for every earlier one it conflicts with.
        for sequence in parse_thunks(exe.thunk_text):
            check_dag(sequence)
    # Serialized and loaded again (as another process would), it is the
    # same executable: the same thunks, and below the same bits. (A module
    # whose text, parsed again, places its buffers otherwise is compiled
    # from that text to serialize: its allocations are numbered otherwise.
    # Arrays of dynamic size do not serialize: the blob is of the module at
    # its bounds.)
    entry = module.entry
    dynamic = any(any(v.shape.dynamic_dims) for v in [*entry.parameters, entry.root])
    loaded = uir.deserialize(exe.serialize()) if exe.thunk_kinds and not dynamic else None
    if loaded is not None:
        assert loaded.thunk_kinds == exe.thunk_kinds
    if name in TOO_HEAVY:
        return  # the evaluator cannot run these in test time
    args = random_arguments(exe.module, 0)
    replicas = required_replicas(exe.module)
    if replicas > 1:
        # Every participant in a thread of its own, each against the
        # evaluator's run of as many.
        want = uir.evaluate(exe.module, *args, replicas=replicas)
        for got_one, want_one in zip(exe(*args, replicas=replicas), want, strict=True):
            _close(got_one, want_one, MODULE_ATOL.get(name, 0.0))
        return
    got = exe(*args)
    _close(got, uir.evaluate(exe.module, *args), MODULE_ATOL.get(name, 0.0))
    if loaded is not None:
        _assert_same_bits(loaded(*args), got)


def _assert_same_bits(got, want) -> None:
    """The same structure of arrays with the same bytes (NaNs included)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same_bits(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _run_both(text: str, args=None, seed: int = 1):
    module = uir.hlo.parse_module(text)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    if args is None:
        args = random_arguments(exe.module, seed)
    return exe(*args), uir.evaluate(exe.module, *args), args


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=fusion_modules())
def test_random_fusions_compile_and_run_like_the_evaluator(text):
    module = uir.hlo.parse_module(text)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    args = random_arguments(exe.module, 1)
    # Inputs shrink with the longest dim so sums over it stay near 1.
    longest = max(max(a.shape, default=1) for a in args)
    args = [(a / np.sqrt(longest)).astype(a.dtype) for a in args]
    got, want = exe(*args), uir.evaluate(exe.module, *args)
    tol = 2e-2 if longest > 10**5 else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    _assert_same_bits(uir.deserialize(exe.serialize())(*args), got)


INT_BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "maximum",
    "minimum",
    "and",
    "or",
    "xor",
    "shift-left",
    "shift-right-logical",
    "shift-right-arithmetic",
    "power",
]
FLOAT_BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "remainder",
    "power",
    "atan2",
]
FLOAT_UNARY = [
    "negate",
    "abs",
    "sign",
    "floor",
    "ceil",
    "round-nearest-even",
    "round-nearest-afz",
    "exponential",
    "log",
    "tanh",
    "logistic",
    "sine",
    "cosine",
    "sqrt",
    "rsqrt",
    "exponential-minus-one",
    "log-plus-one",
    "erf",
    "cbrt",
]
INT_UNARY = ["negate", "not", "popcnt", "count-leading-zeros", "sign"]
SAME_WIDTH = [
    ["s8", "u8"],
    ["s16", "u16", "f16", "bf16"],
    ["s32", "u32", "f32"],
    ["s64", "u64", "f64"],
]


@st.composite
def typed_elementwise(draw):
    """One elementwise op (or a compare/select/convert chain, a total-order
    compare, a bitcast-convert to a type of the same width worked on after)
    on an element type other than f32, over 1, a prime or just past a vector
    of lanes."""
    n = draw(st.sampled_from([1, 3, 17, 63, 65, 257, 1031]))
    dtype = draw(
        st.sampled_from(
            ["s8", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f64", "pred"]
        )
    )
    floating = dtype in ("f16", "bf16", "f64")
    kind = draw(st.integers(0, 5))
    s = f"{dtype}[{n}]"
    if kind == 0 and dtype != "pred":
        op = draw(st.sampled_from(FLOAT_BINARY if floating else INT_BINARY))
        body = f"ROOT r = {s} {op}(p0, p1)"
    elif kind == 1 and dtype != "pred":
        op = draw(st.sampled_from(FLOAT_UNARY if floating else INT_UNARY))
        if op in ("sign", "abs", "negate") and dtype.startswith("u"):
            op = "not"
        body = f"ROOT r = {s} {op}(p0)"
    elif kind == 2:
        direction = draw(st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]))
        body = (
            f"c = pred[{n}] compare(p0, p1), direction={direction}\n"
            f"  ROOT r = {s} select(c, p1, p0)"
        )
    elif kind == 4:
        direction = draw(st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]))
        body = (
            f"c = pred[{n}] compare(p0, p1), direction={direction}, type=TOTALORDER\n"
            f"  ROOT r = {s} select(c, p1, p0)"
        )
    elif kind == 5 and dtype != "pred":
        width = next(w for w in SAME_WIDTH if dtype in w)
        to = draw(st.sampled_from(width))
        op = "add" if to != "pred" else "and"
        body = f"b = {to}[{n}] bitcast-convert(p0)\n  ROOT r = {to}[{n}] {op}(b, b)"
    else:
        to = draw(st.sampled_from(["s8", "s32", "u32", "s64", "f16", "bf16", "f32", "f64", "pred"]))
        body = f"ROOT r = {to}[{n}] convert(p0)"
    return f"HloModule typed\nENTRY e {{\n  p0 = {s} parameter(0)\n  p1 = {s} parameter(1)\n  {body}\n}}\n"


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=typed_elementwise(), seed=st.integers(0, 3))
def test_typed_elementwise_ops_compile_and_run_like_the_evaluator(text, seed):
    got, want, _ = _run_both(text, seed=seed)
    _close(got, want)


def test_integer_edge_cases_follow_xla():
    """x / 0 = -1, x % 0 = x, MIN / -1 = MIN, shifts past the width, and
    saturating float -> int conversion with NaN -> 0."""
    text = """HloModule edges
ENTRY e {
  a = s32[6] parameter(0)
  b = s32[6] parameter(1)
  d = s32[6] divide(a, b)
  r = s32[6] remainder(a, b)
  l = s32[6] shift-left(a, b)
  s = s32[6] shift-right-arithmetic(a, b)
  ROOT t = (s32[6], s32[6], s32[6], s32[6]) tuple(d, r, l, s)
}
"""
    a = np.array([7, -7, -(2**31), 5, -1, 3], np.int32)
    b = np.array([0, 0, -1, 33, 40, -1], np.int32)
    got, want, _ = _run_both(text, [a, b])
    _close(got, want)
    text = """HloModule conv
ENTRY e {
  a = f32[6] parameter(0)
  ROOT c = s32[6] convert(a)
}
"""
    got, want, _ = _run_both(text, [np.array([np.nan, 3e9, -3e9, 1.7, -1.7, np.inf], np.float32)])
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dtype=st.sampled_from(["f32", "s32", "u32", "f64", "s64", "f16", "u8"]),
    dims=st.lists(st.sampled_from([1, 3, 4, 8, 16, 17, 24, 40, 64, 65]), min_size=2, max_size=3),
    data=st.data(),
)
def test_transposes_move_blocks_through_registers_like_numpy(dtype, dims, data):
    """Transposes and permutes, alone and with an add after; sizes that are
    multiples of the register blocks (8 x 8 for 4-byte elements, 4 x 4 for
    8-byte ones) and sizes that are not."""
    perm = data.draw(st.permutations(range(len(dims))))
    out = [dims[p] for p in perm]
    add = data.draw(st.booleans())
    shape = lambda d: f"{dtype}[{','.join(map(str, d))}]"  # noqa: E731
    body = f"t = {shape(out)} transpose(x), dimensions={{{','.join(map(str, perm))}}}"
    root = f"ROOT r = {shape(out)} add(t, y)" if add else "ROOT r = " + body[4:]
    text = f"""HloModule tr
ENTRY e {{
  x = {shape(dims)} parameter(0)
  y = {shape(out)} parameter(1)
  {body if add else ""}
  {root}
}}
"""
    got, want, (x, y) = _run_both(text, seed=2)
    expected = np.transpose(x, perm) + y if add else np.transpose(x, perm)
    np.testing.assert_array_equal(got, expected.astype(x.dtype))
    np.testing.assert_array_equal(got, want)


def test_a_transpose_tile_is_transposed_in_registers():
    # 8 x 8 blocks of f32: 8 loads, 3 rounds of 8 shuffles, 8 stores.
    text = """HloModule t
ENTRY e {
  x = f32[64,64] parameter(0)
  ROOT y = f32[64,64] transpose(x), dimensions={1,0}
}
"""
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.llvm_ir_unoptimized.count("shufflevector") == 24
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    np.testing.assert_array_equal(exe(x), x.T)


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """XLA's total order on floats as integers: negative values have every
    bit but the sign flipped, so -NaN < -inf < -0 < +0 < inf < NaN."""
    bits = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    magnitude = (1 << (8 * x.dtype.itemsize - 1)) - 1
    return np.where(bits < 0, bits ^ magnitude, bits)


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16"])
def test_total_order_compares_run_in_kernels_like_xla(dtype):
    specials = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-30, -3.5]
    np_dtype = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16}[dtype]
    rng = np.random.default_rng(7)
    n = 67
    a, b = (rng.choice(np.array(specials, np_dtype), n) for _ in range(2))
    text = f"""HloModule total
ENTRY e {{
  a = {dtype}[{n}] parameter(0)
  b = {dtype}[{n}] parameter(1)
  lt = pred[{n}] compare(a, b), direction=LT, type=TOTALORDER
  eq = pred[{n}] compare(a, b), direction=EQ, type=TOTALORDER
  ge = pred[{n}] compare(a, b), direction=GE, type=TOTALORDER
  ROOT t = (pred[{n}], pred[{n}], pred[{n}]) tuple(lt, eq, ge)
}}
"""
    got, want, _ = _run_both(text, [a, b])
    _close(got, want)
    ka, kb = _total_order_key(a), _total_order_key(b)
    np.testing.assert_array_equal(got[0], ka < kb)
    np.testing.assert_array_equal(got[1], ka == kb)
    np.testing.assert_array_equal(got[2], ka >= kb)
    assert "kernel" in uir.compile(uir.hlo.parse_module(text), backend="cpu").thunk_kinds


def test_a_same_width_bitcast_convert_fuses_into_a_kernel():
    text = """HloModule bits
ENTRY e {
  a = f32[1031] parameter(0)
  i = s32[1031] bitcast-convert(a)
  one = s32[] constant(1)
  ones = s32[1031] broadcast(one), dimensions={}
  j = s32[1031] add(i, ones)
  ROOT f = f32[1031] bitcast-convert(j)
}
"""
    x = np.random.default_rng(3).standard_normal(1031).astype(np.float32)
    got, want, _ = _run_both(text, [x])
    # One more in the last place, away from zero.
    away = np.where(x > 0, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
    np.testing.assert_array_equal(got, np.nextafter(x, away))
    np.testing.assert_array_equal(got, want)
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.thunk_kinds == {"kernel": 1}


# Error bounds of the vectorized math (codegen/math.cc), in ulps of the
# result, measured against a long double reference over random bit
# patterns (every exponent), uniform samples and the special values.
ULP_BOUNDS = {
    "exponential": 1.0,
    "exponential-minus-one": 2.5,
    "log": 1.0,
    "log-plus-one": 3.0,
    "tanh": 3.2,  # 3.18 in f32 just below |x| = 2^-7, 3.05 in f64 near 0.06
    "logistic": 3.0,
}


def _reference(op, x):
    with np.errstate(all="ignore"):
        xl = x.astype(np.longdouble)
        return {
            "exponential": np.exp,
            "exponential-minus-one": np.expm1,
            "log": np.log,
            "log-plus-one": np.log1p,
            "tanh": np.tanh,
            "logistic": lambda v: 1 / (1 + np.exp(-v)),
        }[op](xl)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(ULP_BOUNDS))
def test_math_error_in_ulps(op, dtype):
    rng = np.random.default_rng(0)
    n = 1 << 18
    if dtype == np.float32:
        bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    else:
        bits = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64)
    info = np.finfo(dtype)
    special = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        1,
        -1,
        88.72,
        88.73,
        -103.9,
        -104,
        709.7,
        710,
        -745,
        info.tiny,
        0.007788416,  # tanh's largest error in f32, just below 2^-7
        0.06121822620138628,  # and in f64
        info.smallest_subnormal,
        info.max,
        -info.max,
    ]
    x = np.concatenate(
        [
            bits.view(dtype),
            np.array(special, dtype),
            rng.uniform(-20, 20, n).astype(dtype),
            rng.uniform(-1e-3, 1e-3, n).astype(dtype),
        ]
    )
    t = "f32" if dtype == np.float32 else "f64"
    m = uir.hlo.parse_module(
        f"HloModule m\nENTRY e {{\n  p = {t}[{x.size}] parameter(0)\n  ROOT r = {t}[{x.size}] {op}(p)\n}}\n"
    )
    got = uir.compile(m, backend="cpu")(x)
    with np.errstate(all="ignore"):
        ref = _reference(op, x)
        ref_t = ref.astype(dtype)
        finite = np.isfinite(ref_t)
        ulp = np.spacing(np.abs(ref_t)).astype(np.longdouble)
        err = np.where(finite, np.abs(got.astype(np.longdouble) - ref) / ulp, 0).astype(np.float64)
    assert err.max() <= ULP_BOUNDS[op], (op, float(err.max()), x[np.argmax(err)])
    same = (got == ref_t) | (np.isnan(got) & np.isnan(ref_t))
    assert same[~finite].all(), x[~finite & ~same][:5]


def _host_has_avx512():
    features = uir._core.codegen.host_info()["features"]
    return "avx512f" in features and "avx512vl" in features


@pytest.mark.parametrize(
    ("op", "dtype", "vector_bits"),
    [
        ("exponential", np.float32, 0),
        ("exponential", np.float32, 256),
        ("exponential", np.float32, 128),
        ("exponential", np.float64, 0),
        ("exponential", np.float64, 256),
        ("logistic", np.float32, 0),
        ("logistic", np.float64, 0),
        ("exponential-minus-one", np.float32, 0),
    ],
)
def test_exp_scaled_by_vscalef_gives_the_bits_of_generic_ir(op, dtype, vector_bits, monkeypatch):
    if not _host_has_avx512():
        pytest.skip("vscalef needs AVX-512 (F and VL): both runs would be generic IR")
    # On AVX-512 hosts exp multiplies by 2^n with one vscalef at each vector
    # width; --cpu_target_math=0 keeps the two-multiplication form of
    # generic IR. Both round once, so every result, subnormals, overflow
    # and NaNs included, must be the same bits.
    rng = np.random.default_rng(1)
    info = np.finfo(dtype)
    n = 1 << 16
    if dtype == np.float32:
        bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    else:
        bits = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64)
    edge = 745.2 if dtype == np.float64 else 104.0
    x = np.concatenate(
        [
            bits.view(dtype),
            rng.uniform(-edge - 2, edge - 14, n).astype(dtype),
            np.array([0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny], dtype),
            # 3 elements past a vector multiple: the scalar tail runs too
            np.linspace(-edge, -edge + 30, 1003).astype(dtype),
        ]
    )
    t = "f32" if dtype == np.float32 else "f64"
    text = f"HloModule m\nENTRY e {{\n  p = {t}[{x.size}] parameter(0)\n  ROOT r = {t}[{x.size}] {op}(p)\n}}\n"
    width = f" --cpu_vector_bits={vector_bits}" if vector_bits else ""
    got = {}
    for target in ("1", "0"):
        monkeypatch.setenv("UIR_FLAGS", f"--cpu_target_math={target}{width}")
        exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
        got[target] = exe(x)
        if target == "1" and _host_has_avx512() and op != "exponential-minus-one":
            assert "vscalef" in exe.assembly
        if target == "0":
            assert "vscalef" not in exe.assembly
    uint = np.uint32 if dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(got["1"].view(uint), got["0"].view(uint))


@pytest.mark.parametrize(("rows", "cols"), [(4, 17), (64, 1000), (33, 4099)])
def test_a_bias_added_to_every_row_keeps_an_epilogue_row_by_row(rows, cols, monkeypatch):
    # A bias read for every row (a dram slice of row stride 0) is read along
    # its row, not across it: the gelu epilogue stays one row-by-row kernel
    # (512-bit vectors on AVX-512) instead of falling to tile loops, which
    # ran it 3x slower in the MLP block.
    monkeypatch.delenv("UIR_FLAGS", raising=False)
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    w = rng.standard_normal((64, cols)).astype(np.float32) / 8
    b = rng.standard_normal(cols).astype(np.float32)

    def f(x, w, b):
        return uir.nn.gelu(x @ w + b)

    compiled = uir.jit(f).lower(x, w, b).compile()
    if _host_has_avx512():
        assert "zmm" in compiled.executable.assembly
    got = compiled.call_flat([x, w, b])
    h = (x.astype(np.float64) @ w + b).astype(np.float32).astype(np.float64)
    want = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got, uir.jit(f, backend="eval")(x, w, b), rtol=1e-5, atol=1e-5)


def _unary_module(op, t, n):
    return uir.hlo.parse_module(
        f"HloModule m\nENTRY e {{\n  p = {t}[{n}] parameter(0)\n  ROOT r = {t}[{n}] {op}(p)\n}}\n"
    )


@pytest.mark.parametrize("t", ["f32", "f64", "bf16"])
def test_loops_heavy_in_arithmetic_prefetch_their_inputs(t, monkeypatch):
    # tanh costs more per element than streaming it from memory: its loop
    # prefetches its input 4 KiB ahead, once per vector (not per element);
    # an add streams without. The helpers are inlined and gone.
    monkeypatch.delenv("UIR_FLAGS", raising=False)
    n = 100003
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    dtype = {"f32": np.float32, "f64": np.float64, "bf16": uir.numpy.bfloat16}[t]
    x = x.astype(dtype)
    heavy = uir.compile(_unary_module("tanh", t, n), backend="cpu")
    light = uir.compile(_unary_module("negate", t, n), backend="cpu")
    assert "prefetcht0" in heavy.assembly
    assert "prefetcht0" not in light.assembly
    assert "@uir.prefetch" not in heavy.llvm_ir and "@uir.scale" not in heavy.llvm_ir
    # One prefetch per vector of the unrolled vector loop (a few per
    # iteration), where a prefetch per element would be 16 or more per
    # unrolled vector.
    vector_loop = max(heavy.assembly.split("jne"), key=lambda block: block.count("prefetcht0"))
    assert 1 <= vector_loop.count("prefetcht0") <= 8
    assert "mm" in vector_loop  # xmm, ymm or zmm: the loop is vector code
    monkeypatch.setenv("UIR_FLAGS", "--cpu_prefetch=0")
    off = uir.compile(_unary_module("tanh", t, n), backend="cpu")
    assert "prefetcht0" not in off.assembly
    np.testing.assert_array_equal(heavy(x), off(x))


def test_softmax_prefetches_the_next_row_while_it_computes_this_one(monkeypatch):
    monkeypatch.delenv("UIR_FLAGS", raising=False)
    exe = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    ir = exe.llvm_ir_unoptimized
    assert "uir.prefetch.4.0" in ir  # the next row, at the same column
    assert "prefetcht0" in exe.assembly
    x = np.random.default_rng(0).standard_normal((64, 1000)).astype(np.float32)
    monkeypatch.setenv("UIR_FLAGS", "--cpu_prefetch=0")
    off = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    assert "prefetcht0" not in off.assembly
    np.testing.assert_array_equal(exe(x), off(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 17, 1000, 4099])
def test_max_and_min_reductions_propagate_nans_like_the_evaluator(dtype, cols):
    # Row reductions vectorize with a NaN check per step (the reduction's
    # order, and so which zero it returns on a tie of -0 and +0, is
    # unspecified): a NaN anywhere in a row, the vector tail included,
    # must make that row's result NaN.
    rows = 12
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols)).astype(dtype)
    x[0, 0] = np.nan
    x[1, cols - 1] = np.nan
    x[2, cols // 2] = np.nan
    x[3, :] = -np.inf
    x[4, :] = np.inf
    x[5, :] = 0.0
    x[5, ::2] = -0.0
    x[6, :] = np.nan
    x[7, rng.integers(0, cols)] = np.inf
    x[8, rng.integers(0, cols)] = -np.inf
    t = "f32" if dtype == np.float32 else "f64"
    text = f"""HloModule m
max {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] maximum(a, b)
}}
min {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] minimum(a, b)
}}
ENTRY e {{
  x = {t}[{rows},{cols}] parameter(0)
  ninf = {t}[] constant(-inf)
  pinf = {t}[] constant(inf)
  mx = {t}[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max
  mn = {t}[{rows}] reduce(x, pinf), dimensions={{1}}, to_apply=min
  ROOT r = ({t}[{rows}], {t}[{rows}]) tuple(mx, mn)
}}
"""
    m = uir.hlo.parse_module(text)
    exe = uir.compile(m, backend="cpu")
    assert exe.fallbacks == [] and "kernel" in exe.thunk_kinds
    got = exe(x)
    want = uir.evaluate(m, x)
    for g, w, ref in zip(got, want, (np.max(x, axis=1), np.min(x, axis=1)), strict=True):
        np.testing.assert_array_equal(g, w)  # NaNs equal, -0 == +0
        np.testing.assert_array_equal(g, ref)


SOFTMAX = """HloModule softmax
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[64,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1000] broadcast(m), dimensions={0}
  d = f32[64,1000] subtract(x, mb)
  e = f32[64,1000] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,1000] broadcast(s), dimensions={0}
  ROOT r = f32[64,1000] divide(e, sb)
}
"""


def test_eight_threads_calling_one_executable_get_correct_results():
    exe = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 1000)).astype(np.float32) for _ in range(8)]
    wants = [uir.evaluate(exe.module, x) for x in inputs]
    errors: list[str] = []

    def work(k):
        for _ in range(20):
            got = exe(inputs[k])
            if not np.allclose(got, wants[k], rtol=1e-5, atol=1e-7):
                errors.append(f"thread {k}")
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@skip_under_asan
def test_ten_thousand_calls_do_not_grow_memory():
    exe = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    x = np.ones((64, 1000), np.float32)
    for _ in range(200):
        exe(x)
    gc.collect()
    before = rss_kib()
    for _ in range(10_000):
        exe(x)
    gc.collect()
    grown = rss_kib() - before
    assert grown < 8 * 1024, f"resident memory grew by {grown} KiB over 10,000 calls"


def test_jit_runs_on_the_cpu_backend_by_default_and_on_the_evaluator_when_asked():
    import uir.numpy as unp

    def f(a, b):
        return unp.tanh(a * b + 1.0)

    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    compiled = uir.jit(f).lower(x, x).compile()
    assert compiled.backend == "cpu" and compiled.fallbacks == []
    np.testing.assert_allclose(compiled(x, x), np.tanh(x * x + 1), rtol=1e-6, atol=1e-6)
    on_eval = uir.jit(f, backend="eval")
    np.testing.assert_allclose(on_eval(x, x), np.tanh(x * x + 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="backend"):
        uir.compile(compiled.lowered.module, backend="tpu")


def test_wrong_arguments_raise_instead_of_crashing():
    exe = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    with pytest.raises((uir.ShapeError, TypeError, ValueError)):
        exe(np.ones((64, 999), np.float32))
    with pytest.raises(TypeError):
        exe()


def test_llvm_ir_and_assembly_are_printed_from_python():
    exe = uir.compile(uir.hlo.parse_module(SOFTMAX), backend="cpu")
    ir = exe.llvm_ir
    assert "define noundef i32 @uir_kernel_0" in ir or "define i32 @uir_kernel_0" in ir
    assert "<" in ir and " x float>" in ir, "the kernel's loops are vectorized"
    assert "uir_kernel_0:" in exe.assembly
    assert "define i32 @uir_kernel_0(ptr noalias readonly" in exe.llvm_ir_unoptimized
    # The input and the output live in different allocations: each dram
    # access carries its alias scope and the other's noalias.
    assert "!alias.scope" in exe.llvm_ir_unoptimized and "!noalias" in exe.llvm_ir_unoptimized
    assert {"emit", "optimize", "codegen"} <= {k.removeprefix("llvm_") for k in exe.compile_seconds}


def test_control_flow_runs_in_place_like_the_evaluator():
    """while, cond and their nesting run their bodies' compiled kernels on
    the loop state's buffers; a root element copied into the state waits for
    every reader of the old element (the conditional reading it through a
    tuple included)."""
    import uir.numpy as unp
    from uir import lax

    def nested(n, x):
        def outer(i, acc):
            def inner(j, a):
                return lax.cond(j % 2 == 0, lambda v: v + x * j, lambda v: v - i, a)

            return lax.fori_loop(0, i, inner, acc)

        return lax.fori_loop(0, n, outer, unp.zeros_like(x))

    def loop_of_vectors(x):
        def body(i, v):
            return unp.tanh(v) * 0.5 + unp.sum(v) * 1e-3

        return lax.fori_loop(0, 7, body, x)

    def switch(k, x):
        return lax.switch(k, [lambda v: v * 2, lambda v: unp.exp(v), lambda v: -v], x)

    x = np.linspace(-1, 1, 37, dtype=np.float32)
    cases = [
        (nested, (np.int32(4), np.float32(1.5))),
        (nested, (np.int32(6), np.float32(-0.25))),
        (loop_of_vectors, (x,)),
        (switch, (np.int32(0), x)),
        (switch, (np.int32(1), x)),
        (switch, (np.int32(7), x)),  # out of range: the last branch, as in XLA
    ]
    for fn, args in cases:
        compiled = uir.jit(fn).lower(*args).compile()
        assert compiled.backend == "cpu" and compiled.fallbacks == []
        got = compiled(*args)
        want = uir.jit(fn, backend="eval")(*args)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dots_run_on_blas_with_transposes_and_batches():
    import uir.numpy as unp

    rng = np.random.default_rng(0)
    shapes = [
        ((64, 33), (33, 17), lambda a, b: a @ b),
        ((33, 64), (33, 17), lambda a, b: a.T @ b),
        ((64, 33), (17, 33), lambda a, b: a @ b.T),
        ((5, 8, 9), (5, 9, 3), lambda a, b: unp.matmul(a, b)),
        ((9,), (9, 4), lambda a, b: a @ b),
        # Batches of small products spread over the workers (an odd count,
        # transposed operands, doubles).
        ((7, 16, 12), (7, 16, 5), lambda a, b: unp.matmul(unp.swapaxes(a, 1, 2), b)),
        ((3, 20, 6), (3, 11, 6), lambda a, b: unp.matmul(a, unp.swapaxes(b, 1, 2))),
    ]
    for sa, sb, fn in shapes:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        compiled = uir.jit(fn).lower(a, b).compile()
        assert compiled.kernel_graph.count("library") >= 1
        np.testing.assert_allclose(compiled(a, b), fn(a, b), rtol=1e-4, atol=1e-4)
    uir.config.update("enable_x64", True)
    try:
        a = rng.standard_normal((9, 10, 11))
        b = rng.standard_normal((9, 11, 4))
        got = uir.jit(lambda a, b: a @ b)(a, b)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, a @ b, rtol=1e-12)
    finally:
        uir.config.update("enable_x64", False)


@pytest.mark.parametrize(
    "epilogue",
    [
        lambda xp, h: xp.tanh(h) * 0.5 + 1.0,
        lambda xp, h: 0.5 * h * (1 + xp.tanh(0.7978845608 * (h + 0.044715 * h * h * h))),
    ],
    ids=["tanh", "gelu"],
)
def test_an_epilogue_in_place_over_a_dot_is_vector_code_without_overlap_checks(epilogue):
    # The epilogue reads the dot's result and writes its own over it: one
    # buffer behind two iPointers. Given one base pointer for both, LLVM
    # vectorizes without a runtime overlap check; given two, it checks,
    # finds them overlapping, and runs the scalar loop (gelu over 256x4096
    # took 11 ms instead of 0.5).
    import uir.numpy as unp

    rng = np.random.default_rng(0)
    x = rng.standard_normal((67, 128)).astype(np.float32)
    w = (rng.standard_normal((128, 259)) * 0.1).astype(np.float32)
    compiled = uir.jit(lambda x, w: epilogue(unp, x @ w)).lower(x, w).compile()
    assert "the epilogue finishes it in place" in compiled.kernel_graph.to_text()
    ir = compiled.executable.llvm_ir
    assert "memcheck" not in ir and "diff.check" not in ir
    assert "store <" in ir
    want = epilogue(np, x.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_allclose(compiled(x, w), want, rtol=1e-4, atol=1e-5)


def test_large_results_are_fresh_arrays_each_call():
    """Results of a megabyte or more come from a pool; a result still held
    is never handed out again."""
    f = uir.jit(lambda x: x * 2.0)
    x = np.ones(1 << 19, np.float32)
    first = f(x)
    first[0] = 7.0
    second = f(x)
    assert first.ctypes.data != second.ctypes.data
    assert first[0] == 7.0 and second[0] == 2.0
    assert second.flags.writeable


def test_a_chain_deeper_than_the_builder_goes_stays_on_the_evaluator():
    """A fusion of a 1,000-op chain is built operand first; past 200 levels
    it runs on the evaluator (listed, with the reason) instead of risking
    the stack."""
    import uir.numpy as unp

    def chain(v):
        for i in range(500):
            v = unp.sin(v) + float(i)
        return v

    x = np.linspace(-1, 1, 64, dtype=np.float32)
    compiled = uir.jit(chain).lower(x).compile()
    assert any("a chain of more than 200 ops" in f for f in compiled.fallbacks)
    np.testing.assert_allclose(compiled(x), uir.jit(chain, backend="eval")(x), rtol=1e-6)


def _layer_norm(xp, x):
    mu = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + 1e-5)


def _softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def test_a_layer_norm_runs_row_by_row_through_its_identity_views():
    # The mean and the variance reach their broadcasts through identity iOps
    # (views of a slice in its own memory, no work). The row-by-row form
    # used to refuse any identity, and layer norm over 4096x4096 ran iOp by
    # iOp, broadcasting whole tiles, in 11 ms instead of 4.7.
    import uir.numpy as unp

    x = np.random.default_rng(1).standard_normal((67, 259)).astype(np.float32)
    compiled = uir.jit(lambda x: _layer_norm(unp, x)).lower(x).compile()
    assert "identity " in compiled.kernel_graph.to_text()
    assert "columns:" in compiled.executable.llvm_ir_unoptimized  # the row-by-row form
    want = _layer_norm(np, x.astype(np.float64))
    np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-5)


def test_a_row_read_from_dram_is_read_again_instead_of_copied():
    # Softmax reads each row for its max and again for exp(x - max): the
    # second read goes back to the input row, still in cache, instead of a
    # copy of it in a row buffer (a memcpy per row; 5.6 -> 5.2 ms over
    # 4096x4096). Donated, the output is written over the input, but only
    # in the last loop, after the second read.
    import uir.numpy as unp

    x = np.random.default_rng(3).standard_normal((33, 517)).astype(np.float32)
    want = _softmax(np, x.astype(np.float64))
    compiled = uir.jit(lambda x: _softmax(unp, x)).lower(x).compile()
    assert "columns:" in compiled.executable.llvm_ir_unoptimized
    assert "memcpy" not in compiled.executable.llvm_ir
    np.testing.assert_allclose(compiled(x), want, rtol=1e-5)
    raw = np.empty(x.nbytes + 64, np.uint8)
    skip = (-raw.ctypes.data) % 64
    inplace = raw[skip : skip + x.nbytes].view(np.float32).reshape(x.shape)
    inplace[...] = x
    got = uir.jit(lambda x: _softmax(unp, x), donate_argnums=0)(inplace)
    assert np.shares_memory(got, inplace)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.skipif(
    "avx512f" not in uir.info()["cpu_features"], reason="the host has no 512-bit vectors"
)
def test_row_kernels_take_512_bit_vectors_and_tiles_keep_the_hosts_choice(monkeypatch):
    # Measured with 2 threads over 4096x4096 f32: 512-bit vectors make
    # softmax 20% and layer norm 12% faster and a transpose's tiles 13%
    # slower than LLVM's preferred 256 here; --cpu_vector_bits overrides.
    import uir.numpy as unp

    x = np.random.default_rng(2).standard_normal((64, 512)).astype(np.float32)
    softmax = uir.jit(lambda x: _softmax(unp, x)).lower(x).compile()
    ir = softmax.executable.llvm_ir
    assert '"prefer-vector-width"="512"' in ir and "<16 x float>" in ir
    np.testing.assert_allclose(softmax(x), _softmax(np, x.astype(np.float64)), rtol=1e-5)
    transpose = uir.jit(lambda x: unp.transpose(x) + 1.0).lower(x).compile()
    assert "prefer-vector-width" not in transpose.executable.llvm_ir
    np.testing.assert_array_equal(transpose(x), x.T + 1.0)
    monkeypatch.setenv("UIR_FLAGS", "--cpu_vector_bits=256")
    narrow = uir.jit(lambda x: _softmax(unp, x)).lower(x).compile()
    assert '"prefer-vector-width"="256"' in narrow.executable.llvm_ir
    assert "<16 x float>" not in narrow.executable.llvm_ir


@pytest.mark.skipif(
    not any(f.startswith("sse") for f in uir.info()["cpu_features"]), reason="not an x86 host"
)
def test_large_outputs_go_out_through_non_temporal_stores(monkeypatch):
    # A streaming variant of a row-by-row or coalesced kernel writes an
    # output it does not read with movnt (no read for ownership); it runs
    # only when that output is 64-byte aligned, so its stores are the ones
    # LLVM proved aligned. Measured over 4096x4096 f32 with 2 threads:
    # softmax 9.8 -> 7.2 ms, layer norm 7.4 -> 3.7, a*b+c at 16M 8.5 -> 6.6.
    import uir.numpy as unp

    monkeypatch.setenv("UIR_FLAGS", "--cpu_streaming_bytes=4096")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 512)).astype(np.float32)
    softmax = uir.jit(lambda x: _softmax(unp, x)).lower(x).compile()
    assert "!nontemporal" in softmax.executable.llvm_ir
    np.testing.assert_allclose(softmax(x), _softmax(np, x.astype(np.float64)), rtol=1e-5)
    a, b, c = (rng.standard_normal(100_003).astype(np.float32) for _ in range(3))
    fma = uir.jit(lambda a, b, c: unp.tanh(a * b + c)).lower(a, b, c).compile()
    assert "!nontemporal" in fma.executable.llvm_ir
    np.testing.assert_allclose(fma(a, b, c), np.tanh(a * b + c), rtol=1e-5, atol=1e-6)
    # An output the kernel also reads (a dot's result finished in place)
    # stays in cache; below the threshold nothing streams.
    w = rng.standard_normal((512, 256)).astype(np.float32)
    dot = uir.jit(lambda x, w: unp.tanh(x @ w)).lower(x, w).compile()
    assert "!nontemporal" not in dot.executable.llvm_ir
    monkeypatch.setenv("UIR_FLAGS", "--cpu_streaming_bytes=0")
    plain = uir.jit(lambda x: _softmax(unp, x)).lower(x).compile()
    assert "!nontemporal" not in plain.executable.llvm_ir
    monkeypatch.setenv("UIR_FLAGS", "--cpu_streaming_bytes=-1")
    with pytest.raises(ValueError, match="cpu_streaming_bytes"):
        uir.jit(lambda x: x * 3.0).lower(x).compile()


def _four_chains(xp, a, b, c, d):
    return xp.sin(a) * 2.0 + 1.0, xp.cos(b) * 3.0 - 1.0, xp.exp(c) + 0.5, xp.tanh(d) * 0.1


@pytest.mark.skipif(uir.info()["threads"] < 2, reason="one worker thread")
def test_independent_small_kernels_run_at_the_same_time():
    # Four kernels of 4096 elements, each too small to split over the
    # workers and none reading what another writes: they run side by side
    # (2 threads: 30 -> 23 us a call; at 16384 elements 177 -> 93 us).
    import uir.numpy as unp

    rng = np.random.default_rng(4)
    args = [rng.standard_normal(4096).astype(np.float32) for _ in range(4)]
    compiled = uir.jit(lambda *a: _four_chains(unp, *a)).lower(*args).compile()
    # Four kernel thunks, none waiting for another: the executor runs them
    # as a DAG over the workers.
    text = compiled.executable.thunk_text
    assert text.splitlines()[0] == "4 thunks, concurrent: 4 sources", text
    assert "after" not in text
    assert compiled.executable.concurrent
    want = _four_chains(np, *(a.astype(np.float64) for a in args))
    results = [None] * 8

    def call(k):
        results[k] = [compiled(*args) for _ in range(50)]

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for per_thread in results:
        for got in per_thread:
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)

    # A kernel reading what the one before wrote waits for it: here the
    # second reduction reads exp(m) * 2, which the first kernel writes, and
    # a chain runs in order on the calling thread.
    def two_reductions(xp, m):
        e = xp.exp(m) * 2.0
        return xp.sum(e, axis=0), xp.max(e, axis=1), e

    m = rng.standard_normal((128, 128)).astype(np.float32)
    dependent = uir.jit(lambda m: two_reductions(unp, m)).lower(m).compile()
    assert "2 kernels" in dependent.kernel_graph.to_text().splitlines()[0]
    lines = dependent.executable.thunk_text.splitlines()
    assert lines[0] == "2 thunks, sequential"
    assert lines[2].endswith("after %0")
    assert not dependent.executable.concurrent
    for got, want in zip(dependent(m), two_reductions(np, m.astype(np.float64)), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_a_compile_splits_its_kernels_over_threads_and_keeps_loops_whole(monkeypatch):
    # Kernels are emitted, optimized and compiled to machine code in up to
    # min(threads, 4) modules at once (the traced MLP block: 112 -> 56 ms
    # of LLVM on 2 threads; ResNet-50 from the corpus 529 -> 334 ms in
    # all); a while loop and the kernels it calls stay in one module, so
    # they still inline into one native loop.
    import uir.lax as lax
    import uir.numpy as unp

    rng = np.random.default_rng(5)
    args = [rng.standard_normal(4096).astype(np.float32) for _ in range(4)]

    def f(a, b, c, d):
        looped = lax.fori_loop(0, 10, lambda i, v: v * 0.5 + 1.0, a)
        return (looped, *_four_chains(unp, a, b, c, d))

    compiled = uir.jit(f).lower(*args).compile()
    modules = compiled.executable.llvm_ir.count("; ModuleID")
    assert modules == min(uir.info()["threads"], 4)
    assert compiled.executable.native_loops == 1
    got = compiled(*args)
    want_loop = args[0].astype(np.float64)
    for _ in range(10):
        want_loop = want_loop * 0.5 + 1.0
    np.testing.assert_allclose(got[0], want_loop, rtol=1e-5)
    for g, w in zip(got[1:], _four_chains(np, *(a.astype(np.float64) for a in args)), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("UIR_FLAGS", "--cpu_compile_threads=1")
    single = uir.jit(f).lower(*args).compile()
    assert single.executable.llvm_ir.count("; ModuleID") == 1
    np.testing.assert_array_equal(single(*args)[0], got[0])


EMPTY_CASES = {
    "slice": ("f32[4,6]", "f32[4,0] slice(x), slice={[0:4], [2:2:1]}"),
    "reduce over an empty dimension": (
        "f32[4,0]",
        "f32[4] reduce(x, z), dimensions={1}, to_apply=add",
    ),
    "broadcast": ("f32[0]", "f32[3,0] broadcast(x), dimensions={1}"),
    "transpose": ("f32[0,5]", "f32[5,0] transpose(x), dimensions={1,0}"),
    "elementwise": ("f32[0,5]", "f32[0,5] exponential(x)"),
    "concatenate": ("f32[0,5]", "f32[0,10] concatenate(x, x), dimensions={1}"),
    "dot over an empty contraction": (
        "f32[3,0]",
        "f32[3,3] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
    ),
    "pad": ("f32[0,5]", "f32[2,5] pad(x, z), padding=1_1x0_0"),
}


@pytest.mark.parametrize("name", sorted(EMPTY_CASES))
def test_empty_arrays_compile_and_run_like_the_evaluator(name):
    # A zero extent once divided by zero while cutting tiles (the process
    # died of SIGFPE) and made an empty gemm plan.
    operand, op = EMPTY_CASES[name]
    module = uir.hlo.parse_module(
        "HloModule m\nadd { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
        f"ENTRY e {{ x = {operand} parameter(0)  z = f32[] constant(0)\n  ROOT r = {op} }}"
    )
    module.verify()
    dims = tuple(int(d) for d in operand[4:-1].split(","))
    x = np.ones(dims, np.float32)
    want = uir.evaluate(module, x)
    got = uir.compile(module)(x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
