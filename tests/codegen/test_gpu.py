"""The GPU target without a GPU: PTX from LLVM's NVPTX back end for the
GPU model's iGraphs (FileCheck goldens in golden_ptx/, the core corpus),
the same kernels run by the GPU simulator (one host thread per GPU thread,
shuffles and barriers between them) against the iGraph interpreter and the
evaluator, uir.compile(backend="gpu") and uir.devices()."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from golden_util import cases, filecheck_text
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.igraph as ig
import uir.numpy as jnp

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden_ptx"
CASES = [c for p in sorted(GOLDEN.glob("*.igraph")) for c in cases(p)]


def _igraph_text(case_text: str) -> str:
    return "\n".join(line for line in case_text.splitlines() if not line.startswith("//"))


def _buffers(graph, rng):
    """A random array per dram iPointer, {id: array}."""
    out = {}
    for p in graph.pointers:
        if p["level"] == "dram":
            out[p["id"]] = rng.standard_normal(p["size"]).astype(np.float32)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_ptx(case, tmp_path):
    graph = ig.parse(_igraph_text(case.text))
    program = ig.compile_gpu(graph)
    result = filecheck_text(case.text, program.ptx, tmp_path / f"{case.index}.igraph")
    assert result.returncode == 0, f"{case.id}: {case.title}\n{result.stderr}\n{program.ptx}"
    # The kernel the PTX holds runs, simulated, as the interpreter runs it.
    rng = np.random.default_rng(case.index)
    want = _buffers(graph, rng)
    got = {k: v.copy() for k, v in want.items()}
    ig.interpret(graph, want)
    ig.simulate_gpu(graph, got)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-6, atol=1e-6)


def test_at_least_four_golden_ptx_cases():
    assert len(CASES) >= 4


def _softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def _check_simulated(fn, *args, rtol=1e-5, atol=1e-5):
    module = uir.jit(fn).lower(*args).module
    kg = ig.lower(module, "gpu")
    program = ig.compile_gpu(kg)
    assert program.refused == []
    assert program.ptx.count(".entry") == len(program.kernels) > 0
    got = ig.simulate_gpu(kg, *args)
    want = uir.evaluate(module, *args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
    return program


RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    ("name", "fn", "args"),
    [
        ("chain", lambda a, b, c: jnp.tanh(a * b + c), (_f32(3000), _f32(3000), _f32(3000))),
        ("softmax-32", _softmax, (_f32(8, 32),)),
        ("softmax-100", _softmax, (_f32(5, 100),)),
        ("softmax-1024", _softmax, (_f32(3, 1024),)),
        # Rows past one warp's tile: group-scope reductions and broadcasts
        # through shared memory and block barriers.
        ("softmax-4096", _softmax, (_f32(3, 4096),)),
        ("layer-norm-8192", _layer_norm, (_f32(2, 8192), _f32(8192), _f32(8192))),
        ("row-max-5000", lambda x: jnp.max(x, axis=1), (_f32(5, 5000),)),
        ("layer-norm", _layer_norm, (_f32(6, 96), _f32(96), _f32(96))),
        ("row-sum", lambda x: jnp.sum(x, axis=1), (_f32(9, 70),)),
        ("col-sum", lambda x: jnp.sum(x, axis=0), (_f32(40, 33),)),
        ("col-max-64", lambda x: jnp.max(x, axis=0), (_f32(7, 64),)),
        ("full-sum", lambda x: jnp.sum(x), (_f32(5000),)),
        ("transpose", lambda x: x.T * 2.0, (_f32(50, 30),)),
        ("broadcast-col", lambda x, b: x + b, (_f32(20, 64), _f32(64))),
        ("broadcast-row", lambda x, b: x * b[:, None], (_f32(20, 70), _f32(20))),
        ("concat", lambda x, y: jnp.concatenate([x, y], axis=1), (_f32(10, 20), _f32(10, 13))),
        ("pad-reverse", lambda x: jnp.pad(x[::-1], ((1, 2), (3, 0))), (_f32(9, 11),)),
        ("integer", lambda x: (x * 3) // 2 - (x >> 1), (RNG.integers(-99, 99, (300,), np.int32),)),
        ("compare-select", lambda x, y: jnp.where(x > y, x, y * 2), (_f32(257), _f32(257))),
        (
            "bf16",
            lambda x: (x * x).astype(jnp.bfloat16).astype(jnp.float32).sum(axis=1),
            (_f32(4, 64),),
        ),
        ("argmax-iota", lambda x: x + jnp.arange(x.shape[1]), (_f32(3, 50),)),
    ],
)
def test_simulated_gpu_kernels_match_the_evaluator(name, fn, args):
    _check_simulated(fn, *args)


def test_simulated_gpu_f64_and_narrow_integers():
    before = uir.config.read("enable_x64")
    uir.config.update("enable_x64", True)
    try:
        x = RNG.standard_normal((4, 40))
        _check_simulated(lambda v: jnp.log1p(jnp.exp(v)).sum(axis=-1), x, rtol=1e-12)
        _check_simulated(lambda v: jnp.max(v, axis=0) - jnp.min(v, axis=0), x, rtol=1e-12)
        i8 = RNG.integers(-100, 100, (3, 64), dtype=np.int8)
        _check_simulated(lambda v: (v.astype(jnp.int32).sum(axis=1), v > 3), i8)
    finally:
        uir.config.update("enable_x64", bool(before))


@settings(max_examples=12, deadline=None)
@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 300),
    axis=st.sampled_from([0, 1]),
    op=st.sampled_from(["sum", "max", "softmax"]),
)
def test_simulated_gpu_reductions_over_shapes(rows, cols, axis, op):
    x = np.random.default_rng(rows * 1000 + cols).standard_normal((rows, cols)).astype(np.float32)
    if op == "softmax":
        fn = _softmax if axis == 1 else (lambda v: _softmax(v.T))
    else:
        red = jnp.sum if op == "sum" else jnp.max
        fn = lambda v: red(jnp.exp(v) * 0.5, axis=axis)  # noqa: E731
    _check_simulated(fn, x)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in f32 ulps (want rounded to f32 first); NaN against NaN
    is 0, NaN against a number 2^40."""
    got = got.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = want.astype(np.float32)

    def ordered(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    d = np.abs(ordered(got) - ordered(want))
    d[np.isnan(got) & np.isnan(want)] = 0
    d[np.isnan(got) != np.isnan(want)] = 1 << 40
    return d


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0]


def _values(lo, hi, log=False, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    if log:
        v = np.exp(rng.uniform(np.log(lo), np.log(hi), n)) * rng.choice([-1, 1], n)
    else:
        v = rng.uniform(lo, hi, n)
    return np.concatenate([v, SPECIALS]).astype(np.float32)


@pytest.mark.parametrize(
    ("name", "fn", "ref", "x", "max_ulps"),
    [
        ("sin", jnp.sin, np.sin, _values(1e-6, 3e38, log=True), 1),
        ("cos", jnp.cos, np.cos, _values(1e-6, 3e38, log=True), 1),
        ("tan", jnp.tan, np.tan, _values(1e-6, 1e30, log=True), 1),
        (
            "sin-near-pi",
            jnp.sin,
            np.sin,
            (np.float32(np.pi) * np.arange(-3000, 3000, 7)).astype(np.float32),
            1,
        ),
        ("cbrt", jnp.cbrt, np.cbrt, _values(1e-38, 3e38, log=True), 1),
        ("erf", uir.lax.erf, None, _values(-7, 7), 2),
        ("sinh", jnp.sinh, np.sinh, _values(-95, 95), 1),
        ("cosh", jnp.cosh, np.cosh, _values(-95, 95), 1),
        ("asinh", jnp.arcsinh, np.arcsinh, _values(1e-8, 3e38, log=True), 1),
        ("acosh", jnp.arccosh, np.arccosh, np.abs(_values(1, 3e38, log=True)), 1),
        ("atanh", jnp.arctanh, np.arctanh, _values(-1.01, 1.01), 1),
        ("asin", jnp.arcsin, np.arcsin, _values(-1.1, 1.1), 1),
        ("acos", jnp.arccos, np.arccos, _values(-1.1, 1.1), 1),
    ],
)
def test_gpu_math_ulps(name, fn, ref, x, max_ulps):
    """The C library's functions in the GPU's own forms (a GPU has no C
    library), run simulated, within `max_ulps` of float64's answer rounded."""
    if ref is None:
        ref = pytest.importorskip("scipy.special").erf
    module = uir.jit(fn).lower(x).module
    kg = ig.lower(module, "gpu")
    got = np.asarray(ig.simulate_gpu(kg, x))
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    d = _ulps(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= max_ulps, f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


def test_gpu_atan2_and_pow_special_cases():
    grid = np.array([*SPECIALS, 3.0, -3.0, 0.3, -7.5, 1e10, -1e10], np.float32)
    y, x = (a.ravel() for a in np.meshgrid(grid, grid))
    for fn, ref in [(jnp.arctan2, np.arctan2), (jnp.power, np.power)]:
        kg = ig.lower(uir.jit(fn).lower(y, x).module, "gpu")
        got = np.asarray(ig.simulate_gpu(kg, y, x))
        with np.errstate(all="ignore"):
            want = ref(y.astype(np.float64), x.astype(np.float64))
        d = _ulps(got, want)
        worst = int(np.argmax(d))
        assert d.max() <= 1, f"{fn.__name__}({y[worst]}, {x[worst]}) = {got[worst]}, {want[worst]}"


def test_gpu_math_on_f64_is_refused_by_name():
    before = uir.config.read("enable_x64")
    uir.config.update("enable_x64", True)
    try:
        m = uir.jit(jnp.sin).lower(np.ones(8)).module
    finally:
        uir.config.update("enable_x64", bool(before))
    program = ig.compile_gpu(ig.lower(m, "gpu"))
    assert any("sine on f64 has no GPU form" in r for r in program.refused), program.refused


def test_refused_function_names_itself():
    graph = ig.parse(
        """igraph s {
  hardware gpu (numGroup=132, numUnit=4) reg=65536 sram=232448 vector=128
  parallel (numParallel=1, numLoop=1) [pid=1] []
  x = iPointer(0, dram, fp64, 32)
  t = iPointer(1, reg, fp64, 32)
  ts = iSlice(t, 0, (1, 32), (32, 1))
  xs = iSlice(x, 0, (1, 32), (32, 1))
body:
  move.dram.reg.fp64 ts, xs
  unary.cos.fp64 ts, ts
  move.reg.dram.fp64 xs, ts
}"""
    )
    with pytest.raises(uir.UnimplementedError, match="cosine on f64 has no GPU form"):
        ig.compile_gpu(graph)


def test_cpu_model_igraph_is_refused():
    m = uir.jit(lambda x: x + 1).lower(_f32(8)).module
    kg = ig.lower(m, "cpu")
    program = ig.compile_gpu(kg)
    assert program.kernels == []
    assert all("not the GPU's" in r for r in program.refused)


def test_unknown_architecture():
    m = uir.jit(lambda x: x + 1).lower(_f32(8)).module
    with pytest.raises(uir.ParseError, match="sm_70"):
        ig.compile_gpu(ig.lower(m, "gpu"), sm="sm_20")


def test_compile_for_gpu_writes_ptx_and_runs_only_on_a_gpu():
    x = _f32(4, 64)
    m = uir.jit(lambda v: jnp.sort(_softmax(v) @ v.T, axis=-1)).lower(x).module
    exe = uir.compile(m, backend="gpu")
    ptx = exe.as_text("ptx")
    assert ptx.count(".visible .entry") == len(exe.gpu_kernels) >= 1
    assert ".target sm_90" in ptx
    # The dot is a GEMM (cuBLAS on a GPU); the sort has no GPU code yet: it
    # runs on the host, and says so.
    assert not any("dot" in f for f in exe.fallbacks), exe.fallbacks
    assert any("sort" in f and "runs on the host" in f for f in exe.fallbacks), exe.fallbacks
    assert "define" in exe.as_text("llvm")
    with pytest.raises(ValueError, match="backend='gpu'"):
        uir.compile(m, backend="cpu").as_text("ptx")
    np.testing.assert_allclose(exe.simulate(x), uir.evaluate(m, x), rtol=1e-5, atol=1e-6)
    if not uir._src.core.gpu.cuda_driver()["available"]:
        with pytest.raises(uir.DeviceError, match="no GPU"):
            exe(x)


def _loop(x):
    return uir.lax.fori_loop(0, 7, lambda i, v: jnp.tanh(v * 1.1 + i) - v.mean(), x)


def _while(x):
    return uir.lax.while_loop(lambda c: c[0] < 40.0, lambda c: (c[0] * 1.5 + 1, c[1] + 1), (x, 0))


def _cond(x):
    return uir.lax.cond(x.sum() > 0, lambda v: jnp.exp(v) * 2, lambda v: v - 1, x)


def _switch(x, i):
    return uir.lax.switch(i, [lambda v: v + 1, lambda v: v * v, lambda v: -v], x)


def _scan(xs):
    return uir.lax.scan(lambda c, x: (c * 0.9 + x, jnp.sin(c)), jnp.zeros(xs.shape[1]), xs)


@pytest.mark.parametrize(
    ("name", "fn", "args"),
    [
        ("fori-loop", _loop, (_f32(300),)),
        ("while", _while, (np.float32(1.0),)),
        ("cond-true", _cond, (np.abs(_f32(70)),)),
        ("cond-false", _cond, (-np.abs(_f32(70)),)),
        ("switch", _switch, (_f32(40), np.int32(1))),
        ("switch-clamped", _switch, (_f32(40), np.int32(7))),
        ("scan", _scan, (_f32(12, 33),)),
        ("mlp", lambda x, w1, w2: jnp.tanh(x @ w1) @ w2, (_f32(8, 16), _f32(16, 32), _f32(32, 4))),
        ("attention", lambda q, k: _softmax(q @ k.T / 4.0) @ k, (_f32(6, 16), _f32(10, 16))),
        # A dot chain: per block of rows, a GEMM, the softmax's kernels, a GEMM.
        (
            "attention-chain",
            lambda q, k, v: _softmax(q @ k.T / 8.0) @ v,
            (_f32(300, 64), _f32(256, 64), _f32(256, 64)),
        ),
        ("layer-norm", _layer_norm, (_f32(6, 96), _f32(96), _f32(96))),
    ],
)
def test_gpu_executable_simulated_matches_the_evaluator(name, fn, args):
    """The whole GPU executable (launches, device copies, loops and
    conditionals on predicates read back, host steps) on the simulated GPU."""
    m = uir.jit(fn).lower(*args).module
    exe = uir.compile(m, backend="gpu")
    got, want = exe.simulate(*args), uir.evaluate(exe.module, *args)
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_devices():
    ds = uir.devices()
    assert ds[0].platform == "cpu"
    driver = uir._src.core.gpu.cuda_driver()
    gpus = uir.devices("gpu")
    assert len(gpus) == len(driver["devices"])
    if not driver["available"]:
        assert driver["why"]
    with pytest.raises(ValueError, match="platform"):
        uir.devices("tpu")


# What the GPU target has no code for yet in the core corpus: functions with
# no NVPTX lowering (the C library's, which a GPU does not have; uir's own
# polynomials cover exp, log, tanh and the like).
GPU_REFUSALS = (
    "sinf has no GPU form",
    "cosf has no GPU form",
    "atan2f has no GPU form",
    "cbrtf has no GPU form",
)


def _core_modules():
    from corpus import XLA_REJECTS, manifest_rows

    return sorted(
        r["file"]
        for r in manifest_rows()
        if r["cpu_class"] == "core" and r["file"] not in XLA_REJECTS
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", _core_modules())
def test_core_corpus_gpu_kernels(name):
    """Every kernel of the core corpus as PTX (verified by LLVM before and
    after its optimizer), and, simulated, equal to the evaluator."""
    from codegen.test_cpu_backend import _close
    from corpus import CORPUS, TOO_HEAVY

    from uir._src.core.evaluate import random_arguments, required_replicas
    from uir._src.core.passes import default_pipeline

    module = default_pipeline().run(uir.hlo.parse_module((CORPUS / name).read_text(), file=name))
    kg = ig.lower(module, "gpu")
    program = ig.compile_gpu(kg)
    for line in program.refused:
        assert any(r in line for r in GPU_REFUSALS), line
    assert program.ptx.count(".visible .entry") == len(program.kernels)
    if program.refused or name in TOO_HEAVY or required_replicas(module) > 1:
        return
    args = random_arguments(module, 0)
    want = uir.evaluate(module, *args)
    _close(ig.simulate_gpu(kg, *args), want, 0.0)
    # The executable's plan on the simulated GPU: the same answer.
    _close(kg.gpu_executable().run(list(args), simulate=True), want, 0.0)


GPU_TARGETS = r"""
#include <stddef.h>
#include <string.h>
#include "uir/custom_call.h"

typedef void* CUstream;

/* out = a * scale + b, scale from the opaque string; XLA's GPU ABI. On a
   GPU this would launch a kernel on `stream`; on the simulated GPU the
   buffers are host memory and the stream is null. */
static void axpy(CUstream stream, void** buffers, const char* opaque, size_t len,
                 XlaCustomCallStatus* status) {
  const float* a = (const float*)buffers[0];
  const float* b = (const float*)buffers[1];
  float* out = (float*)buffers[2];
  if (stream != 0 || len == 0) {
    XlaCustomCallStatusSetFailure(status, "axpy: no scale", 14);
    return;
  }
  float scale = (float)(opaque[0] - '0');
  for (int i = 0; i < 64; ++i) out[i] = a[i] * scale + b[i];
}
XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("gpu_axpy", axpy, "CUDA");

static void refuse(CUstream stream, void** buffers, const char* opaque, size_t len,
                   XlaCustomCallStatus* status) {
  XlaCustomCallStatusSetFailure(status, "refused on purpose", 18);
}
XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("gpu_refuse", refuse, "CUDA");
"""


def _custom_call_module(target: str, opaque: str) -> str:
    return f"""
HloModule m
ENTRY e {{
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  s = f32[64] add(a, b)
  c = f32[64] custom-call(a, s), custom_call_target="{target}", backend_config="{opaque}",
      api_version=API_VERSION_STATUS_RETURNING
  ROOT r = f32[64] multiply(c, c)
}}"""


def test_gpu_custom_calls_in_xlas_gpu_convention(tmp_path):
    from runtime.test_custom_call import _build

    lib = _build(tmp_path, "targets.c", GPU_TARGETS, "cc")
    assert sorted(uir.custom_call.load_library(lib)) == ["gpu_axpy", "gpu_refuse"]
    a, b = _f32(64), _f32(64)
    m = uir.hlo.parse_module(_custom_call_module("gpu_axpy", "3"))
    exe = uir.compile(m, backend="gpu")
    assert exe.fallbacks == []  # the custom call runs as a GPU step, not on the host
    np.testing.assert_allclose(exe.simulate(a, b), (a * 3 + (a + b)) ** 2, rtol=1e-6)
    # It serializes (its target is looked up by name where it runs).
    np.testing.assert_allclose(uir.deserialize(exe.serialize()).simulate(a, b), exe.simulate(a, b))
    refused = uir.compile(uir.hlo.parse_module(_custom_call_module("gpu_refuse", "1")), "gpu")
    with pytest.raises(uir.CustomCallError, match="refused on purpose"):
        refused.simulate(a, b)


def test_gpu_profile_times_every_step():
    """Injected timers around every step (the host's clock on the simulated
    GPU, CUDA events on a GPU): the MLP block's GEMMs and kernel, and a
    loop's steps nested inside it, as a Profile and a Chrome trace."""
    x, w1, w2 = _f32(16, 32), _f32(32, 64), _f32(64, 8)
    exe = uir.compile(uir.jit(lambda a, b, c: jnp.tanh(a @ b) @ c).lower(x, w1, w2).module, "gpu")
    p = exe.profile(x, w1, w2, simulate=True)
    np.testing.assert_allclose(p.result, uir.evaluate(exe.module, x, w1, w2), rtol=1e-5, atol=1e-5)
    kinds = [e["kind"] for e in p.events]
    assert kinds.count("gemm") == 2 and "kernel" in kinds, kinds
    gemms = [e for e in p.events if e["kind"] == "gemm"]
    assert all(e["flops"] > 0 and e["bytes"] > 0 for e in gemms)
    trace = p.chrome_trace()["traceEvents"]
    assert sum(1 for e in trace if e.get("cat") == "gemm") == 2
    loop = uir.compile(uir.jit(_loop).lower(_f32(300)).module, "gpu")
    events = loop.profile(_f32(300), simulate=True).events
    outer = [e for e in events if e["kind"] == "while"]
    inner = [e for e in events if e["depth"] > 0]
    assert len(outer) == 1 and inner
    assert all(
        outer[0]["start_ns"] <= e["start_ns"] <= e["end_ns"] <= outer[0]["end_ns"] for e in inner
    )
