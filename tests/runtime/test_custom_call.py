"""Custom-call targets through the evaluator and the CPU backend: Python callables, C functions
in each calling convention (compiled here, loaded with ctypes), ctypes
callbacks, failures that become uir.CustomCallError, and the built-in
targets XLA's pipelines emit."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

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
    with pytest.raises(TypeError, match="Python callable or a ctypes function"):
        uir.custom_call.register("x", 42)
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
    m = call_module("TopK", "(f32[3,4], s32[3,4])", ("f32[3,12]",))
    values, indices = run(m, x)
    key = np.where(np.isnan(x), np.inf, x)  # NaN ranks above everything
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
