"""The verifier checks what the evaluator and later stages rely on.

Every module here once verified and then crashed the process in
`uir.evaluate` (a segfault or a heap overwrite), or verified and then failed
with an InternalError. Each must now be rejected by `verify()` with a
VerifyError naming the instruction, and `uir.evaluate` must raise the same
error instead of running."""

from __future__ import annotations

import numpy as np
import pytest

import uir

ADD = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }\n"
LT = "lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }\n"

# name: (module text, the instruction blamed, a phrase of the message)
CRASHERS = {
    "sort_dimension_negative": (
        LT
        + "ENTRY e { x = f32[4] parameter(0)  ROOT s = f32[4] sort(x), dimensions={-1}, to_apply=lt }",
        "s",
        "out of range",
    ),
    "sort_dimensions_empty": (
        LT
        + "ENTRY e { x = f32[4] parameter(0)  ROOT s = f32[4] sort(x), dimensions={}, to_apply=lt }",
        "s",
        "exactly one dimension",
    ),
    "sort_without_dimensions": (
        LT + "ENTRY e { x = f32[4] parameter(0)  ROOT s = f32[4] sort(x), to_apply=lt }",
        "s",
        "needs dimensions=",
    ),
    "scatter_dims_to_operand_dims_out_of_range": (
        ADD
        + "ENTRY e { x = f32[8] parameter(0)  i = s32[2,1] parameter(1)  u = f32[2] parameter(2)\n"
        "  ROOT s = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},"
        " scatter_dims_to_operand_dims={7}, index_vector_dim=1, to_apply=add }",
        "s",
        "scatter_dims_to_operand_dims entry 7 is out of range",
    ),
    "scatter_window_dims_do_not_cover_the_operand": (
        ADD
        + "ENTRY e { x = f32[8,4] parameter(0)  i = s32[2,1] parameter(1)  u = f32[2] parameter(2)\n"
        "  ROOT s = f32[8,4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},"
        " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }",
        "s",
        "must cover the operand",
    ),
    "batch_norm_scale_of_the_wrong_size": (
        "ENTRY e { x = f32[2,3] parameter(0)  s = f32[0] parameter(1)  o = f32[3] parameter(2)\n"
        "  ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1 }",
        "b",
        "vector of the 3 features",
    ),
    "batch_norm_inference_feature_index_out_of_range": (
        "ENTRY e { x = f32[2,3] parameter(0)  s = f32[3] parameter(1)  o = f32[3] parameter(2)\n"
        "  m = f32[3] parameter(3)  v = f32[3] parameter(4)\n"
        "  ROOT b = f32[2,3] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=4294967296 }",
        "b",
        "feature_index 4294967296 is out of range",
    ),
    "batch_norm_grad_output_of_the_wrong_shape": (
        "ENTRY e { x = f32[2,3] parameter(0)  s = f32[3] parameter(1)  m = f32[3] parameter(2)\n"
        "  v = f32[3] parameter(3)  g = f32[3,2] parameter(4)\n"
        "  ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, feature_index=1 }",
        "b",
        "grad_output",
    ),
    "batch_norm_without_epsilon": (
        "ENTRY e { x = f32[2,3] parameter(0)  s = f32[3] parameter(1)  o = f32[3] parameter(2)\n"
        "  ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), feature_index=1 }",
        "b",
        "needs epsilon=",
    ),
    "copy_start_that_is_not_a_tuple": (
        "ENTRY e { x = f32[4] parameter(0)  cs = f32[4] copy-start(x)  ROOT cd = f32[4] copy-done(cs) }",
        "cs",
        "(f32[4], f32[4], u32[])",
    ),
    "copy_done_of_a_non_tuple": (
        "ENTRY e { x = f32[4] parameter(0)  ROOT cd = f32[4] copy-done(x) }",
        "cd",
        "copy-start",
    ),
    "get_dimension_size_without_a_dimension": (
        "ENTRY e { x = f32[4] parameter(0)  ROOT g = s32[] get-dimension-size(x), dimensions={} }",
        "g",
        "exactly one dimension",
    ),
    "get_dimension_size_out_of_range": (
        "ENTRY e { x = f32[4] parameter(0)  ROOT g = s32[] get-dimension-size(x), dimensions={3} }",
        "g",
        "dimension 3 is out of range",
    ),
    "dynamic_update_slice_with_too_few_starts": (
        "ENTRY e { x = f32[4,4] parameter(0)  u = f32[2,2] parameter(1)  i = s32[] parameter(2)\n"
        "  ROOT d = f32[4,4] dynamic-update-slice(x, u, i) }",
        "d",
        "needs 2 start indices",
    ),
    "dynamic_update_slice_with_a_larger_update": (
        "ENTRY e { x = f32[4] parameter(0)  u = f32[9] parameter(1)  i = s32[] parameter(2)\n"
        "  ROOT d = f32[4] dynamic-update-slice(x, u, i) }",
        "d",
        "larger than the operand",
    ),
    "dynamic_slice_with_too_few_starts": (
        "ENTRY e { x = f32[4,4] parameter(0)  i = s32[] parameter(1)\n"
        "  ROOT d = f32[2,2] dynamic-slice(x, i), dynamic_slice_sizes={2,2} }",
        "d",
        "needs 2 start indices",
    ),
    "dynamic_slice_larger_than_the_operand": (
        "ENTRY e { x = f32[4] parameter(0)  i = s32[] parameter(1)\n"
        "  ROOT d = f32[5] dynamic-slice(x, i), dynamic_slice_sizes={5} }",
        "d",
        "does not fit dimension 0",
    ),
    "map_of_operands_with_different_dimensions": (
        ADD + "ENTRY e { x = f32[4] parameter(0)  y = f32[2] parameter(1)\n"
        "  ROOT m = f32[4] map(x, y), dimensions={0}, to_apply=add }",
        "m",
        "same dimensions",
    ),
    "rng_bit_generator_without_the_state_tuple": (
        "ENTRY e { s = u64[2] parameter(0)  ROOT r = u32[4] rng-bit-generator(s), algorithm=rng_default }",
        "r",
        "(state, integer bits)",
    ),
    "rng_without_distribution": (
        "ENTRY e { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT r = f32[4] rng(a, b) }",
        "r",
        "needs distribution=",
    ),
    "reduce_precision_without_bit_counts": (
        "ENTRY e { a = f32[4] parameter(0)  ROOT r = f32[4] reduce-precision(a) }",
        "r",
        "needs exponent_bits=",
    ),
}


def _arguments(module):
    rng = np.random.default_rng(0)
    out = []
    for p in module.entry.parameters:
        s = p.shape
        out.append(rng.integers(0, 3, size=s.dims).astype(s.dtype))
    return out


@pytest.mark.parametrize("name", sorted(CRASHERS))
def test_module_that_once_crashed_the_evaluator_fails_verification(name):
    text, blamed, phrase = CRASHERS[name]
    module = uir.hlo.parse_module(text)
    with pytest.raises(uir.VerifyError) as e:
        module.verify()
    assert f"%{blamed}" in str(e.value)
    assert phrase in str(e.value)
    with pytest.raises(uir.VerifyError):
        uir.evaluate(module, *_arguments(module))


# One case per opcode family: (family, module text, phrase of the message).
def _gather(attrs: str) -> str:
    return (
        "ENTRY e { x = f32[5,4] parameter(0)  i = s32[3,1] parameter(1)\n"
        f"  ROOT g = f32[3,4] gather(x, i), {attrs} }}"
    )


GATHER_OK = "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"

FAMILIES = [
    (
        "gather start_index_map out of range",
        _gather(GATHER_OK.replace("start_index_map={0}", "start_index_map={5}")),
        "out of range",
    ),
    (
        "gather collapsed dims repeat",
        _gather(GATHER_OK.replace("collapsed_slice_dims={0}", "collapsed_slice_dims={0,0}")),
        "repeats",
    ),
    (
        "gather slice larger than operand",
        _gather(GATHER_OK.replace("slice_sizes={1,4}", "slice_sizes={1,9}")),
        "does not fit",
    ),
    (
        "gather collapsing a wide slice",
        _gather(GATHER_OK.replace("slice_sizes={1,4}", "slice_sizes={2,4}")),
        "size 0 or 1",
    ),
    (
        "gather index_vector_dim out of range",
        _gather(GATHER_OK.replace("index_vector_dim=1", "index_vector_dim=3")),
        "index_vector_dim 3",
    ),
    (
        "gather start_index_map of the wrong length",
        _gather(GATHER_OK.replace("start_index_map={0}", "start_index_map={0,1}")),
        "start_index_map needs",
    ),
    (
        "dot contracting dim repeated",
        "ENTRY e { a = f32[2,3] parameter(0)  b = f32[3,3] parameter(1)\n"
        "  ROOT d = f32[2] dot(a, b), lhs_contracting_dims={1,1}, rhs_contracting_dims={0,1} }",
        "repeats",
    ),
    (
        "dot contracting dim out of range",
        "ENTRY e { a = f32[2,3] parameter(0)  b = f32[3,4] parameter(1)\n"
        "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0} }",
        "out of range",
    ),
    (
        "convolution with a zero stride",
        "ENTRY e { a = f32[1,4,1] parameter(0)  k = f32[2,1,1] parameter(1)\n"
        "  ROOT c = f32[1,3,1] convolution(a, k), window={size=2 stride=0}, dim_labels=b0f_0io->b0f }",
        "positive",
    ),
    (
        "reduce-window with a zero-size window",
        ADD + "ENTRY e { x = f32[4] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT r = f32[5] reduce-window(x, z), window={size=0}, to_apply=add }",
        "positive",
    ),
    (
        "reduce-window with an input and init of different types",
        ADD + "ENTRY e { x = f16[4] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT r = f32[3] reduce-window(x, z), window={size=2}, to_apply=add }",
        "element type",
    ),
    (
        "reduce over a repeated dimension",
        ADD + "ENTRY e { x = f32[4,2] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT r = f32[2] reduce(x, z), dimensions={0,0}, to_apply=add }",
        "repeats",
    ),
    (
        "reduce with an input of another type than its init",
        ADD + "ENTRY e { x = s32[4] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add }",
        "element type",
    ),
    (
        "select-and-scatter with a source of the wrong shape",
        ADD
        + "ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }\n"
        "ENTRY e { x = f32[4] parameter(0)  s = f32[3] parameter(1)  z = f32[] constant(0)\n"
        "  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add }",
        "windowed output",
    ),
    (
        "fft whose length differs from the operand",
        "ENTRY e { x = c64[8] parameter(0)  ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={4} }",
        "fft_length",
    ),
    (
        "rfft of a complex operand",
        "ENTRY e { x = c64[8] parameter(0)  ROOT f = c64[5] fft(x), fft_type=RFFT, fft_length={8} }",
        "f32 or f64",
    ),
    (
        "triangular-solve with a non-square a",
        "ENTRY e { a = f32[3,4] parameter(0)  b = f32[4,2] parameter(1)\n"
        "  ROOT x = f32[4,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE }",
        "square",
    ),
    (
        "triangular-solve with b of the wrong size",
        "ENTRY e { a = f32[3,3] parameter(0)  b = f32[4,2] parameter(1)\n"
        "  ROOT x = f32[4,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE }",
        "rows",
    ),
    (
        "cholesky of a non-square matrix",
        "ENTRY e { a = f32[3,4] parameter(0)  ROOT c = f32[3,4] cholesky(a), lower=true }",
        "square",
    ),
    (
        "all-gather along a dimension out of range",
        "ENTRY e { x = f32[4] parameter(0)  ROOT g = f32[8] all-gather(x), dimensions={1}, replica_groups={{0,1}} }",
        "out of range",
    ),
    (
        "all-gather whose result does not scale by the group",
        "ENTRY e { x = f32[4] parameter(0)  ROOT g = f32[12] all-gather(x), dimensions={0}, replica_groups={{0,1}} }",
        "group size 2",
    ),
    (
        "all-reduce with a device id twice",
        ADD
        + "ENTRY e { x = f32[4] parameter(0)  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1},{1,2}}, to_apply=add }",
        "appears twice",
    ),
    (
        "reduce-scatter with groups of different sizes",
        ADD + "ENTRY e { x = f32[4] parameter(0)\n"
        "  ROOT r = f32[2] reduce-scatter(x), dimensions={0}, replica_groups={{0,1},{2}}, to_apply=add }",
        "same size",
    ),
    (
        "iota replica groups that do not multiply out",
        ADD
        + "ENTRY e { x = f32[4] parameter(0)  ROOT r = f32[4] all-reduce(x), replica_groups=[2,2]<=[6], to_apply=add }",
        "does not match",
    ),
    (
        "all-to-all splitting a dimension out of range",
        "ENTRY e { x = f32[4] parameter(0)  ROOT r = f32[4] all-to-all(x), split_dimension=1, replica_groups={{0,1}} }",
        "split_dimension 1",
    ),
    (
        "collective-permute with a target twice",
        "ENTRY e { x = f32[4] parameter(0)  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1},{2,1}} }",
        "appears twice",
    ),
    (
        "async-start wrapping a computation of another signature",
        "c { p = f32[4] parameter(0)  ROOT n = f32[4] negate(p) }\n"
        "ENTRY e { x = f32[2] parameter(0)\n"
        "  s = ((f32[2]), f32[4], u32[]) async-start(x), calls=c\n"
        "  ROOT d = f32[4] async-done(s), calls=c }",
        "async computation",
    ),
    (
        "bitcast that changes the size",
        "ENTRY e { x = f32[4] parameter(0)  ROOT b = f32[5] bitcast(x) }",
        "size in bytes",
    ),
    (
        "pad that overflows a dimension",
        "ENTRY e { x = f32[4] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT p = f32[4] pad(x, z), padding=9223372036854775807_9223372036854775807 }",
        "overflows",
    ),
    (
        "topk larger than the last dimension",
        "ENTRY e { x = f32[4] parameter(0)  ROOT t = (f32[5], s32[5]) topk(x), k=5, largest=true }",
        "exceeds",
    ),
    (
        "stochastic-convert with random bits of another width",
        "ENTRY e { x = f32[4] parameter(0)  r = u16[4] parameter(1)  ROOT c = s32[4] stochastic-convert(x, r) }",
        "width",
    ),
    (
        "reverse of a repeated dimension",
        "ENTRY e { x = f32[4,2] parameter(0)  ROOT r = f32[4,2] reverse(x), dimensions={0,0} }",
        "repeats",
    ),
    (
        "scan whose carry changes shape",
        "body { i = f32[] parameter(0)  c = f32[] parameter(1)  b = f32[2] broadcast(c), dimensions={}\n"
        "  ROOT t = (f32[], f32[2]) tuple(i, b) }\n"
        "ENTRY e { x = f32[4] parameter(0)  z = f32[] constant(0)\n"
        "  ROOT s = (f32[4], f32[2]) scan(x, z), dimensions={0}, num_carries=1, to_apply=body }",
        "carry 0",
    ),
]


@pytest.mark.parametrize("family,text,phrase", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_verifier_rejects_inconsistent_attributes(family, text, phrase):
    module = uir.hlo.parse_module(text)
    with pytest.raises(uir.VerifyError) as e:
        module.verify()
    message = str(e.value)
    assert "verification failed at %" in message
    assert phrase in message, message


def test_parse_error_near_a_non_ascii_character_names_it_with_line_and_column():
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.parse_module("é\n")
    assert (e.value.line, e.value.column) == (1, 1)
    assert "'é' (U+00E9)" in str(e.value)


def test_parse_error_on_bytes_that_are_not_utf8_is_still_a_parse_error(tmp_path):
    path = tmp_path / "bad.hlo"
    path.write_bytes(b"ENTRY e {\n  \xff\xfe = f32[] parameter(0)\n}\n")
    with pytest.raises(uir.ParseError) as e:
        uir.hlo.load(str(path))
    assert (e.value.line, e.value.column) == (2, 3)
    assert "byte 0xFF" in str(e.value)
    assert "bad.hlo" in str(e.value)


def test_gather_with_a_zero_sized_collapsed_slice_reads_nothing():
    # Found by the structure-aware fuzzer: XLA accepts slice size 0 in a
    # collapsed dimension; the evaluator read past the operand.
    module = uir.hlo.parse_module(
        "ENTRY e { x = s32[1,3] parameter(0)  i = s32[7,5] parameter(1)\n"
        "  ROOT g = s32[7,3,5] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},"
        " start_index_map={0}, index_vector_dim=2, slice_sizes={0,3} }"
    )
    x = np.arange(3, dtype=np.int32).reshape(1, 3)
    i = np.full((7, 5), 1, np.int32)
    np.testing.assert_array_equal(uir.evaluate(module, x, i), np.zeros((7, 3, 5), np.int32))


@pytest.mark.parametrize("stride", [1, 2])
def test_an_empty_slice_has_zero_elements(stride):
    # slice={[2:2:1]} once inferred a size of -1 and failed to verify.
    module = uir.hlo.parse_module(
        "ENTRY e { x = f32[4,6] parameter(0)\n"
        f"  ROOT s = f32[4,0] slice(x), slice={{[0:4], [2:2:{stride}]}} }}"
    )
    module.verify()
    out = uir.evaluate(module, np.ones((4, 6), np.float32))
    assert out.shape == (4, 0)
    assert uir.compile(module)(np.ones((4, 6), np.float32)).shape == (4, 0)
