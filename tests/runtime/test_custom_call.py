"""Custom-call targets through the evaluator and the CPU backend: Python callables, C functions
in each calling convention (compiled here, loaded with ctypes), ctypes
callbacks, failures that become uir.CustomCallError, and the built-in
targets XLA's pipelines emit."""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess

import numpy as np
import pytest
from memory_util import rss_kib, skip_under_asan

import uir


def call_module(target: str, result: str = "f32[4]", operands=("f32[4]",), extra: str = ""):
    params = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(operands))
    names = ", ".join(f"p{i}" for i in range(len(operands)))
    return uir.hlo.parse_module(
        f'ENTRY e {{\n{params}\n  ROOT c = {result} custom-call({names}), custom_call_target="{target}"{extra}\n}}'
    )


@pytest.fixture(params=["eval", "cpu"])
def run(request):
    """Runs a module on the evaluator or through the CPU backend, which calls
    the target straight on its buffers."""
    if request.param == "eval":
        return uir.evaluate
    return lambda m, *args: uir.compile(m, backend="cpu")(*args)


@pytest.fixture
def register():
    names = []

    def reg(name, target, api="status"):
        uir.custom_call.register(name, target, api=api)
        names.append(name)

    yield reg
    for n in names:
        uir.custom_call.unregister(n)


def test_python_target_gets_arrays_and_returns_the_result(register, run):
    register("py_axpy", lambda x, y: (2 * x + y).astype(np.float32))
    m = call_module("py_axpy", operands=("f32[4]", "f32[4]"))
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(run(m, x, x), 3 * x)
    assert "py_axpy" in uir.custom_call.registered()


def test_python_target_with_a_tuple_result(register, run):
    register("py_split", lambda x: (x.sum(keepdims=False).astype(np.float32), x[::-1].copy()))
    m = call_module("py_split", result="(f32[], f32[4])")
    s, r = run(m, np.arange(4, dtype=np.float32))
    assert s == 6
    np.testing.assert_array_equal(r, [3, 2, 1, 0])


def test_python_exception_becomes_custom_call_error(register, run):
    def boom(x):
        raise KeyError("no such key")

    register("py_boom", boom)
    with pytest.raises(
        uir.CustomCallError, match=r"custom call 'py_boom' failed: KeyError: 'no such key'"
    ):
        run(call_module("py_boom"), np.zeros(4, np.float32))


def test_wrong_result_shape_or_dtype_is_reported(register, run):
    register("py_wrong_shape", lambda x: np.zeros(3, np.float32))
    register("py_wrong_dtype", lambda x: np.zeros(4, np.float64))
    with pytest.raises(uir.CustomCallError, match=r"the result must be f32\[4\], got f32\[3\]"):
        run(call_module("py_wrong_shape"), np.zeros(4, np.float32))
    with pytest.raises(uir.CustomCallError, match=r"must be f32\[4\], got f64\[4\]"):
        run(call_module("py_wrong_dtype"), np.zeros(4, np.float32))


def test_result_that_is_not_an_array_is_reported(register, run):
    register("py_text", lambda x: "hello")
    with pytest.raises(
        uir.CustomCallError, match="'py_text' failed: no HLO element type for dtype <U5"
    ):
        run(call_module("py_text"), np.zeros(4, np.float32))


def test_unregistered_target_names_itself(run):
    with pytest.raises(
        uir.CustomCallError, match=r"'no_such_target' failed: no target of this name"
    ):
        run(call_module("no_such_target"), np.zeros(4, np.float32))


C_TARGETS = r"""
#include <string.h>
#include <stdlib.h>
#include "uir/custom_call.h"

/* api="original": out = in0 + in1 */
void add(void* out, const void** in) {
  const float* a = in[0]; const float* b = in[1]; float* o = out;
  for (int i = 0; i < 4; ++i) o[i] = a[i] + b[i];
}

/* api="status": negates, or fails on a negative input */
void negate_positive(void* out, const void** in, UirCustomCallStatus* status) {
  const float* a = in[0]; float* o = out;
  for (int i = 0; i < 4; ++i) {
    if (a[i] < 0) { const char* m = "negative input"; status->set_failure(status, m, strlen(m)); return; }
    o[i] = -a[i];
  }
}

/* api="status_unified": scales by the number in backend_config; tuple result */
void scale_pair(void* out, const void** in, const char* opaque, size_t len,
                UirCustomCallStatus* status) {
  char buf[32] = {0};
  memcpy(buf, opaque, len < 31 ? len : 31);
  float k = (float)atof(buf);
  void** outs = out;
  const float* a = in[0];
  float* o0 = outs[0]; int* o1 = outs[1];
  for (int i = 0; i < 4; ++i) o0[i] = k * a[i];
  *o1 = (int)len;
}
"""


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    d = tmp_path_factory.mktemp("cc")
    src = d / "targets.c"
    src.write_text(C_TARGETS)
    lib = d / "libtargets.so"
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the test targets"
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O1",
            f"-I{uir.custom_call.include_dir()}",
            str(src),
            "-o",
            str(lib),
        ],
        check=True,
    )
    return ctypes.CDLL(str(lib))


def test_c_target_original_api(c_library, register, run):
    register("c_add", c_library.add, api="original")
    x = np.arange(4, dtype=np.float32)
    got = run(call_module("c_add", operands=("f32[4]", "f32[4]")), x, x + 1)
    np.testing.assert_array_equal(got, 2 * x + 1)


def test_c_target_status_api_reports_failure(c_library, register, run):
    register("c_negate", c_library.negate_positive, api="status")
    m = call_module("c_negate")
    np.testing.assert_array_equal(run(m, np.ones(4, np.float32)), -np.ones(4))
    with pytest.raises(uir.CustomCallError, match="'c_negate' failed: negative input"):
        run(m, np.array([1, -1, 2, 3], np.float32))


def test_c_target_unified_api_reads_backend_config_and_writes_a_tuple(c_library, register, run):
    register("c_scale", c_library.scale_pair, api="status_unified")
    m = call_module("c_scale", result="(f32[4], s32[])", extra=', backend_config="2.5"')
    x = np.arange(4, dtype=np.float32)
    scaled, length = run(m, x)
    np.testing.assert_array_equal(scaled, 2.5 * x)
    assert length == 3


def test_ctypes_callback_is_a_c_target(register, run):
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))

    @proto
    def double(out, ins):
        src = ctypes.cast(ins[0], ctypes.POINTER(ctypes.c_int32))
        dst = ctypes.cast(out, ctypes.POINTER(ctypes.c_int32))
        for i in range(3):
            dst[i] = 2 * src[i]

    register("cb_double", double, api="original")
    got = run(call_module("cb_double", "s32[3]", ("s32[3]",)), np.array([1, -2, 3], np.int32))
    np.testing.assert_array_equal(got, [2, -4, 6])


def test_bad_registrations_are_rejected():
    with pytest.raises(ValueError, match="api must be one of"):
        uir.custom_call.register("x", lambda a: a, api="ffi")
    with pytest.raises(ValueError, match="not an address inside a loaded library"):
        uir.custom_call.register("x", 42)
    with pytest.raises(TypeError, match="Python callable, a ctypes function or an int address"):
        uir.custom_call.register("x", "f")
    with pytest.raises(TypeError, match="non-empty str"):
        uir.custom_call.register("", lambda a: a)


def test_builtin_sharding_and_offload_marks_pass_values_through(run):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for target in ("Sharding", "MoveToHost", "MoveToDevice", "SPMDFullToShardShape"):
        got = run(call_module(target, "f32[2,3]", ("f32[2,3]",)), x)
        np.testing.assert_array_equal(got, x)
    assert {"Sharding", "TopK", "AllocateBuffer"} <= set(uir.custom_call.registered())


def test_builtin_topk_matches_numpy(run):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 10, (3, 12)).astype(np.float32)  # ties: lower index first
    x[0, 3] = np.nan
    x[1, 2], x[1, 5], x[1, 7] = -np.nan, -0.0, 0.0
    x[2, :] = -x[2, :]
    x[2, 4] = -np.nan
    m = call_module("TopK", "(f32[3,4], s32[3,4])", ("f32[3,12]",))
    values, indices = run(m, x)
    # XLA:CPU's order: the total order of the floats (-NaN < -inf < -0 < +0
    # < inf < NaN), as integers.
    bits = x.view(np.int32).astype(np.int64)
    key = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
    want = np.argsort(-key, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, want)
    np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis=1))


@pytest.mark.parametrize(
    "result,operand",
    [
        ("(f32[10], s32[10])", "f32[16,10]"),  # found by the fuzzer: rows missing
        ("(f32[3,4], s32[3,5])", "f32[3,12]"),
        ("(f32[3,4], f32[3,4])", "f32[3,12]"),
        ("(f32[2,4], s32[2,4])", "f32[3,12]"),
    ],
)
def test_builtin_topk_rejects_a_result_that_does_not_fit_its_operand(result, operand, run):
    m = call_module("TopK", result, (operand,))
    x = np.zeros(tuple(int(d) for d in operand[4:-1].split(",")), np.float32)
    with pytest.raises(uir.CustomCallError, match="of x's shape"):
        run(m, x)


def test_builtin_pad_to_static_rejects_sizes_that_are_not_integer_scalars(run):
    m = uir.hlo.parse_module(
        "ENTRY e { x = f32[3] parameter(0)\n"
        '  ROOT c = (f32[3], s32[0]) custom-call(x), custom_call_target="PadToStatic" }'
    )
    with pytest.raises(uir.CustomCallError, match="integer scalars"):
        run(m, np.zeros(3, np.float32))


def test_the_backend_calls_a_c_target_on_its_own_buffers(register):
    # The CPU backend hands the target the buffers buffer assignment chose:
    # the result is written where the returned array lives, not copied there.
    seen = {}
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))

    @proto
    def plus_one(out, ins):
        seen["out"] = out
        src = ctypes.cast(ins[0], ctypes.POINTER(ctypes.c_float))
        dst = ctypes.cast(out, ctypes.POINTER(ctypes.c_float))
        for i in range(4):
            dst[i] = src[i] + 1

    register("cb_plus_one", plus_one, api="original")
    exe = uir.compile(call_module("cb_plus_one"), backend="cpu")
    got = exe(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(got, [1, 2, 3, 4])
    assert seen["out"] == got.ctypes.data


def test_tuple_operands_arrive_as_pointer_tables_and_scratch_as_unused_outputs(register, run):
    # in[0] is a table of the tuple's element pointers; the result's second
    # element is scratch the target may use and the program ignores.
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))

    @proto
    def weighted(out, ins):
        table = ctypes.cast(ins[0], ctypes.POINTER(ctypes.c_void_p))
        x = ctypes.cast(table[0], ctypes.POINTER(ctypes.c_float))
        w = ctypes.cast(table[1], ctypes.POINTER(ctypes.c_int32))
        outs = ctypes.cast(out, ctypes.POINTER(ctypes.c_void_p))
        y = ctypes.cast(outs[0], ctypes.POINTER(ctypes.c_float))
        scratch = ctypes.cast(outs[1], ctypes.POINTER(ctypes.c_float))
        for i in range(5):
            scratch[i] = x[i] * w[i]
        for i in range(5):
            y[i] = scratch[i] + scratch[4 - i]

    register("cb_weighted", weighted, api="original")
    m = uir.hlo.parse_module(
        "ENTRY e {\n  x = f32[5] parameter(0)\n  w = s32[5] parameter(1)\n"
        "  t = (f32[5], s32[5]) tuple(x, w)\n"
        '  c = (f32[5], f32[5]) custom-call(t), custom_call_target="cb_weighted"\n'
        "  ROOT y = f32[5] get-tuple-element(c), index=0\n}"
    )
    x = np.array([1, 2, 3, 4, 5], np.float32)
    w = np.array([2, -1, 0, 3, 1], np.int32)
    s = x * w
    np.testing.assert_array_equal(run(m, x, w), s + s[::-1])


def test_a_failing_target_leaves_the_compiled_function_usable(c_library, register):
    register("c_negate", c_library.negate_positive, api="status")
    exe = uir.compile(call_module("c_negate"), backend="cpu")
    with pytest.raises(uir.CustomCallError, match="negative input"):
        exe(np.array([1, -1, 2, 3], np.float32))
    np.testing.assert_array_equal(exe(np.ones(4, np.float32)), -np.ones(4))


# A target written for XLA's legacy CPU API, as XLA's custom-call guide
# writes one: the two XLA includes are the only lines the test changes.
XLA_TARGETS = """\
#include <cmath>
#include <cstdlib>
#include <cstring>
#include "xla/service/custom_call_status.h"
#include "xla/service/custom_call_target_registry.h"

void do_custom_call(void* out, const void** in) {
  float* out_buf = reinterpret_cast<float*>(out);
  const float* in0 = reinterpret_cast<const float*>(in[0]);
  const float* in1 = reinterpret_cast<const float*>(in[1]);
  for (int i = 0; i < 2048; ++i) {
    out_buf[i] = in0[i % 128] + in1[i];
  }
}
XLA_REGISTER_CUSTOM_CALL_TARGET(do_custom_call, "Host");

void checked_sqrt(void* out, const void** in, XlaCustomCallStatus* status) {
  const float* x = reinterpret_cast<const float*>(in[0]);
  float* y = reinterpret_cast<float*>(out);
  for (int i = 0; i < 16; ++i) {
    if (x[i] < 0) {
      const char* message = "sqrt of a negative number";
      XlaCustomCallStatusSetFailure(status, message, strlen(message));
      return;
    }
    y[i] = std::sqrt(x[i]);
  }
  XlaCustomCallStatusSetSuccess(status);
}
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM("my_sqrt", checked_sqrt);

void scaled(void* out, const void** in, const char* opaque, size_t opaque_len,
            xla::XlaCustomCallStatus* status) {
  char text[32] = {0};
  memcpy(text, opaque, opaque_len < 31 ? opaque_len : 31);
  const float k = static_cast<float>(atof(text));
  const float* x = reinterpret_cast<const float*>(in[0]);
  float* y = reinterpret_cast<float*>(out);
  for (int i = 0; i < 16; ++i) y[i] = k * x[i];
}
XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(scaled);

void on_the_gpu(void* out, const void** in) {}
XLA_REGISTER_CUSTOM_CALL_TARGET(on_the_gpu, "CUDA");
"""

XLA_INCLUDES = (
    '#include "xla/service/custom_call_status.h"\n'
    '#include "xla/service/custom_call_target_registry.h"\n'
)


def _build(tmp_path, name, source, compiler):
    src = tmp_path / name
    src.write_text(source)
    lib = tmp_path / (src.stem + ".so")
    cc = shutil.which(compiler)
    assert cc, f"{compiler} is needed to build the test targets"
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O1",
            "-Wall",
            "-Werror",
            f"-I{uir.get_include()}",
            str(src),
            "-o",
            str(lib),
        ],
        check=True,
    )
    return lib


@pytest.fixture(scope="module")
def xla_library(tmp_path_factory):
    assert XLA_INCLUDES in XLA_TARGETS
    source = XLA_TARGETS.replace(XLA_INCLUDES, '#include "uir/custom_call.h"\n')
    lib = _build(tmp_path_factory.mktemp("xla"), "xla_targets.cc", source, "g++")
    names = uir.custom_call.load_library(lib)
    yield names
    for n in names:
        if n in uir.custom_call.registered():
            uir.custom_call.unregister(n)


def test_a_target_written_for_xla_builds_against_uirs_header_and_registers(xla_library):
    # Registered by XLA's macros as the library loads: platform Host for
    # the CPU, CUDA for backend="gpu" (its own registry).
    assert sorted(xla_library) == ["do_custom_call", "my_sqrt", "on_the_gpu", "scaled"]
    assert {"do_custom_call", "my_sqrt", "scaled"} <= set(uir.custom_call.registered())
    assert "on_the_gpu" not in uir.custom_call.registered()
    assert "on_the_gpu" in uir._core.runtime.gpu_custom_call_targets()
    assert uir.get_include() == str(uir.custom_call.include_dir())


@pytest.mark.parametrize("backend", ["cpu", "eval"])
def test_xla_targets_run_inside_jitted_functions_in_their_instructions_api(xla_library, backend):
    import uir.lax as lax

    def f(b, c):
        # XLA's default api_version is API_VERSION_ORIGINAL.
        a = lax.custom_call("do_custom_call", (b, c), lax.ShapeDtypeStruct((2048,), np.float32))
        return a * 2

    b = np.arange(128, dtype=np.float32)
    c = np.random.default_rng(0).standard_normal(2048).astype(np.float32)
    np.testing.assert_allclose(
        uir.jit(f, backend=backend)(b, c), 2 * (b[np.arange(2048) % 128] + c)
    )

    def g(x):
        r = lax.custom_call("my_sqrt", (x,), lax.ShapeDtypeStruct((16,), np.float32), api_version=2)
        return lax.custom_call(
            "scaled", (r,), lax.ShapeDtypeStruct((16,), np.float32), opaque=b"2.5", api_version=3
        )

    jg = uir.jit(g, backend=backend)
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_allclose(jg(x), 2.5 * np.sqrt(x), rtol=1e-6)
    bad = x.copy()
    bad[3] = -1
    with pytest.raises(uir.CustomCallError, match="sqrt of a negative number"):
        jg(bad)
    np.testing.assert_allclose(jg(x), 2.5 * np.sqrt(x), rtol=1e-6)  # still usable


UIR_MACRO_TARGETS = """\
#include <string.h>
#include "uir/custom_call.h"

static void twice(void* out, const void** in, UirCustomCallStatus* status) {
  const double* x = (const double*)in[0];
  double* y = (double*)out;
  for (int i = 0; i < 8; ++i) {
    if (x[i] != x[i]) {
      UirCustomCallStatusSetFailure(status, "NaN input", 9);
      return;
    }
    y[i] = 2 * x[i];
  }
}
UIR_REGISTER_CUSTOM_CALL_TARGET("uir_macro_twice", twice, UIR_API_STATUS);
"""


def test_the_uir_macro_registers_a_c_target_in_its_convention(tmp_path, run):
    lib = _build(tmp_path, "uir_targets.c", UIR_MACRO_TARGETS, "gcc")
    try:
        assert uir.custom_call.load_library(lib) == ["uir_macro_twice"]
        m = call_module("uir_macro_twice", "f64[8]", ("f64[8]",))
        x = np.linspace(-1, 1, 8)
        np.testing.assert_array_equal(run(m, x), 2 * x)
        x[5] = np.nan
        with pytest.raises(uir.CustomCallError, match="NaN input"):
            run(m, x)
    finally:
        uir.custom_call.unregister("uir_macro_twice")


def test_a_library_without_registrations_is_refused(c_library, tmp_path):
    # Built with the header but no registration macro: nothing to register.
    assert uir.custom_call.load_library(c_library._name) == []
    plain = _build(tmp_path, "plain.c", "int answer(void) { return 42; }\n", "gcc")
    with pytest.raises(ValueError, match="declares no custom-call targets"):
        uir.custom_call.load_library(plain)
    with pytest.raises(ValueError, match="cannot load custom-call library"):
        uir.custom_call.load_library(tmp_path / "missing.so")


def test_typed_ffi_calls_of_c_targets_are_refused_naming_the_target(c_library, register, run):
    register("c_add_ffi", c_library.add, api="original")
    m = call_module(
        "c_add_ffi", operands=("f32[4]", "f32[4]"), extra=", api_version=API_VERSION_TYPED_FFI"
    )
    x = np.ones(4, np.float32)
    with pytest.raises(uir.CustomCallError, match=r"c_add_ffi.*typed FFI"):
        run(m, x, x)


def test_a_python_target_runs_under_any_api_version(register, run):
    register("py_twice_ffi", lambda a: 2 * a)
    m = call_module("py_twice_ffi", extra=", api_version=API_VERSION_TYPED_FFI")
    np.testing.assert_array_equal(run(m, np.ones(4, np.float32)), [2, 2, 2, 2])


def test_an_api_version_that_contradicts_the_registration_is_an_error(c_library, register, run):
    register("c_add_orig", c_library.add, api="original")
    m = call_module(
        "c_add_orig",
        operands=("f32[4]", "f32[4]"),
        extra=", api_version=API_VERSION_STATUS_RETURNING_UNIFIED",
    )
    x = np.ones(4, np.float32)
    with pytest.raises(
        uir.CustomCallError, match=r"API_VERSION_STATUS_RETURNING_UNIFIED.*API_VERSION_ORIGINAL"
    ):
        run(m, x, x)
    ok = call_module(
        "c_add_orig", operands=("f32[4]", "f32[4]"), extra=", api_version=API_VERSION_ORIGINAL"
    )
    np.testing.assert_array_equal(run(ok, x, x), 2 * x)


@skip_under_asan
def test_ten_thousand_calls_through_a_custom_call_do_not_grow_memory(xla_library):
    import uir.lax as lax

    def g(x):
        r = lax.custom_call("my_sqrt", (x,), lax.ShapeDtypeStruct((16,), np.float32), api_version=2)
        return r + 1

    jg = uir.jit(g)
    x = np.arange(16, dtype=np.float32)
    bad = -x - 1
    for _ in range(200):
        jg(x)
    gc.collect()
    before = rss_kib()
    for k in range(10_000):
        if k % 100 == 0:  # failures too: their messages must not pile up
            with pytest.raises(uir.CustomCallError):
                jg(bad)
        else:
            jg(x)
    gc.collect()
    grown = rss_kib() - before
    assert grown < 8 * 1024, f"resident memory grew by {grown} KiB over 10,000 calls"
